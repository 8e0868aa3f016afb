"""The functional forms added for breadth (issue 30) against torch.nn.functional: outputs,
gradients and node names, with the runner of test_functional."""
import numpy as np
import pytest

import hookgrad
import hookgrad.nn.functional as F

from .test_functional import _run, r, u

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

X5 = r(2, 3, 5, 6, 7)
X2, Y2 = r(4, 5), r(4, 5)
SIGN = np.where(r(4) > 0, 1.0, -1.0).astype(np.float32)
SIGN2 = np.where(r(4, 5) > 0, 1.0, -1.0).astype(np.float32)
CLS = np.array([1, 0, 4, 2])
MULTILABEL = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 1, 1, 1], [4, -1, 0, 0, 0]])

# (id, fn(F, *tensors), arrays, positions that are integer / non-differentiable)
CASES = [
    ("conv_transpose3d", lambda F, x, w, b: F.conv_transpose3d(
        x, w, b, stride=2, padding=1, output_padding=1), [X5, r(3, 2, 2, 3, 2), r(2)], ()),
    ("conv_transpose3d_groups", lambda F, x, w: F.conv_transpose3d(
        x[:, :2], w, groups=2, dilation=(2, 1, 1)), [X5, r(2, 3, 3, 2, 2)], ()),
    ("adaptive_max_pool3d", lambda F, x: F.adaptive_max_pool3d(x, (2, 4, 3)), [X5], ()),
    ("adaptive_max_pool3d_none", lambda F, x: F.adaptive_max_pool3d(x[0], (None, 1, 5)),
     [X5], ()),
    ("adaptive_max_pool2d_with_indices", lambda F, x: F.adaptive_max_pool2d_with_indices(
        x[0], 3)[0], [X5], ()),
    ("pixel_shuffle", lambda F, x: F.pixel_shuffle(x, 2), [r(2, 8, 3, 4)], ()),
    ("pixel_shuffle_batch_dims", lambda F, x: F.pixel_shuffle(x, 3), [r(2, 1, 9, 2, 2)], ()),
    ("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(x, 2), [r(2, 3, 4, 6)], ()),
    ("channel_shuffle", lambda F, x: F.channel_shuffle(x, 3), [r(2, 6, 2, 3)], ()),
    ("elu_", lambda F, x: F.elu_(x * 1, 0.5), [X2], ()),
    ("celu_", lambda F, x: F.celu_(x * 1, 2.0), [X2], ()),
    ("selu_", lambda F, x: F.selu_(x * 1), [X2], ()),
    ("hardtanh_", lambda F, x: F.hardtanh_(x * 1, -0.5, 0.5), [X2], ()),
    ("leaky_relu_", lambda F, x: F.leaky_relu_(x * 1, 0.2), [X2], ()),
    ("threshold_", lambda F, x: F.threshold_(x * 1, 0.1, 2.0), [X2], ()),
    ("soft_margin_loss", lambda F, x, y: F.soft_margin_loss(x, y), [X2, SIGN2], (1,)),
    ("soft_margin_loss_none", lambda F, x, y: F.soft_margin_loss(x, y, reduction="none"),
     [X2, SIGN2], (1,)),
    ("multi_margin_loss", lambda F, x, y: F.multi_margin_loss(x, y), [X2, CLS], (1,)),
    ("multi_margin_loss_p2_weight", lambda F, x, y, w: F.multi_margin_loss(
        x, y, p=2, margin=0.5, weight=w, reduction="none"), [X2, CLS, u(5)], (1, 2)),
    ("multilabel_margin_loss", lambda F, x, y: F.multilabel_margin_loss(x, y),
     [X2, MULTILABEL], (1,)),
    ("multilabel_margin_loss_none", lambda F, x, y: F.multilabel_margin_loss(
        x, y, reduction="none"), [X2, MULTILABEL], (1,)),
    ("cosine_embedding_loss", lambda F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.2),
     [X2, Y2, SIGN], (2,)),
    ("hinge_embedding_loss", lambda F, x, y: F.hinge_embedding_loss(x, y, reduction="sum"),
     [X2, SIGN2], (1,)),
    ("margin_ranking_loss", lambda F, a, b, y: F.margin_ranking_loss(a, b, y, margin=0.1),
     [X2[0], Y2[0], SIGN2[0]], (2,)),
    ("multilabel_soft_margin_loss", lambda F, x, y, w: F.multilabel_soft_margin_loss(
        x, y, weight=w), [X2, (SIGN2 > 0).astype(np.float32), u(5)], (1, 2)),
    ("poisson_nll_loss", lambda F, x, y: F.poisson_nll_loss(x, y), [X2, u(4, 5) * 3], (1,)),
    ("poisson_nll_loss_full", lambda F, x, y: F.poisson_nll_loss(
        x, y, log_input=False, full=True, reduction="none"), [u(4, 5), u(4, 5) * 3], (1,)),
    ("gaussian_nll_loss", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v), [X2, Y2, u(4, 5)],
     ()),
    ("gaussian_nll_loss_full_homoscedastic", lambda F, x, y, v: F.gaussian_nll_loss(
        x, y, v, full=True, reduction="sum"), [X2, Y2, u(4)], ()),
    ("triplet_margin_loss", lambda F, a, p, n: F.triplet_margin_loss(a, p, n), [X2, Y2, u(4, 5)],
     ()),
    ("triplet_margin_loss_swap_p1", lambda F, a, p, n: F.triplet_margin_loss(
        a, p, n, margin=2.0, p=1, swap=True, reduction="none"), [X2, Y2, u(4, 5)], ()),
    ("triplet_margin_with_distance_loss", lambda F, a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), swap=True),
     [X2, Y2, u(4, 5)], ()),
]


@needs_torch
@pytest.mark.parametrize("name,fn,arrays,fixed", [pytest.param(*c, id=c[0]) for c in CASES])
def test_matches_torch(name, fn, arrays, fixed):
    got, got_g, got_name = _run(hookgrad, F, fn, arrays, fixed)
    want, want_g, want_name = _run(torch, TF, fn, arrays, fixed)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(got_g) == len(want_g)
    for a, b in zip(got_g, want_g):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert got_name == want_name


@needs_torch
@pytest.mark.parametrize("fn,x", [("adaptive_max_pool1d_with_indices", X5[0, 0, 0]),
                                  ("adaptive_max_pool2d_with_indices", X5[0, 0]),
                                  ("adaptive_max_pool3d_with_indices", X5[0])])
def test_adaptive_max_pool_indices_match_torch(fn, x):
    got = getattr(F, fn)(hookgrad.tensor(x), 3)
    want = getattr(TF, fn)(torch.tensor(x), 3)
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy())


@needs_torch
def test_adaptive_max_pool3d_errors():
    with pytest.raises(RuntimeError, match=r"Expected 4D or 5D tensor, but got: \[2, 3\]"):
        F.adaptive_max_pool3d(hookgrad.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match="dimension 1 being empty"):
        F.adaptive_max_pool3d(hookgrad.zeros(1, 0, 2, 2, 2), 2)


@needs_torch
@pytest.mark.parametrize("fn,arg", [
    (lambda L, x, t: L.nn.functional.soft_margin_loss(x, t), "'soft_margin_loss'.*'target'"),
    (lambda L, x, t: L.nn.functional.multi_margin_loss(x, L.tensor([0, 1, 2]), weight=t[0]),
     "'multi_margin_loss'.*'weight'")])
def test_loss_arguments_without_a_gradient(fn, arg):
    for L in (hookgrad, torch):
        x, t = L.ones(3, 4, requires_grad=True), L.ones(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError, match=f"{arg}. This input cannot have requires_grad"):
            fn(L, x, t)


@needs_torch
def test_layer_errors_match_torch():
    for L in (hookgrad, torch):
        with pytest.raises(ValueError, match="expected margin to be greater than 0, got 0"):
            L.nn.TripletMarginWithDistanceLoss(margin=0)
        with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
            L.nn.MultiMarginLoss(p=3)
        with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D"):
            L.nn.Softmax2d()(L.ones(2, 3))
        with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
            L.nn.CircularPad2d(1)(L.ones(2, 3))
        with pytest.raises(RuntimeError, match="but input.size\\(-3\\)=7 is not divisible by 4"):
            L.nn.functional.pixel_shuffle(L.ones(7, 2, 2), 2)
        with pytest.raises(RuntimeError, match="expects width to be divisible by downscale"):
            L.nn.functional.pixel_unshuffle(L.ones(1, 4, 3), 2)
        with pytest.raises(RuntimeError, match="Got 4 channels and 3 groups"):
            L.nn.functional.channel_shuffle(L.ones(1, 4, 3), 3)
