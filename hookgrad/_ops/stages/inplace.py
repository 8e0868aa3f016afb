"""Stage 5, alias and in-place: an op writing its result into an existing Tensor.

The written Tensor's array is replaced and its ``_version`` bumped; when it records, the
node sees the Tensor's value and history from before the write (a shadow) and the Tensor
is rebased onto the new node. A view, or a base of views, is written through
``views.inplace`` (the ``ALIASED`` slot), which also updates the other aliases.
"""
import jax.numpy as jnp

from ... import _dtype
from .. import jax_errors
from ..._autograd import grad_mode
from ..._tensor import Tensor
from .record import _record

_gm = grad_mode._state
_torch_kind = _dtype.torch_kind
ALIASED = [None]  # in-place on a view or a base of views: hookgrad/_ops/views.py fills it


def run(op, key, args, arrs, fn, out, record):
    """``fn(*arrs)``, ``op``'s forward, written into ``out``; returns ``out``."""
    if out._view is not None or out._views is not None:  # a view, or a base of views
        return ALIASED[0](op, key, args, arrs, fn, out, record)
    return write(op, key, args, arrs, fn, out, record)


def write(op, key, args, arrs, fn, out, record):
    """``run`` for a Tensor that shares its array with no other."""
    _check_inplace(out, record)
    return write_checked(op, key, args, arrs, fn, out, record)


def write_checked(op, key, args, arrs, fn, out, record):
    """``write`` once PyTorch's checks on ``out`` have passed (``views.inplace`` runs a
    view's own); returns ``out``."""
    if record:  # the node sees the tensor's value and history from before the write
        shadow = _shadow(out)
        args = tuple(shadow if a is out else a for a in args)
    res = jax_errors.forward(op, fn, arrs)
    _write_inplace(out, res, op)
    if record:
        _record(op, key, args, None, out=out, shadow=shadow)
    return out


def _shadow(out):
    shadow = Tensor._wrap(out._data, out.grad_fn, out._output_nr)
    shadow._requires_grad = out._requires_grad
    if out._acc is not None:
        shadow._acc = out._acc
    return shadow


def _check_inplace(t, record):
    if t.grad_fn is None and t._requires_grad and _gm.enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _write_inplace(t, res, op):
    old = t._data
    if res.shape != old.shape:
        raise RuntimeError(f"output with shape {list(old.shape)} doesn't match the broadcast "
                           f"shape {list(res.shape)}")
    if res.dtype != old.dtype:
        if jnp.issubdtype(res.dtype, jnp.floating) and not jnp.issubdtype(old.dtype, jnp.inexact):
            raise RuntimeError(f"result type {_torch_kind(res.dtype)} can't be cast to the "
                               f"desired output type {_torch_kind(old.dtype)}")
        res = res.astype(old.dtype)
    t._write_(res)
