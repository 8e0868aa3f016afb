"""PyTorch's normalization kernels as top-level functions, with ATen's signatures:
``torch.batch_norm``/``instance_norm`` (weight and bias before the running statistics, a
``cudnn_enabled`` flag), the ``native_*`` forms that also return the statistics, and the
norms ATen keeps for TorchScript (``norm_except_dim``, ``frobenius_norm``,
``nuclear_norm``, ``native_norm``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _errors
from .._tensor import Tensor
from .dispatch import apply
from .nn import _layer_norm_stats, layer_norm
from .nn_layers import batch_norm as _batch_norm, group_norm, instance_norm as _instance_norm
from .registry import defop, export


@export(method=False)
def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """Batch normalization over dim 1 (``nn.functional.batch_norm``'s arguments in ATen's
    order; ``cudnn_enabled`` is accepted and unused)."""
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@export(method=False)
def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """Instance normalization (``nn.functional.instance_norm``'s arguments in ATen's order;
    ``cudnn_enabled`` is accepted and unused)."""
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps)


def _bn_stats(x, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    mean = jnp.mean(x, axis=axes)
    var = jnp.mean(jnp.square(x - jnp.expand_dims(mean, axes)), axis=axes)
    return mean, jax.lax.rsqrt(var + eps)


def _group_stats(x, groups, eps):
    xg = x.reshape(x.shape[0], groups, -1)
    mean = jnp.mean(xg, axis=-1)
    var = jnp.mean(jnp.square(xg - mean[..., None]), axis=-1)
    return mean, jax.lax.rsqrt(var + eps)


# the statistics the native kernels return beside the result: values, not differentiated
# (PyTorch's backward ignores gradients reaching them)
_BN_STATS = defop("native_batch_norm_stats", _bn_stats, None)
_LN_STATS = defop("native_layer_norm_stats", _layer_norm_stats, None)
_GN_STATS = defop("native_group_norm_stats", _group_stats, None)


@export(method=False)
def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, save_mean, save_invstd)``: batch normalization and, in training, the batch
    mean and ``1 / sqrt(var + eps)`` per channel (empty tensors otherwise)."""
    out = _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if training:
        mean, invstd = apply(_BN_STATS, (input.detach(),), {"eps": float(eps)})
    else:
        mean = invstd = input.new_empty((0,))
    return out, mean, invstd


@export(method=False)
def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, mean, rstd)``: layer normalization over the trailing ``normalized_shape``
    dims, and the mean and ``1 / sqrt(var + eps)`` kept over them (size 1 there)."""
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    shape = tuple(normalized_shape)
    mean, rstd = apply(_LN_STATS, (input.detach(), None, None),
                       {"shape": shape, "eps": float(eps)})
    return out, mean, rstd


@export(method=False)
def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int,
                      HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, mean, rstd)``: group normalization of ``input`` ``(N, C, *)`` (``HxW``
    elements per channel) in ``group`` groups, and each group's mean and
    ``1 / sqrt(var + eps)``, shaped ``(N, group)``."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements (N * C * HxW), but "
                           f"got {input.numel()}")
    out = group_norm(input, group, weight, bias, eps)
    mean, rstd = apply(_GN_STATS, (input.detach(),), {"groups": int(group), "eps": float(eps)})
    return out, mean, rstd


@export(method=False)
def native_norm(input: Tensor, p=2, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """PyTorch's kernel for sparse tensors only: dense tensors (all of hookgrad's) are
    refused, as PyTorch's CPU and CUDA backends refuse them."""
    raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the 'CPU' "
                              "backend. 'aten::native_norm' has kernels for sparse tensors only; "
                              "use torch.linalg.vector_norm")


def _norm(v, p):
    return jnp.sum(jnp.abs(v) ** p) ** (1.0 / p) if p != 2 else jnp.sqrt(jnp.sum(v * v))


# ATen's norm (PyTorch's Python ``Tensor.norm`` records LinalgVectorNormBackward0)
_NORM = defop("norm_except_dim_all", _norm, "NormBackward0")


@export(method=False)
def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept, the others size 1);
    ``dim=-1``: the norm of all of ``v`` (weight normalization's norm)."""
    if dim == -1:
        return apply(_NORM, (v,), {"p": float(pow)})
    others = [d for d in range(v.ndim) if d != dim]
    shape = [v.shape[d] if d == dim else 1 for d in range(v.ndim)]
    return v.norm(pow, others, keepdim=True).reshape(shape)


@export(method=False)
def frobenius_norm(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """The 2-norm of ``input`` over ``dim`` (deprecated: ``linalg.vector_norm``)."""
    _errors.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
                 "It will be removed in a future PyTorch release. Please use "
                 "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dims = [dim] if isinstance(dim, int) else list(dim)
    return input.norm(2, dims, keepdim=keepdim)


@export(method=False)
def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The sum of the singular values of the matrices of ``input`` over the two dims
    ``dim`` (the last two when not given; deprecated: ``linalg.matrix_norm(A, 'nuc')``)."""
    from .linalg_norms import matrix_norm
    _errors.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                 "It will be removed in a future PyTorch release. Please use "
                 "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim): ATen's other overload
        dim, keepdim = None, dim
    if dim is None:
        dim = (-2, -1)
    return matrix_norm(input, "nuc", tuple(dim), keepdim)
