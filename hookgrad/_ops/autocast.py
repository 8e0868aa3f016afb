"""Autocast: which ops run in lower precision, which in float32, and the casts before them.

The state is ``torch.autocast``'s: per thread, per device type, enabled or not and the
lower-precision dtype, a nesting count and a cache of casts of float32 leaves. Each op of
PyTorch's autocast op lists is one row of ``POLICY`` (per device type: ``LOWER``, ``FP32``,
``PROMOTE``, or a chooser reading the call's arguments); the registry wraps the public
function of each listed name once (``wrap``), and the wrapper costs one test while
autocast is off. The casts are ordinary ``Tensor.to`` calls, so the graph records them as
PyTorch does (``ToCopyBackward0`` before the op) and gradients come back in each input's
dtype.
"""
from __future__ import annotations

import functools
import threading
import weakref

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"
DEVICES = ("cpu", "cuda")
DEFAULT_DTYPE = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}
ON = [0]  # how many (thread, device type) pairs have autocast enabled: the wrappers' test


def _pad_policy(args, kwargs):
    # F.pad: PyTorch's CPU list holds reflection_pad1d/2d and replication_pad1d/2d/3d only
    mode = kwargs.get("mode", args[2] if len(args) > 2 else "constant")
    pad = kwargs.get("pad", args[1] if len(args) > 1 else ())
    dims = len(pad) // 2
    if (mode == "reflect" and dims in (1, 2)) or (mode == "replicate" and dims in (1, 2, 3)):
        return FP32
    return None


_MATMULS = ("addbmm addmm baddbmm bmm conv1d conv2d conv3d conv_tbc conv_transpose1d "
            "conv_transpose2d conv_transpose3d einsum linear matmul mm prelu "
            "scaled_dot_product_attention vecdot").split()
# NOTE: the rows are PyTorch 2.13's autocast lists under hookgrad's public names (CPU: as
# the installed CPU build casts them; CUDA: PyTorch's "Autocast Op Reference").
POLICY = {
    "cpu": {
        **{n: LOWER for n in _MATMULS},
        **{n: FP32 for n in (
            "avg_pool3d binary_cross_entropy grid_sample polar prod quantile nanquantile stft "
            "cdist trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse "
            "lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d max_unpool3d "
            "adaptive_avg_pool3d adaptive_max_pool3d fractional_max_pool2d "
            "fractional_max_pool3d mse_loss cosine_embedding_loss nll_loss "
            "hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy l1_loss "
            "huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss "
            "multi_margin_loss ctc_loss kl_div multilabel_margin_loss "
            "binary_cross_entropy_with_logits qr svd triangular_solve geqrf").split()},
        "pad": _pad_policy,
        **{n: PROMOTE for n in ("cat", "stack", "index_copy")},
    },
    "cuda": {
        **{n: LOWER for n in _MATMULS + "addmv addr mv chain_matmul multi_dot".split()},
        **{n: FP32 for n in (
            "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan "
            "pow softplus layer_norm group_norm cosine_similarity poisson_nll_loss "
            "cosine_embedding_loss nll_loss hinge_embedding_loss kl_div l1_loss "
            "smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss "
            "soft_margin_loss triplet_margin_loss multi_margin_loss cross_entropy "
            "binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp prod softmax "
            "log_softmax softmin cumprod cumsum sum norm vector_norm matrix_norm "
            "normalize").split()},
        **{n: PROMOTE for n in ("addcdiv addcmul atan2 bilinear cross dot grid_sample "
                                "index_put scatter_add tensordot").split()},
    },
}
BANNED = {"cuda": {"binary_cross_entropy": (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional."
    "binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss. "
    "binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")}}
LISTED = frozenset(n for table in POLICY.values() for n in table) | frozenset(
    n for table in BANNED.values() for n in table)


class _State(threading.local):
    def __init__(self):
        self.enabled = dict.fromkeys(DEVICES, False)
        self.dtype = dict(DEFAULT_DTYPE)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(leaf) -> (weakref to the leaf, its lower-precision copy)


state = _State()


def set_enabled(device_type, enabled):
    enabled = bool(enabled)
    if state.enabled[device_type] != enabled:
        state.enabled[device_type] = enabled
        ON[0] += 1 if enabled else -1


def clear_cache():
    state.cache.clear()


# --------------------------------------------------------------------------- the casts


def _eligible(t, device_type):
    dt = t.dtype
    return (dt.is_floating_point and dt is not _dtype.float64
            and t.device.type == device_type)


def _cast(t, dtype, device_type):
    if not (isinstance(t, Tensor) and _eligible(t, device_type)) or t.dtype is dtype:
        return t
    # NOTE: as PyTorch, only float32 leaves that require grad are cached, and only their
    # lower-precision copies: a weight used twice in one region is cast (and recorded) once
    cache = (state.cache_enabled and dtype is state.dtype[device_type]
             and t.dtype is _dtype.float32 and t._requires_grad and t.grad_fn is None
             and t._view is None)
    if cache:
        hit = state.cache.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
    out = t.to(dtype)
    if cache:
        state.cache[id(t)] = (weakref.ref(t), out)
    return out


def _map(value, fn):
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(fn(v) if isinstance(v, Tensor) else v for v in value)
    return value


def _widest(values, device_type):
    found = []
    for v in values:
        for t in (v if isinstance(v, (list, tuple)) else (v,)):
            if isinstance(t, Tensor) and _eligible(t, device_type):
                found.append(t.dtype)
    if not found:
        return None
    return functools.reduce(lambda a, b: _dtype.from_jax(jnp.promote_types(a.np, b.np)), found)


def cast_call(name, args, kwargs):
    """``args, kwargs`` of a call to the listed op ``name`` with autocast's casts applied,
    for each enabled device type."""
    if kwargs.get("out") is not None or kwargs.get("dtype") is not None:
        return args, kwargs  # explicit out= and dtype= calls are not eligible
    for device_type in DEVICES:
        if not state.enabled[device_type]:
            continue
        banned = BANNED.get(device_type, {}).get(name)
        if banned is not None:
            raise RuntimeError(banned)
        kind = POLICY[device_type].get(name)
        if callable(kind):
            kind = kind(args, kwargs)
        if kind is None:
            continue
        if kind == PROMOTE:
            dtype = _widest((*args, *kwargs.values()), device_type)
            if dtype is None:
                continue
        else:
            dtype = state.dtype[device_type] if kind == LOWER else _dtype.float32
        cast = functools.partial(_cast, dtype=dtype, device_type=device_type)
        args = tuple(_map(a, cast) for a in args)
        kwargs = {k: _map(v, cast) for k, v in kwargs.items()}
    return args, kwargs


def wrap(names, fn):
    """``fn`` (the public function of ``names``), casting its arguments as autocast's
    lists say when autocast is on; ``fn`` itself when no name is listed."""
    name = next((n for n in names if n in LISTED), None)
    if name is None:
        return fn

    @functools.wraps(fn)
    def autocast_fn(*args, **kwargs):
        if ON[0]:
            args, kwargs = cast_call(name, args, kwargs)
        return fn(*args, **kwargs)
    return autocast_fn


WRAPPER_CODE = wrap((next(iter(LISTED)),), lambda: None).__code__
