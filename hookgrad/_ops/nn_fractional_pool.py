"""Fractional max pooling (Graham, 2014): ``nn.functional.fractional_max_pool2d``/``3d``.

Each plane's windows start at pseudo-random offsets: for a sample ``u`` in ``[0, 1)`` per
plane and dim, output ``i`` pools ``kernel`` elements from
``int((i + u) * a) - int(u * a)``, ``a = (in - kernel) / (out - 1)`` (computed in the input's
dtype, as PyTorch's kernel does), the last window ending at the input's end. With the same
``_random_samples`` the results are PyTorch's; without, the samples are drawn from
``hookgrad.random``. The gradient goes to the first maximum of each window (its index).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop


def _starts(u, size, out, k):
    """Window starts along one dim for sample ``u``: ``(out,)`` ints."""
    if out == 1:
        return jnp.full((1,), size - k, jnp.int32)
    alpha = jnp.asarray(size - k, u.dtype) / jnp.asarray(out - 1, u.dtype)
    i = jnp.arange(out - 1, dtype=u.dtype)
    seq = ((i + u) * alpha).astype(jnp.int32) - (u * alpha).astype(jnp.int32)
    return jnp.concatenate([seq, jnp.full((1,), size - k, jnp.int32)])


def _plane(x, u, kernel, out_size):
    """One plane ``x`` (spatial dims only) and its samples ``u`` (one per dim, in order):
    ``(values, flat indices)`` of shape ``out_size``."""
    nd = x.ndim
    # each dim: the input positions of every (output, kernel offset) pair
    pos = [(_starts(u[d], x.shape[d], out_size[d], kernel[d])[:, None]
            + jnp.arange(kernel[d])[None]) for d in range(nd)]
    # broadcast (o_0, k_0, o_1, k_1, ...) then move the kernel axes last
    idx = [p.reshape((1,) * (2 * d) + p.shape + (1,) * (2 * (nd - d - 1))) for d, p in
           enumerate(pos)]
    flat = idx[0]
    for d in range(1, nd):
        flat = flat * x.shape[d] + idx[d]
    order = tuple(range(0, 2 * nd, 2)) + tuple(range(1, 2 * nd, 2))
    flat = jnp.transpose(flat, order)
    flat = flat.reshape(tuple(out_size) + (-1,))
    windows = x.reshape(-1)[flat]
    best = jnp.argmax(windows, axis=-1)[..., None]
    return (jnp.take_along_axis(windows, best, -1)[..., 0],
            jnp.take_along_axis(flat, best, -1)[..., 0])


def _fractional_max_pool(x, samples, kernel, out_size):
    nd = len(kernel)
    unbatched = x.ndim == nd + 1
    xb = x[None] if unbatched else x
    u = samples[:xb.shape[0]]
    if nd == 2:  # PyTorch's 2-D kernel reads each plane's width sample first
        u = u[..., ::-1]
    fn = jax.vmap(jax.vmap(lambda p, s: _plane(p, s, kernel, out_size)))
    values, indices = fn(xb, u)
    if unbatched:
        values, indices = values[0], indices[0]
    return values, jax.lax.stop_gradient(indices).astype(jnp.int64)


FRACTIONAL_MAX_POOL2D = defop("fractional_max_pool2d", _fractional_max_pool,
                              "FractionalMaxPool2DBackward0", nondiff=(1,))
FRACTIONAL_MAX_POOL3D = defop("fractional_max_pool3d", _fractional_max_pool,
                              "FractionalMaxPool3DBackward0", nondiff=(1,))

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def fractional_max_pool(input: Tensor, kernel_size, output_size, output_ratio,
                        _random_samples, nd: int) -> tuple[Tensor, Tensor]:
    """``(output, indices)`` of ``nd``-D fractional max pooling (PyTorch's checks)."""
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        # PyTorch's 2-D form takes len() of the ratio: a bare number is a TypeError there
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = _tuple(output_ratio, nd)
        output_size = [int(input.shape[-nd + d] * ratio[d]) for d in range(nd)]
    kernel, out_size = _tuple(kernel_size, nd), tuple(int(s) for s in _tuple(output_size, nd))
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    batch = 1 if input.ndim == nd + 1 else input.shape[0]
    channels = input.shape[-nd - 1]
    if _random_samples is None:
        from .._factory import rand
        _random_samples = rand(batch, channels, nd, dtype=input.dtype)
    _check_samples(input, _random_samples, batch, channels, nd)
    suffix = "" if nd == 2 else "_out"
    for d in range(nd):
        size = input.shape[-nd + d]
        if out_size[d] + kernel[d] - 1 > size:
            dim = _DIM_NAMES[nd][d]
            raise RuntimeError(f"{name}{suffix}(): pool {dim} {kernel[d]} too large relative "
                               f"to input {dim} {size}")
    op = FRACTIONAL_MAX_POOL2D if nd == 2 else FRACTIONAL_MAX_POOL3D
    return apply(op, (input, _random_samples), {"kernel": kernel, "out_size": out_size})


def _check_samples(input, samples, batch, channels, nd):
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """2-D fractional max pooling of ``(N, C, H, W)`` or ``(C, H, W)``: ``(output, indices)``.

    ::

        fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                              return_indices=False, _random_samples=None)

    ``kernel_size`` windows at pseudo-random strides giving ``output_size`` (or
    ``output_ratio`` times the input size); ``_random_samples`` ``(N, C, 2)`` in ``[0, 1)``
    fixes the strides (drawn from ``hookgrad.random`` when not given).
    """
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples,
                               2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """3-D fractional max pooling of ``(N, C, T, H, W)`` or ``(C, T, H, W)``:
    ``(output, indices)``; ``_random_samples`` is ``(N, C, 3)``.

    ::

        fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                              return_indices=False, _random_samples=None)
    """
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples,
                               3)


def _fractional_max_pool2d(input: Tensor, kernel_size, output_size=None,
                                 output_ratio=None, return_indices: bool = False,
                                 _random_samples: Tensor | None = None) -> Tensor:
    # no docstring: nn.functional's boolean_dispatch gives it the _with_indices form's
    return fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                              return_indices, _random_samples)[0]


def _fractional_max_pool3d(input: Tensor, kernel_size, output_size=None,
                                 output_ratio=None, return_indices: bool = False,
                                 _random_samples: Tensor | None = None) -> Tensor:
    # no docstring: nn.functional's boolean_dispatch gives it the _with_indices form's
    return fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                              return_indices, _random_samples)[0]
