"""Where ops are declared: everything about an op sits at its definition.

- ``defop(name, fwd, node, save=ALL, ...)``: the recorded ``Op`` (a JAX forward, the torch
  node name, what is saved), for ops whose public function is hand-written;
- ``OpDef(...)``: a table row that is also its public forms (``hookgrad.sin``, ``x.sin()``,
  ``x.sin_()``, aliases), for ops whose function only applies the Op (pointwise tables);
- ``@export(...)``: a hand-written public function with its aliases and exposure
  (``hookgrad.<name>``, ``Tensor.<name>`` or both);
- ``@variants(...)``: a hand-written chooser returning ``(op, args, statics)``: the
  function and its in-place form ``Tensor.<name>_`` are both made from it.

The namespaces are read from FUNCTIONS and METHODS (by ``hookgrad`` and ``Tensor`` at
import, and by tools/gen_stubs.py for the ``.pyi`` stubs).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Optional, Tuple

import jax
import numpy as np

from .._autograd import grad_mode as _grad_mode
from .._dtype import torch_kind
from .jax_errors import shape_broadcast_error
from .._tensor import Tensor
from .dispatch import ALL, Op, apply
from .parser_errors import NUMBERS_AS_TENSORS, arguments_error, as_method, unknown_keyword
from . import autocast as _autocast
from . import saved_names  # noqa: F401 - fills op_node.SAVED_NAMES for the nodes
from .. import _errors

FUNCTIONS = {}   # name -> function exported as hookgrad.<name>
METHODS = {}     # name -> function attached as Tensor.<name>
OPS = {}         # name -> Op, for tests parametrised over the table


def defop(name, fwd, node, save=ALL, bwd=None, **kw) -> Op:
    op = Op(name, fwd, node, save, bwd, **kw)
    OPS[name] = op
    return op


OpCall = Tuple[Op, tuple, Optional[dict]]  # what a ``@variants`` chooser returns


def _expose(fn, names, method, function):
    """Publish ``fn`` under ``names``; returns what was published (``fn``, wrapped for
    autocast where a name is on its lists)."""
    fn = _autocast.wrap(names, fn)
    for n in names:
        for table, wanted in ((FUNCTIONS, function), (METHODS, method)):
            if wanted:
                if table.get(n, fn) is not fn:  # one declaration per public name
                    raise RuntimeError(f"hookgrad op {n!r} is declared twice: "
                                       f"{table[n].__module__} and {fn.__module__}")
                table[n] = fn
    return fn


def export(fn=None, *, name=None, aliases=(), method=True, function=True):
    """Declare ``fn`` public as ``hookgrad.<name>`` (``function``) and ``Tensor.<name>``
    (``method``), also under each of ``aliases``. A decorator, or ``export(fn, ...)``."""
    def deco(f):
        return _expose(f, (name or f.__name__, *aliases), method, function)
    return deco if fn is None else deco(fn)


def _returns_tensor(fn, like, self_name=None):
    # the chooser's signature with PyTorch's result type, read by inspect and gen_stubs
    sig = inspect.signature(like).replace(return_annotation="Tensor")
    if self_name:
        first, *rest = sig.parameters.values()
        sig = sig.replace(parameters=[first.replace(name=self_name), *rest])
    fn.__signature__ = sig
    fn.__annotations__ = {**like.__annotations__, "return": "Tensor"}
    return fn


def variants(*, inplace=False, inplace_function=False, aliases=(), method=True,
             function=True, inplace_check=None, forms=None, method_words=False,
             hidden=False):
    """Make ``name`` (and ``Tensor.name_`` when ``inplace``) from a chooser
    ``pick(input, ...) -> (op, args, statics)`` that validates the arguments and picks the
    Op variant (a Tensor bound, an alpha, a rounding mode, ...). ``inplace_check(self,
    ...)`` runs first in the in-place form, for PyTorch's checks that only it makes.
    ``forms``: PyTorch's signatures, the method's and the function's: a call ``pick``'s
    own signature refuses (an unknown keyword, too many arguments) raises its parser's
    error for the form called (the method is then a function of its own). ``method_words``:
    the method is a function of its own too, which words the chooser's parser errors as
    the method's (``as_method``: its name, the method's signatures). A ``forms`` dict
    gives each name (an alias too) its own; ``hidden``: the op has signatures its parser
    never lists (``arguments_error``). A TypeError the chooser marks ``refused_call``
    (``parser_errors.refused_call``) is worded from the call as PyTorch's parser words it,
    for the form called."""
    def deco(pick):
        name = pick.__name__

        def refusal(public, is_method, args, kwargs):
            fs = forms[public.rstrip("_")] if isinstance(forms, dict) else forms
            if is_method:
                return arguments_error(public, fs[0], args[1:], kwargs, hidden)
            return arguments_error(public, fs[1], args, kwargs, hidden)

        def plain(*args, **kwargs):
            op, a, st = pick(*args, **kwargs)
            return bapply(op, a, st)

        def form(is_method, public=name):  # NOTE: one body; the forms' errors differ
            def fn(*args, out=None, **kwargs):
                if out is not None:
                    if forms is not None and (is_method or not isinstance(out, Tensor) and
                                              public not in NUMBERS_AS_TENSORS):
                        # (a method takes no ``out=``; a function's is a Tensor)
                        raise refusal(public, is_method, args, {**kwargs, "out": out}) from None
                    if kwargs and forms is not None and (worded := _parser_error(
                            pick, forms, is_method, public, args, kwargs, out, hidden)):
                        raise worded from None
                    return write_out(name, plain, args, kwargs, out)
                try:
                    op, a, st = pick(*args, **kwargs)
                except TypeError as e:
                    if forms is not None and ((worded := _parser_error(
                            pick, forms, is_method, public, args, kwargs, None, hidden)) or (
                            worded := getattr(e, "refused_call", False) and refusal(
                                public, is_method, args, kwargs))):
                        raise worded from None
                    worded = unknown_keyword(e, name, args, kwargs) if kwargs else e
                    if is_method and getattr(worded, "parser_call", None) is not None:
                        raise as_method(worded, public) from None
                    if worded is not e:
                        raise worded from None
                    raise
                return bapply(op, a, st)
            functools.update_wrapper(fn, pick)
            _returns_tensor(fn, pick)
            if not is_method:  # (PyTorch's methods take no ``out=``)
                fn.__signature__ = _with_out_signature(fn.__signature__)
            return fn
        fn = form(False)
        if forms is None and not method_words:
            published = _expose(fn, (name, *aliases), method, function)
        else:  # each name a function and a method of its own, which name themselves
            published = _expose(fn, (name,), False, function)
            for n in aliases:
                _expose(form(False, n), (n,), False, function)
            for n in (name, *aliases):
                _expose(form(True, n), (n,), method, False)
        if inplace:
            def fn_(self, *args, **kwargs):
                if inplace_check is not None:
                    inplace_check(self, *args, **kwargs)
                try:
                    op, a, st = pick(self, *args, **kwargs)
                except TypeError as e:  # the parser's, worded for the method
                    if forms is not None and ((worded := _parser_error(
                            pick, forms, True, name + "_", (self, *args), kwargs, None, hidden))
                            or (worded := getattr(e, "refused_call", False) and refusal(
                                name + "_", True, (self, *args), kwargs))):
                        raise worded from None
                    raise as_method(unknown_keyword(e, name, (self, *args), kwargs),
                                    name + "_") from None
                return bapply(op, a, st, out=self)
            fn_.__name__ = fn_.__qualname__ = name + "_"
            fn_.__doc__ = f"In-place :func:`{name}`, written into ``self``."
            _expose(_returns_tensor(fn_, pick, "self"), [n + "_" for n in (name, *aliases)],
                    True, inplace_function)
        return published
    return deco


def _parser_error(pick, forms, as_method, name, args, kwargs, out=None, hidden=False):
    """PyTorch's parser's TypeError for a call ``pick``'s signature does not bind (for the
    method's ``forms[0]`` or the function's ``forms[1]``; ``forms`` a dict: ``name``'s),
    else None: the TypeError came from the chooser itself. (``out``: given, taken as the
    last keyword.)"""
    try:
        inspect.signature(pick).bind(*args, **kwargs)
        return None
    except TypeError:
        if out is not None:
            kwargs = {**kwargs, "out": out}
    if isinstance(forms, dict):
        forms = forms[name.rstrip("_")]
    if as_method:
        return arguments_error(name, forms[0], args[1:], kwargs, hidden)
    return arguments_error(name, forms[1], args, kwargs, hidden)


@dataclasses.dataclass(frozen=True)
class OpDef:
    """One op that is its own public function: the Op's fields, then its exposure.

    ``save``: ``ALL``; ``()``; ``OUT`` (with ``bwd``); or ``{i: (j, ...)}`` (see ``Op``).
    ``names``: PyTorch's names of what is saved, in its pack order (see ``Op``).
    ``inplace``: also ``Tensor.<name>_``; ``inplace_function``: and ``hookgrad.<name>_``.
    ``aliases`` name every form again (``negative``, ``negative_``).
    """

    name: str
    fwd: Callable
    node: Optional[str]
    save: Any = ALL
    bwd: Optional[Callable] = None
    inplace: bool = True
    inplace_function: bool = False
    aliases: tuple = ()
    method: bool = True
    function: bool = True
    scalar_edges: bool = False
    nondiff: tuple = ()
    names: Optional[str] = None

    def op(self) -> Op:
        return defop(self.name, self.fwd, self.node, self.save, self.bwd,
                     scalar_edges=self.scalar_edges, nondiff=self.nondiff, names=self.names)

    def expose(self, fn, op, inplace_check=None, method=None):
        """Publish ``fn`` (the out-of-place form) and, per the row, the in-place form
        (``inplace_check(*args, **kwargs)``: the parser's checks of the arguments after
        ``self``); ``method``: the Tensor method, where it is not ``fn`` (whose errors are
        the function's: ``fn`` then takes ``out=`` itself)."""
        for f in (fn, method or fn):
            f.__name__ = f.__qualname__ = self.name
            f.__annotations__ = {"return": "Tensor"}
        names = (self.name, *self.aliases)
        # PyTorch's Tensor methods take no ``out=`` (``t.sin(out=o)`` is a TypeError): the
        # method is ``fn`` itself, one Python call fewer per op than the function
        _expose(with_out(fn) if method is None else fn, names, False, self.function)
        _expose(method or fn, names, self.method, False)
        if self.inplace:
            in_place = inplace_of(op, self.name, inplace_check)
            _returns_tensor(in_place, method or fn, "self")
            _expose(in_place, [n + "_" for n in names], True, self.inplace_function)


def inplace_of(op, name, check=None):
    """``x.<name>_(*args)``: ``op`` applied with ``x`` as first argument, written into ``x``
    (``check(*args, **statics)`` first, where given)."""
    if check is None:
        def method(self, *args, **statics) -> Tensor:
            return apply(op, (self, *args), statics or None, out=self)
    else:
        def method(self, *args, **statics) -> Tensor:
            check(*args, **statics)
            return apply(op, (self, *args), statics or None, out=self)
    method.__name__ = method.__qualname__ = name + "_"
    return method


# --------------------------------------------------------------------------- out=


def with_out(fn):
    """``fn`` taking PyTorch's ``out=`` keyword as well: the result is written into ``out``
    (resized if its shape differs, cast to its dtype), which is returned."""
    name = fn.__name__

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return write_out(name, fn, args, kwargs, out)
    function.__signature__ = _with_out_signature(inspect.signature(fn))
    return function


def _with_out_signature(sig):
    params = list(sig.parameters.values())
    if "out" in sig.parameters:
        return sig
    at = len(params) - (bool(params) and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation="Optional[Tensor]"))
    return sig.replace(parameters=params)


def write_out(name, fn, args, kwargs, out):
    # NOTE: every op-table function returns one Tensor, so ``out`` is one Tensor
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _grad_mode._state.enabled and any(
            isinstance(a, Tensor) and a._requires_grad for a in (*args, *kwargs.values(), out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    arr = _out_array(fn(*args, **kwargs)._data, out._data.dtype)
    if arr.shape != out._data.shape and out._data.size:
        _errors.warn(f"An output with one or more elements was resized since it had shape "
                     f"{list(out.shape)}, which does not match the required output shape "
                     f"{list(arr.shape)}. This behavior is deprecated, and in a future PyTorch "
                     "release outputs will not be resized unless they have zero elements. You "
                     "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                     "elements with t.resize_(0).", UserWarning)
    return out._write_(arr)


def _out_array(arr, want):
    """``arr`` cast to ``out``'s dtype ``want``, where PyTorch casts."""
    if arr.dtype != want:
        if not _can_cast(arr.dtype, want):
            raise RuntimeError(f"result type {torch_kind(arr.dtype)} can't be cast to the "
                               f"desired output type {torch_kind(want)}")
        arr = arr.astype(want)
    return arr


def _can_cast(src, dst):
    """PyTorch's ``can_cast`` for writing a result into ``out``: never complex into real,
    floating into integral, or non-bool into bool."""
    return _cast_rank(src) <= _cast_rank(dst)


def _cast_rank(dtype):
    kind = np.dtype(dtype).kind  # bfloat16 is a void ("V") kind to NumPy
    return {"b": 0, "u": 1, "i": 1, "c": 3}.get(kind, 2)


# --------------------------------------------------------------------------- operands


NUMBERS = frozenset((int, float, bool, complex))  # operands ``to_tensor_like`` keeps as they are


def to_tensor_like(x):
    """Non-Tensor array operands (NumPy, JAX) as constants; Python numbers stay numbers."""
    if isinstance(x, (Tensor, int, float, bool, complex)):
        # NumPy's float64 and complex128 are Python floats and complexes, numbers to
        # PyTorch's parser: as they are, JAX would keep their 64 bits (a float64 result)
        return x if x.__class__ not in _NUMPY_PYTHON_NUMBERS else x.item()
    if isinstance(x, (np.ndarray, jax.Array, np.generic)):
        return Tensor._wrap(jax.numpy.asarray(x))
    if isinstance(x, (list, tuple)):
        from .._factory import tensor
        return tensor(x)
    raise TypeError(f"expected Tensor or number as operand, got {type(x).__name__}")


_NUMPY_PYTHON_NUMBERS = frozenset((np.float64, np.complex128))


def norm_dim(dim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(int(d) for d in dim)
    return int(dim)


def broadcast_error(args):
    """PyTorch's error for operands whose shapes do not broadcast (None if they do)."""
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            err = shape_broadcast_error(a, b)
            if err is not None:
                return err
    return None


def bapply(op, args, statics=None, out=None):
    """``apply`` for broadcasting ops: a shape mismatch raises PyTorch's RuntimeError
    (checked only after JAX refused, so it costs nothing otherwise)."""
    try:
        return apply(op, args, statics, out=out)
    except (TypeError, ValueError):
        raise broadcast_error(args) or reraise() from None


def reraise():
    raise  # the exception being handled: JAX's own, when the shapes were not the cause
