"""``Distribution``: the base class of ``hookgrad.distributions`` (PyTorch's API).

Parameters are hookgrad Tensors and every density, moment and reparameterised sample is
computed with hookgrad ops, so gradients, tensor hooks and ``hookgrad.compile`` work
through them. Samples come from hookgrad's global PRNG key (``hookgrad.manual_seed``).
"""
from __future__ import annotations

import functools
import numbers

import jax

from .._factory import tensor
from .._ops.shape import broadcast_tensors
from .._tensor import Size, Tensor
from . import constraints
from .. import _errors

__all__ = ["Distribution", "broadcast_all"]


def _is_traced(t):
    return isinstance(t, Tensor) and isinstance(t._data, jax.core.Tracer)


def _all_true(valid):
    # a traced check (inside hookgrad.compile) has no value to branch on: it passes
    if _is_traced(valid):
        return True
    return bool(valid.all())


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Tensors and numbers broadcast to one shape; numbers take the first Tensor's dtype
    (the default dtype if there is none)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, hookgrad.Tensor "
                         "or objects implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else None
    tensors = [v if isinstance(v, Tensor) else tensor(float(v), dtype=dtype)
               for v in values]
    if like is None:
        return tuple(tensors)
    return tuple(broadcast_tensors(*tensors))


class Distribution:
    r"""Base class of probability distributions, as ``torch.distributions.Distribution``.

    .. code-block:: python

        Distribution(batch_shape=hookgrad.Size(), event_shape=hookgrad.Size(),
                     validate_args=None)

    Subclasses define ``arg_constraints``, ``support``, ``log_prob``, ``sample`` or
    ``rsample`` and the moments. With ``validate_args`` (default: on, as PyTorch's under
    ``__debug__``) parameters are checked at construction and values in ``log_prob``.

    Example::

        >>> d = hookgrad.distributions.Normal(hookgrad.zeros(3), hookgrad.ones(3))
        >>> d.batch_shape, d.sample((2,)).shape
        (hookgrad.Size([3]), hookgrad.Size([2, 3]))
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            _errors.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                         "`arg_constraints = {}` or initialize the distribution with "
                         "`validate_args=False` to turn off validation.")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            lazy = isinstance(getattr(type(self), param, None), functools.cached_property)
            if lazy and param not in self.__dict__:
                continue  # the other parametrisation: computed, not given
            value = getattr(self, param)
            if not _all_true(constraint.check(value)):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}")

    # ------------------------------------------------------------------ shapes
    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape, _instance=None) -> Distribution:
        """A new distribution with its parameters expanded to ``batch_shape``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ interface
    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """``{parameter name: Constraint}`` checked at construction."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint | None:
        """The ``Constraint`` that valid values satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without
        gradient (``rsample`` under ``no_grad`` where there is one)."""
        from .._autograd.grad_mode import no_grad
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        _errors.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead", UserWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete distribution's support, along a new first
        dimension (expanded over the batch when ``expand``)."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    # ------------------------------------------------------------------ validation
    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape, event = tuple(value.shape), tuple(self._event_shape)
        if shape[len(shape) - len(event):] != event:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{Size(shape)} vs {Size(expected)}.")
        support = self.support
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {shape}) to be "
                f"within the support ({support!r}) of the distribution {self!r}, but found "
                f"invalid values:\n{value}")

    def _new_expanded(self, cls, batch_shape, params):
        """An instance of ``cls`` with ``params`` ({name: Tensor}) expanded to
        ``batch_shape`` (and the event shape), sharing this one's validation setting."""
        new = object.__new__(type(self))
        for name, value in params.items():
            setattr(new, name, value)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        shown = {k: self.__dict__[k] for k in self.arg_constraints if k in self.__dict__}
        args = ", ".join(f"{k}: {v if v.numel() == 1 else v.size()}" for k, v in shown.items())
        return f"{type(self).__name__}({args})"


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
