"""hookgrad.nn.functional against torch.nn.functional (outputs, gradients, node names) and
against jax.grad of independent JAX formulas; plus behaviours: dropout, running
statistics, padding_idx, errors."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
import hookgrad.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

_rng = np.random.default_rng(0)


def r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def hr(*shape):
    """A hookgrad tensor of normal samples (from NumPy: no compilation per shape)."""
    return hookgrad.tensor(r(*shape))


def u(*shape, lo=0.02, hi=0.98):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


X4 = r(2, 3, 7, 7)
X3 = r(2, 3, 9)
X2 = r(3, 4)
X2[0, :3] = [0.0, 3.0, -3.0]   # kinks of the piecewise activations
X2[1, :3] = [1.0, -1.0, 6.0]
T2 = u(3, 4)
W4 = r(4, 3, 3, 3)
B4 = r(4)
IDX = np.array([0, 3, 1])
Q, K, V = r(2, 2, 5, 4), r(2, 2, 6, 4), r(2, 2, 6, 4)
MASK = _rng.random((5, 6)) > 0.4
MASK[1] = False  # a row with nothing to attend to
FLOAT_MASK = np.where(MASK, r(5, 6), -np.inf).astype(np.float32)  # -inf: not attended

# (id, fn(F, *tensors), arrays, positions that are integer / non-differentiable)
CASES = [
    ("conv2d", lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [X4, W4, B4], ()),
    ("conv2d_same_dilated", lambda F, x, w: F.conv2d(x, w, padding="same", dilation=2),
     [X4, r(4, 3, 2, 2)], ()),
    ("conv2d_groups", lambda F, x, w: F.conv2d(x, w, groups=3), [r(2, 6, 5, 5), r(6, 2, 3, 3)],
     ()),
    ("conv2d_unbatched", lambda F, x, w: F.conv2d(x, w, padding="valid"), [X4[0], W4], ()),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, padding=2, stride=2),
     [X3, r(5, 3, 3), r(5)], ()),
    ("conv_transpose2d", lambda F, x, w, b: F.conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1), [X4, r(3, 4, 3, 3), B4], ()),
    ("conv_transpose2d_groups", lambda F, x, w: F.conv_transpose2d(
        x, w, groups=2, dilation=2, stride=3), [r(2, 4, 5, 5), r(4, 3, 3, 3)], ()),
    ("conv_transpose1d", lambda F, x, w: F.conv_transpose1d(x, w, padding=1),
     [r(2, 4, 9), r(4, 3, 3)], ()),
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 3, 2, 1), [X4], ()),
    ("max_pool2d_ceil_dilation", lambda F, x: F.max_pool2d(x, 2, 2, 0, 2, True), [X4], ()),
    ("max_pool2d_ties", lambda F, x: F.max_pool2d(x.relu(), 2), [X4 - 1.0], ()),
    ("max_pool1d", lambda F, x: F.max_pool1d(x, 3, 2, 1), [X3], ()),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 3, 2, 1), [X4], ()),
    ("avg_pool2d_ceil_exclude_pad", lambda F, x: F.avg_pool2d(x, 3, 2, 1, True, False), [X4],
     ()),
    ("avg_pool2d_ceil_include_pad", lambda F, x: F.avg_pool2d(x, 2, 2, 1, True, True), [X4],
     ()),
    ("avg_pool2d_divisor", lambda F, x: F.avg_pool2d(x, 2, divisor_override=3), [X4], ()),
    ("avg_pool1d", lambda F, x: F.avg_pool1d(x, 3, 2, 1), [X3], ()),
    ("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)), [X4], ()),
    ("adaptive_avg_pool2d_1", lambda F, x: F.adaptive_avg_pool2d(x, 1), [X4], ()),
    ("adaptive_avg_pool2d_none", lambda F, x: F.adaptive_avg_pool2d(x, (None, 2)), [X4], ()),
    ("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x, 4), [X3], ()),
    ("batch_norm_eval", lambda F, x, w, b, m, v: F.batch_norm(x, m, v, w, b, eps=1e-3),
     [X4, r(3), r(3), r(3), u(3) + 0.5], (3, 4)),
    ("batch_norm_train", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True),
     [X4, r(3), r(3)], ()),
    ("batch_norm_train_2d", lambda F, x: F.batch_norm(x, None, None, training=True),
     [r(4, 3)], ()),
    ("group_norm", lambda F, x, w, b: F.group_norm(x, 3, w, b), [X4, r(3), r(3)], ()),
    ("layer_norm", lambda F, x, w, b: F.layer_norm(x, (7, 7), w, b), [X4, r(7, 7), r(7, 7)],
     ()),
    ("rms_norm", lambda F, x, w: F.rms_norm(x, (7,), w), [X4, r(7)], ()),
    ("rms_norm_eps", lambda F, x: F.rms_norm(x, (7, 7), eps=0.1), [X4], ()),
    ("embedding_padding_idx", lambda F, w, i: F.embedding(i, w, padding_idx=3),
     [r(5, 3), np.array([[0, 3, 1, 3], [4, 4, 0, 1]])], (1,)),
    ("embedding_scale_grad_by_freq", lambda F, w, i: F.embedding(i, w, scale_grad_by_freq=True),
     [r(5, 3), np.array([[0, 3, 1, 3], [4, 4, 4, 1]])], (1,)),
    ("sdpa", lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v), [Q, K, V], ()),
    ("sdpa_causal_scale", lambda F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, scale=0.3), [Q, K, V], ()),
    ("sdpa_bool_mask", lambda F, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [Q, K, V, MASK], (3,)),
    ("sdpa_float_mask", lambda F, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [Q, K, V, r(5, 6)], ()),
    ("sdpa_gqa", lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
     [r(2, 4, 5, 4), K, V], ()),
    ("sdpa_float_mask_inf_rows", lambda F, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [Q, K, V, FLOAT_MASK], (3,)),
    ("sdpa_causal_and_batched_bool_mask", lambda F, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m, is_causal=True, scale=0.7), [Q, K, V, np.stack([MASK, ~MASK])[
            :, None]], (3,)),
    ("pad_constant", lambda F, x: F.pad(x, (1, 2, 2, 1), value=0.5), [X4], ()),
    ("pad_negative", lambda F, x: F.pad(x, (-1, 2)), [X4], ()),
    ("pad_reflect", lambda F, x: F.pad(x, (1, 2, 2, 1), mode="reflect"), [X4], ()),
    ("pad_replicate", lambda F, x: F.pad(x, (1, 2), mode="replicate"), [X3], ()),
    ("pad_circular", lambda F, x: F.pad(x, (1, 2, 2, 1), mode="circular"), [X4], ()),
    ("unfold", lambda F, x: F.unfold(x, (2, 3), padding=1, stride=2), [X4], ()),
    ("fold", lambda F, x: F.fold(x, (4, 5), 2), [r(2, 12, 12)], ()),
    ("one_hot_float", lambda F, i: F.one_hot(i, 5).float(), [IDX], (0,)),
    # activations
    ("relu", lambda F, x: F.relu(x), [X2], ()),
    ("relu6", lambda F, x: F.relu6(x), [X2], ()),
    ("gelu", lambda F, x: F.gelu(x), [X2], ()),
    ("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh"), [X2], ()),
    ("silu", lambda F, x: F.silu(x), [X2], ()),
    ("softplus", lambda F, x: F.softplus(x), [X2], ()),
    ("softplus_beta_threshold", lambda F, x: F.softplus(x, beta=2, threshold=1), [X2], ()),
    ("elu", lambda F, x: F.elu(x, alpha=0.5), [X2], ()),
    ("selu", lambda F, x: F.selu(x), [X2], ()),
    ("celu", lambda F, x: F.celu(x, alpha=2.0), [X2], ()),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2), [X2], ()),
    ("hardtanh", lambda F, x: F.hardtanh(x), [X2], ()),
    ("hardtanh_bounds", lambda F, x: F.hardtanh(x, -0.5, 3.0), [X2], ()),
    ("mish", lambda F, x: F.mish(x), [X2], ()),
    ("tanh", lambda F, x: F.tanh(x), [X2], ()),
    ("sigmoid", lambda F, x: F.sigmoid(x), [X2], ()),
    ("logsigmoid", lambda F, x: F.logsigmoid(x), [X2], ()),
    ("hardswish", lambda F, x: F.hardswish(x), [X2], ()),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x), [X2], ()),
    ("softshrink", lambda F, x: F.softshrink(x, 1.0), [X2], ()),
    ("hardshrink", lambda F, x: F.hardshrink(x, 1.0), [X2], ()),
    ("tanhshrink", lambda F, x: F.tanhshrink(x), [X2], ()),
    ("softsign", lambda F, x: F.softsign(x), [X2], ()),
    ("threshold", lambda F, x: F.threshold(x, 1.0, -2.0), [X2], ()),
    ("glu", lambda F, x: F.glu(x, 1), [X2], ()),
    ("prelu", lambda F, x, w: F.prelu(x, w), [X4, r(3)], ()),
    ("softmax", lambda F, x: F.softmax(x, 1), [X2], ()),
    ("softmin", lambda F, x: F.softmin(x, 0), [X2], ()),
    ("log_softmax", lambda F, x: F.log_softmax(x, -1), [X2], ()),
    ("normalize", lambda F, x: F.normalize(x), [X2], ()),
    ("normalize_p1_zero_row", lambda F, x: F.normalize(x * (x.abs() > 0.5), p=1, dim=0),
     [X2], ()),
    ("cosine_similarity", lambda F, a, b: F.cosine_similarity(a, b * (b.abs() > 0.3)),
     [X2, T2], ()),
    ("cosine_similarity_broadcast", lambda F, a, b: F.cosine_similarity(a, b, dim=-1),
     [X2, r(1, 4)], ()),
    ("pairwise_distance", lambda F, a, b: F.pairwise_distance(a, b), [X2, T2], ()),
    ("pairwise_distance_p1_keepdim", lambda F, a, b: F.pairwise_distance(
        a, b, p=1, keepdim=True), [X2, T2], ()),
    # losses
    ("kl_div_batchmean", lambda F, x, t: F.kl_div(x, t, reduction="batchmean"), [X2, T2], ()),
    ("kl_div_log_target_none", lambda F, x, t: F.kl_div(x, t.log(), reduction="none",
                                                         log_target=True), [X2, T2], (1,)),
    ("smooth_l1_beta0", lambda F, x, t: F.smooth_l1_loss(x, t, beta=0.0), [X2, T2], ()),
    ("nll_loss_2d_target", lambda F, x, t, w: F.nll_loss(x, t, w, reduction="none"),
     [r(3, 4, 2), np.array([[0, 2], [1, 1], [3, 0]]), u(4)], (1, 2)),
    ("nll_loss_kdim_4d", lambda F, x, t: F.nll_loss(x, t, ignore_index=1, reduction="none"),
     [r(2, 4, 2, 2), np.array([[[0, 1], [3, 2]], [[1, 1], [0, 3]]])], (1,)),
    ("cross_entropy_unbatched", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
     [X2[0], np.array(2)], (1,)),
    # PyTorch smooths only by a positive amount: a negative one is no smoothing, not an error
    ("cross_entropy_negative_smoothing", lambda F, x, t: F.cross_entropy(
        x, t, label_smoothing=-0.25), [r(3, 4), np.array([0, 2, 3])], (1,)),
    ("cross_entropy_soft_negative_smoothing", lambda F, x, t: F.cross_entropy(
        x, t, label_smoothing=-0.25), [r(3, 4), u(3, 4)], (1,)),
    # the spatial kernel takes class weights of any shape with one element per class
    ("nll_loss_kdim_2d_weight", lambda F, x, t, w: F.nll_loss(x, t, w.reshape(1, 4)),
     [r(2, 4, 2, 2), np.array([[[0, 1], [3, 2]], [[1, 1], [0, 3]]]), u(4)], (1, 2)),
]

_LOSS_CASES = []
for _red in ("mean", "sum", "none"):
    _LOSS_CASES += [
        (f"mse_{_red}", lambda F, x, t, red=_red: F.mse_loss(x, t, reduction=red), [X2, T2],
         ()),
        (f"mse_weight_{_red}", lambda F, x, t, w, red=_red: F.mse_loss(
            x, t, reduction=red, weight=w), [X2, T2, u(3, 4)], (2,)),
        (f"l1_{_red}", lambda F, x, t, red=_red: F.l1_loss(x, t, reduction=red), [X2, T2], ()),
        (f"l1_weight_{_red}", lambda F, x, t, w, red=_red: F.l1_loss(
            x, t, reduction=red, weight=w), [X2, T2, u(3, 4)], (2,)),
        (f"smooth_l1_{_red}", lambda F, x, t, red=_red: F.smooth_l1_loss(
            x, t, reduction=red, beta=0.5), [X2, T2], ()),
        (f"huber_{_red}", lambda F, x, t, red=_red: F.huber_loss(
            x, t, reduction=red, delta=0.7), [X2, T2], ()),
        (f"huber_weight_{_red}", lambda F, x, t, w, red=_red: F.huber_loss(
            x, t, reduction=red, weight=w), [X2, T2, u(3, 4)], (2,)),
        (f"bce_logits_{_red}", lambda F, x, t, red=_red: F.binary_cross_entropy_with_logits(
            x, t, reduction=red), [X2, T2], ()),
        (f"bce_logits_weights_{_red}", lambda F, x, t, w, pw, red=_red:
         F.binary_cross_entropy_with_logits(x, t, w, reduction=red, pos_weight=pw),
         [X2, T2, u(4), u(4) * 3], (2, 3)),
        (f"bce_{_red}", lambda F, x, t, red=_red: F.binary_cross_entropy(
            x, t, reduction=red), [u(3, 4), T2], ()),
        (f"bce_weight_{_red}", lambda F, x, t, w, red=_red: F.binary_cross_entropy(
            x, t, w, reduction=red), [u(3, 4), T2, u(3, 4)], (2,)),
        (f"kl_div_{_red}", lambda F, x, t, red=_red: F.kl_div(x, t, reduction=red),
         [X2, T2], ()),
        (f"nll_{_red}", lambda F, x, t, red=_red: F.nll_loss(x, t, reduction=red),
         [X2, IDX], (1,)),
        (f"nll_weight_ignore_{_red}", lambda F, x, t, w, red=_red: F.nll_loss(
            x, t, w, reduction=red, ignore_index=3), [X2, IDX, u(4)], (1, 2)),
        (f"cross_entropy_{_red}", lambda F, x, t, red=_red: F.cross_entropy(
            x, t, reduction=red), [X2, IDX], (1,)),
        (f"cross_entropy_smoothing_weight_{_red}", lambda F, x, t, w, red=_red:
         F.cross_entropy(x, t, w, reduction=red, label_smoothing=0.2, ignore_index=1),
         [X2, IDX, u(4)], (1, 2)),
        (f"cross_entropy_smoothing_{_red}", lambda F, x, t, red=_red: F.cross_entropy(
            x, t, reduction=red, label_smoothing=0.2, ignore_index=1), [X2, IDX], (1,)),
        (f"cross_entropy_kdim_weight_{_red}", lambda F, x, t, w, red=_red: F.cross_entropy(
            x, t, w, reduction=red), [r(3, 4, 2), np.array([[0, 2], [1, 1], [3, -100]]), u(4)],
         (1, 2)),
        (f"cross_entropy_soft_weight_smoothing_{_red}", lambda F, x, t, w, red=_red:
         F.cross_entropy(x, t, w, reduction=red, label_smoothing=0.1), [X2, T2, u(4)], (2,)),
        (f"cross_entropy_soft_kdim_{_red}", lambda F, x, t, red=_red: F.cross_entropy(
            x, t, reduction=red), [r(3, 4, 2), u(3, 4, 2)], ()),
    ]


# "mean" in the default tier; the other reductions of every loss in the slow tier
CASES = [pytest.param(*c, id=c[0]) for c in CASES] + [
    pytest.param(*c, id=c[0], marks=() if c[0].endswith("mean") else pytest.mark.slow)
    for c in _LOSS_CASES]


def _tensors(L, arrays, fixed):
    out = []
    for i, a in enumerate(arrays):
        t = L.tensor(a)
        if i not in fixed and np.issubdtype(a.dtype, np.floating):
            t.requires_grad_(True)
        out.append(t)
    return out


def _run(L, Fmod, fn, arrays, fixed):
    ts = _tensors(L, arrays, fixed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(Fmod, *ts)
    name = out.grad_fn.name() if out.grad_fn is not None else None
    grads = []
    if out.requires_grad:
        g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
        out.backward(L.tensor(g))
        grads = [None if t.grad is None else t.grad.numpy() for t in ts if t.requires_grad]
    return out.detach().numpy(), grads, name


@needs_torch
@pytest.mark.parametrize("name,fn,arrays,fixed", CASES)
def test_matches_torch(name, fn, arrays, fixed):
    assert_same_run(_run(hookgrad, F, fn, arrays, fixed), _run(torch, TF, fn, arrays, fixed))


def assert_same_run(ours, theirs):
    """``_run``'s results of hookgrad and PyTorch agree: output, gradients (a None of
    PyTorch's may be zeros), node name."""
    (got, got_g, got_name), (want, want_g, want_name) = ours, theirs
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(got_g) == len(want_g)
    for a, b in zip(got_g, want_g):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert got_name == want_name


@needs_torch
def test_max_pool2d_indices_match_torch():
    for kw in ({"kernel_size": 3, "stride": 2, "padding": 1},
               {"kernel_size": 2, "ceil_mode": True, "dilation": 2}):
        v, i = F.max_pool2d(hookgrad.tensor(X4), return_indices=True, **kw)
        tv, ti = TF.max_pool2d(torch.tensor(X4), return_indices=True, **kw)
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
        np.testing.assert_allclose(v.numpy(), tv.numpy())
        assert i.grad_fn is None and not i.dtype.is_floating_point


# ----------------------------------------------------------------- against jax.grad


def _grads(fn, *arrays):
    ts = [hookgrad.tensor(a, requires_grad=True) for a in arrays]
    fn(*ts).sum().backward()
    return [t.grad.numpy() for t in ts]


def test_conv2d_grad_matches_jax():
    def ref(x, w, b):
        y = jax.lax.conv_general_dilated(x, w, (2, 1), [(1, 1), (0, 0)],
                                         dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return jnp.sum(y + b[None, :, None, None])
    got = _grads(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0)), X4, W4, B4)
    want = jax.jit(jax.grad(ref, argnums=(0, 1, 2)))(X4, W4, B4)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_conv_transpose2d_is_adjoint_of_conv2d():
    # <conv(x), y> == <x, conv_transpose(y)> with the same weight
    x, w = r(1, 3, 6, 6), r(4, 3, 3, 3)
    y = F.conv2d(hookgrad.tensor(x), hookgrad.tensor(w), stride=2, padding=1)
    yy = r(*y.shape)
    back = F.conv_transpose2d(hookgrad.tensor(yy), hookgrad.tensor(w), stride=2, padding=1,
                              output_padding=1)
    assert back.shape == (1, 3, 6, 6)
    np.testing.assert_allclose(float((y.numpy() * yy).sum()), float((x * back.numpy()).sum()),
                               rtol=1e-4)


@pytest.mark.parametrize("name,ref", [
    ("elu", jax.nn.elu), ("selu", jax.nn.selu), ("silu", jax.nn.silu),
    ("gelu", lambda x: jax.nn.gelu(x, approximate=False)), ("mish", lambda x: x * jnp.tanh(
        jax.nn.softplus(x))), ("logsigmoid", jax.nn.log_sigmoid), ("softplus", jax.nn.softplus),
    ("leaky_relu", lambda x: jax.nn.leaky_relu(x, 0.01)),
])
def test_activation_grads_match_jax(name, ref):
    x = r(3, 5)
    t = hookgrad.tensor(x, requires_grad=True)
    out = getattr(F, name)(t)
    np.testing.assert_allclose(out.detach().numpy(), jax.jit(ref)(x), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), jax.jit(jax.grad(lambda a: ref(a).sum()))(x),
                               rtol=1e-5,
                               atol=1e-6)


def test_layer_norm_and_group_norm_grads_match_jax():
    x, w, b = r(2, 4, 3), r(3), r(3)

    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return jnp.sum(jnp.sin((x - mu) / jnp.sqrt(var + 1e-5) * w + b))
    got = _grads(lambda x, w, b: F.layer_norm(x, (3,), w, b).sin(), x, w, b)
    for a, e in zip(got, jax.jit(jax.grad(ln, argnums=(0, 1, 2)))(x, w, b)):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)

    def gn(x):
        g = x.reshape(2, 2, -1)
        mu = g.mean(-1, keepdims=True)
        var = ((g - mu) ** 2).mean(-1, keepdims=True)
        return jnp.sum(jnp.sin(((g - mu) / jnp.sqrt(var + 1e-5)).reshape(x.shape)))
    (got,) = _grads(lambda x: F.group_norm(x, 2).sin(), x)
    np.testing.assert_allclose(got, jax.jit(jax.grad(gn))(x), rtol=1e-4, atol=1e-5)


def test_max_pool_gradient_goes_to_first_maximum():
    x = np.zeros((1, 1, 2, 4), np.float32)
    x[0, 0, 1, 0] = x[0, 0, 0, 1] = 1.0   # a tie in the first window
    (g,) = _grads(lambda t: F.max_pool2d(t, 2), x)
    want = np.zeros_like(x)
    want[0, 0, 0, 1] = 1.0                 # row-major first
    want[0, 0, 0, 2] = 1.0                 # all-zero window: its first element
    np.testing.assert_array_equal(g, want)


def test_cross_entropy_grad_matches_jax():
    x, t = r(4, 5), np.array([0, 4, 2, 2])

    def ref(x):
        return -jnp.mean(jax.nn.log_softmax(x)[jnp.arange(4), t])
    (g,) = _grads(lambda a: F.cross_entropy(a, hookgrad.tensor(t)), x)
    np.testing.assert_allclose(g, jax.jit(jax.grad(ref))(x), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------- behaviours


def test_batch_norm_updates_running_stats_in_place():
    x = hookgrad.tensor(X4)
    rm, rv = hookgrad.zeros(3), hookgrad.ones(3)
    ids = id(rm), id(rv)
    F.batch_norm(x, rm, rv, training=True, momentum=0.3)
    n = 2 * 7 * 7
    mean = X4.mean((0, 2, 3))
    var = X4.var((0, 2, 3)) * n / (n - 1)
    np.testing.assert_allclose(rm.numpy(), 0.3 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.7 + 0.3 * var, rtol=1e-5)
    assert (id(rm), id(rv)) == ids
    assert rm._version == 1 and rv._version == 1
    assert rm.grad_fn is None and not rm.requires_grad
    # eval mode reads them and leaves them alone
    before = rm.numpy().copy()
    out = F.batch_norm(x, rm, rv, training=False)
    np.testing.assert_array_equal(rm.numpy(), before)
    np.testing.assert_allclose(out.numpy(), (X4 - before[:, None, None]) /
                               np.sqrt(rv.numpy()[:, None, None] + 1e-5), rtol=1e-5, atol=1e-5)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(hr(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(hr(2, 3), None, None, training=False)


def test_dropout_identity_cases_return_input():
    x = hookgrad.tensor(r(4, 4), requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


def test_dropout_masks_and_scales():
    hookgrad.manual_seed(3)
    x = hookgrad.ones(200, 50, requires_grad=True)
    y = F.dropout(x, 0.25)
    vals = np.unique(y.detach().numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75], rtol=1e-6)
    kept = (y.detach().numpy() != 0).mean()
    assert abs(kept - 0.75) < 0.02
    assert y.grad_fn.name() == "MulBackward0"
    y.backward(hookgrad.ones(200, 50))
    # the backward regenerates the forward's mask from the saved key
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def test_dropout_reproducible_with_manual_seed():
    hookgrad.manual_seed(7)
    a = F.dropout(hookgrad.ones(64), 0.5).numpy()
    b = F.dropout(hookgrad.ones(64), 0.5).numpy()
    hookgrad.manual_seed(7)
    c = F.dropout(hookgrad.ones(64), 0.5).numpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)


def test_dropout_p1_and_channel_dropout():
    x = hookgrad.ones(3, 4, requires_grad=True)
    np.testing.assert_array_equal(F.dropout(x, 1.0).detach().numpy(), np.zeros((3, 4)))
    hookgrad.manual_seed(0)
    y = F.dropout2d(hookgrad.ones(8, 16, 3, 3), 0.5).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert np.all((per_channel == per_channel[..., :1]))  # whole channels kept or dropped
    assert 0 < (per_channel[..., 0] == 0).mean() < 1


def test_dropout_errors():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        F.dropout(hookgrad.ones(2), 1.5)


def test_embedding_padding_idx_gets_no_grad_and_max_norm_renorms():
    w = hookgrad.tensor(r(5, 3) * 3, requires_grad=True)
    idx = hookgrad.tensor([[0, 2], [2, 4]])
    F.embedding(idx, w, padding_idx=2).sum().backward()
    g = w.grad.numpy()
    np.testing.assert_array_equal(g[2], 0)
    np.testing.assert_array_equal(g[0], 1)
    np.testing.assert_array_equal(g[4], 1)
    np.testing.assert_array_equal(g[1], 0)
    w2 = hookgrad.tensor(r(5, 3) * 3)
    before = w2.numpy().copy()
    v0 = w2._version
    out = F.embedding(hookgrad.tensor([1, 3]), w2, max_norm=1.0)
    norms = np.linalg.norm(w2.numpy(), axis=1)
    assert norms[1] <= 1.0 + 1e-5 and norms[3] <= 1.0 + 1e-5
    np.testing.assert_array_equal(w2.numpy()[[0, 2, 4]], before[[0, 2, 4]])
    np.testing.assert_allclose(out.numpy(), w2.numpy()[[1, 3]])
    assert w2._version == v0 + 1


def test_embedding_errors():
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(hookgrad.tensor([5]), hr(3, 2))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding(hookgrad.tensor([0.0]), hr(3, 2))


def test_one_hot():
    got = F.one_hot(hookgrad.tensor([0, 2, 1]))
    np.testing.assert_array_equal(got.numpy(), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(hookgrad.tensor([[1]]), 4).shape == (1, 1, 4)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(hookgrad.tensor([-1, 0]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(hookgrad.tensor([3]), 3)


def test_sdpa_fully_masked_row_is_zero_and_dropout_is_random():
    q = hookgrad.tensor(r(1, 3, 4))
    m = hookgrad.tensor(np.array([[True, True, False], [False, False, False],
                                  [True, False, False]]))
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=m)
    np.testing.assert_array_equal(out.numpy()[0, 1], 0)
    hookgrad.manual_seed(0)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert not np.allclose(a.numpy(), b.numpy())


def test_conv_errors():
    x = hr(2, 3, 8, 8)
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[4, 2, 3, 3\], "
                                           r"expected input\[2, 3, 8, 8\] to have 2 channels"):
        F.conv2d(x, hr(4, 2, 3, 3))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) "
                                           "input to conv2d"):
        F.conv2d(hr(8, 8), hr(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided"):
        F.conv2d(x, hr(4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input"):
        F.conv2d(x, hr(4, 3, 9, 9))


def test_pool_and_pad_errors():
    x = hr(2, 3, 8, 8)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode reflect2"):
        F.pad(x, (1, 1), mode="reflect2")
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D"):
        F.pad(x, (1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be "
                                           "divisible by num_groups"):
        F.group_norm(x, 2)


def test_loss_errors():
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.l1_loss(hr(2), hr(2), reduction="foo")
    with pytest.raises(ValueError, match=r"Target size \(hookgrad.Size\(\[3\]\)\) must be the "
                                         r"same as input size"):
        F.binary_cross_entropy_with_logits(hr(2), hookgrad.tensor(u(3)))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(hookgrad.tensor([1.5]), hookgrad.tensor([1.0]))
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(hr(3, 4), hookgrad.tensor([0, 1, 5]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(hr(3, 4), hookgrad.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values"):
        F.smooth_l1_loss(hr(2), hr(2), beta=-1.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(hr(3, 3))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(hr(2), hookgrad.tensor(u(2)))


def test_multi_head_attention_forward_need_weights_vs_sdpa_path():
    # the explicit softmax path (need_weights) and the fused path give the same output
    hookgrad.manual_seed(0)
    E, H = 8, 2
    x = hr(5, 2, E)
    w, b = hookgrad.tensor(r(3 * E, E) * 0.3), hookgrad.tensor(r(3 * E) * 0.1)
    ow, ob = hookgrad.tensor(r(E, E) * 0.3), hookgrad.tensor(r(E) * 0.1)
    kpm = hookgrad.tensor([[False] * 4 + [True], [False] * 5])
    args = (x, x, x, E, H, w, b, None, None, False, 0.0, ow, ob)
    o1, a1 = F.multi_head_attention_forward(*args, key_padding_mask=kpm, need_weights=True)
    o2, a2 = F.multi_head_attention_forward(*args, key_padding_mask=kpm, need_weights=False)
    assert a2 is None and a1.shape == (2, 5, 5)
    np.testing.assert_allclose(o1.numpy(), o2.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a1.numpy()[0, :, 4], 0)      # the padded key
    np.testing.assert_allclose(a1.numpy().sum(-1), 1, rtol=1e-5)


_SDPA_BAD = [  # (query, key, value shapes, enable_gqa, PyTorch's words too): each refused
    ((4,), (3, 4), (3, 4), False, True),
    # (PyTorch's error comes from the batched matmul its math path reaches)
    ((2, 3, 4), (2, 3, 5), (2, 3, 5), False, False),
    ((2, 3, 4), (3, 3, 4), (3, 3, 4), False, True),
    ((1, 3, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4), True, True),
]


def _sdpa_error(L, shapes, gqa):
    q, k, v = (L.ones(*s) for s in shapes)
    with pytest.raises(RuntimeError) as e:
        L.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
    return str(e.value)


@pytest.mark.parametrize("case", range(len(_SDPA_BAD)))
def test_sdpa_refuses_bad_shapes(case):
    *shapes, gqa, same = _SDPA_BAD[case]
    msg = _sdpa_error(hookgrad, shapes, gqa)
    assert msg
    if torch is not None and same:
        assert msg == _sdpa_error(torch, shapes, gqa)


_IMG = (1, 2, 5, 5)
# sizes PyTorch refuses before computing: its RuntimeError, where JAX's ZeroDivisionError,
# shape ValueError or XLA's build error came
SIZE_ERRORS = {
    "max_pool2d of kernel 0": (lambda L: L.nn.functional.max_pool2d(L.ones(*_IMG), 0),
                               r"^stride should not be zero$"),
    "max_pool2d of stride 0": (lambda L: L.nn.functional.max_pool2d(L.ones(*_IMG), 2, 0),
                               r"^stride should not be zero$"),
    "max_pool1d of kernel 0": (lambda L: L.nn.functional.max_pool1d(L.ones(1, 2, 5), 0),
                               r"^max_pool1d\(\) kernel_size must be greater than zero, but "
                               r"got 0$"),
    "unfold of kernel 0": (lambda L: L.nn.functional.unfold(L.ones(*_IMG), 0),
                           r"^kernel size should be greater than zero, but got kernel_height: "
                           r"0 kernel_width: 0$"),
    "unfold of stride 0": (lambda L: L.nn.functional.unfold(L.ones(*_IMG), 2, stride=0),
                           r"^stride should be greater than zero, but got stride_height: 0 "
                           r"stride_width: 0$"),
    "adaptive_avg_pool2d of -1": (lambda L: L.nn.functional.adaptive_avg_pool2d(
        L.ones(*_IMG), (2, -3)), r"^adaptive_avg_pool2d: elements of output_size must be "
                                 r"greater than or equal to 0 but received \{2, -3\}$"),
    "conv2d of stride 0": (lambda L: L.nn.functional.conv2d(L.ones(*_IMG), L.ones(1, 2, 2, 2),
                                                            stride=0),
                           r"^non-positive stride is not supported$"),
    "cosine_similarity of shapes that do not broadcast": (
        lambda L: L.nn.functional.cosine_similarity(L.ones(2, 3), L.ones(4, 5)),
        r"^The size of tensor a \(3\) must match the size of tensor b \(5\) at non-singleton "
        r"dimension 1$"),
}


@pytest.mark.parametrize("case", list(SIZE_ERRORS))
def test_sizes_pytorch_refuses_raise_its_error(case):
    from tests.differential import raises_as_torch
    raises_as_torch(*(SIZE_ERRORS[case][:1] + (RuntimeError,) + SIZE_ERRORS[case][1:]))


def _long(L):
    return L.ones(2, 3, dtype=L.long)


# integer input where PyTorch's kernel has no integer version: (call, error, message)
INTEGER_INPUT = {
    "mse_loss": (lambda L: L.nn.functional.mse_loss(_long(L), _long(L)), NotImplementedError,
                 r"^\"mse_cpu\" not implemented for 'Long'$"),
    "nll_loss": (lambda L: L.nn.functional.nll_loss(_long(L), L.tensor([0, 1])),
                 NotImplementedError, r"^\"nll_loss_out_frame\" not implemented for 'Long'$"),
    "layer_norm": (lambda L: L.nn.functional.layer_norm(_long(L), (3,)), NotImplementedError,
                   r"^\"LayerNormKernelImpl\" not implemented for 'Long'$"),
    "norm": (lambda L: L.norm(_long(L)), RuntimeError,
             r"^linalg\.vector_norm: Expected a floating point or complex tensor as input\. "
             r"Got Long$"),
}


@pytest.mark.parametrize("case", list(INTEGER_INPUT))
def test_integer_input_without_a_kernel_raises_pytorchs_error(case):
    from tests.differential import raises_as_torch
    raises_as_torch(*INTEGER_INPUT[case])


@pytest.mark.parametrize("call,match", [
    (lambda L: L.nn.functional.relu("a"),
     r"^relu\(\): argument 'input' \(position 1\) must be Tensor, not str$"),
    (lambda L: L.nn.functional.leaky_relu(L.ones(3), "a"),
     r"^leaky_relu\(\): argument 'negative_slope' \(position 2\) must be Number, not str$"),
], ids=["relu of a string", "leaky_relu of a string slope"])
def test_mistyped_activation_arguments_raise_the_parsers_error(call, match):
    from tests.differential import raises_as_torch
    raises_as_torch(call, TypeError, match)


def test_constant_padding_is_one_op_for_pad_and_constant_pad_nd():
    """``F.pad``'s constant mode is PyTorch's ``constant_pad_nd``: one node saving ``pad``,
    a negative pad cropping inside it (no slice recorded before it)."""
    from hookgrad._ops import registry, stacking
    from tests.differential import same_as_torch
    assert registry.OPS["constant_pad_nd"] is stacking.CONSTANT_PAD

    def scenario(L):
        x = L.tensor([[0.5, 1.0, -2.0, 3.0], [4.0, 5.0, 6.5, -7.0]], requires_grad=True)
        out = []
        for y in (L.constant_pad_nd(x, (-1, 2, 1, 0), 2.5), L.nn.functional.pad(x, (1, 2)),
                  L.nn.functional.pad(x, (-1, 1), value=3.0)):
            y.sum().backward()
            out.append([y.tolist(), y.grad_fn.name(),
                        [n.name() for n, _ in y.grad_fn.next_functions], x.grad.tolist()])
            x.grad = None
        out.append(list(L.nn.functional.pad(x, (1, 2)).grad_fn._saved_pad))
        return out
    same_as_torch(scenario)
