"""The host path's lean entries (docs/modes.md, "The host stage"): ``torch.tensor`` of small
data holds its copy on the host, as the host stage's results are held; ``gather`` of small
host values runs its NumPy form alone (``dispatch.on_host``), before its own checks. What
intercepts or records (dispatch and function modes, subclasses, forward AD, autograd and
its hooks, autocast, a trace) still sees every call, and bad input gets PyTorch's errors."""
import numpy as np
import pytest

import hookgrad
from hookgrad._host_value import Host
from tests.differential import py, raises_as_torch, same_as_torch

torch = pytest.importorskip("torch")


def _held(t):
    return type(t._arr) is Host


class _Log(hookgrad.utils._python_dispatch.TorchDispatchMode):
    """A dispatch mode that notes each ATen op it sees in ``seen``."""

    def __init__(self, seen):
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def test_small_tensor_data_is_held_on_the_host_until_xla_reads_it():
    data = [[4.0, 0.5], [7.0, 2.0]]
    t = hookgrad.tensor(data)
    assert _held(t) and not t._arr.np.flags.writeable  # a copy nothing writes in place
    assert _held(t * 2) and _held(t.gather(1, hookgrad.tensor([[1], [0]])))
    s = t.sin()  # no NumPy form: XLA reads the values, once, in place of the host copy
    assert not _held(t) and py(s) == py(torch.tensor(data).sin())
    u = hookgrad.tensor(data)
    u[0, 1] = 9.0  # a write copies it into host-tier memory; the data is not touched
    assert py(u) == [[4.0, 9.0], [7.0, 2.0]] and data[0][1] == 0.5
    assert not _held(hookgrad.tensor(np.zeros(5000)))  # past the host bound: XLA holds it


def test_tensor_data_crosses_into_xla_where_something_must_see_it():
    w = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    assert not _held(w)
    (w * 3).sum().backward()
    assert py(w.grad) == [3.0, 3.0]
    seen = []

    with _Log(seen):
        t = hookgrad.tensor([1.0, 2.0])
        assert py(t + 1) == [2.0, 3.0]
    assert not _held(t) and seen[0] == "aten.lift_fresh.default" and "aten.add.Tensor" in seen
    step = hookgrad.compile(lambda v: v + hookgrad.tensor([1.0, 2.0]))
    for k in range(3):  # made while JAX traces: the program's constant, each call
        assert py(step(hookgrad.ones(2) * k)) == [1.0 + k, 2.0 + k]


def _gather_args(L, **kw):
    x = L.tensor(np.arange(12.0).reshape(3, 4).astype(np.float32), **kw)
    return x, L.tensor([[0, 3], [2, 2], [1, 0]])


def test_gather_of_host_values_is_seen_by_modes_and_subclasses():
    seen = []

    class Funcs(hookgrad.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    class Sub(hookgrad.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append("Sub." + func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x, idx = _gather_args(hookgrad)
    want = py(torch.gather(*_gather_args(torch)[:1], 1, _gather_args(torch)[1]))
    with _Log(seen):
        assert py(hookgrad.gather(x, 1, idx)) == want
    assert "aten.gather.default" in seen
    seen.clear()
    with Funcs():
        assert py(hookgrad.gather(x, 1, idx)) == want
    assert "gather" in seen
    sub = x.as_subclass(Sub)
    seen.clear()
    got = hookgrad.gather(sub, 1, idx)
    assert type(got) is Sub and py(got) == want and "Sub.gather" in seen


def test_gather_of_host_values_records_and_carries_tangents():
    def run(L):
        x, idx = _gather_args(L, requires_grad=True)
        hooked = []
        x.register_hook(lambda g: hooked.append(py(g)))
        y = L.gather(x, 1, idx)
        y.backward(L.ones_like(y))
        return [y.grad_fn.name(), py(x.grad), hooked]
    same_as_torch(run, tol=0)
    import hookgrad.autograd.forward_ad as fwAD
    x, idx = _gather_args(hookgrad)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, x * 10)
        tangent = fwAD.unpack_dual(hookgrad.gather(dual, 1, idx)).tangent
    assert tangent is not None and py(tangent) == py(hookgrad.gather(x * 10, 1, idx))


def test_host_values_under_autocast_are_cast_as_pytorch_casts():
    def run(L):
        x, w = L.tensor([[1.0, 2.0]]), L.tensor([[0.5, -1.0], [2.0, 0.25]])
        with L.autocast("cpu", dtype=L.bfloat16):
            y = L.nn.functional.linear(x, w)
            z = L.gather(x, 1, L.tensor([[1, 0]]))
        return [str(y.dtype).split(".")[-1], py(y.float()), str(z.dtype).split(".")[-1], py(z)]
    same_as_torch(run, tol=0)


@pytest.mark.parametrize("index, dim, exc, match", [
    ([[0, 4]], 1, RuntimeError, "index 4 is out of bounds for dimension 1 with size 4"),
    ([[-1, 0]], 1, RuntimeError, "index -1 is out of bounds for dimension 1 with size 4"),
    ([[0.0, 1.0]], 1, RuntimeError, r"gather\(\): Expected dtype int"),
    ([[0], [1], [2], [0]], 1, RuntimeError, "Size does not match at dimension 0"),
    ([[0, 1]], 2, IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], "
                              r"but got 2\)"),
])
def test_gather_of_host_values_raises_pytorchs_errors(index, dim, exc, match):
    raises_as_torch(lambda L: L.gather(_gather_args(L)[0], dim, L.tensor(index)), exc, match)
