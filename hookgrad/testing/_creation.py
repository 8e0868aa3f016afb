"""``make_tensor``: a Tensor of random values for tests, as ``torch.testing.make_tensor``."""
from __future__ import annotations

import math

from .._tensor import Tensor


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def make_tensor(*shape, dtype, device, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None) -> Tensor:
    """A Tensor of the given shape and dtype filled with random values in ``[low, high)``
    (floating: ``[-9, 9)`` by default; integral: ``[-9, 10)``, ``[0, 10)`` unsigned; bool:
    either value). ``exclude_zero`` replaces zeros by the dtype's smallest step away from
    zero; ``noncontiguous`` returns a strided view with the same values.

    Example::

        >>> x = hookgrad.testing.make_tensor(2, 3, dtype=hookgrad.float32, device="cpu",
        ...                                  requires_grad=True)
    """
    import hookgrad
    shape = _shape(shape)
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={str(dtype).replace('hookgrad.', 'torch.')}")
    if dtype is hookgrad.bool:
        t = hookgrad.randint(0, 2, shape, device=device).to(hookgrad.bool)
    else:
        integral = not (dtype.is_floating_point or dtype.is_complex)
        lo_default, hi_default = ((0 if dtype is hookgrad.uint8 else -9, 10) if integral
                                  else (-9, 9))
        low = lo_default if low is None else low
        high = hi_default if high is None else high
        if math.isnan(low) or math.isnan(high):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and "
                             f"high={high}")
        if low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        if integral:
            t = hookgrad.randint(math.ceil(low), math.ceil(high), shape, device=device,
                                 dtype=dtype)
        else:
            t = hookgrad.rand(shape, device=device, dtype=dtype) * (high - low) + low
        if exclude_zero:
            step = 1 if integral else hookgrad.finfo(dtype).tiny
            t = hookgrad.where(t == 0, hookgrad.full_like(t, step), t)
    if noncontiguous and t.numel() > 1:
        # NOTE: every other element of a tensor twice as long in the last dim: a strided
        # view whose values are those drawn above
        t = t.repeat_interleave(2, dim=-1)[..., 1::2]
    return t.detach().requires_grad_(requires_grad)
