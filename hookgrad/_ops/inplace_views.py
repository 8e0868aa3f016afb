"""The in-place view ops: ``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_`` (and its
aliases ``swapaxes_``, ``swapdims_``), ``as_strided_``.

Each changes the tensor's sizes and strides, not its elements: the tensor keeps its
identity, its version goes up, and its history moves onto the view op's in-place node
(``UnsqueezeBackward1``, ...), as PyTorch records it. A view stays a view of its base
with the new geometry, so writes through it still reach the base.

NOTE: a tensor that is not a view holds its elements in C order (hookgrad/_views.py),
so after ``t_``/``transpose_``/``as_strided_`` its strides are C order again and views
taken of it before no longer share its storage (docs/differences.md).
"""
from __future__ import annotations

from .. import _views
from .._autograd import grad_mode
from .._tensor import Tensor
from . import shape, views
from .dispatch import apply
from .stages.inplace import _check_inplace
from .registry import defop, export
from .shape import wrap_dim


def _twin(op, node):
    # the view op's forward and saved names, recorded under the in-place node's name
    return defop(op.name + "_inplace_view", op.fwd, node, op.save, op.bwd, names=op.names)


UNSQUEEZE_ = _twin(shape.UNSQUEEZE, "UnsqueezeBackward1")
SQUEEZE_ = _twin(shape.SQUEEZE, "SqueezeBackward3")
SQUEEZE_DIM_ = _twin(shape.SQUEEZE_DIM, "SqueezeBackward4")
SQUEEZE_DIMS_ = _twin(shape.SQUEEZE_DIMS, "SqueezeBackward5")
TRANSPOSE_ = _twin(shape.TRANSPOSE, "TransposeBackward1")
T_ = _twin(shape.T, "TBackward1")
AS_STRIDED_ = _twin(views.AS_STRIDED, "AsStridedBackward1")


def _restride(self, op, statics, geom_fn, reorders):
    """``self`` becomes ``op(self)`` in place: ``geom_fn`` maps its geometry to the new
    one; ``reorders``: the element order changes (a root then gets new storage)."""
    info = self._view
    enabled = grad_mode._state.enabled
    record = enabled and self._requires_grad
    if info is not None and info.diff:
        if enabled and (record or info.grad_base._requires_grad):
            views._check_view_creation(info.creation, info.fn_name)
            views.check_leaf_view(info.grad_base, self)
    else:
        _check_inplace(self, record)
    out = apply(op, (self,), statics)
    if info is not None:
        new = _views.ViewInfo(info.base, info, self._data.shape, geom_fn, statics, info.diff,
                              info.shared, info.creation, info.fn_name, info.grad_base)
        new.gen = info.gen
        self._view = new
    elif reorders and self._views:
        _views.new_storage(self)
    self._data = out._data
    self._version += 1
    _views.share_version(self)
    if out.grad_fn is not None:
        views.move_history(self, out.grad_fn, out._output_nr)
    return self


@export(function=False)
def unsqueeze_(self, dim) -> Tensor:
    """In-place :meth:`unsqueeze`: a size-1 dimension inserted at ``dim``."""
    st = shape.given_dims(self.ndim + 1, "unsqueeze_", dim=dim)
    return _restride(self, UNSQUEEZE_, st, views.GEOMETRY["unsqueeze"], False)


@export(function=False)
def squeeze_(self, dim=None) -> Tensor:
    """In-place :meth:`squeeze`: size-1 dimensions removed (all, or those in ``dim``)."""
    if dim is None:
        op, st = SQUEEZE_, {"dim": None}
    else:
        op, st = shape.squeeze_dims(self, dim)
        op = SQUEEZE_DIMS_ if op is shape.SQUEEZE_DIMS else SQUEEZE_DIM_
    return _restride(self, op, st, views.GEOMETRY["squeeze"], False)


@export(function=False)
def transpose_(self, dim0, dim1) -> Tensor:
    """In-place :meth:`transpose`: dimensions ``dim0`` and ``dim1`` swapped."""
    return _transposed(self, dim0, dim1, "transpose_", ("dim0", "dim1"))


# the aliases are methods of their own: PyTorch's TypeError names the one called
@export(function=False)
def swapaxes_(self, axis0, axis1) -> Tensor:
    return _transposed(self, axis0, axis1, "swapaxes_", ("axis0", "axis1"))


@export(function=False)
def swapdims_(self, dim0, dim1) -> Tensor:
    return _transposed(self, dim0, dim1, "swapdims_", ("dim0", "dim1"))


def _transposed(self, dim0, dim1, name, args):
    st = shape.given_dims(self.ndim, name, args, d0=dim0, d1=dim1)
    reorders = wrap_dim(dim0, self.ndim) != wrap_dim(dim1, self.ndim)
    return _restride(self, TRANSPOSE_, st, views.GEOMETRY["transpose"], reorders)


@export(function=False)
def t_(self) -> Tensor:
    """In-place :meth:`t`: a matrix transposed (0-d and 1-d tensors unchanged)."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return _restride(self, T_, None, views.GEOMETRY["t"], self.ndim == 2)


@export(function=False)
def as_strided_(self, size, stride, storage_offset=None) -> Tensor:
    """In-place :meth:`as_strided`: this tensor reads its storage with the given sizes,
    strides and offset (the same rules as :func:`hookgrad.as_strided`)."""
    view = shape.as_strided(self.detach(), size, stride, storage_offset)
    geom = _views.geometry(view)
    st = {"size": geom[0], "stride": geom[1], "offset": geom[2] - _views.geometry(self)[2]}
    return _restride(self, AS_STRIDED_, st, lambda *_, **__: geom, True)
