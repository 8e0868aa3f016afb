"""Small CPU Tensors written by Python loops hold their values in NumPy (the host tier,
``hookgrad/_ops/host_tier.py``): index writes, ``op=`` on an index view, index reads,
``.item()`` and ``tolist()`` act on them without XLA, and the first op that needs XLA copies
them into a ``jax.Array``. Each behaviour is checked against PyTorch: values (bitwise where
PyTorch's CPU kernels are one rounded operation), ``_version``, views, autograd, modes."""
import warnings

import jax
import numpy as np
import pytest

import hookgrad
from hookgrad._host_value import Host
from tests.differential import close, py, raises, same_as_torch


def _held(t):
    return type(t._arr) is Host


def test_a_loop_of_writes_holds_the_values_on_the_host_until_an_op_reads_them():
    x = hookgrad.zeros(4, 6)
    for i in range(4):
        x[i, i:i + 2] = float(i)
    assert _held(x)
    v = x[2]
    assert _held(v) and v[2].item() == 2.0 and x[3].tolist() == [0, 0, 0, 3, 3, 0]
    y = x.cumsum(1)                 # an op with no NumPy form: copied into XLA once
    assert isinstance(x._arr, jax.Array) and y[3, 4].item() == 6.0
    x[0, 0] = 7.0                   # the next write holds it on the host again
    assert _held(x) and _held(v) and py(v) == [0, 0, 2, 2, 0, 0]
    assert x[0, 0].item() == 7.0 and y[0, 0].item() == 0.0  # y kept its value


def test_the_benchmark_idioms_match_pytorch_values_and_versions():
    def run(L):
        imgs = L.zeros(6, 3, 12, 12)
        where, labels = L.tensor([0, 2, 1, 1, 0, 2]), L.tensor([3, 7, 1, 0, 9, 4])
        for i in range(6):
            w, k = where[i].item(), labels[i].item()
            r0, c0 = (0, 2, 4)[w], (1, 3, 4)[(i * 7) % 3]
            imgs[i, 0, r0:r0 + 8, c0:c0 + 8] += 2.0
            imgs[i, k % 3, c0:c0 + 4, r0:r0 + 4] += 1.0
            imgs[i, 2, r0:r0 + 2, :] -= 0.5
        base, out = L.arange(8.0), L.zeros(5, 8)
        for i in range(5):
            out[i] = base * (i % 3) + i * 0.01
        seqs = [L.arange(float(m * 2)).reshape(m, 2) for m in (3, 1, 4)]
        batch = L.zeros(3, 4, 2)
        for i, s in enumerate(seqs):
            batch[i, :s.shape[0]] = s
        return (py(imgs.sum(dim=(2, 3))), imgs._version, py(out), out._version, py(batch),
                batch._version)
    same_as_torch(run, tol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_arithmetic_rounds_as_pytorch_bitwise(dtype):
    def run(L):
        dt = getattr(L, dtype)
        x = (L.arange(48, dtype=dt).reshape(4, 12) - 17.0) * 0.37
        x[0, 0] = 1.0   # held on the host from here
        for i, s in enumerate((3.0, 7.0, 0.1, 1e-3, 10.0, 1 / 3)):
            x[i % 4, i:i + 6] /= s
            x[(i + 1) % 4, 2 * i:] *= s
            x[(i + 2) % 4, :i + 3] += s
            x[(i + 3) % 4, 1:] -= s
        x[1] += x[2]    # a Tensor operand of the same dtype
        x[3, :4] /= L.tensor([3.0, 0.7, 1.1, 9.0], dtype=dt)
        return [float(v).hex() for v in x.reshape(-1).tolist()], x._version
    same_as_torch(run, tol=0)


def test_integer_writes_wrap_and_division_by_zero_is_quiet_as_in_pytorch():
    def run(L):
        b = L.zeros(4, dtype=L.int8)
        b[1:] = 100
        b[2:] += 100          # wraps around, as PyTorch's int8 does
        b[3] *= 3
        f = L.ones(3)
        f[0] = 0.0
        f[1:] /= 0.0          # inf, and no warning
        f[0] /= 0.0           # nan
        f[1] = L.tensor([1e300], dtype=L.float64)  # past float32's range: inf
        return py(b), [str(v) for v in f.tolist()], b._version, f._version
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same_as_torch(run)


def test_live_views_of_every_kind_see_the_writes_and_share_the_version():
    def run(L):
        x = L.arange(24.0).reshape(4, 6)
        row, col, flat, t, det = x[1], x[:, 2], x.view(-1), x.t(), x.detach()
        x[1, 1:4] = -1.0
        row[0] += 5.0
        x[:, 2] *= 2.0
        col[3] = 100.0
        return [py(a) for a in (x, row, col, flat, t, det)], \
            [a._version for a in (x, row, col, flat, t, det)]
    same_as_torch(run, tol=0)


def test_a_view_read_by_an_op_then_written_keeps_both_current():
    def run(L):
        x = L.zeros(3, 4)
        v = x[1]
        x[1, 0] = 1.0
        s = (v * 3).sum()      # the view's values go through XLA
        v[1] = 2.0             # and the view is written again on the host
        x[1, 2] += 4.0
        return py(s), py(x), py(v), x._version, v._version
    same_as_torch(run)


def test_values_of_other_dtypes_cast_as_pytorchs_copy():
    def run(L):
        x = L.zeros(3, 4)
        x[0] = L.arange(4)                        # int64 into float32
        x[1] = L.tensor([0.1] * 4, dtype=L.float64)  # rounded to float32
        x[2, 1:3] = True
        n = L.zeros(2, 3, dtype=L.int32)
        n[0] = 7
        n[1, :2] = L.tensor([True, False])
        n[1, 2] = 2.7                              # a Python float into an int: truncated
        return py(x), py(n), x.dtype == L.float32, n.dtype == L.int32
    same_as_torch(run, tol=0)


def test_a_tensor_filled_by_a_loop_trains_as_in_pytorch():
    def run(L):
        L.manual_seed(0)
        feats = L.zeros(8, 4)
        for i in range(8):
            feats[i, i % 4] = 1.0
            feats[i, :2] += i * 0.5
        w = L.nn.Parameter(L.linspace(-1.0, 1.0, 12).reshape(4, 3))
        opt = L.optim.SGD([w], lr=0.1)
        losses = []
        for step in range(3):
            loss = ((feats @ w) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            feats[step, 3] = 2.0   # written again between steps
        return [losses, py(w), py(w.grad)]
    same_as_torch(run)


def test_a_write_of_a_value_that_requires_grad_is_recorded():
    def run(L):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = L.zeros(2, 3)
        x[0, 1] = 5.0          # held on the host
        x[1] = a * 2           # recorded: CopySlices
        (x * x).sum().backward()
        return py(x), type(x.grad_fn).__name__, py(a.grad), x._version
    same_as_torch(run, names=False)


def test_a_saved_tensor_written_on_the_host_fails_backward_as_in_pytorch():
    def run(L):
        a = L.ones(3, requires_grad=True)
        x = L.zeros(3)
        x[0] = 2.0
        y = (a * x).sum()       # saves x at version 1
        x[1] = 3.0
        return raises(y.backward)
    same_as_torch(run)


def test_the_host_tier_stays_out_of_recording_modes_and_traces():
    from hookgrad.overrides import TorchFunctionMode

    seen = []

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    x = hookgrad.zeros(3)
    x[0] = 1.0
    with Log():
        x[1] = 2.0
        x[2] += 3.0
    assert "__setitem__" in seen and py(x) == [1.0, 2.0, 3.0]

    def fill(buf, v):
        buf[1] = v * 2
        return buf * 1

    step = hookgrad.compile(fill)
    buf = hookgrad.zeros(3)
    buf[0] = 1.0
    assert py(step(buf, hookgrad.tensor(4.0))) == [1.0, 8.0, 0.0]
    assert py(buf) == [1.0, 8.0, 0.0]


def test_an_out_argument_held_on_the_host_gets_the_ops_result():
    def run(L):
        x = L.zeros(4)
        x[0] = 1.0              # held on the host
        y = L.add(L.ones(4), 2.0, out=x)
        return py(x), y is x
    assert same_as_torch(run) == ([3.0, 3.0, 3.0, 3.0], True)


def test_a_write_into_an_expanded_view_raises_pytorchs_error():
    def run(L):
        x = L.zeros(1, 3)
        x[0, 0] = 1.0           # held on the host
        e = x.expand(4, 3)
        r = raises(lambda: e.add_(1.0))
        return r, py(x), x._version
    same_as_torch(run)


def test_a_large_tensor_that_alternates_writes_and_xla_reads_stays_in_xla():
    # each turn would copy it to the host and back: its writes do not pay for that
    buf = hookgrad.zeros(64, 1024)
    buf[0, :8] = 1.0
    assert _held(buf)
    for i in range(1, 4):
        total = buf.cumsum(0)[-1].sum()  # XLA reads it whole (cumsum has no NumPy form)
        buf[i, :8] = float(i)
        assert not _held(buf) and total.item() == 8.0 * (1 + sum(range(i)))
    small = hookgrad.zeros(64, 8)     # a small one always moves: its copies cost little
    for i in range(3):
        small.sum()
        small[i] = 1.0
        assert _held(small)
    assert py(buf[:4, 0]) == [1.0, 1.0, 2.0, 3.0]


def test_a_compiled_step_reads_a_batch_filled_by_a_loop_each_call():
    w = hookgrad.nn.Parameter(hookgrad.ones(4))

    def step(batch):
        return (batch * w).sum()

    compiled = hookgrad.compile(step)
    for call in range(4):
        batch = hookgrad.zeros(3, 4)
        for i in range(3):
            batch[i, i:] = float(call + i)
        assert _held(batch)
        assert compiled(batch).item() == step(batch).item()
    state = hookgrad.zeros(2, 4)   # state the step reads, written between calls
    read = hookgrad.compile(lambda: (state * w).sum())
    for call in range(4):
        state[call % 2, call] = 1.0 + call
        assert read().item() == (state * w).sum().item()
