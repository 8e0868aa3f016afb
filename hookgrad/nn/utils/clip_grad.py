"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``,
``clip_grads_with_norm_``.

Gradients are scaled in place (their version counters bump, as with ``grad.mul_``);
nothing is recorded. The norms and the scaling of all gradients run as one jitted
computation.
"""
from __future__ import annotations

import functools
import types
from collections.abc import Iterable

import jax
import jax.numpy as jnp

from ..._tensor import Tensor
from ... import _errors

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@functools.partial(jax.jit, static_argnums=1)
def _total_norm(arrays, p):
    def vnorm(a):
        a = jnp.abs(a.astype(jnp.float32) if a.dtype in (jnp.float16, jnp.bfloat16) else a)
        if p == float("inf"):
            return jnp.max(a) if a.size else jnp.zeros((), a.dtype)
        if p == float("-inf"):
            return jnp.min(a) if a.size else jnp.full((), jnp.inf, a.dtype)
        if p == 0:
            return jnp.sum(a != 0).astype(a.dtype)
        return jnp.sum(a ** p) ** (1.0 / p)
    norms = jnp.stack([vnorm(a).astype(arrays[0].dtype) for a in arrays])
    return vnorm(norms)


@jax.jit
def _scale(arrays, max_norm, total):
    coef = jnp.minimum(max_norm / (total + 1e-6), 1.0)
    return [(a * coef).astype(a.dtype) for a in arrays]


@jax.jit
def _clamp(arrays, v):
    return [jnp.clip(a, -v, v).astype(a.dtype) for a in arrays]


def _write(tensors, arrays):
    for t, a in zip(tensors, arrays):
        t._write_(a)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together, as if concatenated into one
    vector (``'inf'`` for the max norm). Returns a 0-d Tensor."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._wrap(jnp.zeros((), jnp.float32))
    total = _total_norm([t._data for t in tensors], norm_type)
    if error_if_nonfinite and not isinstance(total, jax.core.Tracer) and \
            not bool(jnp.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return Tensor._wrap(total)


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scales the gradients of ``parameters`` in place by
    ``min(max_norm / (total_norm + 1e-6), 1)``."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    total = total_norm._data if isinstance(total_norm, Tensor) else jnp.asarray(total_norm)
    _write(grads, _scale([g._data for g in grads], float(max_norm), total))


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Clips the gradient norm of ``parameters`` (computed over all gradients together) to
    ``max_norm``, in place, and returns the total norm before clipping.

    ::

        clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                        foreach=None) -> Tensor

    Example::

        >>> loss.backward()
        >>> total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_gen = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_gen and not parameters:
            _errors.warn("`parameters` is an empty generator, no gradient clipping will "
                         "occur.")
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_``."""
    _errors.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                 "`torch.nn.utils.clip_grad_norm_`.", FutureWarning)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamps every gradient of ``parameters`` to ``[-clip_value, clip_value]`` in place.

    Example::

        >>> nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if grads:
        _write(grads, _clamp([g._data for g in grads], float(clip_value)))


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
