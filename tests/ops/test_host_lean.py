"""The host path's lean entries (docs/modes.md, "The host stage"): ``torch.tensor`` of small
data holds its copy on the host, as the host stage's results are held; ``gather`` of small
host values runs its NumPy form alone (``dispatch.on_host``), before its own checks. What
intercepts or records (dispatch and function modes, subclasses, forward AD, autograd and
its hooks, autocast, a trace) still sees every call, and bad input gets PyTorch's errors."""
import itertools

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


def test_tensor_data_named_for_the_cpu_is_held_on_the_host_too():
    """``device=x.device`` (the CPU, no index: ``generate``'s token tensors) holds the copy
    as no ``device`` does; another device, the CPU with an index included, makes an array
    there, as before."""
    x = hookgrad.ones(2)
    t = hookgrad.tensor(5, device=x.device, dtype=hookgrad.long)
    assert _held(t) and str(t.device) == "cpu" and py(t + 1) == 6
    assert t.dtype == hookgrad.long and py(torch.tensor(5, device="cpu") + 1) == 6
    assert not _held(hookgrad.tensor([1.0], device="cpu:0"))
    assert not _held(hookgrad.tensor([1.0], device=hookgrad.device("cpu", 0)))
    assert not _held(hookgrad.tensor([1.0], device=hookgrad.device("meta")))


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


def _watchers(seen):
    """A TorchFunctionMode and a Tensor subclass that note in ``seen`` each call they see."""
    class Funcs(hookgrad.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    class Sub(hookgrad.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append("Sub." + func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})
    return Funcs, Sub


def _gather_args(L, **kw):
    x = L.tensor(np.arange(12.0).reshape(3, 4).astype(np.float32), **kw)
    return x, L.tensor([[0, 3], [2, 2], [1, 0]])


def test_gather_of_host_values_is_seen_by_modes_and_subclasses():
    seen = []
    Funcs, Sub = _watchers(seen)

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


# ---- stack, sum and mean of host values: their NumPy forms first (``dispatch.on_host``)

def _parts(L, **kw):
    return [L.tensor(np.arange(6.0).reshape(2, 3).astype(np.float32) + k, **kw)
            for k in range(6)]


_LEAN = {  # name -> the call, on ``_parts``' Tensors
    "stack": lambda L, ps: L.stack(ps),
    "stack_dim": lambda L, ps: L.stack(ps, 2),
    "sum": lambda L, ps: ps[0].sum(),
    "mean": lambda L, ps: L.mean(ps[1]),
}


@pytest.mark.parametrize("name", list(_LEAN))
def test_lean_joins_and_reductions_run_on_the_host_and_equal_pytorch(name):
    got = _LEAN[name](hookgrad, _parts(hookgrad))
    want = _LEAN[name](torch, _parts(torch))
    assert _held(got) and str(got.dtype) == str(want.dtype).replace("torch", "hookgrad")
    assert py(got) == py(want)


@pytest.mark.parametrize("name", list(_LEAN))
def test_lean_joins_and_reductions_are_seen_by_modes_and_subclasses(name):
    seen = []
    Funcs, Sub = _watchers(seen)

    want = py(_LEAN[name](torch, _parts(torch)))
    aten = "aten.stack.default" if name.startswith("stack") else f"aten.{name}."
    ps = _parts(hookgrad)  # held on the host, made before the modes
    assert all(map(_held, ps))
    with _Log(seen):
        assert py(_LEAN[name](hookgrad, ps)) == want
    assert any(s.startswith(aten) for s in seen), seen
    seen.clear()
    with Funcs():
        assert py(_LEAN[name](hookgrad, ps)) == want
    assert name.split("_")[0] in seen
    seen.clear()
    got = _LEAN[name](hookgrad, [p.as_subclass(Sub) for p in _parts(hookgrad)])
    assert type(got) is Sub and py(got) == want and "Sub." + name.split("_")[0] in seen


@pytest.mark.parametrize("name", list(_LEAN))
def test_lean_joins_and_reductions_record_carry_tangents_and_compile(name):
    def run(L):
        ps = _parts(L, requires_grad=True)
        hooked = []
        ps[0].register_hook(lambda g: hooked.append(py(g)))
        y = _LEAN[name](L, ps)
        y.backward(L.ones_like(y))
        return [y.grad_fn.name(), py(ps[0].grad), hooked]
    same_as_torch(run, tol=0)
    import hookgrad.autograd.forward_ad as fwAD
    ps = _parts(hookgrad)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, p * 10) for p in ps]
        tangent = fwAD.unpack_dual(_LEAN[name](hookgrad, duals)).tangent
    assert tangent is not None and py(tangent) == py(_LEAN[name](hookgrad, [p * 10 for p in ps]))
    step = hookgrad.compile(lambda *vs: _LEAN[name](hookgrad, list(vs)) * 2)
    for k in range(3):
        got = step(*[p + k for p in _parts(hookgrad)])
        assert py(got) == py(_LEAN[name](torch, [p + k for p in _parts(torch)]) * 2)


@pytest.mark.parametrize("call, exc, match", [
    (lambda L: L.stack([L.tensor([1.0, 2.0])] * 5 + [L.tensor([1.0, 2.0, 3.0])]), RuntimeError,
     r"stack expects each tensor to be equal size, but got \[2\] at entry 0 and \[3\] at "
     r"entry 5"),
    (lambda L: L.stack([L.ones(2, 3)] * 5 + [L.ones(3, 2)]), RuntimeError,
     "stack expects each tensor to be equal size"),
    (lambda L: L.stack([L.tensor([1.0, 2.0])] * 6, 2), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda L: L.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda L: L.tensor([1, 2]).mean(), RuntimeError, "mean\\(\\): could not infer output dtype"),
])
def test_lean_joins_and_reductions_raise_pytorchs_errors(call, exc, match):
    raises_as_torch(call, exc, match)


def test_a_stack_of_mixed_parts_promotes_as_pytorch():
    def run(L):
        ints = [L.tensor([1, 2]) for _ in range(5)]
        got = [L.stack(ints + [L.tensor([0.5, 1.5])]), L.stack(ints, -1),
               L.stack(tuple(ints)), L.stack([t.flip(0) for t in ints]),
               L.stack([L.tensor(True)] * 6), L.tensor([3, 4]).sum()]
        return [[str(t.dtype).split(".")[-1], py(t)] for t in got]
    same_as_torch(run, tol=0)


def test_an_int_index_read_and_written_in_a_loop_over_shapes_equals_pytorch():
    # the parse of ``x[i]`` is remembered by shape and int: each shape gets its own answer
    def run(L):
        got = []
        for shape, held in itertools.product(((4,), (4, 3), (2, 4), (5, 2, 2)), (0, 1)):
            x = L.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape)) if held \
                else L.arange(float(np.prod(shape))).reshape(shape)  # held on the host, or not
            for i in (1, -1, 1):
                got.append(py(x[i]))
                x[i] = x[i] * 2 + 1
            got.append(py(x))
            if len(shape) > 1:  # ``x[i, :n]``, a ragged row: remembered by shape, i and n
                for i, n in ((0, 1), (1, 2), (0, 1), (-1, -1), (1, 99), (0, 0)):
                    got.append(py(x[i, :n]))
                    x[i, :n] = x[i, :n] - 3
                got.append(py(x))
        return got
    same_as_torch(run, tol=0)
    raises_as_torch(lambda L: L.zeros(4, 2)[1, :2] + L.zeros(3, 2)[3, :2], IndexError,
                    "index 3 is out of bounds for dimension 0 with size 3")
    for i in (3, 4):
        raises_as_torch(lambda L: L.zeros(4, 2)[i] + L.zeros(3)[i], IndexError,
                        "index 3 is out of bounds for dimension 0 with size 3" if i == 3 else
                        "index 4 is out of bounds for dimension 0 with size 4")
