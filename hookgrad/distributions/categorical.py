"""``Categorical(probs=None, logits=None)``: a distribution over ``0 .. K-1``."""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from .. import random
from .._factory import full
from .._ops.shape import broadcast_tensors
from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import probs_to_logits

__all__ = ["Categorical"]


def _check_one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Categorical(Distribution):
    r"""A categorical distribution over ``{0, ..., K-1}`` parameterised by ``probs``
    (normalised along the last dimension) or ``logits`` (normalised log-probabilities),
    as ``torch.distributions.Categorical``.

    .. code-block:: python

        Categorical(probs=None, logits=None, validate_args=None)

    The last dimension indexes the categories; the others are the batch. ``sample``
    draws integer indices from hookgrad's global key.

    Example::

        >>> d = Categorical(probs=hookgrad.tensor([0.25, 0.25, 0.5]))
        >>> d.log_prob(hookgrad.tensor(2))
        tensor(-0.6931)
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _check_one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Categorical:
        shape = Size(batch_shape)
        full_shape = Size(tuple(shape) + (self._num_events,))
        params = {}
        for name in ("probs", "logits"):
            if name in self.__dict__:
                params[name] = self.__dict__[name].expand(full_shape)
        params["_num_events"] = self._num_events
        new = self._new_expanded(Categorical, shape, params)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @functools.cached_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @functools.cached_property
    def probs(self) -> Tensor:
        return self.logits.softmax(-1)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(sample_shape) + tuple(self._batch_shape)
        # NOTE: log(probs), not the clamped logits: a category of probability 0 is never drawn
        log_p = jnp.log(self.probs._data)
        draw = jax.random.categorical(random.next_key(), log_p, axis=-1, shape=shape)
        return Tensor._wrap(draw)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        lowest = float(jnp.finfo(self.logits._data.dtype).min)
        return -(self.logits.clamp(min=lowest) * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from .._factory import arange
        values = arange(self._num_events).view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
