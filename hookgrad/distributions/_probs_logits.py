"""The parametrisation shared by the distributions of independent binary trials
(``Bernoulli``, ``ContinuousBernoulli``, ``LogitRelaxedBernoulli``, ``Binomial``,
``NegativeBinomial``): success ``probs`` or their log-odds ``logits``, either given and
the other derived on first use."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

from .._tensor import Size
from .categorical import _check_one_of
from .distribution import Distribution, broadcast_all
from .utils import _delegated, lazy_property, logits_to_probs, probs_to_logits

if TYPE_CHECKING:
    from .._tensor import Tensor


class _Odds:
    """A success probability ``probs`` and its log-odds ``logits``, either one computed
    from the other on first use."""

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)


class _ProbsOrLogits(_Odds, Distribution):
    """``probs`` or ``logits``, broadcast with the parameters named in ``_leading``
    (which take their dtype), and ``expand`` over all of them."""

    _leading: tuple = ()
    _copied: tuple = ()   # parameters kept as they are by expand (temperature)

    def _init_params(self, probs, logits, *leading) -> Size:
        _check_one_of(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        tensors = broadcast_all(*leading, value)
        param = tensors[-1]
        for n, t in zip(self._leading, tensors):
            setattr(self, n, t.type_as(param))
        setattr(self, name, param)
        self._param = param
        return Size() if isinstance(value, numbers.Number) else param.size()

    def expand(self, batch_shape, _instance=None) -> Distribution:
        shape = Size(batch_shape)
        params = {n: getattr(self, n).expand(shape) for n in self._leading}
        params.update({n: self.__dict__[n].expand(shape) for n in ("probs", "logits")
                       if n in self.__dict__})
        params.update({n: getattr(self, n) for n in self._copied})
        new = self._new_expanded(type(self), shape, params)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @property
    def param_shape(self) -> Size:
        return self._param.size()


class _OverCategorical(Distribution):
    """A distribution over vectors of the last dimension of a ``Categorical``'s
    ``probs``/``logits`` (held as ``_categorical``): one-hot, counts, relaxations."""

    _copied: tuple = ()

    def _init_categorical(self, probs, logits, validate_args):
        from .categorical import Categorical
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Distribution:
        shape = Size(batch_shape)
        params = {n: getattr(self, n) for n in self._copied}
        params["_categorical"] = self._categorical.expand(shape)
        return self._new_expanded(type(self), shape, params)

    _param = _delegated("_categorical", "_param")
    probs = _delegated("_categorical", "probs")
    logits = _delegated("_categorical", "logits")
    param_shape = _delegated("_categorical", "param_shape", Size)
