"""PyTorch's functional kernels at the top level (``torch.kl_div``, ``torch.batch_norm``,
``torch.lstm_cell``, ...: ATen's signatures) against PyTorch: outputs, gradients and the
last node's name."""
import numpy as np
import pytest

import hookgrad

from ..differential import py, raises_as_torch, same_as_torch
from .test_functional import _run, assert_same_run, r, u

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

X2, Y2, Z2 = r(4, 5), r(4, 5), r(4, 5)
X3 = r(2, 3, 6)
X4 = r(2, 4, 3, 5)
SIGN = np.where(r(4) > 0, 1.0, -1.0).astype(np.float32)
SIGN2 = np.where(r(4, 5) > 0, 1.0, -1.0).astype(np.float32)
P2 = u(4, 5)
IDX = np.array([[0, 3, 1], [5, 3, 3]])
H, C = r(3, 4), r(3, 4)
XC = r(3, 5)


def _w(*shape):
    return r(*shape)


# (id, fn(L, *tensors) -> one Tensor, arrays, positions that are not differentiated)
CASES = [
    # losses: reduction as ATen's int (0 none, 1 mean, 2 sum)
    *[(f"kl_div_{red}", lambda L, x, t, red=red: L.kl_div(x, t, red), [X2, P2], (1,))
      for red in (0, 1, 2)],
    ("kl_div_log_target", lambda L, x, t: L.kl_div(x, t, 0, log_target=True), [X2, Y2], ()),
    ("kl_div_other_int_is_none", lambda L, x, t: L.kl_div(x, t, 3), [X2, P2], (1,)),
    ("bce_with_logits", lambda L, x, t, w, pw: L.binary_cross_entropy_with_logits(
        x, t, w, pw, 2), [X2, P2, u(5), u(5)], (1, 2, 3)),
    ("bce_with_logits_default", lambda L, x, t: L.binary_cross_entropy_with_logits(x, t),
     [X2, P2], (1,)),
    ("cosine_embedding_loss", lambda L, a, b, y: L.cosine_embedding_loss(a, b, y, 0.2, 0),
     [X2, Y2, SIGN], (2,)),
    ("hinge_embedding_loss", lambda L, x, y: L.hinge_embedding_loss(x, y, 0.5, 2),
     [X2, SIGN2], (1,)),
    ("margin_ranking_loss", lambda L, a, b, y: L.margin_ranking_loss(a, b, y, 0.1),
     [X2, Y2, SIGN2], (2,)),
    ("poisson_nll_loss", lambda L, x, t: L.poisson_nll_loss(x, t, True, True, 1e-8, 1),
     [X2, P2 * 3], (1,)),
    ("poisson_nll_loss_rate", lambda L, x, t: L.poisson_nll_loss(x, t, False, False, 1e-6, 0),
     [P2, P2 * 3], (1,)),
    ("triplet_margin_loss", lambda L, a, p, n: L.triplet_margin_loss(a, p, n, 1.0, 2, 1e-6,
                                                                     True, 0), [X2, Y2, Z2], ()),
    # layers
    ("embedding", lambda L, w, i: L.embedding(w, i), [r(6, 3), IDX], ()),
    ("embedding_padding_idx", lambda L, w, i: L.embedding(w, i, 3, True), [r(6, 3), IDX], ()),
    ("bilinear", lambda L, a, b, w, bias: L.bilinear(a, b, w, bias),
     [r(3, 4), r(3, 2), r(5, 4, 2), r(5)], ()),
    ("convolution", lambda L, x, w, b: L.convolution(x, w, b, [2, 1], [1, 0], [1, 1], False,
                                                     [0, 0], 2), [X4, r(6, 2, 3, 2), r(6)], ()),
    ("convolution_transposed", lambda L, x, w: L.convolution(
        x, w, None, [2], [1], [1], True, [1], 1), [X3, r(3, 2, 3)], ()),
    ("conv_tbc", lambda L, x, w, b: L.conv_tbc(x, w, b, 1), [r(7, 2, 3), r(3, 3, 4), r(4)], ()),
    ("max_pool1d_with_indices", lambda L, x: L.max_pool1d_with_indices(x, 2)[0], [X3], ()),
    ("max_pool1d_with_indices.indices", lambda L, x: L.max_pool1d_with_indices(
        x, 3, 2, 1, 1, True)[1], [X3], ()),
    ("adaptive_max_pool1d", lambda L, x: L.adaptive_max_pool1d(x, 4)[0], [X3], ()),
    ("adaptive_max_pool1d.indices", lambda L, x: L.adaptive_max_pool1d(x, [4])[1], [X3], ()),
    ("grid_sampler", lambda L, x, g: L.grid_sampler(x, g, 0, 1, False),
     [X4, u(2, 3, 2, 2, lo=-1, hi=1)], ()),
    ("grid_sampler_2d_nearest", lambda L, x, g: L.grid_sampler_2d(x, g, 1, 2, True),
     [X4, u(2, 3, 2, 2, lo=-1, hi=1)], ()),
    ("grid_sampler_3d", lambda L, x, g: L.grid_sampler_3d(x, g, 0, 0, True),
     [r(1, 2, 3, 4, 3), u(1, 2, 2, 3, 3, lo=-1, hi=1)], ()),
    ("affine_grid_generator", lambda L, t: L.affine_grid_generator(t, [2, 3, 4, 5], False),
     [r(2, 2, 3)], ()),
    ("celu_", lambda L, x: L.celu_(x * 1, 0.5), [X2], ()),
    ("selu_", lambda L, x: L.selu_(x * 1), [X2], ()),
    ("threshold_", lambda L, x: L.threshold_(x * 1, 0.1, -2.0), [X2], ()),
    ("rrelu_eval", lambda L, x: L.rrelu(x, 0.1, 0.3), [X2], ()),
    ("rrelu__eval", lambda L, x: L.rrelu_(x * 1, 0.1, 0.3, False), [X2], ()),
    # normalization
    ("batch_norm_train", lambda L, x, w, b: L.batch_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         False), [X4, r(4), r(4)], ()),
    ("batch_norm_eval", lambda L, x, w, b, m, v: L.batch_norm(x, w, b, m, v, False, 0.1, 1e-3,
                                                              True),
     [X4, r(4), r(4), r(4), u(4)], (3, 4)),
    ("instance_norm", lambda L, x, w, b: L.instance_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         False), [X4, r(4), r(4)], ()),
    ("native_batch_norm", lambda L, x, w: L.native_batch_norm(x, w, None, None, None, True,
                                                              0.1, 1e-5)[0], [X4, r(4)], ()),
    ("native_batch_norm.mean", lambda L, x: L.native_batch_norm(x, None, None, None, None, True,
                                                                0.1, 1e-5)[1], [X4], (0,)),
    ("native_batch_norm.invstd", lambda L, x: L.native_batch_norm(
        x, None, None, None, None, True, 0.1, 1e-3)[2], [X4], (0,)),
    ("native_batch_norm.eval", lambda L, x, m, v: L.native_batch_norm(
        x, None, None, m, v, False, 0.1, 1e-3)[0], [X4, r(4), u(4)], (1, 2)),
    ("native_layer_norm", lambda L, x, w, b: L.native_layer_norm(x, [3, 5], w, b, 1e-5)[0],
     [X4, r(3, 5), r(3, 5)], ()),
    ("native_layer_norm.mean", lambda L, x: L.native_layer_norm(x, [5], None, None, 1e-5)[1],
     [X4], (0,)),
    ("native_layer_norm.rstd", lambda L, x: L.native_layer_norm(x, [3, 5], None, None, 1e-2)[2],
     [X4], (0,)),
    ("native_group_norm", lambda L, x, w, b: L.native_group_norm(x, w, b, 2, 4, 15, 2, 1e-5)[0],
     [X4, r(4), r(4)], ()),
    ("native_group_norm.mean", lambda L, x: L.native_group_norm(x, None, None, 2, 4, 15, 2,
                                                                1e-5)[1], [X4], (0,)),
    ("native_group_norm.rstd", lambda L, x: L.native_group_norm(x, None, None, 2, 4, 15, 4,
                                                                1e-5)[2], [X4], (0,)),
    ("norm_except_dim", lambda L, v: L.norm_except_dim(v, 2, 0), [X3], ()),
    ("norm_except_dim.last", lambda L, v: L.norm_except_dim(v, 3, 2), [X3], ()),
    ("norm_except_dim.all", lambda L, v: L.norm_except_dim(v, 2, -1), [X3], ()),
    ("nuclear_norm", lambda L, x: L.nuclear_norm(x), [X2], ()),
    ("nuclear_norm.keepdim", lambda L, x: L.nuclear_norm(x, True), [X2], ()),
    ("nuclear_norm.dim", lambda L, x: L.nuclear_norm(x, [0, 2]), [X3], ()),
    # recurrent cells
    ("rnn_tanh_cell", lambda L, x, h, wi, wh, bi, bh: L.rnn_tanh_cell(x, h, wi, wh, bi, bh),
     [XC, H, _w(4, 5), _w(4, 4), r(4), r(4)], ()),
    ("rnn_relu_cell", lambda L, x, h, wi, wh: L.rnn_relu_cell(x, h, wi, wh),
     [XC, H, _w(4, 5), _w(4, 4)], ()),
    ("lstm_cell.h", lambda L, x, h, c, wi, wh, bi, bh: L.lstm_cell(x, (h, c), wi, wh, bi, bh)[0],
     [XC, H, C, _w(16, 5), _w(16, 4), r(16), r(16)], ()),
    ("lstm_cell.c", lambda L, x, h, c, wi, wh: L.lstm_cell(x, [h, c], wi, wh)[1],
     [XC, H, C, _w(16, 5), _w(16, 4)], ()),
    ("gru_cell", lambda L, x, h, wi, wh, bi, bh: L.gru_cell(x, h, wi, wh, bi, bh),
     [XC, H, _w(12, 5), _w(12, 4), r(12), r(12)], ()),
]


@needs_torch
@pytest.mark.parametrize("name,fn,arrays,fixed", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, fn, arrays, fixed):
    assert_same_run(_run(hookgrad, hookgrad, fn, arrays, fixed),
                    _run(torch, torch, fn, arrays, fixed))


def _frobenius(L, x):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return L.frobenius_norm(x, [0, 1]), L.frobenius_norm(x, 1, True)


def test_frobenius_norm_matches_torch_and_warns():
    got = same_as_torch(lambda L: py(_frobenius(L, L.tensor(X2))))
    assert len(got) == 2
    with pytest.warns(UserWarning, match="frobenius_norm is deprecated"):
        hookgrad.frobenius_norm(hookgrad.tensor(X2), 0)


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.conv_tbc(L.ones(3, 2), L.ones(2, 2, 2), L.ones(2)), RuntimeError,
     "Input must have 3 dims"),
    (lambda L: L.conv_tbc(L.ones(3, 2, 2), L.ones(2, 2, 3), L.ones(2)), RuntimeError,
     "Bias size must equal dim 2"),
    (lambda L: L.convolution(L.ones(1, 2), L.ones(3, 2), None, [1], [0], [1], False, [0], 1),
     RuntimeError, "weight should have at least three dimensions"),
    (lambda L: L.grid_sampler_2d(L.ones(1, 1, 2, 2, 2), L.ones(1, 1, 1, 1, 3), 0, 0, False),
     RuntimeError, "expected 4D input and grid with same number of dimensions"),
    (lambda L: L.grid_sampler_3d(L.ones(1, 1, 2, 2), L.ones(1, 1, 1, 2), 0, 0, False),
     RuntimeError, "expected 5D input and grid with same number of dimensions"),
    (lambda L: L.affine_grid_generator(L.ones(1, 2, 3), [1, 1, 3], False), RuntimeError,
     "AffineGridGenerator needs 4d"),
    (lambda L: L.native_norm(L.ones(3)), NotImplementedError,
     "Could not run 'aten::native_norm' with arguments from the 'CPU' backend"),
    (lambda L: L.dropout_(L.ones(3), 1.5, True), RuntimeError,
     "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda L: L.feature_dropout(L.ones(3), 0.5, True), RuntimeError,
     "Feature dropout requires at least 2 dimensions in the input"),
    (lambda L: L.native_dropout(L.ones(3), -0.1, True), RuntimeError,
     r"bernoulli_ expects p to be in \[0, 1\], but got p=1.1"),
    (lambda L: L.alpha_dropout_(L.ones(3), 2.0, False), RuntimeError,
     "dropout probability has to be between 0 and 1, but got 2$"),
    (lambda L: L.rrelu(L.ones(3), 0.1, 0.3, True, 5), TypeError,
     r"rrelu\(\): argument 'generator' \(position 5\) must be torch.Generator, not int"),
])
def test_errors_as_torch(call, exc, match):
    raises_as_torch(call, exc, match)


# ------------------------------------------------------------------ random kernels
# The numbers drawn differ from PyTorch's (JAX PRNG); what each draw may be, the masks'
# shapes, the evaluation and p=0 paths, and the recorded nodes are PyTorch's.

XR = np.abs(r(8, 6, 5)) + 0.5  # no zeros: a zero in the output is a dropped element


def _no_draw(L, name):
    x = L.tensor(XR, requires_grad=True)
    ins = {"dropout_": lambda: L.dropout_(x * 1, 0.5, False),
           "feature_dropout": lambda: L.feature_dropout(x, 0.5, False),
           "feature_dropout_": lambda: L.feature_dropout_(x * 1, 0.0, True),
           "alpha_dropout": lambda: L.alpha_dropout(x, 0.0, True),
           "alpha_dropout_": lambda: L.alpha_dropout_(x * 1, 0.5, False),
           "feature_alpha_dropout": lambda: L.feature_alpha_dropout(x, 0.5, False),
           "feature_alpha_dropout_": lambda: L.feature_alpha_dropout_(x * 1, 0.5, False),
           "native_dropout": lambda: L.native_dropout(x, 0.5, False)}
    out = ins[name]()
    if isinstance(out, tuple):
        out, mask = out
        return py([out, mask, out.grad_fn.name()])
    return py([out, out.grad_fn and out.grad_fn.name()])


@pytest.mark.parametrize("name", ["dropout_", "feature_dropout", "feature_dropout_",
                                  "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
                                  "feature_alpha_dropout_", "native_dropout"])
def test_random_kernels_without_a_draw_match_torch(name):
    same_as_torch(lambda L: _no_draw(L, name))


def test_dropout_draws_keep_or_scale_each_element():
    hookgrad.manual_seed(0)
    x = hookgrad.tensor(XR)
    y = hookgrad.dropout_(x.clone(), 0.25, True).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], XR[kept] / 0.75, rtol=1e-6)
    assert 0.6 < kept.mean() < 0.9


def test_feature_dropouts_drop_whole_channels():
    hookgrad.manual_seed(1)
    x = hookgrad.tensor(XR)
    y = hookgrad.feature_dropout(x, 0.5, True).numpy()
    kept = (y != 0).all(axis=2)
    assert ((y == 0).all(axis=2) | kept).all()  # each (n, c) channel dropped or kept whole
    np.testing.assert_allclose(y[kept], XR[kept] * 2, rtol=1e-6)
    # alpha dropout: a kept channel is a * x + b, a dropped one SELU's saturation a * s + b
    s, p = -1.7580993408473766, 0.5
    a = ((1 - p) * (1 + p * s * s)) ** -0.5
    b = -a * s * p
    z = hookgrad.feature_alpha_dropout(x, p, True).numpy()
    kept = np.isclose(z, XR * a + b, atol=1e-5).all(axis=2)
    dropped = np.isclose(z, s * a + b, atol=1e-5).all(axis=2)
    assert (kept ^ dropped).all() and kept.any() and dropped.any()


def test_native_dropout_mask_gives_the_output_and_the_gradient():
    hookgrad.manual_seed(2)
    x = hookgrad.tensor(XR, requires_grad=True)
    out, mask = hookgrad.native_dropout(x, 0.4, True)
    assert out.grad_fn.name() == "NativeDropoutBackward0" and mask.dtype == hookgrad.bool
    m = mask.numpy()
    np.testing.assert_allclose(out.detach().numpy(), XR * m / 0.6, rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), m / 0.6, rtol=1e-6)
    zeros, none_kept = hookgrad.native_dropout(x, 1.0, None)
    assert not zeros.detach().numpy().any() and not none_kept.numpy().any()


def test_rrelu_training_slopes_lie_in_the_range_and_follow_the_generator():
    x = hookgrad.tensor(-XR)
    g = hookgrad.Generator().manual_seed(3)
    y = hookgrad.rrelu(x, 0.1, 0.3, True, g).numpy()
    slopes = y / -XR
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and np.ptp(slopes) > 0.1
    again = hookgrad.rrelu(x, 0.1, 0.3, True, hookgrad.Generator().manual_seed(3)).numpy()
    np.testing.assert_array_equal(y, again)
    z = x.clone().requires_grad_(False)
    assert hookgrad.rrelu_(z, 0.1, 0.3, True) is z and (z.numpy() < 0).all()


BAG_W = r(10, 3)
BAG_I = [1, 2, 4, 5, 4, 3, 2, 9]


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("offsets,last,pad", [([0, 4], False, None), ([0, 4, 4, 6], False, 2),
                                              ([0, 4, 4, 8], True, None)])
def test_embedding_bag_returns_torchs_four_results(mode, offsets, last, pad):
    def run(L):
        w = L.tensor(BAG_W, requires_grad=True)
        res = L.embedding_bag(w, L.tensor(BAG_I), L.tensor(offsets), False, mode, False, None,
                              last, pad)
        res[0].sum().backward()
        return py([*res, w.grad, res[0].grad_fn.name()])
    same_as_torch(run)


def test_embedding_bag_per_sample_weights_and_offsets_type():
    def run(L):
        w = L.tensor(BAG_W, requires_grad=True)
        psw = L.tensor(np.linspace(0.5, 2, 8, dtype=np.float32), requires_grad=True)
        res = L.embedding_bag(w, L.tensor(BAG_I), L.tensor([0, 3]), per_sample_weights=psw)
        res[0].sum().backward()
        return py([*res, w.grad, psw.grad])
    same_as_torch(run)
    raises_as_torch(lambda L: L.embedding_bag(L.tensor(BAG_W), L.tensor([[1, 2]]), None),
                    TypeError, r"embedding_bag\(\): argument 'offsets' \(position 3\) must be "
                               "Tensor, not NoneType")
