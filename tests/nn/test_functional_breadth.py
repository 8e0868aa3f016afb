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
    ("affine_grid", lambda F, t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False),
     [r(2, 2, 3)], ()),
    ("affine_grid_3d_corners", lambda F, t: F.affine_grid(t, (2, 3, 4, 5, 2),
                                                          align_corners=True), [r(2, 3, 4)], ()),
    ("max_unpool2d", lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
     [r(2, 3, 4, 6)], ()),
    ("max_unpool2d_output_size", lambda F, x: F.max_unpool2d(
        *F.max_pool2d(x, 3, 2, 1, return_indices=True), 3, 2, 1, output_size=(5, 6)),
     [r(2, 3, 5, 6)], ()),
    ("max_unpool1d", lambda F, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2),
     [r(2, 3, 7)], ()),
    ("max_unpool3d", lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2),
     [r(1, 2, 4, 4, 2)], ()),
    ("max_pool2d_with_indices", lambda F, x: F.max_pool2d_with_indices(x, 3, 2, 1)[0],
     [r(2, 3, 5, 6)], ()),
    ("lp_pool1d", lambda F, x: F.lp_pool1d(x.abs(), 3.0, 2), [r(2, 3, 7)], ()),
    ("lp_pool2d_stride_ceil", lambda F, x: F.lp_pool2d(x, 2, (2, 3), 2, ceil_mode=True),
     [r(2, 3, 5, 7)], ()),
    ("lp_pool3d_inf", lambda F, x: F.lp_pool3d(x, float("inf"), 2), [r(1, 2, 4, 4, 2)], ()),
    ("local_response_norm_3d", lambda F, x: F.local_response_norm(x, 3, alpha=0.1),
     [r(2, 5, 7)], ()),
    ("local_response_norm_4d", lambda F, x: F.local_response_norm(x, 2, 0.2, 0.5, 2.0),
     [r(2, 5, 3, 4)], ()),
    ("pdist", lambda F, x: F.pdist(x), [np.concatenate([r(4, 3), r(1, 3)[[0, 0]]])], ()),
    ("pdist_p1", lambda F, x: F.pdist(x, 1), [r(5, 3)], ()),
    ("pdist_p3", lambda F, x: F.pdist(x, 3.0), [r(5, 3)], ()),
    ("pdist_p0", lambda F, x: F.pdist(x, 0), [r(5, 3)], ()),
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


GRID_X4 = r(2, 3, 5, 6)
_grid_rng = np.random.default_rng(3)
GRID_G4 = _grid_rng.uniform(-1.3, 1.3, (2, 4, 7, 2)).astype(np.float32)
GRID_G5 = _grid_rng.uniform(-1.3, 1.3, (1, 2, 3, 4, 3)).astype(np.float32)
# each mode and padding once in the default tier (4-D, align_corners=False, and a few more);
# the rest of the combinations in the slow tier
_GRID_FAST = {("bilinear", "zeros", True, 2), ("bilinear", "zeros", False, 3),
              ("nearest", "reflection", True, 3), ("bicubic", "border", True, 2)}
GRID_CASES = [pytest.param(mode, pad, corners, nd, marks=() if not corners and nd == 2 or
                           (mode, pad, corners, nd) in _GRID_FAST else pytest.mark.slow)
              for mode in ("bilinear", "nearest", "bicubic")
              for pad in ("zeros", "border", "reflection") for corners in (False, True)
              for nd in (2, 3) if not (mode == "bicubic" and nd == 3)]


@needs_torch
@pytest.mark.parametrize("mode,pad,corners,nd", GRID_CASES)
def test_grid_sample_matches_torch(mode, pad, corners, nd):
    x, g = (GRID_X4, GRID_G4) if nd == 2 else (X5[:1, :2, :3, :4, :5], GRID_G5)
    got, got_g, got_name = _run(hookgrad, F, lambda F, a, b: F.grid_sample(
        a, b, mode, pad, corners), [x, g], ())
    want, want_g, want_name = _run(torch, TF, lambda F, a, b: F.grid_sample(
        a, b, mode, pad, corners), [x, g], ())
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    for a, b in zip(got_g, want_g):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    assert got_name == want_name


@needs_torch
def test_grid_sample_warns_and_checks_like_torch():
    for L in (hookgrad, torch):
        x, g = L.zeros(1, 1, 2, 2), L.zeros(1, 2, 2, 2)
        with pytest.warns(UserWarning, match="changed to align_corners=False since 1.3.0"):
            L.nn.functional.grid_sample(x, g)
        with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or "
                                             "'bicubic', but got: 'area'"):
            L.nn.functional.grid_sample(x, g, mode="area", align_corners=False)
        with pytest.raises(ValueError, match="Nx2x3 for size \\[1, 1, 2, 2\\]"):
            L.nn.functional.affine_grid(L.zeros(1, 3, 3), [1, 1, 2, 2], align_corners=False)


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
        with pytest.raises(RuntimeError, match=r"^pixel_shuffle expects its input's 'channel' "
                           r"dimension to be divisible by the square of upscale_factor, but "
                           r"input.size\(-3\)=7 is not divisible by 4$"):
            L.nn.functional.pixel_shuffle(L.ones(7, 2, 2), 2)
        for shape, what, d in (((1, 3, 4), "height", -2), ((1, 4, 3), "width", -1)):
            with pytest.raises(RuntimeError, match=rf"^pixel_unshuffle expects {what} to be "
                               rf"divisible by downscale_factor, but input.size\({d}\)=3 is "
                               r"not divisible by 2$"):
                L.nn.functional.pixel_unshuffle(L.ones(*shape), 2)
        with pytest.raises(RuntimeError, match="Got 4 channels and 3 groups"):
            L.nn.functional.channel_shuffle(L.ones(1, 4, 3), 3)


@needs_torch
def test_gumbel_softmax_samples_and_straight_through_gradient():
    hookgrad.manual_seed(0)
    logits = hookgrad.tensor((r(200, 4) * 0.1 + np.log([0.1, 0.2, 0.3, 0.4])).astype(np.float32),
                             requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    # the argmax follows the logits: the most likely class wins most often
    assert np.bincount(h.argmax(-1), minlength=4).argmax() == 3
    # straight-through: hard's gradient is the soft sample's (as torch records it)
    hard.backward(hookgrad.ones(200, 4))
    t = torch.tensor(r(3, 4), requires_grad=True)
    assert hard.grad_fn.name() == TF.gumbel_softmax(t, hard=True).grad_fn.name()
    np.testing.assert_allclose(logits.grad.numpy(), 0.0, atol=1e-5)   # rows of a softmax


@needs_torch
def test_rrelu_training_slopes_and_node():
    hookgrad.manual_seed(0)
    x = hookgrad.tensor(-np.abs(r(2000)) - 0.1, requires_grad=True)
    y = F.rrelu(x, 0.2, 0.4, training=True)
    slope = (y / x).detach().numpy()
    assert 0.2 <= slope.min() and slope.max() <= 0.4 and abs(slope.mean() - 0.3) < 0.01
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-6)   # the drawn slopes
    t = torch.tensor(-np.abs(r(3)), requires_grad=True)
    assert y.grad_fn.name() == TF.rrelu(t, training=True).grad_fn.name()


@needs_torch
@pytest.mark.parametrize("fn", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_keeps_selu_statistics(fn):
    hookgrad.manual_seed(0)
    x = F.selu(hookgrad.tensor(r(40, 50, 20)))
    y = getattr(F, fn)(x, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    alpha, p = -1.7580993408473766, 0.3
    a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
    dropped = np.isclose(y, a * alpha - a * alpha * p, atol=1e-5)   # what a dropped one is
    if fn == "feature_alpha_dropout":   # whole channels dropped together
        assert set(dropped.mean(-1).ravel()) <= {0.0, 1.0}
    assert abs(dropped.mean() - 0.3) < 0.06
    t = torch.tensor(r(3, 4), requires_grad=True)
    xh = hookgrad.tensor(r(3, 4), requires_grad=True)
    assert getattr(F, fn)(xh, 0.3, True).grad_fn.name() == \
        getattr(TF, fn)(t, 0.3, True).grad_fn.name()
    for L in (hookgrad, torch):
        assert (getattr(L.nn.functional, fn)(L.ones(3), 1.0, True) == 0).all()
        with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
            getattr(L.nn.functional, fn)(L.ones(3), 1.5, True)


@needs_torch
def test_container_factory_kwargs_and_deprecations_match_torch():
    for L in (hookgrad, torch):
        with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
            c = L.nn.Container(a=L.nn.ReLU(), b=L.nn.Linear(2, 3))
        assert [n for n, _ in c.named_parameters()] == ["b.weight", "b.bias"]
        with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
            L.nn.NLLLoss2d()
        assert L.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": L.float32}}) \
            == {"device": "cpu", "dtype": L.float32}
        with pytest.raises(TypeError, match="device specified twice"):
            L.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"device": "cpu"}})
        with pytest.raises(TypeError, match="unexpected kwargs"):
            L.nn.factory_kwargs({"layout": 1})


@needs_torch
def test_small_helpers_match_torch():
    for L in (F, TF):
        assert L.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
        assert L.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
        L.assert_int_or_pair((1, 2), "kernel_size", "{} must be int or pair")
        with pytest.raises(AssertionError, match="kernel_size must be int or pair"):
            L.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be int or pair")

    def yes(x, flag=False):
        """doc"""
        return "yes"

    def no(x, flag=False):
        return "no"
    fn = F.boolean_dispatch("flag", 1, False, yes, no, "m", "f")
    assert (fn(1), fn(1, True), fn(1, flag=True)) == ("no", "yes", "yes")
    assert fn.__doc__ == "doc" and fn.__name__ == "f" and fn.__module__ == "m"


def test_pdist_p_without_pytorch_gradients_is_not_implemented():
    for p in (float("inf"), 0.5):
        with pytest.raises(NotImplementedError, match="hookgrad does not implement "
                                                      "torch.nn.functional.pdist with p="):
            F.pdist(hookgrad.ones(3, 2), p)
