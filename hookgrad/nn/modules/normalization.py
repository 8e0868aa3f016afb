"""Normalization layers: ``BatchNorm1d``/``2d``/``3d``, ``LayerNorm``, ``GroupNorm``,
``RMSNorm`` (PyTorch's parameters, buffers and defaults)."""
import numbers

import jax.numpy as jnp

from ... import _dtype
from ..._ops.dispatch import apply
from ..._ops.nn_cross_map_lrn import CROSS_MAP_LRN2D
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ._functional_module import _Stored
from ._utils import _param, _tensor
from .module import Module
from ... import _errors
from ..._arguments import keep, own_init

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm",
           "CrossMapLRN2d"]


class _NormBase(Module):
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        keep(self, locals(), "num_features", "eps", "momentum", "affine", "track_running_stats")
        _register_affine(self, (num_features,), affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _tensor((num_features,), device, dtype))
            self.register_buffer("running_var", _tensor((num_features,), device, dtype, 1.0))
            self.register_buffer("num_batches_tracked", _long_zero(device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Running mean to 0, running variance to 1, ``num_batches_tracked`` to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and \
                key not in state_dict:
            # checkpoints from before num_batches_tracked existed
            state_dict[key] = self.num_batches_tracked if \
                self.num_batches_tracked is not None else _long_zero()
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


@own_init
class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        # batch statistics in training, and in eval when there are no running statistics
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over ``(N, C)`` or ``(N, C, L)``.

    ::

        BatchNorm1d(num_features, eps=1e-05, momentum=0.1, affine=True,
                    track_running_stats=True, device=None, dtype=None, *, bias=True)

    Training normalizes with the batch statistics and updates the ``running_mean`` /
    ``running_var`` buffers (``momentum=None``: cumulative average); eval uses them.
    """

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over ``(N, C, H, W)``, per channel.

    ::

        BatchNorm2d(num_features, eps=1e-05, momentum=0.1, affine=True,
                    track_running_stats=True, device=None, dtype=None, *, bias=True)

    Example::

        >>> m = nn.BatchNorm2d(100)
        >>> m(hookgrad.randn(20, 100, 35, 45)).shape
        hookgrad.Size([20, 100, 35, 45])
    """

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over ``(N, C, D, H, W)``."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


def _long_zero(device=None):
    # int64 when JAX runs with x64, else hookgrad's long (int32)
    return _tensor((), device, _dtype.int64)


def _shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


def _register_affine(module, shape, affine, bias, device, dtype):
    """``weight`` and ``bias`` of ``shape``, or None parameters, as PyTorch's normalization
    layers register them (``_reset_affine`` fills them)."""
    if affine:
        module.weight = _param(shape, device, dtype)
        if bias:
            module.bias = _param(shape, device, dtype)
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module):
    """``weight`` to ones and ``bias`` to zeros, where they are parameters."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _AffineNorm(Module):
    """A normalization without running statistics whose ``weight`` and ``bias`` are
    optional: ``_fn(input, <the attribute _arg>, weight, bias, eps)`` (``LayerNorm``,
    ``GroupNorm``)."""
    _fn = _arg = None

    def _init_affine(self, shape, affine, bias, device, dtype):
        _register_affine(self, shape, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return type(self)._fn(input, getattr(self, self._arg), self.weight, self.bias, self.eps)


class LayerNorm(_AffineNorm):
    """Layer normalization over the trailing ``normalized_shape`` dims.

    ::

        LayerNorm(normalized_shape, eps=1e-05, elementwise_affine=True, bias=True,
                  device=None, dtype=None)
    """
    _fn, _arg = staticmethod(F.layer_norm), "normalized_shape"

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self._init_affine(self.normalized_shape, elementwise_affine, bias, device, dtype)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(_AffineNorm):
    """Group normalization: ``num_channels`` split into ``num_groups`` groups.

    ::

        GroupNorm(num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None,
                  *, bias=True)
    """
    _fn, _arg = staticmethod(F.group_norm), "num_groups"

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        keep(self, locals(), "num_groups", "num_channels", "eps", "affine")
        self._init_affine((num_channels,), affine, bias, device, dtype)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims.

    ::

        RMSNorm(normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None)

    ``eps=None``: the input dtype's machine epsilon.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _param(self.normalized_shape, device, dtype)
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _InstanceNorm(_NormBase):
    _no_batch_dim = None  # the input rank without a batch dim

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input):
        nb = self._no_batch_dim
        if input.ndim not in (nb, nb + 1):
            raise ValueError(f"expected {nb}D or {nb + 1}D input (got {input.ndim}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.ndim - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            _errors.warn(f"input's size at dim={feature_dim} does not match num_features. "
                         "You can silence this warning by not passing in num_features, "
                         "which is not used because affine=False")
        if input.ndim == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over ``(N, C, L)`` or ``(C, L)``: each channel of each sample
    normalized over its length.

    ::

        InstanceNorm1d(num_features, eps=1e-05, momentum=0.1, affine=False,
                       track_running_stats=False, device=None, dtype=None)
    """

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over ``(N, C, H, W)`` or ``(C, H, W)``.

    ::

        InstanceNorm2d(num_features, eps=1e-05, momentum=0.1, affine=False,
                       track_running_stats=False, device=None, dtype=None)

    With ``track_running_stats=True`` training updates ``running_mean``/``running_var``
    (batch averages of the per-instance statistics) and eval normalizes with them.

    Example::

        >>> nn.InstanceNorm2d(100)(hookgrad.randn(20, 100, 35, 45)).shape
        hookgrad.Size([20, 100, 35, 45])
    """

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    ::

        InstanceNorm3d(num_features, eps=1e-05, momentum=0.1, affine=False,
                       track_running_stats=False, device=None, dtype=None)
    """

    _no_batch_dim = 4


class LocalResponseNorm(_Stored):
    """Normalizes each channel by its ``size`` neighbouring channels:
    ``x / (k + alpha * mean(x^2))^beta``.

    ::

        LocalResponseNorm(size, alpha=0.0001, beta=0.75, k=1.0)
    """
    _fn, _args = staticmethod(F.local_response_norm), ("size", "alpha", "beta", "k")

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__(size, alpha, beta, k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Local response normalization across the channels of ``(N, C, H, W)``, as the
    Lua-Torch layer: ``x * (k + alpha / size * sum(x^2 over a channel window))^-beta``.

    ::

        CrossMapLRN2d(size, alpha=0.0001, beta=0.75, k=1)

    Its channel window and its gradient are that layer's (see ``LocalResponseNorm`` for the
    centred average).
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        keep(self, locals(), "size", "alpha", "beta", "k")

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        return apply(CROSS_MAP_LRN2D, (input,), {"size": int(self.size),
                                                  "alpha": float(self.alpha),
                                                  "beta": float(self.beta), "k": float(self.k)})

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
