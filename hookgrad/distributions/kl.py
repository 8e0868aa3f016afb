"""``kl_divergence(p, q)`` and ``register_kl``: closed-form KL divergences by type pair."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._ops.pointwise import where
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .normal import Normal
from .uniform import Uniform

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}


def register_kl(type_p: type,
                type_q: type) -> Callable[[Callable[..., Tensor]], Callable[..., Tensor]]:
    """Decorator registering ``fn(p, q)`` as the KL divergence of a pair of types.

    Example::

        >>> @register_kl(MyDist, Normal)
        ... def kl_mine_normal(p, q): ...
    """
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def _lookup(tp, tq):
    # the registered pair closest in both MROs
    best, fn = None, None
    for (p, q), f in _KL_REGISTRY.items():
        if issubclass(tp, p) and issubclass(tq, q):
            rank = (tp.__mro__.index(p), tq.__mro__.index(q))
            if best is None or rank < best:
                best, fn = rank, f
    return fn


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    r"""``KL(p || q)``, batched, as ``torch.distributions.kl_divergence``.

    .. code-block:: python

        kl_divergence(p: Distribution, q: Distribution) -> Tensor

    Defined for the pairs PyTorch registers that hookgrad has (Normal, Categorical,
    Bernoulli, Uniform, the multivariate normals, Binomial, OneHotCategorical,
    ContinuousBernoulli, Independent and TransformedDistribution pairs; two of one
    exponential family by the Bregman divergence) and pairs added with ``register_kl``.

    Example::

        >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0))
        tensor(0.4431)
    """
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # the Bregman divergence of the log normalizer, between two of one family
    if not type(p) == type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    from .._engine.backward import grad
    from ._transform import _sum_rightmost
    p_params = [t.detach().requires_grad_() for t in p._natural_params]
    q_params = q._natural_params
    log_norm = p._log_normalizer(*p_params)
    grads = grad(log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_norm
    for pp, qp, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qp - pp) * g, len(q.event_shape))
    return result


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


def _masked(t, inf_where, zero_where):
    t = where(inf_where, math.inf, t)
    return where(zero_where, 0.0, t)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    return _masked(t, (q.probs == 0).expand_as(t), (p.probs == 0).expand_as(t)).sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    from ..nn.functional import softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _masked(t1, q.probs == 0, p.probs == 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _masked(t2, q.probs == 1, p.probs == 1)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return where((q.low > p.low) | (q.high < p.high), math.inf, result)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
