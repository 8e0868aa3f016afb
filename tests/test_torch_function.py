"""``__torch_function__``: Tensor subclasses and ``TorchFunctionMode`` s see the public
functions and Tensor methods called on them, in PyTorch's order, and the helpers of
``torch.overrides`` answer as PyTorch's."""
import importlib
import os

import pytest

from tests.differential import same_as_torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _overrides(L):
    return importlib.import_module(f"{L.__name__}.overrides")


def _logging_subclass(L, log):
    class LoggingTensor(L.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)
    return LoggingTensor


def test_a_subclass_sees_the_calls_pytorchs_sees_and_its_results_keep_its_class():
    def scenario(L):
        log = []
        cls = _logging_subclass(L, log)
        x = L.ones(3).as_subclass(cls)
        outs = [(x * 2).sin().sum(), L.add(x, 1), L.cat([x, x]), x[0], x.exp_()]
        return [log, [type(o).__name__ for o in outs], outs[1].tolist()]
    log, kinds, _ = same_as_torch(scenario)
    assert log == ["mul", "sin", "sum", "add", "cat", "__getitem__", "exp_", "tolist"]
    assert kinds == ["LoggingTensor"] * 5


def test_modes_see_every_call_stack_and_are_off_inside_their_handler():
    def scenario(L):
        log = []

        class Named(_overrides(L).TorchFunctionMode):
            def __init__(self, name):
                super().__init__()
                self.name = name

            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(f"{self.name} {func.__name__}")
                return func(*args, **(kwargs or {}))
        with Named("outer"), Named("inner"):
            a = L.ones(2)
            L.mul(a + 1, 3)
        L.ones(1)  # no mode: not seen
        return log
    assert same_as_torch(scenario) == [
        "inner ones", "outer ones", "inner add", "outer add", "inner mul", "outer mul"]


def test_dispatch_goes_to_subclasses_first_and_skips_not_implemented():
    def scenario(L):
        seen = []

        class Base(L.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(["Base", [t.__name__ for t in types]])
                return "base"

        class Child(Base):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append(["Child", [t.__name__ for t in types]])
                return NotImplemented
        b, c = L.ones(1).as_subclass(Base), L.ones(1).as_subclass(Child)
        return [L.add(b, c), seen]
    assert same_as_torch(scenario) == ["base", [["Child", ["Child", "Base"]],
                                                ["Base", ["Child", "Base"]]]]


def test_all_handlers_not_implemented_raise_pytorchs_type_error():
    def scenario(L):
        class Refuses(L.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        x = L.ones(2).as_subclass(Refuses)
        for call, name in ((lambda: L.add(x, 1), "torch.add"),
                           (lambda: x.add(1), "torch.Tensor.add")):
            with pytest.raises(TypeError, match=rf"^Multiple dispatch failed for '{name}'; all "
                               r"__torch_function__ handlers returned NotImplemented:\n\n  - "
                               r"tensor subclass <class '.*Refuses'>"):
                call()
        return True
    same_as_torch(scenario)


def test_disabling_keeps_plain_tensors_and_parameters_opt_out():
    def scenario(L):
        log = []
        cls = _logging_subclass(L, log)
        x = L.ones(2).as_subclass(cls)
        with L._C.DisableTorchFunctionSubclass():
            plain = x + 1
        p = L.nn.Parameter(L.ones(2))
        return [type(plain).__name__, log, type(p * 2).__name__]
    assert same_as_torch(scenario) == ["Tensor", [], "Tensor"]


def test_overrides_helpers_answer_as_pytorchs():
    def scenario(L):
        o = _overrides(L)

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("like", func.__name__)

        def f(a):
            if o.has_torch_function((a,)):
                return o.handle_torch_function(f, (a,), a)
            return "plain"
        t = L.ones(1)
        return [o.is_tensor_like(Like()), o.is_tensor_like(t), o.is_tensor_like(1),
                o.has_torch_function((t,)), o.has_torch_function((Like(),)),
                list(L.add(Like(), 1)), list(f(Like())), f(t),
                L.Tensor.grad.__get__ in o.get_default_nowrap_functions()]
    assert same_as_torch(scenario) == [True, True, False, False, True, ["like", "add"],
                                       ["like", "f"], "plain", True]


def test_make_subclass_shares_data_outside_the_graph():
    def scenario(L):
        class Sub(L.Tensor):
            pass
        a = L.ones(2, requires_grad=True) * 2
        s = L.Tensor._make_subclass(Sub, a, True)
        with L.no_grad():
            a.add_(1)
        return [type(s).__name__, s.requires_grad, s.grad_fn is None, s.tolist(), s._version]
    assert same_as_torch(scenario) == ["Sub", True, True, [3.0, 3.0], 1]


def test_the_python_namespaces_and_the_modules_calling_them_are_seen():
    """``torch.nn.functional``, ``linalg``, ``special`` and ``fft`` are Python namespaces
    in PyTorch too, and intercept their functions; a Module's forward reaches them."""
    def scenario(L):
        log = []
        cls = _logging_subclass(L, log)
        L.manual_seed(0)
        nn, F = L.nn, L.nn.functional
        model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Dropout(0.0), nn.Linear(2, 3))
        x = L.ones(2, 1, 4, 4).as_subclass(cls)
        y = model(x)
        loss = F.cross_entropy(y, L.tensor([0, 2])) + L.linalg.vector_norm(y)
        L.special.expit(y)
        L.fft.fft(y)
        return [log, type(loss).__name__]
    log, kind = same_as_torch(scenario)
    assert log == ["conv2d", "relu", "max_pool2d", "flatten", "dropout", "linear",
                   "cross_entropy", "linalg_vector_norm", "add", "special_expit", "fft_fft"]
    assert kind == "LoggingTensor"


def test_properties_are_seen_as_their_getters_and_setters():
    def scenario(L):
        log = []

        class Props(L.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                log.append([func.__name__, func == L.Tensor.shape.__get__,
                            func == L.Tensor.requires_grad.__set__])
                return super().__torch_function__(func, types, args, kwargs)
        x = L.ones(2, 3).as_subclass(Props)
        x.requires_grad = True
        shape, kinds = list(x.shape), [type(x.T).__name__, type(x.data).__name__]
        x.sum().backward()
        grad_kind = type(x.grad).__name__  # Tensor.grad.__get__ returns it unconverted
        y = L.ones(2) * 2
        base_kept = y.as_subclass(Props)._base is y  # so does Tensor._base.__get__
        return [log, shape, kinds, grad_kind, x.dim(), len(x), bool(x[0, 0]), base_kept]
    log, shape, kinds, grad_kind, dim, n, truth, base_kept = same_as_torch(scenario)
    assert base_kept
    assert log[:3] == [["__set__", False, True], ["__get__", True, False],
                       ["__get__", False, False]]
    assert [e[0] for e in log[3:]] == ["__get__", "sum", "backward", "__get__", "__get__",
                                       "dim", "__len__", "__getitem__", "__bool__"]
    assert (shape, kinds, grad_kind) == ([2, 3], ["Props", "Props"], "Tensor")


def test_a_mode_sees_a_namespace_imported_after_it_switched_on():
    """The protocol switches on at the first mode: the Python namespaces are wrapped then,
    whether or not the program had imported them."""
    import subprocess
    import sys
    program = (
        "import hookgrad as torch\n"
        "from hookgrad.overrides import TorchFunctionMode\n"
        "log = []\n"
        "class M(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        log.append(func.__name__)\n"
        "        return func(*args, **(kwargs or {}))\n"
        "with M():\n"
        "    import hookgrad.nn.functional as F\n"
        "    F.gelu(torch.ones(2))\n"
        "print(log)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "['ones', 'gelu']"


def test_a_subclass_operator_leaves_an_operand_its_parser_refuses_to_python():
    """A binary operator whose handlers end in a TypeError (the operand refused, or every
    handler returning NotImplemented) returns NotImplemented, as PyTorch's operators do:
    ``x == None`` is False and ``x % 'a'`` is Python's TypeError on a subclass too (before,
    hookgrad raised 'Multiple dispatch failed for torch.Tensor.eq')."""
    def scenario(L):
        log = []
        x = L.tensor([1.0, 2.0]).as_subclass(_logging_subclass(L, log))
        out = [x == None, x != "a", x.__mod__("a"), x.__rsub__([1.0])]  # noqa: E711
        for src in ("x % 'a'", "None - x", "x @ 'a'", "x - [1.0]"):
            try:
                eval(src, {"x": x})
            except TypeError as e:
                out.append(str(e))
        out.append(str((x + 1).tolist()))
        return [repr(v) if v is NotImplemented else v for v in out]  # (the log: below)
    got = same_as_torch(scenario)
    assert got[:5] == [False, True, "NotImplemented", "NotImplemented",
                       "unsupported operand type(s) for %: 'LoggingTensor' and 'str'"]


_OPERATOR_CALLS = ["x == y", "x != y", "x < y", "x + y", "1 - x", "x * 2", "2 * x", "x / 2",
                   "2 / x", "x // 2", "2 // x", "x % 2", "2 % x", "x ** 2", "2 ** x", "-x",
                   "~b", "b & c", "b | c", "b ^ c", "x == 1", "x.__iadd__(1)", "x.__isub__(1)",
                   "x.__imul__(1)", "x.__itruediv__(1)", "x.__ipow__(1)", "b.__iand__(c)",
                   "b.__ior__(c)", "b.__ixor__(c)"]


def test_a_subclass_sees_each_operator_under_pytorchs_name():
    # PyTorch's handlers see ``__eq__``, ``__rsub__``, ``__rdiv__``, ``__floordiv__``,
    # ``__and__``, ``__invert__`` where the other operators are their functions (``ne``,
    # ``mul``), and ``+=`` as ``add_`` but ``&=`` as ``__iand__``
    def scenario(L):
        log = []
        cls = _logging_subclass(L, log)
        x, y = L.tensor([1.0, 2.0]).as_subclass(cls), L.tensor([1.0, 3.0])
        b, c = L.tensor([True, False]).as_subclass(cls), L.tensor([True, True])
        seen = []
        for call in _OPERATOR_CALLS:
            log.clear()
            eval(call)
            seen.append([call, list(log)])
        return seen
    seen = dict(same_as_torch(scenario))
    assert seen["x == y"] == ["__eq__"] and seen["1 - x"] == ["__rsub__"]
    assert seen["~b"] == ["__invert__"] and seen["x.__iadd__(1)"] == ["add_"]


def test_rsub_with_alpha_is_not_implemented():
    got = same_as_torch(lambda L: [L.ones(2).__rsub__(1, alpha=2) is NotImplemented,
                                   L.ones(2).__rsub__(1).tolist()])
    assert got == [True, [0.0, 0.0]]
