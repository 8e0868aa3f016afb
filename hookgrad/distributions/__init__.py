"""``hookgrad.distributions``: PyTorch's ``torch.distributions`` basics on hookgrad Tensors.

``Normal``, ``Uniform``, ``Categorical`` and ``Bernoulli`` with PyTorch's parameters,
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
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = ["Distribution", "Normal", "Uniform", "Categorical", "Bernoulli",
           "kl_divergence", "register_kl", "constraints"]


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
