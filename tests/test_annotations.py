"""Return annotations on public functions (issue 14, step 4).

Walks the public callables of the namespaces below, and the public methods of the classes
they export, and fails naming each one that has no return annotation or whose annotations
do not resolve with ``typing.get_type_hints`` (a broken forward reference, a name imported
nowhere). Only callables defined in ``_COVERED`` modules are checked: the rest of hookgrad
(the op table that ``nn.functional`` re-exports, ``nn.Module``) is annotated by other
steps (the last test).
"""
import ast
import functools
import importlib
import inspect
import sys
import typing

import hookgrad

_NAMESPACES = [
    "hookgrad.nn.functional", "hookgrad.nn.init", "hookgrad.nn.utils", "hookgrad.nn.utils.rnn",
    "hookgrad.nn.parallel", "hookgrad.nn.parameter", "hookgrad.optim",
    "hookgrad.optim.lr_scheduler", "hookgrad.optim.optimizer", "hookgrad.utils.data",
    "hookgrad.utils.checkpoint", "hookgrad.utils.mod_tracker", "hookgrad.serialization",
    "hookgrad.autograd.functional", "hookgrad.autograd.gradcheck", "hookgrad.distributions",
    "hookgrad.distributions.constraints", "hookgrad.testing", "hookgrad.futures",
    "hookgrad.as_torch",
]

# defining modules whose public callables must be annotated
_COVERED = (
    "hookgrad.nn.functional", "hookgrad.nn.init", "hookgrad.nn.utils.", "hookgrad.nn.parameter",
    "hookgrad.nn.parallel.", "hookgrad.optim.", "hookgrad.utils.data.",
    "hookgrad.utils.mod_tracker", "hookgrad.utils.checkpoint", "hookgrad.serialization",
    "hookgrad.distributions.", "hookgrad.autograd.functional", "hookgrad.autograd.gradcheck",
    "hookgrad.testing", "hookgrad.futures", "hookgrad.as_torch",
)


@functools.cache
def _type_checking_names(module_name):
    """The names ``module_name`` imports under ``if TYPE_CHECKING:``, imported for real.

    NOTE: such imports are how a module names a type it must not import at run time (an
    upward import edge), so ``get_type_hints`` needs them as local names; importing them
    here also fails when one of those imports is itself broken.
    """
    module = sys.modules[module_name]
    names = {}
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom):
                source = importlib.import_module("." * stmt.level + (stmt.module or ""),
                                                 module.__package__)
                for alias in stmt.names:
                    names[alias.asname or alias.name] = getattr(source, alias.name)
    return names


def _covered(obj):
    mod = getattr(obj, "__module__", None) or ""
    # "pkg." covers the package's modules, a name without the dot that module only
    return any(mod.startswith(c) if c.endswith(".") else mod == c for c in _COVERED)


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return names


def _functions_of(cls):
    """``(qualified name, function)`` for the public methods, properties' getters and
    setters, static and class methods that ``cls`` and its covered bases define."""
    for klass in cls.__mro__:
        if not _covered(klass):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_"):
                continue
            where = f"{klass.__module__}.{klass.__qualname__}.{name}"
            if isinstance(attr, (staticmethod, classmethod)):
                yield where, attr.__func__
            elif isinstance(attr, property):
                for part, fn in (("getter", attr.fget), ("setter", attr.fset)):
                    if fn is not None:
                        yield f"{where} ({part})", fn
            elif isinstance(attr, functools.cached_property):
                yield where, attr.func
            elif inspect.isfunction(attr):
                yield where, attr


def _public_functions():
    seen, out = set(), []
    for ns in _NAMESPACES:
        module = importlib.import_module(ns)
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                pairs = list(_functions_of(obj))
            elif inspect.isfunction(obj) and _covered(obj):
                pairs = [(f"{obj.__module__}.{obj.__qualname__}", obj)]
            else:
                continue
            for where, fn in pairs:
                if id(fn) not in seen:
                    seen.add(id(fn))
                    out.append((where, fn))
    return out


_FUNCTIONS = _public_functions()


def test_the_walk_finds_the_public_api():
    # a walk that found nothing would pass every check below
    names = {where for where, _ in _FUNCTIONS}
    for expected in ("hookgrad.optim.optimizer.Optimizer.step",
                     "hookgrad.optim.lr_scheduler.LRScheduler.get_last_lr",
                     "hookgrad.nn.init.kaiming_uniform_", "hookgrad.serialization.load",
                     "hookgrad.autograd.functional.jacobian",
                     "hookgrad.distributions.normal.Normal.log_prob",
                     "hookgrad.utils.data.dataset.random_split"):
        assert expected in names, f"{expected} was not walked"
    assert len(names) > 150


def test_public_functions_have_return_annotations():
    missing = [where for where, fn in _FUNCTIONS if "return" not in fn.__annotations__]
    assert not missing, ("public functions without a return annotation (add `-> T`, as "
                         "PyTorch annotates them):\n  " + "\n  ".join(missing))


def test_annotations_resolve():
    broken = []
    for where, fn in _FUNCTIONS:
        try:
            typing.get_type_hints(fn, localns=_type_checking_names(fn.__module__))
        except Exception as e:  # noqa: BLE001 - every failure is reported, by name
            broken.append(f"{where}: {type(e).__name__}: {e}")
    assert not broken, ("annotations that do not resolve (import the name, under "
                        "TYPE_CHECKING if a runtime import would point upward):\n  "
                        + "\n  ".join(broken))


def test_annotations_match_what_is_returned():
    # spot checks that the annotations say what the functions return
    w = hookgrad.nn.Parameter(hookgrad.zeros(2, 3))
    out = hookgrad.nn.init.zeros_(w)
    hints = typing.get_type_hints(hookgrad.nn.init.zeros_,
                                  localns=_type_checking_names("hookgrad.nn.init"))
    assert hints["return"] is hookgrad.Tensor and isinstance(out, hints["return"])
    opt = hookgrad.optim.SGD([w], lr=0.1)
    assert typing.get_type_hints(opt.zero_grad)["return"] is type(None)
    assert opt.zero_grad() is None
    assert isinstance(opt.state_dict(), dict)
    hints = typing.get_type_hints(hookgrad.optim.SGD.state_dict)
    assert typing.get_origin(hints["return"]) is dict
    assert typing.get_type_hints(hookgrad.nn.init.calculate_gain)["return"] is float


_OPS = [n for n in hookgrad.nn.functional.__all__
        if getattr(hookgrad.nn.functional, n).__module__.startswith("hookgrad._ops")]


def test_op_table_functions_have_return_annotations():
    missing = [n for n in _OPS
               if "return" not in getattr(hookgrad.nn.functional, n).__annotations__]
    assert not missing, f"nn.functional ops without a return annotation: {missing}"
