"""``CatTransform`` and ``StackTransform``: a transform per block of a Tensor, joined as
``cat`` and ``stack`` join them."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._ops.stacking import cat, stack
from . import constraints
from ._transform import Transform, _sum_rightmost
from .utils import lazy_property

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["CatTransform", "StackTransform"]


def _check_size(name, t, dim, size, what):
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for tensor with {t.dim()} dimensions")
    if t.size(dim) != size:
        raise AssertionError(f"{name}.size({dim}) = {t.size(dim)} must equal {what} {size}")


def _cached_parts(tseq, cache_size):
    if not all(isinstance(t, Transform) for t in tseq):
        raise AssertionError("All elements of tseq must be Transform instances")
    return [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)


class CatTransform(Transform):
    r"""Applies ``tseq[i]`` to the ``i``-th block (``lengths[i]`` long) of the input along
    ``dim``, as ``torch.distributions.transforms.CatTransform``.

    .. code-block:: python

        CatTransform(tseq, dim=0, lengths=None, cache_size=0)
    """

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        parts = _cached_parts(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms = parts
        self.lengths = constraints._block_lengths(lengths, parts, "transforms")
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _blocks(self, t):
        return constraints._blocks(t, self.dim, self.lengths)

    def _call(self, x):
        _check_size("x", x, self.dim, self.length, "length")
        return cat([t(b) for t, b in zip(self.transforms, self._blocks(x))], self.dim)

    def _inverse(self, y):
        _check_size("y", y, self.dim, self.length, "length")
        return cat([t.inv(b) for t, b in zip(self.transforms, self._blocks(y))], self.dim)

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        _check_size("x", x, self.dim, self.length, "length")
        _check_size("y", y, self.dim, self.length, "length")
        terms = [_sum_rightmost(t.log_abs_det_jacobian(a, b), self.event_dim - t.event_dim)
                 for t, a, b in zip(self.transforms, self._blocks(x), self._blocks(y))]
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return cat(terms, dim) if dim < 0 else sum(terms)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.cat([t.codomain for t in self.transforms], self.dim,
                               self.lengths)


class StackTransform(Transform):
    r"""Applies ``tseq[i]`` to the ``i``-th slice of the input along ``dim``, as
    ``torch.distributions.transforms.StackTransform``.

    .. code-block:: python

        StackTransform(tseq, dim=0, cache_size=0)
    """

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        parts = _cached_parts(tseq, cache_size)
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = parts, dim

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, name, t):
        _check_size(name, t, self.dim, len(self.transforms), "len(transforms)")
        return [t.select(self.dim, i) for i in range(t.size(self.dim))]

    def _call(self, x):
        return stack([t(s) for t, s in zip(self.transforms, self._slices("x", x))], self.dim)

    def _inverse(self, y):
        return stack([t.inv(s) for t, s in zip(self.transforms, self._slices("y", y))],
                     self.dim)

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        xs, ys = self._slices("x", x), self._slices("y", y)
        return stack([t.log_abs_det_jacobian(a, b)
                      for t, a, b in zip(self.transforms, xs, ys)], self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
