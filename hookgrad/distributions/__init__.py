"""``hookgrad.distributions``: PyTorch's ``torch.distributions`` basics on hookgrad Tensors.

``Normal``, ``Uniform``, ``Categorical``, ``Bernoulli``, ``Beta``, ``Cauchy``, ``Chi2``,
``Dirichlet``, ``Exponential``, ``Gamma``, ``Geometric``, ``Gumbel``, ``HalfNormal``,
``Independent``, ``Laplace``, ``LogNormal``, ``Pareto``, ``Poisson``, ``StudentT`` and
``Weibull``; the count, one-hot, multivariate, matrix and mixture distributions
(``Binomial``, ``Multinomial``, ``NegativeBinomial``, ``OneHotCategorical``,
``MultivariateNormal``, ``LowRankMultivariateNormal``, ``Wishart``, ``LKJCholesky``,
``MixtureSameFamily``, ...); those built on ``transforms`` (``TransformedDistribution``,
``HalfCauchy``, ``InverseGamma``, ``Kumaraswamy``, ``LogisticNormal``, the relaxed
Bernoulli and one-hot categorical); ``biject_to``/``transform_to``; with PyTorch's parameters,
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
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .geometric import Geometric
from .generalized_pareto import GeneralizedPareto
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403 - PyTorch's namespace re-exports them
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["Distribution", "Normal", "Uniform", "Categorical", "Bernoulli",
           "kl_divergence", "register_kl", "constraints", "Beta", "Cauchy", "Chi2",
           "Dirichlet", "Exponential", "Gamma", "Geometric", "Gumbel", "HalfNormal",
           "Independent", "Laplace", "LogNormal", "Pareto", "Poisson", "StudentT", "Weibull",
           "TransformedDistribution", "HalfCauchy", "InverseGamma", "Kumaraswamy",
           "LogisticNormal", "RelaxedBernoulli", "RelaxedOneHotCategorical", "Binomial",
           "Multinomial", "NegativeBinomial", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "MultivariateNormal",
           "LowRankMultivariateNormal", "ExponentialFamily", "FisherSnedecor",
           "GeneralizedPareto", "MixtureSameFamily", "ContinuousBernoulli", "VonMises",
           "LKJCholesky", "Wishart", "biject_to", "transform_to", "transforms",
           *transforms.__all__]

from . import _kl_families  # noqa: E402,F401 - registers its kl_divergence pairs

from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
