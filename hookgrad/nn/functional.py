"""``hookgrad.nn.functional``: the functional forms of layers, each an op of the table.

Names, signatures and defaults are ``torch.nn.functional``'s. The ops live in
``hookgrad._ops.nn`` (linear, activations, losses) and ``hookgrad._ops.nn_layers``
(convolution, pooling, normalization, embedding, dropout, attention, padding);
``multi_head_attention_forward`` is composed from them here.
"""
import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .._ops.nn import (celu, cosine_similarity, elu, gelu, glu, hardshrink, hardsigmoid,
                       hardswish, hardtanh, layer_norm, leaky_relu, linear, log_softmax,
                       logsigmoid, mish, normalize, pairwise_distance, prelu, relu, relu6, selu,
                       sigmoid, silu, softmax, softmin, softplus, softshrink, softsign, tanh,
                       tanhshrink, threshold)
from .._ops.nn_conv import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                            avg_pool1d, avg_pool2d, avg_pool3d, conv1d, conv2d, conv3d,
                            conv_transpose1d, conv_transpose2d, conv_transpose3d,
                            max_pool1d, max_pool2d, max_pool3d)
from .._ops.nn_pad_fold import fold, pad, unfold
from .._ops.nn_layers import (batch_norm, dropout, dropout1d, dropout2d, dropout3d, embedding,
                              group_norm, instance_norm, one_hot, rms_norm,
                              scaled_dot_product_attention)
from .._ops.nn_loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                            cross_entropy, huber_loss, kl_div, l1_loss, mse_loss, nll_loss,
                            smooth_l1_loss)
from .._ops.aten_layers import bilinear, celu_, conv_tbc, selu_, threshold_
from .._ops.nn_ctc import ctc_loss
from .._ops.nn_fractional_pool import (_fractional_max_pool2d,
                                       fractional_max_pool2d_with_indices,
                                       _fractional_max_pool3d,
                                       fractional_max_pool3d_with_indices)
from .._ops.nn_grid import affine_grid, grid_sample
from .._ops.nn_linear_cross_entropy import linear_cross_entropy
from .._ops.nn_loss_margin import (cosine_embedding_loss, gaussian_nll_loss,
                                   hinge_embedding_loss, margin_ranking_loss, multi_margin_loss,
                                   multilabel_margin_loss, multilabel_soft_margin_loss,
                                   poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
                                   triplet_margin_with_distance_loss)
from .._ops.nn_noise import alpha_dropout, feature_alpha_dropout, rrelu, rrelu_
from .._ops.nn_pdist import pdist
from .._ops.nn_pool import (adaptive_max_pool1d, adaptive_max_pool1d_with_indices,
                            adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
                            adaptive_max_pool3d, adaptive_max_pool3d_with_indices)
from .._ops.nn_resample import interpolate, upsample, upsample_bilinear, upsample_nearest
from .._ops.nn_shuffle import (channel_shuffle, native_channel_shuffle, pixel_shuffle,
                               pixel_unshuffle)
from .._ops.nn_sparse import embedding_bag
from .._ops.nn_unpool import max_unpool1d, max_unpool2d, max_unpool3d
from .._tensor import Tensor
from . import grad  # noqa: F401 - nn.functional.grad, as PyTorch's
from ._functional_names import (BroadcastingList1, BroadcastingList2,  # noqa: F401
                                BroadcastingList3, DType, Optional, TYPE_CHECKING,
                                reproducibility_notes, sparse_support_notes, tf32_notes)
from ._composite import (gumbel_softmax, local_response_norm, lp_pool1d, lp_pool2d, lp_pool3d,
                         max_pool1d_with_indices, max_pool2d_with_indices,
                         max_pool3d_with_indices)
from .. import _errors

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "batch_norm",
    "instance_norm", "layer_norm", "group_norm", "rms_norm", "embedding", "one_hot", "dropout",
    "dropout1d", "dropout2d", "dropout3d", "scaled_dot_product_attention",
    "multi_head_attention_forward", "pad", "unfold", "fold", "relu", "relu_", "relu6", "gelu",
    "silu", "elu", "selu", "celu", "leaky_relu", "hardtanh", "mish", "softplus", "tanh",
    "sigmoid", "logsigmoid", "hardswish", "hardsigmoid", "softshrink", "hardshrink", "threshold",
    "tanhshrink", "softsign", "glu", "prelu", "softmax", "softmin", "log_softmax", "normalize",
    "cosine_similarity", "pairwise_distance", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "embedding_bag", "conv_transpose3d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_",
    "threshold_", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
    "cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "margin_ranking_loss",
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "poisson_nll_loss", "soft_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "grid_sample", "affine_grid",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "gumbel_softmax", "local_response_norm",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "rrelu", "rrelu_", "alpha_dropout", "feature_alpha_dropout",
    "pdist", "assert_int_or_pair", "boolean_dispatch", "ctc_loss", "conv_tbc",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "linear_cross_entropy",
]

# grid_sample's mode numbers, as PyTorch's kernel takes them (constants: not in __all__)
GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or a
    pair."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name,
                     func_name) -> Callable:
    """A function that calls ``if_true`` or ``if_false`` by its boolean argument
    ``arg_name`` (positional index ``arg_index``, ``default`` when not given); the
    docstring is whichever of the two has one."""
    def fn(*args, **kwargs) -> Tensor | tuple[Tensor, Tensor]:
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        else:
            flag = args[arg_index] if arg_index < len(args) else default
        return (if_true if flag else if_false)(*args, **kwargs)

    docs = [f.__doc__ for f in (if_true, if_false) if f.__doc__ is not None]
    if len(docs) == 2:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__ = if_false.__doc__ = docs[0] if docs else None
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


fractional_max_pool2d = boolean_dispatch("return_indices", 4, False,
                                         fractional_max_pool2d_with_indices,
                                         _fractional_max_pool2d, __name__,
                                         "fractional_max_pool2d")
fractional_max_pool3d = boolean_dispatch("return_indices", 4, False,
                                         fractional_max_pool3d_with_indices,
                                         _fractional_max_pool3d, __name__,
                                         "fractional_max_pool3d")


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``."""
    return input.relu_()


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


# --------------------------------------------------------------------------- attention


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as a float mask of 0 / -inf; float masks pass."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        _errors.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                     "same type for both instead.")
    if not is_float:
        from .._dtype import to_jax
        dt = to_jax(target_type)
        if isinstance(mask._data, jax.core.Tracer):
            mask = Tensor._wrap(jnp.where(mask._data, -jnp.inf, 0.0).astype(dt))
        else:  # masks are small: built on the host, no compilation per shape
            mask = Tensor._wrap(jnp.asarray(np.where(np.asarray(mask._data), -np.inf, 0.0)
                                            .astype(np.dtype(dt))))
    return mask


def _none_or_dtype(t):
    return None if t is None else t.dtype


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (3-D) input, False for unbatched (2-D); PyTorch's messages."""
    if query.ndim not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    d = query.ndim
    kind = "batched (3-D)" if d == 3 else "unbatched (2-D)"
    if key.ndim != d or value.ndim != d:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {d}-D but "
                             f"found {key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != d - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{d - 1}-D but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.ndim}-D tensor instead")
        want = (num_heads, query.shape[0], key.shape[0])
        if d == 2 and attn_mask.ndim == 3 and tuple(attn_mask.shape) != want:
            raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                 f"{attn_mask.shape}")
    return d == 3


def _check_projections(separate, **weights):
    """PyTorch's AssertionError for an input projection weight that is None (in its order)."""
    for name, w in weights.items():
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is {separate} but {name} is None")


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True,
                                 attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True,
                                 is_causal=False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first ``(L, N, E)`` inputs (or unbatched ``(L, E)``).

    Returns ``(attn_output, attn_weights)``; ``attn_weights`` is ``None`` unless
    ``need_weights`` (then averaged over heads when ``average_attn_weights``). Bool masks
    mark positions that may NOT be attended (the opposite of ``scaled_dot_product_attention``).
    """
    # NOTE: long on purpose: it follows PyTorch's function step by step, so that its argument
    # checks fail in the same order with the same messages.
    from .._factory import zeros
    from .._ops.stacking import cat
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint goes to scaled_dot_product_attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        _check_projections(True, q_proj_weight=q_proj_weight, k_proj_weight=k_proj_weight,
                           v_proj_weight=v_proj_weight)
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight, b_q)
        k = linear(key, k_proj_weight, b_k)
        v = linear(value, v_proj_weight, b_v)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        _check_projections(False, in_proj_weight=in_proj_weight)
        if key is value and query is key:  # self-attention: one packed projection
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        else:
            ws = in_proj_weight.chunk(3)
            bs = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
            q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), ws, bs))
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = static_k if static_k is not None else \
        k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = static_v if static_v is not None else \
        v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        z = zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k, v = cat([k, z], dim=1), cat([v, z], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but "
                                 f"got {key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = q_scaled.matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.matmul(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
    return out, None


def _autocast_listed():
    # functions of this namespace on autocast's lists that the op registry did not publish
    # (those it did are wrapped already): wrapped once, here, for every caller of F.<name>
    from .._ops import autocast
    space = globals()
    for name in autocast.LISTED:
        fn = space.get(name)
        if fn is not None and getattr(fn, "__code__", None) is not autocast.WRAPPER_CODE:
            space[name] = autocast.wrap((name,), fn)


_autocast_listed()
del _autocast_listed

from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
