"""Factories that name a memory layout: ``empty_strided``, ``empty_permuted``,
``Tensor.new_empty_strided``. hookgrad's new tensors hold their elements in C order
(XLA lays arrays out itself), so the layout is checked as PyTorch checks it and the
result has C-order strides (docs/differences.md); elements are zeros (PyTorch leaves
them uninitialised)."""
from __future__ import annotations

from .. import _factory
from .._tensor import Tensor
from .registry import export


def _ints(seq):
    return tuple(int(s) for s in seq)


def _size(size):
    size = _ints(size)
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return size


@export(method=False)
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """``empty_strided(size, stride, ...)``: a tensor of shape ``size`` whose layout would
    have strides ``stride`` (here: C order)."""
    size, stride = _size(size), _ints(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    return _factory.empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


@export(method=False)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False) -> Tensor:
    """``empty_permuted(size, physical_layout, ...)``: a tensor of shape ``size`` whose
    dimensions would lie in memory in the order ``physical_layout`` (here: C order)."""
    size, order = _size(size), _ints(physical_layout)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    for i, d in enumerate(order):
        if not 0 <= d < len(order):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(order) - 1}, but got {d} at index {i}).  NB: negative "
                               "dims not currently supported; file an issue if you want it.")
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    return _factory.empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


@export(function=False)
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False) -> Tensor:
    """:func:`hookgrad.empty_strided` with this tensor's dtype and device by default."""
    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)
