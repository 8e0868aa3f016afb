"""``hookgrad.distributions``: PyTorch's ``torch.distributions`` basics on hookgrad Tensors.

``Normal``, ``Uniform``, ``Categorical``, ``Bernoulli``, ``Beta``, ``Cauchy``, ``Chi2``,
``Dirichlet``, ``Exponential``, ``Gamma``, ``Geometric``, ``Gumbel``, ``HalfNormal``,
``Independent``, ``Laplace``, ``LogNormal``, ``Pareto``, ``Poisson``, ``StudentT`` and
``Weibull``, the distributions built on ``transforms`` (``TransformedDistribution``,
``HalfCauchy``, ``InverseGamma``, ``Kumaraswamy``, ``LogisticNormal``, the relaxed
Bernoulli and one-hot categorical), ``biject_to``/``transform_to``, with PyTorch's parameters,
shapes (``batch_shape``, ``event_shape``), ``log_prob``, ``entropy``, moments, argument
validation, and ``kl_divergence``. Densities and reparameterised samples (``rsample``)
are hookgrad ops, so gradients and hooks flow through them; samples come from hookgrad's
global PRNG key (``hookgrad.manual_seed``), so their values differ from PyTorch's.

Example::

    >>> from hookgrad.distributions import Normal
    >>> d = Normal(loc, scale)
    >>> loss = -d.log_prob(x).sum()
"""
from . import constraints, transforms, utils
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403 - PyTorch's namespace re-exports them
from .uniform import Uniform
from .weibull import Weibull

__all__ = ["Distribution", "Normal", "Uniform", "Categorical", "Bernoulli",
           "kl_divergence", "register_kl", "constraints", "Beta", "Cauchy", "Chi2",
           "Dirichlet", "Exponential", "Gamma", "Geometric", "Gumbel", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "Pareto", "Poisson", "StudentT", "Weibull",
           "TransformedDistribution", "HalfCauchy", "InverseGamma", "Kumaraswamy",
           "LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical", "biject_to", "transform_to", "transforms",
           *transforms.__all__]


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
