"""Layer ops behind ``hookgrad.nn.functional``: batch/group/RMS normalization,
embedding and one-hot, dropout, scaled dot-product attention.

Each op is one row of the table (a pure JAX forward and PyTorch's node name); backward
is JAX's vjp of the forward. Argument checking happens in the Python wrappers, with
PyTorch's error types and wording. Randomness (dropout) comes from ``hookgrad.random``:
the key is an argument of the op, so the backward regenerates the same mask.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _dtype, random
from .._tensor import Tensor
from .._autograd import grad_mode
from .dispatch import apply
from .gather import check_index, out_of_range
from .parser_errors import integer
from .nn_conv import _bias_shape
from .registry import defop, export
from .. import _errors


# --------------------------------------------------------------------------- normalisation


def _per_channel_affine(y, w, b):
    """``y * w + b`` with ``w`` and ``b`` (either may be None) over dim 1, the channels."""
    shape = _bias_shape(y.ndim - 2, -1)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


def _bn_apply(x, mean, var, w, b, eps):
    shape = _bias_shape(x.ndim - 2, -1)
    return _per_channel_affine((x - mean.reshape(shape)) * jax.lax.rsqrt(var.reshape(shape) + eps),
                               w, b)


def _bn_train(x, w, b, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    mean = jnp.mean(x, axis=axes)
    var = jnp.mean(jnp.square(x - mean.reshape(_bias_shape(x.ndim - 2, -1))), axis=axes)
    return _bn_apply(x, mean, var, w, b, eps), mean, var


def _bn_eval(x, rm, rv, w, b, eps):
    return _bn_apply(x, rm, rv, w, b, eps)


def _group_norm(x, w, b, groups, eps):
    n = x.shape[0]
    xg = x.reshape(n, groups, -1)
    mu = jnp.mean(xg, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(xg - mu), axis=-1, keepdims=True)
    return _per_channel_affine(((xg - mu) * jax.lax.rsqrt(var + eps)).reshape(x.shape), w, b)


def _rms_norm(x, w, ndims, eps):
    axes = tuple(range(x.ndim - ndims, x.ndim))
    y = x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=axes, keepdims=True) + eps)
    return y if w is None else y * w


BN_TRAIN = defop("batch_norm_train", _bn_train, "NativeBatchNormBackward0")
BN_EVAL = defop("batch_norm_eval", _bn_eval, "NativeBatchNormBackward0")


def _set(t, arr):
    t._write_(arr)


@jax.jit
def _running_update(r, s, m, c):
    """``(1 - momentum) * running + momentum * correction * batch_stat``."""
    return (r * (1 - m) + s * (m * c)).astype(r.dtype)


GROUP_NORM = defop("group_norm", _group_norm, "NativeGroupNormBackward0")
# PyTorch's rms_norm is composite; its last op is the multiplication
RMS_NORM = defop("rms_norm", _rms_norm, "MulBackward0")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5) -> Tensor:
    """Batch normalization over the channel dim 1 of ``(N, C, ...)``.

    ::

        batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
                   momentum=0.1, eps=1e-05) -> Tensor

    In training, normalizes with the batch statistics and, when given, updates
    ``running_mean``/``running_var`` in place (unbiased variance, ``momentum``), without
    recording; otherwise uses the running statistics.
    """
    try:
        if training:
            size = input.numel() // input.shape[1] if input.ndim > 1 else input.numel()
            if size == 1:
                raise ValueError(f"Expected more than 1 value per channel when training, got "
                                 f"input size {_size_str(input.shape)}")
            y, mean, var = apply(BN_TRAIN, (input, weight, bias), {"eps": float(eps)})
            m = 0.0 if momentum is None else float(momentum)
            # written in place, unrecorded; the version bump (PyTorch's kernel does not bump)
            # is how functional_call and compile see that the buffers changed
            if y.is_meta:  # shapes only: no statistics to keep
                return y
            if running_mean is not None:
                _set(running_mean, _running_update(running_mean._data, mean._data, m, 1.0))
            if running_var is not None:
                _set(running_var, _running_update(running_var._data, var._data, m,
                                                  size / (size - 1)))
            return y
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        return apply(BN_EVAL, (input, running_mean, running_var, weight, bias),
                     {"eps": float(eps)})
    except (RuntimeError, ValueError, TypeError):  # JAX's broadcast: PyTorch's size check
        _check_features(input, running_mean, running_var, weight, bias)
        raise


def _check_features(input, *stats, copies=1):
    """PyTorch's error for a statistic or affine parameter of ``batch_norm`` with other than
    one element per channel (it checks them in this order). Instance norm runs as a batch
    norm of each statistic repeated ``copies`` (N) times, so its message counts N times."""
    n = input.shape[1] if input.ndim > 1 else None
    for name, t in zip(("running_mean", "running_var", "weight", "bias"), stats):
        if n is not None and t is not None and t.numel() != n:
            raise RuntimeError(f"{name} should contain {n * copies} elements not "
                               f"{t.numel() * copies}") from None


def _size_str(shape):
    return f"hookgrad.Size({list(shape)})"


def _instance_norm(x, w, b, eps):
    axes = tuple(range(2, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    y = _per_channel_affine((x - mean) * jax.lax.rsqrt(var + eps), w, b)
    return y, mean.reshape(x.shape[:2]), var.reshape(x.shape[:2])


# PyTorch runs instance norm as batch norm on a (1, N * C, ...) view: its last node is a view
INSTANCE_NORM = defop("instance_norm", _instance_norm, "ViewBackward0")
INSTANCE_NORM_EVAL = defop("instance_norm_eval", _bn_eval, "ViewBackward0")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5) -> Tensor:
    """Normalizes each channel of each sample of ``(N, C, ...)`` over its spatial dims.

    ::

        instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                      use_input_stats=True, momentum=0.1, eps=1e-05) -> Tensor

    With ``use_input_stats`` (the default) the given running statistics are updated in
    place with the batch average of the per-instance statistics (unbiased variance);
    otherwise they normalize.
    """
    if input.ndim > 1:
        _check_features(input, running_mean, running_var, weight, bias, copies=input.shape[0])
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        return apply(INSTANCE_NORM_EVAL, (input, running_mean, running_var, weight, bias),
                     {"eps": float(eps)})
    size = math.prod(input.shape[2:])
    if size <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input "
                         f"size {_size_str(input.shape)}")
    y, mean, var = apply(INSTANCE_NORM, (input, weight, bias), {"eps": float(eps)})
    m = 0.0 if momentum is None else float(momentum)
    # like batch_norm: written in place, unrecorded, averaged over the batch
    if y.is_meta:
        return y
    if running_mean is not None:
        _set(running_mean, _running_update(running_mean._data, mean._data.mean(0), m, 1.0))
    if running_var is not None:
        _set(running_var, _running_update(running_var._data, var._data.mean(0), m,
                                          size / (size - 1)))
    return y


@export(method=False)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Group normalization: channels split into ``num_groups`` groups normalized separately.

    ::

        group_norm(input, num_groups, weight=None, bias=None, eps=1e-05) -> Tensor
    """
    si = input._arr.shape  # (read once: a Tensor's shape and ndim cost frames)
    if len(si) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{len(si)}")
    # (PyTorch's functional form checks the batch first: a zero ``num_groups`` divides)
    per = [si[0] * si[1] // num_groups, num_groups, *si[2:]]
    if per[0] * math.prod(per[2:]) == 1:  # (the values per group's channel)
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {per}")
    if num_groups.__class__ is not int:
        num_groups = integer("group_norm", "num_groups", num_groups, 2)
    if si[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(si)} and "
                           f"num_groups={num_groups}")
    if weight is not None and weight._arr.shape != si[1:2] or \
            bias is not None and bias._arr.shape != si[1:2]:  # (JAX would broadcast size 1)
        raise _group_affine_error(input, weight, bias)
    return apply(GROUP_NORM, (input, weight, bias), {"groups": int(num_groups),
                                                     "eps": float(eps)})


def affine_shape_error(shape, weight, bias):
    """PyTorch's error for a layer_norm/rms_norm ``weight`` or ``bias`` whose shape is not
    ``normalized_shape`` (checked first: JAX would broadcast one of size 1), or None."""
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            return RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                                f"got {name} of shape {list(t.shape)} and normalized_shape = "
                                f"{list(shape)}")
    return None


def _group_affine_error(input, weight, bias):
    # PyTorch's message for a bad bias shows the weight's shape (``[0]`` without one)
    shown = list(weight.shape) if weight is not None else [0]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != input.shape[1]):
            return RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                                f"of channels in input, but got {name} of shape {shown} and "
                                f"input of shape {list(input.shape)}")
    return None


@export(method=False)
def rms_norm(input, normalized_shape, weight=None, eps=None) -> Tensor:
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims.

    ``eps=None`` uses ``finfo(input.dtype).eps``.
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    if weight is not None and weight._arr.shape != shape:  # (PyTorch checks it first)
        raise affine_shape_error(shape, weight, None)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        # (PyTorch's rms_norm words it without layer_norm's ", " after the *)
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if eps is None:
        eps = float(jnp.finfo(input._data.dtype).eps)
    return apply(RMS_NORM, (input, weight), {"ndims": len(shape), "eps": float(eps)})


# --------------------------------------------------------------------------- embedding


def _embedding(w, idx, padding_idx, scale_grad_by_freq):
    out = jnp.take(w, idx, axis=0)
    if scale_grad_by_freq:
        # same value, gradient divided by how often each index occurs in the batch
        counts = jnp.zeros((w.shape[0],), w.dtype).at[idx.reshape(-1)].add(1)
        scaled = out / counts[idx][..., None]
        out = jax.lax.stop_gradient(out) + (scaled - jax.lax.stop_gradient(scaled))
    if padding_idx is not None:
        # the padding row gets no gradient
        out = jnp.where((idx == padding_idx)[..., None], jax.lax.stop_gradient(out), out)
    return out


EMBEDDING = defop("embedding", _embedding, "EmbeddingBackward0", {0: (1,)})
_RENORM = defop("embedding_renorm", lambda w, idx, max_norm, p: _renorm(w, idx, max_norm, p),
                None)


def _renorm(w, idx, max_norm, p):
    rows = jnp.unique(idx.reshape(-1), size=idx.size, fill_value=idx.reshape(-1)[0])
    sel = w[rows]
    norms = jnp.sum(jnp.abs(sel) ** p, axis=1) ** (1.0 / p)
    scale = jnp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    return w.at[rows].set(sel * scale[:, None].astype(w.dtype))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False) -> Tensor:
    """Looks up rows of ``weight`` (``(num_embeddings, embedding_dim)``) at the indices
    ``input``.

    ::

        embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                  scale_grad_by_freq=False, sparse=False) -> Tensor

    ``padding_idx``'s row gets no gradient; ``max_norm`` renormalizes the looked-up rows of
    ``weight`` in place first. ``sparse`` gradients are returned dense.
    """
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{_kind(input)} instead (while checking arguments for embedding)")
    _check_indices_and_renorm(input, weight, max_norm, norm_type)
    return apply(EMBEDDING, (weight, input), {"padding_idx": padding_idx,
                                              "scale_grad_by_freq": bool(scale_grad_by_freq)})


def _check_indices_and_renorm(input, weight, max_norm, norm_type, error=out_of_range):
    """Indices in range (when concrete); with ``max_norm``, the looked-up rows of ``weight``
    renormalized in place, unrecorded."""
    check_index(input, 0, weight.shape[0], error)
    if max_norm is not None:
        prev = grad_mode._state.enabled
        grad_mode._state.enabled = False
        try:
            apply(_RENORM, (weight, input), {"max_norm": float(max_norm),
                                             "p": float(norm_type)}, out=weight)
        finally:
            grad_mode._state.enabled = prev


def _negative_class(bad):
    return RuntimeError("Class values must be non-negative.")


def _class_too_large(bad):
    return RuntimeError("Class values must be smaller than num_classes.")


def _kind(t):
    return _dtype.legacy_type_name(t._data.dtype)


def one_hot(tensor, num_classes=-1) -> Tensor:
    """``(*)`` integer class indices -> ``(*, num_classes)`` integer one-hot encoding."""
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype.name == "bool":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1 and tensor.numel() == 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    # as PyTorch: negative classes are reported before classes too large
    b = check_index(tensor, 0, None, _negative_class)
    if num_classes == -1:
        if b is None:
            raise RuntimeError("one_hot: num_classes must be given when the input is traced")
        num_classes = b[1] + 1
    else:
        check_index(tensor, None, num_classes, _class_too_large)
    return apply(_ONE_HOT, (tensor,), {"n": int(num_classes)})


_ONE_HOT = defop("one_hot", lambda x, n: jax.nn.one_hot(x, n, dtype=x.dtype), None)


# --------------------------------------------------------------------------- dropout


def _dropout(x, key, p, mask_shape):
    if p == 1.0:
        return x * jnp.zeros((), x.dtype)
    shape = x.shape if mask_shape is None else mask_shape
    keep = jax.random.bernoulli(key, 1.0 - p, shape)
    return x * (keep.astype(x.dtype) * jnp.asarray(1.0 / (1.0 - p), x.dtype))


# PyTorch's CPU dropout multiplies by a scaled mask (MulBackward0); the mask is what the
# backward needs, here regenerated from the saved key
DROPOUT = defop("dropout", _dropout, "MulBackward0", {0: (1,)})


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _random_key():
    return random.next_key()


def _dropout_impl(input, p, training, inplace, mask_shape):
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    out = input if inplace else None
    return apply(DROPOUT, (input, _random_key()), {"p": float(p), "mask_shape": mask_shape},
                 out=out)


@export(method=False)
def dropout(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``
    (identity when ``training`` is False or ``p == 0``). Randomness from
    ``hookgrad.random``.

    ::

        dropout(input, p=0.5, training=True, inplace=False) -> Tensor
    """
    return _dropout_impl(input, p, training, inplace, None)


def _feature_dropout(input, p, training, inplace, nd, name):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, but received a "
                           f"{input.ndim}D input. Note that {name} exists to provide channel-wise"
                           f" dropout on inputs with {nd} spatial dimensions, a channel "
                           f"dimension, and an optional batch dimension (i.e. {nd + 1}D or "
                           f"{nd + 2}D inputs).")
    lead = input.ndim - nd
    shape = tuple(input.shape[:lead]) + (1,) * nd
    return _dropout_impl(input, p, training, inplace, shape)


def dropout1d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Zeroes whole channels of ``(N, C, L)`` / ``(C, L)`` with probability ``p``."""
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Zeroes whole channels of ``(N, C, H, W)`` / ``(C, H, W)`` with probability ``p``."""
    if input.ndim == 3:
        _errors.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-"
                     "wise 1D dropout behavior is desired - input is interpreted as shape (N,"
                     " C, L), where C is the channel dim. This behavior will change in a "
                     "future release to interpret the input as one without a batch dimension,"
                     " i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior,"
                     " please switch to using dropout1d instead.")
        return _dropout_impl(input, p, training, inplace, tuple(input.shape[:2]) + (1,))
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False) -> Tensor:
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


# --------------------------------------------------------------------------- attention


def _sdpa(q, k, v, mask, key, dropout_p, is_causal, scale, gqa):
    if dropout_p == 0.0 and _jax_attention_fits(q, k, v, mask):
        return _jax_attention(q, k, v, mask, is_causal, scale)
    return _sdpa_math(q, k, v, mask, key, dropout_p, is_causal, scale, gqa)


def _jax_attention_fits(q, k, v, mask):
    """JAX's own attention takes (B, T, N, H) arrays of one dtype, whose key/value heads
    divide the query heads, and a mask broadcastable to (B, N, T, S)."""
    if not (q.ndim == k.ndim == v.ndim == 4 and q.dtype == k.dtype == v.dtype):
        return False
    if not (q.shape[0] == k.shape[0] == v.shape[0] and k.shape[1] == v.shape[1]
            and q.shape[1] % k.shape[1] == 0 and k.shape[-2] == v.shape[-2]):
        return False
    return mask is None or mask.ndim <= 4


def _jax_attention(q, k, v, mask, is_causal, scale):
    """``jax.nn.dot_product_attention`` with PyTorch's mask semantics: a bool mask keeps
    the True positions, a float mask is added to the scores, and a query row with no
    position left to attend gives zeros (JAX's would average every value)."""
    t = lambda a: jnp.swapaxes(a, 1, 2)  # (B, N, L, E) <-> (B, L, N, E)
    bias = bool_mask = None
    dead = None
    if mask is not None:
        mask = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
        if mask.dtype == jnp.bool_:
            bool_mask, allowed = mask, mask
        else:
            # -inf would make JAX's softmax NaN on a dead row; the row is zeroed below
            finite = jnp.finfo(q.dtype).min
            bias = jnp.maximum(mask.astype(q.dtype), finite)
            allowed = mask > -jnp.inf
        if is_causal:
            allowed = jnp.logical_and(allowed, jnp.tril(jnp.ones((q.shape[-2], k.shape[-2]),
                                                                 bool)))
        dead = ~jnp.any(allowed, axis=-1, keepdims=True)
    out = t(jax.nn.dot_product_attention(t(q), t(k), t(v), bias, bool_mask, scale=scale,
                                         is_causal=is_causal))
    return out if dead is None else jnp.where(dead, jnp.zeros((), out.dtype), out)


def _sdpa_math(q, k, v, mask, key, dropout_p, is_causal, scale, gqa):
    if gqa and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k = jnp.repeat(k, rep, axis=-3)
        v = jnp.repeat(v, rep, axis=-3)
    s = (1.0 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) * jnp.asarray(s, q.dtype)
    allowed = None
    if is_causal:
        allowed = jnp.tril(jnp.ones((q.shape[-2], k.shape[-2]), bool))
    if mask is not None:
        if mask.dtype == jnp.bool_:
            allowed = mask if allowed is None else jnp.logical_and(allowed, mask)
        else:
            scores = scores + mask
    if allowed is not None:
        scores = jnp.where(allowed, scores, -jnp.inf)
    # rows with every position masked attend to nothing (zeros), as PyTorch's safe softmax
    m = jnp.max(scores, axis=-1, keepdims=True)
    dead = m == -jnp.inf
    e = jnp.exp(scores - jnp.where(dead, 0.0, jax.lax.stop_gradient(m)))
    den = jnp.sum(e, axis=-1, keepdims=True)
    attn = jnp.where(dead, 0.0, e / jnp.where(dead, 1.0, den))
    if dropout_p > 0.0:
        keep = jax.random.bernoulli(key, 1.0 - dropout_p, attn.shape)
        attn = attn * keep.astype(attn.dtype) / (1.0 - dropout_p)
    return jnp.matmul(attn, v)


# PyTorch's CPU flash kernel names the node; with dropout or a float mask requiring grad it
# takes the math path whose last op is a view
SDPA = defop("scaled_dot_product_attention", _sdpa,
             "ScaledDotProductFlashAttentionForCpuBackward0")
SDPA_MATH = defop("scaled_dot_product_attention_math", _sdpa, "UnsafeViewBackward0")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` over the last two dims of ``(..., L, E)`` /
    ``(..., S, E)`` inputs.

    ::

        scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                     is_causal=False, scale=None, enable_gqa=False) -> Tensor

    ``attn_mask``: bool (True = may attend) or float (added to the scores), broadcast to
    ``(..., L, S)``; ``is_causal`` masks the upper triangle. Rows with nothing to attend to
    give zeros.
    """
    # (the arrays' shapes, read once: a model's attention calls this per layer)
    qs, ks = query._arr.shape, key._arr.shape
    n = len(qs)
    if n < 2 or len(ks) < 2 or len(value._arr.shape) < 2:  # (PyTorch's two spaces)
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {n} key.dim: {len(ks)} and value.dim: "
                           f"{len(value._arr.shape)} instead.")
    if qs[-1] != ks[-1]:
        raise RuntimeError(f"Expected query and key to have the same embedding dimension, but "
                           f"got query: {qs[-1]} and key: {ks[-1]}")
    if not enable_gqa and n >= 3 and len(ks) >= 3 and qs[-3] != ks[-3] and ks[-3] != 1:
        raise RuntimeError(f"The size of tensor a ({qs[-3]}) must match the size of "
                           f"tensor b ({ks[-3]}) at non-singleton dimension {n - 3}")
    if enable_gqa and qs[-3] % ks[-3]:
        raise RuntimeError("Number of heads in key and value must divide the number of heads "
                           "in ")  # (PyTorch's words, cut short as they are)
    key_arr = _random_key() if dropout_p > 0.0 else None
    math_path = dropout_p > 0.0 or (isinstance(attn_mask, Tensor) and attn_mask._requires_grad)
    op = SDPA_MATH if math_path else SDPA
    return apply(op, (query, key, value, attn_mask, key_arr),
                 {"dropout_p": float(dropout_p), "is_causal": bool(is_causal),
                  "scale": None if scale is None else float(scale),
                  "gqa": bool(enable_gqa)})


