"""``torch.masked``'s reductions and normalizations on strided Tensors: values and
gradients equal PyTorch's, with partly and fully masked slices, broadcast masks and
PyTorch's defaults (``keepdim``, ``dtype``, ``unbiased``/``correction``)."""
import pytest

import hookgrad
from tests.differential import py, raises_as_torch, same_as_torch

X = [[0.5, -1.25, 2.0, 3.5], [1.5, 0.25, -2.5, 4.0], [-0.75, 1.0, 3.25, -1.5]]
MASK = [[True, False, True, True], [False, False, False, False], [True, True, False, True]]
W = [[0.3, -0.7, 1.1, 0.2], [0.9, 0.4, -0.6, 1.3], [-1.2, 0.5, 0.8, -0.1]]

# (function, positional args after the input, keyword args); the mask is MASK unless given
CASES = [
    ("sum", (), {}), ("sum", (1,), {}), ("sum", (0,), {"keepdim": True}),
    ("sum", ((0, 1),), {}), ("sum", (-1,), {"dtype": "float32"}),
    ("prod", (1,), {}), ("prod", (), {}), ("prod", ((0, 1),), {"keepdim": True}),
    ("cumsum", (1,), {}), ("cumsum", (0,), {}), ("cumprod", (1,), {}), ("cumprod", (-2,), {}),
    ("amax", (1,), {}), ("amax", (), {}), ("amax", (0,), {"keepdim": True}),
    ("amin", (1,), {}), ("amin", ((0, 1),), {}),
    ("argmax", (1,), {}), ("argmax", (), {}), ("argmin", (0,), {"keepdim": True}),
    ("mean", (1,), {}), ("mean", (), {}), ("mean", (0,), {"keepdim": True}),
    ("mean", ((0, 1),), {}),
    ("median", (1,), {}), ("median", (), {}), ("median", (0,), {"keepdim": True}),
    ("norm", (2.0, 1), {}), ("norm", (1.0,), {}), ("norm", (float("inf"), 0), {}),
    ("norm", (float("-inf"), 1), {}), ("norm", (3.0, 1), {"keepdim": True}),
    ("var", (1,), {}), ("var", (), {}), ("var", (1, False), {}), ("var", (0,), {"correction": 0}),
    ("var", (1,), {"correction": 2, "keepdim": True}),
    ("std", (1,), {}), ("std", (0,), {"unbiased": False}), ("std", ((0, 1),), {}),
    ("logsumexp", (1,), {}), ("logsumexp", (), {}), ("logsumexp", (0,), {"keepdim": True}),
    ("softmax", (1,), {}), ("softmax", (0,), {}), ("log_softmax", (1,), {}),
    ("log_softmax", (0,), {}), ("softmin", (1,), {}), ("softmin", (0,), {}),
    ("normalize", (2.0, 1), {}), ("normalize", (1.0, 0), {}),
    ("normalize", (2.0, 1), {"eps": 10.0}),
]

BROADCAST = [[True, False, True, True]]
ALL_IN = [[True] * 4] * 3


def _scenario(name, args, kwargs, mask=MASK):
    def run(L):
        x = L.tensor(X, requires_grad=True)
        kw = dict(kwargs)
        if "dtype" in kw:
            kw["dtype"] = getattr(L, kw["dtype"])
        out = getattr(L.masked, name)(x, *args, mask=L.tensor(mask), **kw)
        result = {"value": py(out), "dtype": str(out.dtype).rsplit(".", 1)[-1],
                  "shape": list(out.shape)}
        if out.requires_grad:
            w = L.tensor(W).reshape(-1)[:out.numel()].reshape(out.shape)
            loss = L.where(L.isfinite(out), out * w, L.zeros_like(out)).sum()
            loss.backward()
            result["grad"] = py(x.grad)
        return result
    return run


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{n}{a}{k or ''}" for n, a, k in CASES])
def test_masked_op_as_torch(name, args, kwargs):
    got = same_as_torch(_scenario(name, args, kwargs))
    assert got["shape"] is not None


@pytest.mark.parametrize("name,args", [("sum", (1,)), ("mean", (0,)), ("var", (1,)),
                                        ("softmax", (1,)), ("amax", (0,)), ("median", (1,)),
                                        ("norm", (2.0, 1)), ("cumsum", (1,))])
def test_broadcast_mask_as_torch(name, args):
    same_as_torch(_scenario(name, args, {}, mask=BROADCAST))


@pytest.mark.parametrize("name,args", [("sum", (1,)), ("mean", ()), ("var", (0,)),
                                        ("softmax", (1,)), ("median", (0,)), ("logsumexp", (1,))])
def test_all_masked_in_equals_the_plain_op(name, args):
    got = same_as_torch(_scenario(name, args, {}, mask=ALL_IN))
    plain = {"sum": lambda x: x.sum(1), "mean": lambda x: x.mean(),
             "var": lambda x: x.var(0), "softmax": lambda x: x.softmax(1),
             "median": lambda x: x.median(0).values, "logsumexp": lambda x: x.logsumexp(1)}
    want = py(plain[name](hookgrad.tensor(X)))
    def flat(v):
        return [e for row in v for e in flat(row)] if isinstance(v, list) else [v]
    assert flat(got["value"]) == pytest.approx(flat(want), rel=1e-5)


def test_fully_masked_slices_give_the_identity():
    x = hookgrad.tensor(X)
    none = hookgrad.zeros(3, 4, dtype=hookgrad.bool)
    assert py(hookgrad.masked.sum(x, 1, mask=none)) == [0.0] * 3
    assert py(hookgrad.masked.prod(x, 1, mask=none)) == [1.0] * 3
    assert py(hookgrad.masked.amax(x, 1, mask=none)) == ["-inf"] * 3
    assert py(hookgrad.masked.amin(x, 1, mask=none)) == ["inf"] * 3
    assert py(hookgrad.masked.mean(x, 1, mask=none)) == ["nan"] * 3


def test_integer_inputs_as_torch():
    def run(L):
        x = L.tensor([[3, -1, 4], [1, 5, -9]], dtype=L.int32)
        m = L.tensor([[True, False, True], [True, True, False]])
        return {n: py(getattr(L.masked, n)(x, 1, mask=m)) for n in
                ("sum", "prod", "amax", "amin", "median", "var", "std")}
    same_as_torch(run)


def test_errors_as_torch():
    x = [[1.0, 2.0], [3.0, 4.0]]
    raises_as_torch(lambda L: L.masked.mean(L.tensor([[1, 2]]), mask=L.tensor([[True, True]])),
                    ValueError, r"mean\(\): Could not infer output dtype. Input dtype must be "
                                r"either a floating point or complex dtype. Got: \w+\.int")
    raises_as_torch(lambda L: L.masked.sum(L.tensor(x), (1, 1), mask=L.tensor(x) > 0),
                    RuntimeError, "dim=1 appears multiple times in the list of dims")
    raises_as_torch(lambda L: L.masked.sum(L.tensor(x), 2, mask=L.tensor(x) > 0),
                    IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], "
                                r"but got 2\)")
    raises_as_torch(lambda L: L.masked.var(L.tensor(x), 1, True, correction=1,
                                           mask=L.tensor(x) > 0),
                    AssertionError, "Only one of unbiased and correction may be given")
    raises_as_torch(lambda L: L.masked.sum(L.tensor(x), mask=L.ones(1, 2, 2, dtype=L.bool)),
                    IndexError, "_input_mask expected broadcastable mask")
    raises_as_torch(lambda L: L.masked.median(L.tensor([[1, 2]]), 1,
                                              mask=L.tensor([[False, False]])),
                    ValueError, "masked median expects no fully masked out rows")


def test_logaddexp_as_torch():
    def run(L):
        a = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
        b = L.tensor([0.5, 3.0, -1.0], requires_grad=True)
        out = L.masked.logaddexp(a, b, input_mask=L.tensor([True, False, True]),
                                 other_mask=L.tensor([True, True, False]))
        out.sum().backward()
        return {"value": py(out), "grads": [py(a.grad), py(b.grad)]}
    same_as_torch(run)


def test_without_a_mask_is_the_plain_reduction():
    def run(L):
        x = L.tensor(X)
        return [py(L.masked.sum(x, 1)), py(L.masked.mean(x, 0)), py(L.masked.var(x)),
                py(L.masked.softmax(x, 1)), py(L.masked.amax(x))]
    same_as_torch(run)


def test_is_masked_tensor_and_missing_masked_tensor():
    assert hookgrad.masked.is_masked_tensor(hookgrad.ones(2)) is False
    with pytest.raises(AttributeError, match="hookgrad does not implement "
                                             "torch.masked.MaskedTensor yet"):
        hookgrad.masked.MaskedTensor
