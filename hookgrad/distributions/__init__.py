"""``hookgrad.distributions``: PyTorch's ``torch.distributions`` basics on hookgrad Tensors.

``Normal``, ``Uniform``, ``Categorical``, ``Bernoulli``, ``Beta``, ``Cauchy``, ``Chi2``,
``Dirichlet``, ``Exponential``, ``Gamma``, ``Geometric``, ``Gumbel``, ``HalfNormal``,
``Independent``, ``Laplace``, ``LogNormal``, ``Pareto``, ``Poisson``, ``StudentT`` and
``Weibull`` with PyTorch's parameters,
shapes (``batch_shape``, ``event_shape``), ``log_prob``, ``entropy``, moments, argument
validation, and ``kl_divergence``. Densities and reparameterised samples (``rsample``)
are hookgrad ops, so gradients and hooks flow through them; samples come from hookgrad's
global PRNG key (``hookgrad.manual_seed``), so their values differ from PyTorch's.

Example::

    >>> from hookgrad.distributions import Normal
    >>> d = Normal(loc, scale)
    >>> loss = -d.log_prob(x).sum()
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .studentT import StudentT
from .uniform import Uniform
from .weibull import Weibull

__all__ = ["Distribution", "Normal", "Uniform", "Categorical", "Bernoulli",
           "kl_divergence", "register_kl", "constraints", "Beta", "Cauchy", "Chi2",
           "Dirichlet", "Exponential", "Gamma", "Geometric", "Gumbel", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "Pareto", "Poisson", "StudentT", "Weibull"]


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
