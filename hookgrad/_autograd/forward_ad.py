"""``hookgrad.autograd.forward_ad``: forward-mode AD with dual Tensors, as
``torch.autograd.forward_ad``.

A dual Tensor is a hookgrad Tensor carrying a tangent for the current level. While a
level is open, every op of the op table whose inputs carry tangents also runs JAX's
``jax.jvp`` of its forward, and its outputs carry the resulting tangents. Outside the
level tangents are gone (``unpack_dual`` returns ``tangent=None``), as in PyTorch.

::

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = model(x)
        jvp = fwAD.unpack_dual(y).tangent
"""
import contextlib
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from .._ops import dispatch
from .._tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1
# NOTE: tangents are tagged with the token of the level that made them; a new token per
# level means tangents of an exited level read as absent without walking all Tensors.
_token = [None]
_ACTIVE = dispatch._dual  # read by dispatch.apply: one test when no level is open


def enter_dual_level():
    """enter_dual_level() -> int

    Open a forward-AD level (only one at a time, as in PyTorch) and return it.

    Example::

        >>> level = fwAD.enter_dual_level()
        >>> fwAD.exit_dual_level(level=level)
    """
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    _token[0] = object()
    _ACTIVE[0] = _dual_apply
    return _current_level


def exit_dual_level(*, level=None):
    """exit_dual_level(*, level=None) -> None

    Close the current forward-AD level: every tangent made in it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _current_level = level - 1
    _token[0] = None
    _ACTIVE[0] = None


def _tangent(t):
    fw = t.__dict__.get("_fw_grad")
    if fw is None:
        return None
    if fw[0] is not _token[0]:  # from a level that was exited
        del t.__dict__["_fw_grad"]
        return None
    return fw[1]


def _set_tangent(t, tangent):
    t.__dict__["_fw_grad"] = (_token[0], tangent)


def _alias(tensor):
    """A new Tensor with ``tensor``'s value, backward-differentiable to it."""
    if tensor.requires_grad:
        return tensor.view_as(tensor)
    return Tensor._wrap(tensor._data)


def _is_inexact(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def make_dual(tensor, tangent, *, level=None):
    """make_dual(tensor, tangent, *, level=None) -> Tensor

    A dual Tensor: ``tensor``'s value (a view of it, backward-differentiable) carrying
    ``tangent`` as its forward gradient at ``level`` (default: the current level).

    Example::

        >>> with fwAD.dual_level():
        ...     x = fwAD.make_dual(torch.ones(3), torch.ones(3))
        ...     fwAD.unpack_dual(x * 2).tangent
        tensor([2., 2., 2.])
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level != _current_level:
        raise RuntimeError(f"Invalid level {level}: only the current level {_current_level} "
                           "can be used.")
    if not _is_inexact(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not _is_inexact(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if _tangent(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    out = _alias(tensor)
    _set_tangent(out, tangent)
    return out


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)``, as :func:`unpack_dual` returns it."""

    primal: Tensor
    tangent: Optional[Tensor]


def unpack_dual(tensor, *, level=None):
    """unpack_dual(tensor, *, level=None) -> UnpackedDualTensor

    ``(primal, tangent)`` of a dual Tensor: ``primal`` a view of its value without the
    tangent, ``tangent`` its forward gradient (``None`` if it has none at ``level``).

    Example::

        >>> with fwAD.dual_level():
        ...     y = fwAD.make_dual(x, v).sin()
        ...     primal, jvp = fwAD.unpack_dual(y)
    """
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = _tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(_alias(tensor), None)
    return UnpackedDualTensor(_alias(tensor), tangent)


class dual_level(contextlib.ContextDecorator):
    """Context manager (and decorator) for a forward-AD level: dual Tensors made in it
    carry tangents until it exits.

    Example::

        >>> with fwAD.dual_level():
        ...     y = fwAD.make_dual(x, v) ** 2
        ...     jvp = fwAD.unpack_dual(y).tangent
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()


# --------------------------------------------------------------------------- op hook


def _dual_apply(op, args, statics, out):
    """``dispatch.apply`` while a level is open: the op as usual, plus ``jax.jvp`` of its
    forward when an input carries a tangent."""
    tangents = {}
    if op.node is not None:
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and i not in op.nondiff:
                t = _tangent(a)
                if t is not None:
                    tangents[i] = t
    out_tangents = _jvp(op, args, statics, tangents) if tangents else None
    _ACTIVE[0] = None  # NOTE: the op itself runs as outside a level (no re-entry here)
    try:
        res = dispatch.apply(op, args, statics, out)
    finally:
        _ACTIVE[0] = _dual_apply if _current_level >= 0 else None
    if out_tangents is not None:
        outs = res if isinstance(res, tuple) else (res,)
        for o, tan in zip(outs, out_tangents):
            if _is_inexact(o) and tan is not None:
                _set_tangent(o, Tensor._wrap(tan))
    return res


def _jvp(op, args, statics, tangents):
    key = tuple(statics.items()) if statics else ()
    fn = op.forward_fn(key)
    arrs = [a._data if isinstance(a, Tensor) else a for a in args]
    pos = [i for i, a in enumerate(args) if isinstance(a, Tensor) and i not in op.nondiff
           and jnp.issubdtype(a._data.dtype, jnp.inexact)]

    def f(*ps):
        full = list(arrs)
        for i, p in zip(pos, ps):
            full[i] = p
        return fn(*full)
    primals = tuple(arrs[i] for i in pos)
    tans = tuple(tangents[i]._data.astype(arrs[i].dtype) if i in tangents
                 else jnp.zeros_like(arrs[i]) for i in pos)
    _, out_t = jax.jvp(f, primals, tans)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    return [None if t.dtype == jax.dtypes.float0 else t for t in out_t]
