"""F.interpolate (every mode, align_corners, up/down, integer and non-integer scales),
adaptive max pooling, instance norm's running statistics and embedding_bag: values and
gradients against PyTorch, PyTorch's errors and warnings, and the compiled mode."""
import warnings

import numpy as np
import pytest

import hookgrad
import hookgrad.nn.functional as F

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
_rng = np.random.default_rng(0)
_BASE = {1: (1, 2, 5), 2: (1, 2, 5, 4), 3: (1, 1, 3, 4, 5)}


def r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _both(fn, arrays, L):
    """``fn(L, *tensors)``, its output and the gradients of ``sum(out * g)``."""
    ts = [L.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(L, *ts)
    out = out[0] if isinstance(out, tuple) else out
    g = np.cos(np.arange(out.numel(), dtype=np.float32)).reshape(tuple(out.shape))
    out.backward(L.tensor(g))
    return out, [t.grad for t in ts if t.requires_grad]


def _same_as_torch(fn, *arrays, atol=1e-5):
    h, hg = _both(fn, arrays, hookgrad)
    t, tg = _both(fn, arrays, torch)
    assert tuple(h.shape) == tuple(t.shape)
    assert h.grad_fn.name() == t.grad_fn.name()
    np.testing.assert_allclose(h.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=atol)
    for a, b in zip(hg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=atol)


def _interp_fn(**kw):
    return lambda L, x: L.nn.functional.interpolate(x, **kw)


# (mode, spatial dims, align_corners values)
_MODES = [("nearest", 1, [None]), ("nearest", 2, [None]), ("nearest", 3, [None]),
          ("nearest-exact", 1, [None]), ("nearest-exact", 2, [None]),
          ("nearest-exact", 3, [None]), ("linear", 1, [False, True]),
          ("bilinear", 2, [False, True]), ("bicubic", 2, [False, True]),
          ("trilinear", 3, [False, True]), ("area", 2, [None])]
# sizes / scales: up and down, integer and non-integer (kept away from sizes equal to the
# input's, where PyTorch's nearest-1d/3d and bicubic backwards disagree with their forwards)
_GEOMS = [{"size": 7}, {"size": 2}, {"scale_factor": 2}, {"scale_factor": 0.5},
          {"scale_factor": 1.7}, {"scale_factor": 0.6},
          {"scale_factor": 1.7, "recompute_scale_factor": True}]
_CASES = [pytest.param(m, d, ac, g, id=f"{m}{d}d-ac{ac}-{'-'.join(map(str, g.values()))}",
                       marks=[] if (i + j) % 3 == 0 else [pytest.mark.slow])
          for i, (m, d, acs) in enumerate(_MODES) for ac in acs
          for j, g in enumerate(_GEOMS)]


@needs_torch
@pytest.mark.parametrize("mode, nd, align_corners, geom", _CASES)
def test_interpolate_matches_torch(mode, nd, align_corners, geom):
    _same_as_torch(_interp_fn(mode=mode, align_corners=align_corners, **geom), r(*_BASE[nd]))


@needs_torch
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("geom", [{"size": (2, 3)}, {"scale_factor": 0.3},
                                  {"size": (9, 8)}])
def test_interpolate_antialias_matches_torch(mode, align_corners, geom):
    _same_as_torch(_interp_fn(mode=mode, align_corners=align_corners, antialias=True,
                              **geom), r(1, 2, 12, 9))


@needs_torch
def test_gradcam_upsampling_matches_torch():
    # the Grad-CAM step: a 7x7 map to the image size, bilinear
    _same_as_torch(_interp_fn(size=(224, 224), mode="bilinear", align_corners=False),
                   r(1, 1, 7, 7))


@needs_torch
def test_deprecated_aliases_warn_and_match_torch():
    x = r(1, 2, 3, 4)
    for name, kw in (("upsample", {"scale_factor": 2, "mode": "bilinear"}),
                     ("upsample_nearest", {"size": (5, 6)}),
                     ("upsample_bilinear", {"scale_factor": 2})):
        with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
            h = getattr(F, name)(hookgrad.tensor(x), **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = getattr(TF, name)(torch.tensor(x), **kw)
        np.testing.assert_allclose(h.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def test_interpolate_known_values():
    x = hookgrad.tensor([[[0.0, 1.0, 2.0]]])
    up = F.interpolate(x, size=5, mode="linear", align_corners=True)
    np.testing.assert_allclose(up.numpy()[0, 0], [0, 0.5, 1, 1.5, 2], atol=1e-6)
    up = F.interpolate(x, scale_factor=2, mode="linear")  # half-pixel centres, edges clamp
    np.testing.assert_allclose(up.numpy()[0, 0], [0, 0.25, 0.75, 1.25, 1.75, 2], atol=1e-6)
    np.testing.assert_array_equal(F.interpolate(x, scale_factor=2).numpy()[0, 0],
                                  [0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(F.interpolate(x, size=2).numpy()[0, 0], [0, 1])
    np.testing.assert_array_equal(F.interpolate(x, size=2, mode="nearest-exact")
                                  .numpy()[0, 0], [0, 2])
    img = hookgrad.arange(16.0).reshape(1, 1, 4, 4)
    np.testing.assert_allclose(F.interpolate(img, size=(2, 2), mode="area").numpy()[0, 0],
                               [[2.5, 4.5], [10.5, 12.5]])
    # upsampling a constant map keeps it constant; the gradient counts the reads
    c = hookgrad.ones(1, 1, 2, 2, requires_grad=True)
    y = F.interpolate(c, scale_factor=3, mode="bicubic", align_corners=False)
    np.testing.assert_allclose(y.detach().numpy(), 1.0, atol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(c.grad.numpy().sum(), 36.0, rtol=1e-5)
    assert y.grad_fn.name() == "UpsampleBicubic2DBackward0"


@pytest.mark.parametrize("kw, exc, match", [
    ({"size": 2, "scale_factor": 2}, ValueError, "only one of size or scale_factor"),
    ({}, ValueError, "either size or scale_factor should be defined"),
    ({"size": (2, 2, 2)}, ValueError, r"Input and output must have the same number of "
     r"spatial dimensions, but got input with spatial dimensions of \[3, 4\] and output "
     r"size of \(2, 2, 2\)"),
    ({"scale_factor": (2.0,)}, ValueError, r"Input and scale_factor must have the same number "
     r"of spatial dimensions, but got input with spatial dimensions of \[3, 4\] and "
     r"scale_factor of shape \(2.0,\). Please provide input tensor in \(N, C, d1, d2, "
     r"...,dK\) format and scale_factor in \(s1, s2, ...,sK\) format."),
    ({"size": (2.0, 3)}, TypeError, "expected size to be one of int or Tuple"),
    ({"size": 2, "align_corners": True}, ValueError,
     "align_corners option can only be set with the interpolating modes"),
    ({"size": 2, "mode": "linear"}, NotImplementedError,
     "Got 4D input, but linear mode needs 3D input"),
    ({"size": 2, "mode": "trilinear"}, NotImplementedError,
     "Got 4D input, but trilinear mode needs 5D input"),
    ({"size": 2, "mode": "cubic"}, NotImplementedError,
     r"Only 3D, 4D and 5D input Tensors supported \(got 4D\) for the modes: nearest \| "
     r"linear .* \(got cubic\)"),
    ({"size": 0}, RuntimeError, r"Input and output sizes should be greater than 0, but got "
     r"input \(H: 3, W: 4\) output \(H: 0, W: 0\)"),
    ({"scale_factor": 0.2}, RuntimeError, "Input and output sizes should be greater than 0"),
    ({"size": 2, "recompute_scale_factor": True}, ValueError,
     "recompute_scale_factor is not meaningful with an explicit size"),
    ({"size": 2, "mode": "nearest", "antialias": True}, ValueError,
     "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes"),
])
def test_interpolate_errors(kw, exc, match):
    x = hookgrad.tensor(r(1, 2, 3, 4))
    with pytest.raises(exc, match=match):
        F.interpolate(x, **kw)
    if torch is not None:  # the same error from PyTorch
        with pytest.raises(exc, match=match.replace("hookgrad", "torch")):
            TF.interpolate(torch.tensor(r(1, 2, 3, 4)), **kw)


def test_interpolate_input_rank_errors():
    with pytest.raises(NotImplementedError, match=r"Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(hookgrad.tensor(r(1, 2, 3)), size=4, mode="bilinear")
    with pytest.raises(NotImplementedError, match=r"Only 3D, 4D and 5D input Tensors "
                                                  r"supported \(got 2D\)"):
        F.interpolate(hookgrad.tensor(r(2, 3)), size=4)
    with pytest.raises(RuntimeError, match=r"input \(W: 3\) and output \(W: 0\)"):
        F.interpolate(hookgrad.tensor(r(1, 2, 3)), size=0)


def test_interpolate_compiled_equals_eager():
    w = hookgrad.tensor(r(1, 2, 3, 4), requires_grad=True)

    def step(x):
        cam = F.interpolate(x * w, size=(7, 5), mode="bilinear", align_corners=False)
        loss = (cam ** 2).sum()
        loss.backward()
        g = w.grad.clone()
        w.grad = None
        return loss, g
    x = hookgrad.tensor(r(1, 2, 3, 4))
    eager = step(x)
    compiled = hookgrad.compile(step)
    for _ in range(2):
        got = compiled(x)
        for a, b in zip(got, eager):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)


# --------------------------------------------------------------------------- adaptive max


@needs_torch
@pytest.mark.parametrize("shape, size", [((2, 3, 7, 5), (3, 2)), ((3, 4, 4), 3),
                                         ((1, 2, 5, 9), (None, 4)), ((1, 1, 3, 3), 5)])
def test_adaptive_max_pool2d_values_indices_grads_match_torch(shape, size):
    x = r(*shape)
    h, hi = F.adaptive_max_pool2d(hookgrad.tensor(x), size, return_indices=True)
    t, ti = TF.adaptive_max_pool2d(torch.tensor(x), size, return_indices=True)
    np.testing.assert_array_equal(h.numpy(), t.numpy())
    np.testing.assert_array_equal(hi.numpy(), ti.numpy())
    _same_as_torch(lambda L, a: L.nn.functional.adaptive_max_pool2d(a, size), x)


@needs_torch
def test_adaptive_max_pool1d_matches_torch():
    x = r(2, 3, 10)
    h, hi = F.adaptive_max_pool1d(hookgrad.tensor(x), 4, return_indices=True)
    t, ti = TF.adaptive_max_pool1d(torch.tensor(x), 4, return_indices=True)
    np.testing.assert_array_equal(h.numpy(), t.numpy())
    np.testing.assert_array_equal(hi.numpy(), ti.numpy())
    _same_as_torch(lambda L, a: L.nn.functional.adaptive_max_pool1d(a, 4), x)


def test_adaptive_max_pool_ties_and_errors():
    x = hookgrad.tensor([[[[1.0, 3.0, 3.0, 0.0]]]], requires_grad=True)
    v, i = F.adaptive_max_pool2d(x, (1, 1), return_indices=True)
    assert v.item() == 3.0 and i.item() == 1  # the first maximum, as PyTorch
    v.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, 0, 0], [0, 1, 0, 0])
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d\(\): Expected 3D or 4D "
                                           r"tensor, but got: \[2\]"):
        F.adaptive_max_pool2d(hookgrad.tensor([1.0, 2.0]), 1)
    with pytest.raises(RuntimeError, match="output_size.size\\(\\) must be 2"):
        F.adaptive_max_pool2d(x, (1, 1, 1))
    with pytest.raises(RuntimeError, match="with dimension 2 being empty"):
        F.adaptive_max_pool2d(hookgrad.zeros(1, 2, 0, 3), 2)
    with pytest.raises(RuntimeError, match=r"Expected 2 to 3 dimensions, but got 1-dimensional"):
        F.adaptive_max_pool1d(hookgrad.tensor([1.0, 2.0]), 1)
    with pytest.raises(RuntimeError, match="should contain one int \\(got 2\\)"):
        F.adaptive_max_pool1d(hookgrad.zeros(1, 2, 3), (1, 2))


# --------------------------------------------------------------------------- instance norm


@needs_torch
@pytest.mark.parametrize("momentum", [0.1, None])
def test_instance_norm_running_stats_match_torch(momentum):
    x, w, b = r(2, 3, 4, 5), r(3), r(3)
    stats = {}
    for L in (hookgrad, torch):
        rm, rv = L.zeros(3), L.ones(3)
        mom = 0.0 if momentum is None else momentum
        y = L.nn.functional.instance_norm(L.tensor(x), rm, rv, L.tensor(w), L.tensor(b),
                                          True, mom)
        stats[L.__name__] = (y.numpy(), rm.numpy(), rv.numpy())
    for a, c in zip(stats["hookgrad"], stats["torch"]):
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)


def test_instance_norm_module_errors_and_warning():
    m = hookgrad.nn.InstanceNorm2d(3, affine=True)
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        m(hookgrad.zeros(2, 3))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match "
                                         r"num_features \(3\), but got: 4."):
        m(hookgrad.zeros(2, 4, 3, 3))
    with pytest.warns(UserWarning, match="input's size at dim=0 does not match num_features"):
        hookgrad.nn.InstanceNorm2d(3)(hookgrad.tensor(r(4, 3, 3)))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(hookgrad.zeros(2, 3, 1))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be "
                                           "defined when use_input_stats is false"):
        F.instance_norm(hookgrad.zeros(2, 3, 4), use_input_stats=False)


# --------------------------------------------------------------------------- embedding_bag

_IDX, _OFF = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 4]), np.array([0, 3, 3, 8])


@needs_torch
@pytest.mark.parametrize("kw", [
    {"mode": "sum"}, {"mode": "mean"}, {"mode": "max"},
    {"mode": "mean", "padding_idx": 4}, {"mode": "sum", "padding_idx": -1},
    {"mode": "mean", "include_last_offset": True},
], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_embedding_bag_matches_torch(kw):
    # with include_last_offset the last offset closes the last bag
    off = np.append(_OFF, len(_IDX)) if kw.get("include_last_offset") else _OFF
    _same_as_torch(lambda L, w, i, o: L.nn.functional.embedding_bag(i, w, o, **kw),
                   r(10, 3), _IDX, off)


@needs_torch
def test_embedding_bag_per_sample_weights_and_max_norm_match_torch():
    _same_as_torch(lambda L, w, i, o, p: L.nn.functional.embedding_bag(
        i, w, o, mode="sum", per_sample_weights=p), r(10, 3), _IDX, _OFF, r(10))
    w = r(10, 3) * 3
    hw, tw = hookgrad.tensor(w), torch.tensor(w)
    h = F.embedding_bag(hookgrad.tensor(_IDX), hw, hookgrad.tensor(_OFF), max_norm=1.0)
    t = TF.embedding_bag(torch.tensor(_IDX), tw, torch.tensor(_OFF), max_norm=1.0)
    np.testing.assert_allclose(h.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hw.numpy(), tw.numpy(), rtol=1e-5, atol=1e-6)  # renormed


def test_embedding_bag_known_values():
    w = hookgrad.arange(12.0).reshape(6, 2).requires_grad_()
    idx, off = hookgrad.tensor([0, 1, 5, 2]), hookgrad.tensor([0, 2, 2])
    y = F.embedding_bag(idx, w, off, mode="sum")
    np.testing.assert_array_equal(y.detach().numpy(), [[2, 4], [0, 0], [14, 16]])
    assert y.grad_fn.name() == "EmbeddingBagBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [1, 1, 1, 0, 0, 1])
    np.testing.assert_array_equal(F.embedding_bag(idx, w, off, mode="max").detach().numpy(),
                                  [[2, 3], [0, 0], [10, 11]])


def test_embedding_bag_scale_grad_by_freq_divides_by_the_count():
    # NOTE: the documented rule, as F.embedding applies it (PyTorch 2.13's CPU embedding_bag
    # gives other factors here, e.g. 3.0 for an index seen three times)
    w = hookgrad.ones(10, 1, requires_grad=True)
    F.embedding_bag(hookgrad.tensor(_IDX), w, hookgrad.tensor(_OFF), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    want = (np.bincount(_IDX, minlength=10) > 0).astype(np.float32)
    np.testing.assert_allclose(w.grad.numpy()[:, 0], want, rtol=1e-6)
    w2 = hookgrad.ones(10, 1, requires_grad=True)
    F.embedding(hookgrad.tensor(_IDX), w2, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-6)


def test_embedding_bag_compiled_with_constant_offsets():
    w = hookgrad.tensor(r(10, 3), requires_grad=True)
    idx = hookgrad.tensor(_IDX)

    def step(i, off):
        y = F.embedding_bag(i, w, off, mode="mean")
        y.sum().backward()
        g = w.grad.clone()
        w.grad = None
        return y, g
    eager = step(idx, hookgrad.tensor(_OFF))
    compiled = hookgrad.compile(step)
    for off in (tuple(_OFF.tolist()), _OFF.tolist()):  # static offsets: a tuple, a list
        got = compiled(idx, off)
        for a, b in zip(got, eager):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
    # an offsets Tensor is traced inside the compiled function: no values, a clear error
    # (fullgraph=True: by default such a call runs eagerly)
    with pytest.raises(RuntimeError, match="offsets must have concrete values"):
        hookgrad.compile(step, fullgraph=True)(idx, hookgrad.tensor(_OFF))
    # a 2-D input needs no offsets at all
    two = hookgrad.tensor(_IDX[:8].reshape(2, 4))
    np.testing.assert_allclose(
        hookgrad.compile(lambda i: F.embedding_bag(i, w, mode="sum"))(two).detach().numpy(),
        F.embedding_bag(two, w, mode="sum").detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("call, exc, match", [
    (lambda w: F.embedding_bag(hookgrad.tensor([[1, 2]]), w, hookgrad.tensor([0])),
     ValueError, "if input is 2D, then offsets has to be None"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w), ValueError,
     "offsets has to be a 1D Tensor but got None"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w, hookgrad.tensor([0]), mode="min"),
     ValueError, "mode has to be one of sum, mean or max"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w, hookgrad.tensor([0]), mode="max",
                               scale_grad_by_freq=True), ValueError,
     "max mode does not support scaling the gradient by the frequency"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w, hookgrad.tensor([1])),
     RuntimeError, "offsets\\[0\\] has to be 0"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w, hookgrad.tensor([0, 5])),
     RuntimeError, "offsets\\[-1\\] can not be greater than input's length 2"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w, hookgrad.tensor([0]),
                               per_sample_weights=hookgrad.ones(2)),
     NotImplementedError, "per_sample_weights is only supported for mode='sum'"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w, hookgrad.tensor([0]),
                               per_sample_weights=hookgrad.ones(3), mode="sum"),
     ValueError, "must have the same shape as the input"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 7]), w, hookgrad.tensor([0])),
     RuntimeError, r"^Index 1 of input takes value 7 which is not in the valid range \[0, 5\)$"),
    (lambda w: F.embedding_bag(hookgrad.tensor([1, 2]), w, hookgrad.tensor([0]),
                               padding_idx=6), RuntimeError,
     "padding_idx must be within the number of embeddings, -5 through 4, but got 6"),
])
def test_embedding_bag_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(hookgrad.zeros(5, 2))


def test_functional_call_grads_equal_eager():
    # hookgrad.func: JAX differentiates the same layers
    import jax
    import jax.numpy as jnp

    from hookgrad.func import functional_call
    nn = hookgrad.nn
    hookgrad.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(2, 3, 1), nn.Upsample(scale_factor=2, mode="bilinear"),
                      nn.InstanceNorm2d(3, affine=True), nn.AdaptiveMaxPool2d(2))
    x = r(1, 2, 3, 3)
    params = {k: v._data for k, v in m.named_parameters()}
    def loss(p):
        out = functional_call(m, p, (jnp.asarray(x),))
        return (out._data if isinstance(out, hookgrad.Tensor) else out).sum()
    g = jax.grad(loss)(params)
    m(hookgrad.tensor(x)).sum().backward()
    for k, v in m.named_parameters():
        np.testing.assert_allclose(np.asarray(g[k]), v.grad.numpy(), rtol=1e-5, atol=1e-6)
