"""``__torch_function__``: Tensor subclasses and ``TorchFunctionMode`` s see the public
functions and Tensor methods called on them, in PyTorch's order, and the helpers of
``torch.overrides`` answer as PyTorch's."""
import importlib

import pytest

from tests.differential import same_as_torch


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
