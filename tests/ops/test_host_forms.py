"""The host stage (``hookgrad/_ops/stages/host.py``): a row with a NumPy form
(``hookgrad/_ops/host_forms.py``) runs in NumPy on small CPU values that nothing records,
and its result stays on the host. Each form is checked against PyTorch: values (bitwise
for arithmetic, comparisons, casts and integer ops; within one float32 rounding for
transcendental functions and float reductions), dtypes over PyTorch's promotion grid, the
errors of bad input, and where values cross into XLA (autograd, modes, traces)."""
import itertools

import numpy as np
import pytest

import hookgrad
from hookgrad._host_value import Host
from hookgrad._ops.host_forms import FORMS
from hookgrad._ops.registry import OPS
from tests._calls import watch
from tests.differential import py, same_as_torch

torch = pytest.importorskip("torch")


def _held(t):
    return type(t._arr) is Host


def _bits(t):
    """A Tensor's values as exact strings (floats in hex), its dtype and shape."""
    a = np.asarray(t.tolist())
    vals = [float(v).hex() if a.dtype.kind == "f" else str(v) for v in a.reshape(-1).tolist()]
    return vals, str(t.dtype).split(".")[-1], list(t.shape)


def test_every_form_is_a_row_of_the_op_table():
    assert sorted(n for n in FORMS if n not in OPS) == []


_DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]


def _grid(L, op):
    """``op`` over every pair of dtypes and Python numbers PyTorch computes (where it
    raises, the XLA path decides: its errors are its own rows' tests)."""
    for a, b in itertools.product(_DTYPES, _DTYPES + [True, 3, -2, 0.37]):
        x = L.tensor(np.array([0, 1, 3, 5, 7, 2]).astype(a))
        y = L.tensor(np.array([2, 1, 0, 9, 4, 3]).astype(b)) if isinstance(b, str) else b
        try:
            want = getattr(torch, op)(torch.tensor(np.asarray(x.tolist())).to(
                getattr(torch, a)), y if not isinstance(y, hookgrad.Tensor) else
                torch.tensor(np.asarray(y.tolist())).to(getattr(torch, b)))
        except (RuntimeError, TypeError):
            continue
        yield a, b, getattr(L, op)(x, y), want


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt",
                                "ge", "bitwise_and", "bitwise_or", "bitwise_xor"])
def test_binary_forms_give_pytorchs_values_and_dtypes_bitwise(op):
    held = 0
    for a, b, got, want in _grid(hookgrad, op):
        assert _bits(got) == _bits(want), (a, b)
        held += _held(got)
    # every pair of one dtype, and every number of no higher kind, runs on the host
    assert held >= len(_DTYPES) - (op == "sub")


@pytest.mark.parametrize("op", ["add", "mul"])
def test_complex_operands_promote_as_pytorch_and_keep_their_imaginary_parts(op):
    # a complex Tensor held on the host times a real one was computed in the real dtype
    # (the imaginary part dropped): an stft's frames times its window
    def run(L):
        out = []
        for a, b in itertools.product(["complex64", "complex128"],
                                      ["int64", "float32", "float64", "complex64"]):
            # (a small value's view is held on the host: the frames an stft unfolds)
            z = L.tensor(np.array([1.5 + 0.5j, -2 + 1j, 0.25 - 2j]).astype(a)).unsqueeze(0)
            r = L.tensor(np.array([2, -3, 4]).astype(b)).unsqueeze(0)
            assert L is torch or _held(z) and _held(r)
            out += [_bits(getattr(L, op)(z, r)), _bits(getattr(L, op)(r, z))]
        return out
    same_as_torch(run, tol=0)


def test_arithmetic_with_numbers_and_0d_tensors_promotes_as_pytorch():
    def run(L):
        x32, xi = L.tensor([1.5, -2.25, 3.0]) * 1, L.tensor([1, -2, 3], dtype=L.int32) * 1
        cases = [x32 * 0.1, x32 + 3, xi * 2.5, xi + 7, xi / 2, xi + True,
                 xi + L.tensor(2.0, dtype=L.float64), x32 + L.tensor(2.0, dtype=L.float64),
                 xi * L.tensor(3, dtype=L.int64), x32 / 0.0, -x32, xi.abs()]
        assert L is torch or all(_held(c) for c in cases)
        return [_bits(c) for c in cases]
    same_as_torch(run, tol=0)


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float64", "float32"),
                                     ("int64", "float32"), ("int64", "int8"),
                                     ("float32", "bool"), ("bool", "float64"),
                                     ("uint8", "int64")])
def test_casts_are_bitwise_pytorchs(src, dst):
    def run(L):
        v = np.array([-2.7, 0.49999997, 3.5, 1e8 + 1, 300, 0]).astype(src)
        r = L.tensor(v).to(getattr(L, dst))
        assert L is torch or _held(r)
        return _bits(r)
    same_as_torch(run, tol=0)


@pytest.mark.parametrize("fn", ["exp", "log", "sqrt", "tanh"])
def test_transcendental_forms_are_within_one_float32_rounding(fn):
    v = np.random.default_rng(0).uniform(0.01, 8, 2000).astype(np.float32)
    got = getattr(hookgrad.tensor(v), fn)()
    want = getattr(torch.tensor(v), fn)().numpy()
    assert _held(got)
    ulps = np.abs(got.numpy().view(np.int32).astype(np.int64) - want.view(np.int32))
    assert ulps.max() <= 1


@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "uint8", "bool"])
def test_reductions_over_dims_match_pytorch(dtype):
    def run(L):
        x = L.tensor((np.arange(60).reshape(3, 4, 5) % 7 - 2).astype(dtype))
        rs = [x.sum(), x.sum(1), x.sum((0, 2), keepdim=True), x.sum(dtype=L.float64),
              x.amax(1), x.amin((0, 1))]
        if dtype != "bool":
            rs += [x.argmax(), x.argmax(2, keepdim=True), x.argmin(0)]
        if dtype == "float32":
            rs += [x.mean(), x.mean(2), x.logsumexp(1), x.logsumexp((0, 2), keepdim=True)]
        assert L is torch or all(_held(r) for r in rs)
        return [[py(r) for r in rs], [str(r.dtype).split(".")[-1] for r in rs],
                [list(r.shape) for r in rs]]
    same_as_torch(run, tol=1e-6, names=False)


def test_stack_cat_flip_and_gather_match_pytorch():
    def run(L):
        a = L.tensor(np.arange(12.0).reshape(3, 4).astype(np.float32))
        b = L.tensor(np.arange(12).reshape(3, 4))
        idx = L.tensor([[0, 3], [2, 2]])
        wide = L.tensor(np.arange(3 * 40).reshape(3, 40) % 4)  # past the short-index check
        rs = [L.stack([a, b]), L.stack([a, a], dim=-1), L.cat([a, b], 1), L.cat([b, b]),
              a.flip(-1), b.flip((0, 1)), a.gather(1, idx), b.gather(0, idx[:, :1]),
              a.gather(1, wide)]
        assert L is torch or all(_held(r) for r in rs)
        return [_bits(r) for r in rs]
    same_as_torch(run, tol=0)


def test_constant_pads_and_copies_of_held_values_match_pytorch():
    """A causal LM's loss builds its labels as ``pad(labels, (0, 1), value=-100)[..., 1:]
    .contiguous().view(-1)``: on held labels every step stays on the host, so the loss's
    bounds check reads NumPy instead of waiting for XLA. A crop, or a float value padding
    integers, is the XLA path's (same values)."""
    def run(L):
        F = L.nn.functional
        ids = L.tensor(np.arange(24).reshape(2, 12) % 7)
        f = L.tensor(np.arange(6.0).reshape(2, 3).astype(np.float32))
        rs = [F.pad(ids, (0, 1), value=-100)[..., 1:].contiguous().view(-1),
              F.pad(f, (1, 2, 0, 1)), F.pad(f, (1, 1), value=2.5), F.pad(ids > 3, (1, 0)),
              L.constant_pad_nd(ids, (2, 0, 1, 1), 9), f.t().contiguous(), f[:, ::2].clone()]
        assert L is torch or all(_held(r) for r in rs)
        rs += [F.pad(f, (-1, 1)), F.pad(ids, (1, 1), value=2.5), L.constant_pad_nd(f, (1, -1))]
        assert L is torch or rs[-3].is_contiguous() and rs[-2].is_contiguous()
        return [_bits(r) for r in rs]
    same_as_torch(run, tol=0)


def test_running_sums_and_masked_fills_of_held_values_match_pytorch():
    """``generate`` builds its position ids as ``mask.long().cumsum(-1) - 1`` then
    ``masked_fill(mask == 0, 1)``, and attention masks as ``masked_fill(m, finfo.min)``:
    on held values each stays on the host. A float running sum (PyTorch accumulates it
    in double), a value the dtype does not hold, and a mask that broadcasts the input are
    the XLA path's (same values)."""
    def run(L):
        mask = L.tensor([[0, 1, 1, 1], [1, 1, 0, 1]])
        f = L.tensor(np.arange(8.0).reshape(2, 4).astype(np.float32))
        low = float(np.finfo(np.float32).min)
        rs = [mask.long().cumsum(-1) - 1, (mask == 1).cumsum(0), mask.cumsum(1),
              mask.long().cumsum(-1).masked_fill(mask == 0, 1), f.masked_fill(mask == 0, low),
              f.masked_fill(mask > 0, float("-inf")), f.masked_fill(mask == 1, 0.1),
              (mask > 0).masked_fill(mask == 1, 0), mask.masked_fill(mask == 0, True)]
        assert L is torch or all(_held(r) for r in rs)
        rs += [f.cumsum(1), mask.masked_fill(mask == 0, 2.5),
               f[0].masked_fill(mask == 0, 1.0), L.tensor(5).cumsum(0)]
        return [_bits(r) for r in rs]
    same_as_torch(run, tol=0)


def test_isin_truth_reductions_and_nots_of_held_values_match_pytorch():
    """``generate``'s default attention mask: ``isin(ids, pad).any()``, its ``~``, and the
    products of the masks, held on the host. An isin that would compare after a rounding
    (floats against integers) is the XLA path's (same values)."""
    def run(L):
        ids = L.tensor([[1, 2, 0], [3, 0, 5]])
        pad = L.tensor([0])
        f = L.tensor([[0.5, float("nan"), 0.0], [1.0, 2.0, -0.0]])
        rs = [L.isin(ids, pad), L.isin(ids, pad, invert=True), L.isin(ids, pad).any(),
              ~L.isin(ids, pad).any(), ids.any(1), ids.all(0, keepdim=True), (ids > 1).all(),
              f.any(0), f.all(), L.zeros(0).all(), L.zeros(0).any(), ~ids, ~(ids > 0),
              L.logical_not(ids), L.logical_not(f), L.isin(f, f[0]),
              ids.ne(0).long() * L.isin(ids, pad).any() + ids * ~L.isin(ids, pad).any()]
        assert L is torch or all(_held(r) for r in rs)
        rs += [L.isin(f, ids), L.isin(ids, f)]
        return [_bits(r) for r in rs]
    same_as_torch(run, tol=0)


def test_isin_of_one_test_value_is_one_comparison_with_pytorchs_values(monkeypatch):
    """``generate`` asks ``isin(ids, pad)`` and ``isin(last, eos)`` each step: one test value
    of the ids' dtype is compared directly (NumPy's isin sorts, in Python); several values,
    or another dtype, go through np.isin. The values are PyTorch's either way."""
    sets = watch(monkeypatch, np, "isin")

    def run(L):
        ids = L.tensor([[1, 2, 0], [3, 0, 5]])
        f = L.tensor([[0.5, float("nan"), 0.0], [1.0, 2.0, -0.0]])
        rs = [L.isin(ids, L.tensor(0)), L.isin(ids, L.tensor([0]), invert=True),
              L.isin(ids[0, 2], L.tensor([[0]])), L.isin(ids[:, -1], L.tensor(5)),
              L.isin(f, L.tensor(0.0)), L.isin(f, L.tensor([float("nan")])),
              L.isin(f, L.tensor([-0.0]), invert=True),
              L.isin(ids, L.tensor([0, 5])), L.isin(ids, L.tensor([5], dtype=L.int32))]
        assert L is torch or all(_held(r) for r in rs)
        return [_bits(r) for r in rs]
    same_as_torch(run, tol=0)
    assert len(sets) == 2  # the two sets of another size or dtype


def test_truth_reductions_of_uint8_stay_held_and_give_uint8_as_pytorchs():
    """``any``/``all`` of uint8 give uint8 (0 or 1) in PyTorch: the host form computes them
    too (it left them to the XLA path), over every dim and keepdim."""
    def run(L):
        x = L.tensor([[0, 7, 255], [3, 0, 1]], dtype=L.uint8)
        rs = [x.any(), x.all(), x.any(1), x.all(0, keepdim=True), x[:1, 1:].all(),
              L.zeros(0, dtype=L.uint8).all(), L.zeros(0, dtype=L.uint8).any()]
        assert L is torch or all(_held(r) for r in rs)
        return [_bits(r) for r in rs]
    got = same_as_torch(run, tol=0)
    assert got[0] == (["1"], "uint8", [])


def test_masked_fill_with_a_value_past_the_dtype_raises_before_the_host_form():
    """PyTorch's checked conversion refuses the value (tests/ops/test_error_wording.py); the
    held input is left as it was."""
    f = hookgrad.zeros(2)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type float without"):
        f.masked_fill_(hookgrad.tensor([True, False]), 1e300)
    assert _held(f) and f.tolist() == [0.0, 0.0]


def test_a_stack_of_held_parts_in_any_layout_matches_pytorch():
    """A collate's parts held on the host are joined in NumPy at once (``stacking.stack``):
    contiguous parts, strided slices and flipped copies, along each dim; the result is its
    own memory (a write into it copies it, the parts keep their values)."""
    def run(L):
        base = L.tensor(np.arange(60.0).reshape(3, 4, 5).astype(np.float32))
        rows = [base[i] for i in range(3)]
        strided = [base[i, :, 1:4] for i in range(3)]
        rs = [L.stack(rows), L.stack(strided), L.stack(strided, 2), L.stack(rows[:2], 1),
              L.stack([p.flip(0) for p in strided]), L.stack([rows[0], rows[1] * 2])]
        assert L is torch or all(_held(r) for r in rs)
        rs[0][0, 0, 0] = -1.0
        return [_bits(r) for r in rs] + [_bits(base), _bits(rows[0])]
    same_as_torch(run, tol=0)


def test_bad_input_gets_pytorchs_errors():
    def run(L):
        x, y = L.ones(3) * 1, L.ones(4) * 1
        out = []
        for f in (lambda: x + y, lambda: L.stack([x, y]), lambda: L.cat([x, y[None]]),
                  lambda: x.gather(0, L.tensor([5])), lambda: x.flip((0, 0)),
                  lambda: L.tensor([1, 2]).mean(),
                  # a negative index, in a short index and a long one (NumPy would wrap it)
                  lambda: x.gather(0, L.tensor([0, -1])),
                  lambda: x.gather(0, L.tensor([0] * 69 + [-1]))):
            try:
                f()
                out.append("no error")
            except (RuntimeError, IndexError) as e:
                out.append(type(e).__name__)
        return out
    assert same_as_torch(run) == ["RuntimeError"] * 8


def test_a_result_is_its_own_memory_and_a_write_copies_it():
    x = hookgrad.zeros(2, 3)
    x[0, 1] = 5.0                     # held on the host, writable
    f, d, s = x.flip(1), x.to(hookgrad.float64), x + 0
    x[0, 1] = 7.0
    assert py(f) == [[0, 5, 0], [0, 0, 0]] and d[0, 1].item() == 5.0 and s[0, 1].item() == 5.0
    s[1, 2] = 1.0                     # a write of a result: copied first, x not touched
    assert _held(s) and py(s) == [[0, 5, 0], [0, 0, 1]] and x[1, 2].item() == 0.0
    assert s._version == 1 and f._version == 0


def test_values_cross_into_xla_where_something_records_or_traces():
    w = hookgrad.ones(3, requires_grad=True)
    x = hookgrad.tensor([1.0, 2.0, 3.0]) * 2      # held on the host
    assert _held(x)
    y = (x * w).sum()                             # w requires grad: the XLA path records
    assert y.grad_fn is not None and not _held(y)
    y.backward()
    assert py(w.grad) == [2, 4, 6]
    g = hookgrad.func.grad(lambda v: (v * x).sum())(hookgrad.ones(3))
    assert py(g) == [2, 4, 6]
    vm = hookgrad.func.vmap(lambda v: v * 2 + 1)(hookgrad.ones(2, 3))
    assert py(vm) == [[3, 3, 3], [3, 3, 3]]
    step = hookgrad.compile(lambda v: (v - 1).sum())
    for k in range(3):
        assert step(x + k).item() == 9 + 3 * k


def test_a_deferred_chain_stays_deferred_through_ops_with_forms(monkeypatch):
    # a pending argument goes on to the lazy path: the chain stays one XLA program
    from hookgrad._ops import lazy, lazy_segment
    from hookgrad._tensor import Pending
    monkeypatch.setattr(lazy_segment, "_seen", {})
    x = hookgrad.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    want = ((torch.tensor(py(x)).sin() * 2 + 1) / 3).sum(1)
    for run in range(lazy.COMPILE_AT + 6):  # each op first runs once on pending values
        y = ((x.sin() * 2 + 1) / 3).sum(1)  # sin has no NumPy form: the chain defers
        assert _held(x * 2)  # the same small value, not pending: run by NumPy
        np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6)
    y = ((x.sin() * 2 + 1) / 3).sum(1)
    assert type(y._arr) is Pending


def test_an_op_on_a_pending_value_does_not_ask_the_host_stage(monkeypatch):
    # a pending argument is the lazy path's: the forms would decline it, so apply does
    # not ask them (a deferred model's ops paid a probe each that found nothing)
    from hookgrad._ops import dispatch, lazy, lazy_segment
    from hookgrad._ops.op import _LIVE
    from hookgrad._tensor import Pending
    monkeypatch.setattr(lazy_segment, "_seen", {})
    monkeypatch.setattr(lazy._local, "trace", None)  # (no memo of earlier sites followed)
    # every op new to its argument types, whatever ran before: an op's first call on a
    # signature runs eagerly (lazy.defer), its concrete result then the host stage's
    for op in list(_LIVE):
        monkeypatch.setattr(op, "_avals", {})
    asked = []
    real = dispatch._host_run

    def counting(op, found, statics, args, out):
        asked.append(op.name)
        return real(op, found, statics, args, out)
    monkeypatch.setattr(dispatch, "_host_run", counting)
    x = hookgrad.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    want = (torch.tensor(py(x)).sin() * 2 + 1) * torch.tensor(py(x)).sin()
    for run in range(lazy.COMPILE_AT + 3):
        s = x.sin()  # no NumPy form: deferred
        del asked[:]
        y = (s * 2 + 1) * s  # mul, add, mul: each has a form, each argument is pending
        assert type(s._arr) is Pending or run < lazy.COMPILE_AT
        if type(s._arr) is Pending and run > 1:  # (run 1: mul's first call on a Pending)
            assert asked == [], run
        np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6)
    assert type(x.sin()._arr) is Pending
    del asked[:]
    assert _held(x * 2) and asked == ["mul"]  # a concrete small value: NumPy computes it


def test_a_mode_sees_the_ops_that_would_run_in_numpy():
    seen = []

    class Log(hookgrad.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = hookgrad.tensor([1.0, 2.0]) * 1
    with Log():
        y = (x + 1).sum()
    assert y.item() == 5.0 and any("add" in s for s in seen) and any("sum" in s for s in seen)


def test_the_loop_idioms_run_on_the_host_and_match_pytorch():
    def run(L):
        rng = np.random.default_rng(5)
        preds = [L.tensor(rng.standard_normal((8, 5)).astype(np.float32)) for _ in range(3)]
        ys = [L.tensor(rng.integers(0, 5, 8)) for _ in range(3)]
        total = correct = 0.0
        for pred, y in zip(preds, ys):          # a metric loop
            loss = (pred.logsumexp(1) - pred.gather(1, y[:, None])[:, 0]).mean()
            hits = (pred.argmax(1) == y).float().sum()
            assert L is torch or _held(loss) and _held(hits)
            total, correct = total + loss.item(), correct + hits.item()
        mean, std = L.tensor([0.5, 0.4]).reshape(2, 1, 1), L.tensor([0.2, 0.3]).reshape(2, 1, 1)
        out = []
        for i in range(4):                      # per-sample preprocessing
            x = (L.tensor(rng.random((2, 6, 6), np.float32)) - mean) / std
            x = x[:, i % 2:i % 2 + 4, 1:5]
            out.append(x.flip(-1) if i % 2 else x)
        batch = L.stack(out)                    # a hand-written collate
        labels = L.tensor([3, 1, 4, 1])
        both = batch.sum() + labels.sum()
        assert L is torch or _held(batch) and _held(both)
        return [total, correct, py(batch), both.item(), str(both.dtype).split(".")[-1]]
    same_as_torch(run, tol=1e-6)


def test_training_on_tensors_built_by_host_ops():
    def run(L):
        L.manual_seed(0)
        rng = np.random.default_rng(6)
        raw = [L.tensor(rng.standard_normal(4).astype(np.float32)) for _ in range(16)]
        x = L.stack([(r - r.mean()) / 2 for r in raw])     # built on the host
        y = (x.sum(1, keepdim=True) > 0).float()
        model = L.nn.Linear(4, 1)
        with L.no_grad():
            model.weight.copy_(L.tensor([[0.1, -0.2, 0.3, 0.05]]))
            model.bias.zero_()
        opt = L.optim.SGD(model.parameters(), lr=0.5)
        losses = []
        for _ in range(5):
            loss = L.nn.functional.binary_cross_entropy_with_logits(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return [losses, py(model.weight)]
    same_as_torch(run, tol=1e-5)


def test_writes_through_views_of_results_match_pytorch():
    def run(L):
        x = L.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))
        t = x.t() + 0               # NumPy keeps the transposed order: held in C order
        t[1, 2] = 50.0
        r = x + 0
        v = r[1]
        v[0] = 9.0                  # through an index view of a result
        w = r.reshape(4, 3)
        r[2, 3] = -1.0              # seen by the live views
        u = (x * 2)[:, 1:3]
        u += 1
        return [py(t), py(r), py(v), py(w), py(u), py(x), r._version, v._version, t._version]
    same_as_torch(run, tol=0)


def test_view_ops_of_small_values_are_host_views_with_pytorchs_aliasing():
    # view, reshape, t, transpose, permute, unsqueeze, squeeze and expand of a small value
    # view its memory on the host: a write through the base or a view is seen by all, with
    # PyTorch's versions, strides and contiguity
    def run(L):
        x = L.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4))
        r = x * 1                   # a result held on the host (read-only until written)
        views = [r.view(12), r.reshape(4, 3), r.t(), r.transpose(0, 1), r.permute(1, 0),
                 r.unsqueeze(0), r.unsqueeze(0).squeeze(0), r[0].expand(2, 4)]
        assert L is torch or all(_held(v) for v in views)
        geometry = [[list(v.shape), list(v.stride()), v.is_contiguous()] for v in views]
        r[1, 2] = 50.0              # through the base
        views[2][3, 0] = -7.0       # through a transposed view
        views[0][0] += 1.0          # in place, through a flat view
        y = views[1] * 2 + views[5].sum()  # host ops read the views
        return [py(v) for v in views] + [py(r), py(x), py(y), geometry,
                                         [v._version for v in views], r._version]
    same_as_torch(run, tol=0)
