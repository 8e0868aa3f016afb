"""Complex numbers: making them (``complex``, ``polar``, ``view_as_complex``), taking them
apart (``real``, ``imag``, ``view_as_real``), conjugation, and ``chalf``.

PyTorch's ``view_as_real`` and ``view_as_complex`` are views that reinterpret the storage
in the other kind of dtype: here they are views whose root's storage is read so
(``_views.ViewInfo.flip``), so a write through either side reaches the other, with
PyTorch's strides and storage offset counted in the view's own elements. ``real``,
``imag`` and ``conj`` are fresh tensors recorded under PyTorch's node names; the
``real``/``imag`` setters write into the complex tensor, as PyTorch's do
(docs/differences.md). Gradients follow PyTorch's convention for complex values
(``op_node._conj``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype, _errors, _views
from .._autograd import grad_mode
from .._tensor import Tensor
from .dispatch import OUT, apply
from .registry import bapply, defop, export, with_out
from .shape import TENSOR_PROPERTIES
from .views import make_view

_FLOATS = ("float16", "float32", "float64")

# jax.lax.complex broadcasts neither rank: PyTorch's complex does
COMPLEX = defop("complex", lambda r, i: jax.lax.complex(*jnp.broadcast_arrays(r, i)),
                "ComplexBackward0", {0: (0,), 1: (1,)},
                names="real imag -> imag real")


def _polar(r, t, shapes=None):
    # ``shapes``: the operands' shapes where they differ (broadcast), for the backward
    return jax.lax.complex(r * jnp.cos(t), r * jnp.sin(t))


def _polar_backward(z, ct, shapes=None):
    # PyTorch's PolarBackward0 saves only the result, so writing ``abs`` or ``angle`` in
    # place later does not fail the backward; from the result the gradient of ``abs`` is
    # the result's direction (0 where ``abs`` is 0, as PyTorch's ``sgn``), of ``angle``
    # ``1j * result``. ``ct``: JAX's cotangent (real parts of the products).
    mag = jnp.abs(z)
    unit = jnp.where(mag == 0, 0, z / jnp.where(mag == 0, 1, mag))
    grads = (jnp.real(ct * unit), jnp.real(ct * z * 1j))
    if shapes is None:
        return grads
    return tuple(_sum_to(g, s) for g, s in zip(grads, shapes))


def _sum_to(g, shape):
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    return jnp.sum(g, dims, keepdims=False).reshape(shape) if dims else g


POLAR = defop("polar", _polar, "PolarBackward0", OUT, _polar_backward,
              names="abs angle -> result")
VIEW_AS_REAL = defop("view_as_real", lambda z: jnp.stack([z.real, z.imag], -1),
                     "ViewAsRealBackward0", ())
VIEW_AS_COMPLEX = defop("view_as_complex", lambda x: jax.lax.complex(x[..., 0], x[..., 1]),
                        "ViewAsComplexBackward0", ())
VIEW_AS_REAL_COPY = defop("view_as_real_copy", VIEW_AS_REAL.fwd,
                          "ViewAsRealBackward0_copy", ())
VIEW_AS_COMPLEX_COPY = defop("view_as_complex_copy", VIEW_AS_COMPLEX.fwd, None, ())
CONJ = defop("conj", jnp.conj, "ConjBackward0", ())
CONJ_PHYSICAL = defop("conj_physical", jnp.conj, "ConjPhysicalBackward0", ())
CONJ_PHYSICAL_ = defop("conj_physical_", jnp.conj, "ConjPhysicalBackward1", ())
# ``z.real = v``: PyTorch copies ``v`` into the view ``z.real``, so ``z``'s node is the
# CopySlices of that copy, with edges to ``z``'s history and to ``v``
SET_REAL = defop("set_real", lambda z, v: jax.lax.complex(
    jnp.broadcast_to(v, z.shape).astype(z.real.dtype), z.imag),
    "torch::autograd::CopySlices", ())
SET_IMAG = defop("set_imag", lambda z, v: jax.lax.complex(
    z.real, jnp.broadcast_to(v, z.shape).astype(z.real.dtype)),
    "torch::autograd::CopySlices", ())


def _name(t):
    return _dtype.torch_kind(t.dtype.np)


def _check_pair(real, imag):
    for t in (real, imag):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument 'real' and 'imag' must be Tensor, not "
                            f"{type(t).__name__}")
    if real.dtype.name not in _FLOATS or imag.dtype.name not in _FLOATS:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_name(real)} and {_name(imag)}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_name(real)} but got scalar "
                           f"type {_name(imag)} for second argument")
    if real.dtype.name == "float16":
        _dtype.to_jax(_dtype.complex32)  # raises: JAX has no complex32


@export(method=False)
@with_out
def complex(real, imag) -> Tensor:  # noqa: A001 - torch.complex
    """``complex(real, imag, *, out=None)``: the complex tensor ``real + imag * 1j`` (both
    float or both double; broadcast)."""
    _check_pair(real, imag)
    return bapply(COMPLEX, (real, imag))


@export(method=False)
@with_out
def polar(abs, angle) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """``polar(abs, angle, *, out=None)``: the complex tensor ``abs * (cos(angle) + 1j *
    sin(angle))``."""
    _check_pair(abs, angle)
    if abs.shape != angle.shape:
        return bapply(POLAR, (abs, angle), {"shapes": (tuple(abs.shape), tuple(angle.shape))})
    return bapply(POLAR, (abs, angle))


@export(method=False)
def view_as_real(input) -> Tensor:
    """``view_as_real(input)``: a complex tensor's values as pairs of reals, in a new last
    dimension of size 2: a view of ``input``'s storage read as reals (see the module
    docstring)."""
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _flipped_view(apply(VIEW_AS_REAL, (input,)), input, _as_reals)


def _as_reals(size, stride, offset):
    # each complex element's two reals innermost: PyTorch's strides in the real dtype
    return (*size, 2), (*(2 * s for s in stride), 1), 2 * offset


def _as_complex(size, stride, offset):
    # each pair of reals (the last dimension: size 2, stride 1) one complex element
    return size[:-1], tuple(s // 2 for s in stride[:-1]), offset // 2


def _flipped_view(t, input, geom_fn):
    """``t``, ``input``'s values read in the other kind of dtype, made a view of ``input``
    (``_views.ViewInfo.flip``): a write through either is seen by the other."""
    make_view(t, input, geom_fn)
    info = t._view
    info.flip = not info.flip
    return t


def _check_pairs(input, name):
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.dtype.name not in _FLOATS:
        raise RuntimeError(f"{name} is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {_name(input)}")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    _, stride, offset = _views.geometry(input)
    if stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if input.dtype.name == "float16":
        _dtype.to_jax(_dtype.complex32)


@export(method=False)
def view_as_complex(input) -> Tensor:
    """``view_as_complex(input)``: pairs of reals in a last dimension of size 2 as one
    complex tensor: a view of ``input``'s storage read as complex numbers."""
    _check_pairs(input, "view_as_complex")
    return _flipped_view(apply(VIEW_AS_COMPLEX, (input,)), input, _as_complex)


@export(method=False)
@with_out
def view_as_real_copy(input) -> Tensor:
    """Performs the same operation as :func:`hookgrad.view_as_real`, but the output tensor
    is freshly created instead of aliasing the input."""
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply(VIEW_AS_REAL_COPY, (input,))


@export(method=False)
@with_out
def view_as_complex_copy(input) -> Tensor:
    """Performs the same operation as :func:`hookgrad.view_as_complex`, but the output
    tensor is freshly created instead of aliasing the input (not differentiable, as
    PyTorch's)."""
    _check_pairs(input, "view_as_complex")
    if input.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation "
                           "for outputs with complex dtype.")
    return apply(VIEW_AS_COMPLEX_COPY, (input,))


@export
def conj(input) -> Tensor:
    """``conj(input)``: the complex conjugate (``input`` itself for a real tensor). PyTorch
    sets a lazy conjugate bit; hookgrad conjugates at once (``is_conj()`` stays False)."""
    return apply(CONJ, (input,)) if input.dtype.is_complex else input


@export
@with_out
def conj_physical(input) -> Tensor:
    """``conj_physical(input, *, out=None)``: the complex conjugate, computed at once
    (``input`` itself for a real tensor)."""
    return apply(CONJ_PHYSICAL, (input,)) if input.dtype.is_complex else input


@export(name="conj_physical_")
def _conj_physical_(input) -> Tensor:
    """``conj_physical_(input)``: conjugates ``input`` in place (nothing for a real
    tensor)."""
    if input.dtype.is_complex:
        apply(CONJ_PHYSICAL_, (input,), out=input)
    return input


@export(method=False)  # Tensor.real is a property (below)
def real(input) -> Tensor:
    """``real(input)``: the real part of a complex tensor; ``input`` itself when real."""
    if not input.dtype.is_complex:
        return input
    return apply(VIEW_AS_REAL, (input,)).select(input.ndim, 0)  # the last dim


@export(method=False)
def imag(input) -> Tensor:
    """``imag(input)``: the imaginary part of a complex tensor."""
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(VIEW_AS_REAL, (input,)).select(input.ndim, 1)  # the last dim


def _set_part(op):
    def setter(self, value):
        if not self.dtype.is_complex:
            if op is SET_IMAG:
                raise RuntimeError("imag is not implemented for tensors with non-complex "
                                   "dtypes.")
            self.copy_(value)
            return
        if not isinstance(value, Tensor):
            value = Tensor._wrap(jnp.asarray(value, self.dtype.to_real().np))
        if value.dtype.is_complex:  # PyTorch's copy_ into the real view
            _errors.warn("Casting complex values to real discards the imaginary part",
                         UserWarning)
            value = real(value)
        bapply(op, (self, value), out=self)
    return setter


TENSOR_PROPERTIES.update({
    "real": property(real, _set_part(SET_REAL)),
    "imag": property(imag, _set_part(SET_IMAG)),
})


@export(function=False)
def chalf(self, memory_format=None) -> Tensor:
    """``chalf()``: ``self.to(complex32)``; JAX has no complex32, so this raises."""
    return self.to(_dtype.complex32)
