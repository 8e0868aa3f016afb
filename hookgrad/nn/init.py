"""Weight initialisation (``hookgrad.nn.init``), PyTorch's functions and formulas.

Every function fills its tensor in place without recording (as under ``no_grad``),
bumps its version counter and returns it. Random draws take a key from
``hookgrad.random`` (or from ``generator``), so ``hookgrad.manual_seed`` makes them
reproducible; the numbers differ from PyTorch's, the distributions are the same.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, random
from .. import _errors

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]



def _write(tensor, value):
    """Store ``value`` (NumPy or JAX) into ``tensor`` in place, unrecorded; bumps its version
    and reaches the tensor it aliases (``.data``/``detach()``)."""
    if isinstance(value, np.ndarray):  # a host draw: cast there, no XLA program per shape
        arr = _dtype.from_host(np.array(value, tensor._data.dtype))
    else:
        arr = jnp.asarray(value, dtype=tensor._data.dtype)
    if tuple(arr.shape) != tuple(tensor.shape):
        arr = jnp.broadcast_to(arr, tuple(tensor.shape))
    return tensor._write_(arr)


def _key(generator):
    return random.next_key() if generator is None else generator.next_key()


def _draw(kind, generator, shape, *bounds):
    return random.draw(kind, shape, *bounds, generator=generator)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity::

        linear, conv*, sigmoid: 1    tanh: 5/3    relu: sqrt(2)
        leaky_relu: sqrt(2 / (1 + negative_slope ** 2))    selu: 3/4

    Example::

        >>> nn.init.calculate_gain("leaky_relu", 0.2)
        1.3867504905630728
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d")
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fills ``tensor`` from U(a, b).

    Example::

        >>> w = hookgrad.empty(3, 5)
        >>> nn.init.uniform_(w, -0.1, 0.1)
    """
    return _write(tensor, a + (b - a) * _draw("uniform", generator, tuple(tensor.shape)))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fills ``tensor`` from N(mean, std ** 2)."""
    return _write(tensor, _draw("normal", generator, tuple(tensor.shape)) * std + mean)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fills ``tensor`` from N(mean, std ** 2) truncated to ``[a, b]`` (absolute bounds)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        _errors.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                     "distribution of values may be incorrect.")
    lo, hi = (a - mean) / std, (b - mean) / std
    z = _draw("truncated_normal", generator, tuple(tensor.shape), lo, hi)
    clip = jnp.clip if isinstance(z, jax.core.Tracer) else np.clip
    return _write(tensor, clip(z * std + mean, a, b))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fills ``tensor`` with ``val``."""
    return _write(tensor, np.full(tuple(tensor.shape), val, np.dtype(tensor._data.dtype)))


def ones_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with 1."""
    return constant_(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with 0."""
    return constant_(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """Fills the 2-D ``tensor`` with the identity (ones on the diagonal)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape, dtype=np.dtype(tensor._data.dtype)))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills a 3/4/5-D ``tensor`` with the Dirac delta: a convolution with it keeps the
    input channels (per group)."""
    nd = tensor.ndim
    if nd not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_g = sizes[0] // groups
    m = min(out_g, sizes[1])
    arr = np.zeros(tuple(sizes), np.float32)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(m):
            arr[(g * out_g + d, d) + centre] = 1
    return _write(tensor, arr)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a), ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(2.0 / float(fan_in + fan_out)) * math.sqrt(3.0)
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std ** 2), ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: U(-bound, bound), ``bound = gain * sqrt(3 / fan)``.

    ::

        kaiming_uniform_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu',
                         generator=None)

    Example::

        >>> w = hookgrad.empty(3, 5)
        >>> nn.init.kaiming_uniform_(w, mode="fan_in", nonlinearity="relu")
    """
    if 0 in tuple(tensor.shape):
        _errors.warn("Initializing zero-element tensors is a no-op")
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: N(0, std ** 2), ``std = gain / sqrt(fan)``."""
    if 0 in tuple(tensor.shape):
        _errors.warn("Initializing zero-element tensors is a no-op")
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fills ``tensor`` (at least 2-D; trailing dims flattened) with a (semi-)orthogonal
    matrix from the QR decomposition of a Gaussian one, times ``gain``."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _draw("normal", generator, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diagonal(r))  # makes the draw uniform (Haar) over orthogonal matrices
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tuple(tensor.shape)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fills the 2-D ``tensor`` from N(0, std ** 2) with a fraction ``sparsity`` of each
    column set to zero."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    nz = int(math.ceil(sparsity * rows))
    vals = _draw("normal", generator, (rows, cols)) * std
    ranks = np.argsort(np.argsort(_draw("uniform", generator, (rows, cols)), axis=0), axis=0)
    return _write(tensor, np.where(ranks < nz, 0.0, vals))


def _deprecated(init):
    """The deprecated non-underscore name of ``init``: it, with PyTorch's warning."""
    new = init.__name__

    def deprecated_init(*args, **kwargs):
        _errors.warn(f"`nn.init.{new[:-1]}` is now deprecated in favor of `nn.init.{new}`.",
                     FutureWarning)
        return init(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = new[:-1]
    deprecated_init.__doc__ = f"``{new[:-1]}(...)``: :func:`{new}` (deprecated)."
    return deprecated_init


uniform, normal, constant, eye, dirac = map(_deprecated, (uniform_, normal_, constant_, eye_,
                                                         dirac_))
xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal, orthogonal = map(
    _deprecated, (xavier_uniform_, xavier_normal_, kaiming_uniform_, kaiming_normal_,
                  orthogonal_))
sparse = _deprecated(sparse_)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
