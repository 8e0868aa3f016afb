"""Sorting and selection (sort, topk, kthvalue, median, ...), var_mean/std_mean,
isclose/allclose/equal and repeat_interleave beyond their op-table rows: return types,
errors, what the nodes save, and the compiled and functional modes. Compared with PyTorch
where it is installed."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import nn
from hookgrad.autograd.graph import saved_tensors_hooks
from hookgrad.func import functional_call
from tests.differential import needs_torch, py, raises, same_as_torch, torch

_A = [[0.5, -1.0, 2.0, 0.0], [3.0, 1.0, -2.0, 4.0], [-0.5, 2.5, 1.5, -3.0]]


# --------------------------------------------------------------------------- return types


@pytest.mark.parametrize("name, call", [
    ("sort", lambda L, x: L.sort(x, 1)),
    ("topk", lambda L, x: x.topk(2)),
    ("kthvalue", lambda L, x: L.kthvalue(x, 2, 0)),
    ("median", lambda L, x: x.median(1, keepdim=True)),
])
def test_named_tuple_results(name, call):
    def f(L):
        r = call(L, L.tensor(_A, requires_grad=True))
        values, indices = r  # unpacks as a tuple
        return [type(r).__name__, isinstance(r, tuple), len(r), py(values), py(indices),
                r.values is values and r.indices is indices, values.grad_fn.name(),
                indices.requires_grad]
    got = same_as_torch(f)
    assert got[0] == name and got[1:3] == [True, 2] and got[5] is True
    r = call(hg, hg.tensor(_A))
    assert isinstance(r, getattr(hg.return_types, name)) and type(r).__module__ == \
        "hookgrad.return_types"


@needs_torch
@pytest.mark.parametrize("call", [lambda L: L.topk(L.tensor([1.0, 4.0, 2.0]), 2),
                                  lambda L: L.sort(L.tensor([[2.0, 1.0]]), descending=True),
                                  lambda L: L.kthvalue(L.tensor([3.0, 1.0]), 1),
                                  lambda L: L.median(L.tensor([3.0, 1.0, 2.0]), 0)])
def test_return_type_reprs_match_torch(call):
    assert repr(call(hg)).replace("hookgrad", "torch") == repr(call(torch))


def test_sort_is_stable_and_puts_nan_last_as_torch():
    def f(L):
        x = L.tensor([3.0, 1.0, 3.0, 0.0, 1.0, float("nan"), 2.0])
        return [py(L.sort(x).indices), py(x.sort(descending=True).indices),
                py(L.argsort(x, stable=True)), py(L.sort(L.tensor(5.0)).indices)]
    got = same_as_torch(f)
    assert got[0] == [3, 1, 4, 6, 0, 2, 5] and got[1] == [5, 0, 2, 6, 1, 4, 3]


def test_sort_overload_with_stable_records_sort_backward1():
    x = hg.tensor(_A, requires_grad=True)
    assert x.sort().values.grad_fn.name() == "SortBackward0"
    assert x.sort(stable=False).values.grad_fn.name() == "SortBackward1"
    assert hg.msort(x).grad_fn.name() == "SortBackward0"


def test_median_lower_middle_nan_and_tie_gradients():
    def f(L):
        x = L.tensor([1.0, 2.0, 1.0, 2.0, 1.0, 2.0], requires_grad=True)
        m = L.median(x)
        m.backward()
        nan = L.tensor([[1.0, float("nan"), 3.0], [2.0, 0.0, 1.0]])
        return [py(m), py(x.grad), py(L.median(L.tensor([4.0, 1.0, 3.0, 2.0]))),
                str(py(nan.median())), py(nan.median(1).indices)]
    got = same_as_torch(f)
    assert got[0] == 1.0 and got[1] == pytest.approx([1 / 3, 0, 1 / 3, 0, 1 / 3, 0])
    assert got[2] == 2.0 and got[3] == "nan" and got[4] == [1, 2]


def test_zero_dim_and_empty_inputs():
    def f(L):
        s = L.tensor(3.0)
        return [[py(t) for t in r] for r in (L.topk(s, 1), L.kthvalue(s, 1), L.median(s, 0),
                                             L.sort(s, -1))] + \
            [str(py(L.median(L.zeros(0)))), py(L.median(L.zeros(0, 2), 1).values)]
    assert same_as_torch(f) == [[3.0, 0]] * 4 + ["nan", []]


def test_topk_gradient_reaches_selected_elements_only():
    def f(L):
        x = L.tensor(_A, requires_grad=True)
        v, i = L.topk(x, 2, dim=1, largest=False)
        (v * L.tensor([[1.0, 10.0]])).sum().backward()
        return [py(i), py(x.grad)]
    got = same_as_torch(f)
    assert got[1][0] == [0.0, 1.0, 0.0, 10.0] and got[0][0] == [1, 3]


def test_nodes_save_the_indices_as_torch():
    """The values' node keeps the indices for backward (what PyTorch's node saves), so
    pack hooks see an integer tensor with the shape of the result."""
    seen = []

    def pack(t):
        seen.append((tuple(t.shape), t.dtype.is_floating_point))
        return t
    x = hg.tensor(_A, requires_grad=True)
    with saved_tensors_hooks(pack, lambda t: t):
        v, i = x.topk(2)
    assert seen == [((3, 2), False)]
    v.sum().backward()
    assert x.grad.sum().item() == 6.0


@pytest.mark.parametrize("call, exc, match", [
    (lambda L, x: L.topk(x, 5), RuntimeError, "selected index k out of range"),
    (lambda L, x: x.topk(-1), RuntimeError, "selected index k out of range"),
    (lambda L, x: L.kthvalue(x, 0), RuntimeError, r"kthvalue\(\): selected number k out of "
                                                  "range for dimension 1"),
    (lambda L, x: x.kthvalue(4, 0), RuntimeError, "out of range for dimension 0"),
    (lambda L, x: L.sort(x, 2), IndexError, r"Dimension out of range \(expected to be in "
                                            r"range of \[-2, 1\], but got 2\)"),
    (lambda L, x: x.topk(1, dim=-3), IndexError, "Dimension out of range"),
    (lambda L, x: x.median(3), IndexError, "Dimension out of range"),
    (lambda L, x: L.median(x[:, :0], 1), IndexError, r"median\(\): Expected reduction dim 1 "
                                                      "to have non-zero size."),
    (lambda L, x: L.isclose(x, 1.0), TypeError, r"isclose\(\): argument 'other' \(position 2\) "
                                                "must be Tensor, not float"),
    (lambda L, x: L.isclose(x, x.int()), RuntimeError, "Float did not match Int"),
    (lambda L, x: x.isclose(x, rtol=-1), RuntimeError, "rtol must be greater than or equal "
                                                       "to zero, but got -1"),
    (lambda L, x: L.allclose(x, x, atol=-0.5), RuntimeError, "atol must be greater than or "
                                                             "equal to zero"),
    (lambda L, x: x.repeat_interleave(-1), RuntimeError, "Repeats must be non-negative"),
    (lambda L, x: x.repeat_interleave(L.tensor([1, -1, 1]), dim=0), RuntimeError,
     "repeats can not be negative"),
    (lambda L, x: x.repeat_interleave(L.tensor([1, 2]), dim=0), RuntimeError,
     r"repeats must have the same size as input along dim, but got repeats.size\(0\) = 2 and "
     r"input.size\(0\) = 3"),
    (lambda L, x: x.repeat_interleave(L.tensor([[1, 2, 1]]), dim=0), RuntimeError,
     "repeats must be 0-dim or 1-dim tensor"),
    (lambda L, x: x.repeat_interleave(L.tensor([1, 1, 1]), dim=0, output_size=2), RuntimeError,
     "allocated size does not match required size"),
    (lambda L, x: x.repeat_interleave(2, output_size=5), RuntimeError,
     r"repeat_interleave: Invalid output_size, expected 24 but got 5"),
    (lambda L, x: L.repeat_interleave(L.tensor([[1, 2]])), RuntimeError,
     "repeat_interleave only accept 1D vector as repeat"),
    (lambda L, x: L.repeat_interleave(L.tensor([1.0, 2.0])), NotImplementedError,
     "not implemented for 'Float'"),
    (lambda L, x: x.split_with_sizes([1, 1]), RuntimeError, "split_with_sizes expects "
                                                            "split_sizes to sum exactly to 3"),
])
def test_errors_match_torch(call, exc, match):
    with pytest.raises(exc, match=match):
        call(hg, hg.zeros(3, 4))
    if torch is not None:
        with pytest.raises(exc, match=match):
            call(torch, torch.zeros(3, 4))


# --------------------------------------------------------------------------- comparisons


def test_isclose_allclose_equal():
    def f(L):
        x = L.tensor([1.0, float("inf"), float("nan"), -float("inf")])
        y = L.tensor([1.0 + 1e-6, float("inf"), float("nan"), float("inf")])
        a, b = L.tensor([1, 2, 3]), L.tensor([1, 2, 4])
        return [py(L.isclose(x, y)), py(x.isclose(y, equal_nan=True)),
                L.allclose(x[:2], y[:2]), x.allclose(y), L.allclose(x, y[:1].expand(4)),
                py(L.isclose(a, b, rtol=0.3)), py(L.isclose(a > 1, b > 2)),
                L.equal(x[:2], x[:2]), L.equal(x, x), x.equal(x[:3]),
                L.equal(L.ones(2), L.ones(2, dtype=L.int64)), L.equal(L.ones(2, 1), L.ones(2)),
                py(L.isclose(L.ones(2, 1), L.ones(3)).shape)]
    got = same_as_torch(f)
    assert got[0] == [True, True, False, False] and got[1] == [True, True, True, False]
    assert got[2:5] == [True, False, False] and got[5] == [True, True, True]
    assert got[6] == [True, False, True] and got[7:12] == [True, False, False, True, False]
    assert all(isinstance(v, bool) for v in got[2:5] + got[7:12])


def test_allclose_and_equal_need_values_inside_compile():
    @hg.compile(fullgraph=True)   # by default: eagerly
    def step(x):
        return hg.allclose(x, x)
    with pytest.raises(hg.compile.TracedValueError, match="bool"):
        step(hg.ones(2))

    @hg.compile
    def step2(x):  # isclose(...).all() is the traced form
        return hg.isclose(x, x + 1e-7).all()
    assert step2(hg.ones(2)).item() is True


# --------------------------------------------------------------------------- var_mean, std_mean


def test_var_mean_std_mean_forms():
    def f(L):
        x = L.tensor(_A, requires_grad=True)
        outs = [L.var_mean(x), L.var_mean(x, 1, True), L.var_mean(x, unbiased=False),
                L.std_mean(x, [0, 1], correction=0, keepdim=True), L.std_mean(x, 0, False)]
        sum(o.sum() * (k + 1) for pair in outs for k, o in enumerate(pair)).backward()
        return [type(outs[0]).__name__, [[py(o) for o in p] for p in outs],
                [o.grad_fn.name() for p in outs for o in p], py(x.grad)]
    got = same_as_torch(f, tol=1e-4)
    assert got[0] == "tuple"
    assert got[1][0][1] == pytest.approx(np.mean(_A))
    assert got[1][0][0] == pytest.approx(np.var(_A, ddof=1), rel=1e-5)
    assert set(got[2]) == {"VarMeanBackward0", "StdMeanBackward0"}


# --------------------------------------------------------------------------- repeat_interleave


def test_repeat_interleave_forms():
    def f(L):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        outs = [x.repeat_interleave(2), L.repeat_interleave(x, 3, dim=1),
                x.repeat_interleave(L.tensor([1, 2]), dim=0),
                L.repeat_interleave(x, L.tensor(2), dim=-1, output_size=4),
                x.repeat_interleave(L.tensor([0, 1]), dim=0)]
        sum((o * o).sum() for o in outs).backward()
        return [[py(o) for o in outs], [o.grad_fn.name() for o in outs], py(x.grad),
                py(L.repeat_interleave(L.tensor([1, 0, 3]))),
                py(L.tensor(5).repeat_interleave(2))]
    got = same_as_torch(f)
    assert got[0][0] == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
    assert got[0][2] == [[1.0, 2.0], [3.0, 4.0], [3.0, 4.0]]
    assert got[1][2] == "IndexSelectBackward0" and got[3] == [0, 2, 2, 2]


def test_repeat_interleave_with_tensor_repeats_inside_compile():
    x = hg.tensor([[1.0, 2.0], [3.0, 4.0]])

    @hg.compile(fullgraph=True)   # by default: eagerly
    def traced(x, r):
        return x.repeat_interleave(r, dim=0)
    with pytest.raises(RuntimeError, match="Pass output_size=<sum of repeats>"):
        traced(x, hg.tensor([2, 1]))

    @hg.compile
    def sized(x, r):
        return x.repeat_interleave(r, dim=0, output_size=3)
    want = x.repeat_interleave(hg.tensor([2, 1]), dim=0)
    assert sized(x, hg.tensor([2, 1])).tolist() == want.tolist() == \
        [[1.0, 2.0], [1.0, 2.0], [3.0, 4.0]]


# --------------------------------------------------------------------------- modes


class _TopkPool(nn.Module):
    """A linear layer, then the mean of each row's two largest outputs, the median, and
    the variance and mean of the sorted row."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        h = self.fc(x)
        var, mean = hg.var_mean(h.sort(dim=1).values, 1)
        k = h.kthvalue(2, dim=1).values
        return h.topk(2, dim=1).values.mean() + h.median() + (var * mean).sum() + k.sum()


def test_eager_compiled_and_functional_gradients_agree():
    hg.manual_seed(0)
    m, x = _TopkPool(), hg.tensor(_A)
    m(x).backward()
    eager = {k: np.asarray(p.grad._data) for k, p in m.named_parameters()}

    m.zero_grad(set_to_none=True)

    @hg.compile
    def step(x):
        loss = m(x)
        loss.backward()
        return loss
    step(x)
    compiled = {k: np.asarray(p.grad._data) for k, p in m.named_parameters()}

    def f(params, x):
        return functional_call(m, params, (x,))
    func = jax.jit(jax.grad(f))(hg.func.state(m), jnp.asarray(_A))
    for k in eager:
        np.testing.assert_allclose(compiled[k], eager[k], rtol=1e-5, atol=1e-6, err_msg=k)
        np.testing.assert_allclose(np.asarray(func[k]), eager[k], rtol=1e-5, atol=1e-6,
                                   err_msg=k)
    assert np.abs(eager["fc.weight"]).sum() > 0


@needs_torch
def test_module_gradients_match_torch():
    def f(L):
        L.manual_seed(0)
        fc = L.nn.Linear(4, 5)
        with L.no_grad():
            fc.weight.copy_(L.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)))
            fc.bias.zero_()
        h = fc(L.tensor(_A))
        var, mean = L.var_mean(h.sort(dim=1).values, 1)
        loss = h.topk(2, dim=1).values.mean() + h.median() + (var * mean).sum() + \
            h.kthvalue(2, dim=1).values.sum()
        loss.backward()
        return [py(loss), py(fc.weight.grad), raises(lambda: L.topk(h, 9))]
    same_as_torch(f, tol=1e-4)
