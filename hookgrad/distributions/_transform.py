"""The ``Transform`` base of ``hookgrad.distributions.transforms`` and the transforms that
only rearrange others: inverses, chains (``ComposeTransform``), ``IndependentTransform``,
and ``ReshapeTransform``."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._tensor import Size
from . import constraints
from .utils import _delegated, lazy_property

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Transform", "ComposeTransform", "IndependentTransform", "ReshapeTransform",
           "identity_transform"]


def _sum_rightmost(value, dim):
    """``value`` summed over its last ``dim`` dimensions (none if ``dim <= 0``)."""
    if dim <= 0:
        return value
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1)


class Transform:
    r"""An invertible (or pseudo-invertible) map ``x -> y`` with a computable
    ``log |dy/dx|``, as ``torch.distributions.transforms.Transform``.

    .. code-block:: python

        Transform(cache_size=0)

    Subclasses define ``_call`` and/or ``_inverse``, ``domain`` and ``codomain``
    (constraints), and bijective ones ``log_abs_det_jacobian``. With ``cache_size=1`` the
    latest ``(x, y)`` pair is remembered, so ``t.inv(t(x))`` returns ``x`` itself.
    """

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None
        self._cached_x_y = None, None

    def __getstate__(self):
        return {**self.__dict__, "_inv": None}

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``t.inv.inv is t``)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self) -> int:
        """The sign of the Jacobian's determinant (bijective univariate transforms)."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Tensor) -> Tensor:
        return self._cached(x, self._call, 0)

    def _inv_call(self, y):
        return self._cached(y, self._inverse, 1)

    def _cached(self, value, compute, side):
        """``compute(value)``, where ``value`` is the ``x`` (``side`` 0) or ``y`` (1) of the pair;
        with a cache, the last pair answers again when ``value`` is the same object."""
        if not self._cache_size:
            return compute(value)
        pair = self._cached_x_y
        if value is pair[side]:
            return pair[1 - side]
        out = compute(value)
        self._cached_x_y = (value, out) if side == 0 else (out, value)
        return out

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        """``log |dy/dx|`` at ``x`` (with ``y = t(x)``)."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape) -> tuple:
        """The output shape for an input of ``shape``."""
        return shape

    def inverse_shape(self, shape) -> tuple:
        """The input shape for an output of ``shape``."""
        return shape


class _InverseTransform(Transform):
    """``t.inv``: ``t`` read backwards."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        return self._inv.domain

    bijective = _delegated("_inv", "bijective", bool)
    sign = _delegated("_inv", "sign", int)

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size=1) -> Transform:
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape) -> tuple:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape) -> tuple:
        return self._inv.forward_shape(shape)


def _event_dim_through(parts, forward):
    """The event dimension a chain needs at its start (``forward``: at its end): the most
    any part needs, carried through the parts' changes of event dimension."""
    if forward:
        seq, into, outof = parts, "codomain", "domain"
        dim = parts[0].domain.event_dim
    else:
        seq, into, outof = list(reversed(parts)), "domain", "codomain"
        dim = parts[-1].codomain.event_dim
    for part in seq:
        dim += getattr(part, into).event_dim - getattr(part, outof).event_dim
        dim = max(dim, getattr(part, into).event_dim)
    return dim


class ComposeTransform(Transform):
    r"""The chain ``parts[-1](... parts[0](x))``, as
    ``torch.distributions.transforms.ComposeTransform``.

    .. code-block:: python

        ComposeTransform(parts, cache_size=0)
    """

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def _end(self, end, forward):
        constraint = getattr(self.parts[0 if end == "domain" else -1], end)
        extra = _event_dim_through(self.parts, forward) - constraint.event_dim
        return constraints.independent(constraint, extra) if extra > 0 else constraint

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        return self._end("domain", False) if self.parts else constraints.real

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        return self._end("codomain", True) if self.parts else constraints.real

    @lazy_property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self) -> int:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        if not self.parts:
            from .._factory import zeros_like
            return zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))   # free where the parts cache
        xs.append(y)
        total, event_dim = None, self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = _sum_rightmost(part.log_abs_det_jacobian(a, b),
                                  event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape) -> tuple:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape) -> tuple:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return (type(self).__name__ + "(\n    "
                + ",\n    ".join(repr(p) for p in self.parts) + "\n)")


identity_transform = ComposeTransform([])


def _too_few_dims(t, event_dim):
    if t.dim() < event_dim:
        raise ValueError("Too few dimensions on input")


class IndependentTransform(Transform):
    r"""``base_transform`` with its ``reinterpreted_batch_ndims`` rightmost batch
    dimensions read as event dimensions (summed in ``log_abs_det_jacobian``), as
    ``torch.distributions.transforms.IndependentTransform``.

    .. code-block:: python

        IndependentTransform(base_transform, reinterpreted_batch_ndims, cache_size=0)
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x):
        _too_few_dims(x, self.domain.event_dim)
        return self.base_transform(x)

    def _inverse(self, y):
        _too_few_dims(y, self.codomain.event_dim)
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{type(self).__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape) -> tuple:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape) -> tuple:
        return self.base_transform.inverse_shape(shape)


def _replace_event(shape, old, new):
    if len(shape) < len(old):
        raise ValueError("Too few dimensions on input")
    cut = len(shape) - len(old)
    if tuple(shape[cut:]) != tuple(old):
        raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {old}")
    return Size(tuple(shape[:cut]) + tuple(new))


class ReshapeTransform(Transform):
    r"""Reshapes the rightmost ``in_shape`` dimensions to ``out_shape`` (unit Jacobian),
    as ``torch.distributions.transforms.ReshapeTransform``.

    .. code-block:: python

        ReshapeTransform(in_shape, out_shape, cache_size=0)
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch + tuple(self.out_shape))

    def _inverse(self, y):
        batch = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape) -> tuple:
        return _replace_event(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape) -> tuple:
        return _replace_event(shape, self.out_shape, self.in_shape)
