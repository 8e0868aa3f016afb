"""``nn.grad``: a convolution's input and weight gradients as functions, against
``torch.nn.grad`` (values, node names, and their own gradients)."""
import numpy as np
import pytest

from ..differential import py, same_as_torch

_rng = np.random.default_rng(11)


def _r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


# (nd, input shape, weight shape, keyword arguments)
CASES = [
    (1, (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    (2, (2, 3, 7, 8), (4, 3, 3, 2), dict(padding=(1, 0), dilation=(1, 2))),
    (3, (1, 2, 5, 6, 5), (3, 2, 2, 3, 2), dict(stride=(1, 2, 1))),
]
ARRAYS = [(_r(*x), _r(*w)) for _, x, w, _ in CASES]


def _grads(L, i, kind):
    nd, xs, ws, kw = CASES[i]
    x0, w0 = ARRAYS[i]
    x = L.tensor(x0, requires_grad=True)
    w = L.tensor(w0, requires_grad=True)
    conv = getattr(L.nn.functional, f"conv{nd}d")
    y = conv(x, w, **kw)
    g = L.tensor(np.cos(np.arange(y.numel(), dtype=np.float32)).reshape(tuple(y.shape)),
                 requires_grad=True)
    if kind == "input":
        out = getattr(L.nn.grad, f"conv{nd}d_input")(xs, w, g, **kw)
        first = x  # its gradient from backward, to compare with
    else:
        out = getattr(L.nn.grad, f"conv{nd}d_weight")(x, ws, g, **kw)
        first = w
    want = L.autograd.grad(y, first, g)[0]
    (out * out).sum().backward()  # second order: through the weight (or input) and g
    return py([out, (out - want).abs().max(), out.grad_fn.name(), w.grad if kind == "input"
               else x.grad, g.grad])


@pytest.mark.parametrize("i", range(len(CASES)))
@pytest.mark.parametrize("kind", ["input", "weight"])
def test_matches_torch_and_the_convolution_backward(i, kind):
    got = same_as_torch(lambda L: _grads(L, i, kind), tol=1e-4)
    assert got[1] < 1e-4 and got[2] == "ConvolutionBackwardBackward0"


def test_functional_reexports_grad():
    import hookgrad
    assert hookgrad.nn.functional.grad is hookgrad.nn.grad
