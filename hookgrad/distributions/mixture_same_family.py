"""``MixtureSameFamily(mixture_distribution, component_distribution)``: a mixture whose
components are the rightmost batch dimension of one distribution."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._autograd.grad_mode import no_grad
from .._tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    r"""A mixture of the components along the last batch dimension of
    ``component_distribution``, weighted by the ``Categorical`` ``mixture_distribution``,
    as ``torch.distributions.MixtureSameFamily``.

    .. code-block:: python

        MixtureSameFamily(mixture_distribution, component_distribution, validate_args=None)

    Example::

        >>> mix = Categorical(hookgrad.ones(5))
        >>> comp = Normal(hookgrad.randn(5), hookgrad.rand(5))
        >>> gmm = MixtureSameFamily(mix, comp)
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mdbs), reversed(cdbs)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`"
                                 f"({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs, component_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> MixtureSameFamily:
        batch_shape = Size(batch_shape)
        return self._new_expanded(MixtureSameFamily, batch_shape, {
            "_component_distribution": self._component_distribution.expand(
                batch_shape + (self._num_component,)),
            "_mixture_distribution": self._mixture_distribution.expand(batch_shape),
            "_num_component": self._num_component, "_event_ndims": self._event_ndims})

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _weights(self):
        # the mixture probabilities laid out against the components' batch and event
        probs = self.mixture_distribution.probs
        pad = 0 if len(self.mixture_distribution.batch_shape) == 1 else \
            len(self.batch_shape) - len(self.mixture_distribution.batch_shape)
        return probs.reshape(tuple(probs.shape[:-1]) + (1,) * pad + tuple(probs.shape[-1:])
                             + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        return (self._weights() * self.component_distribution.mean).sum(
            -1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        w, comp = self._weights(), self.component_distribution
        dim = -1 - self._event_ndims
        within = (w * comp.variance).sum(dim)
        between = (w * (comp.mean - self._pad(self.mean)).pow(2.0)).sum(dim)
        return within + between

    def cdf(self, x) -> Tensor:
        return (self.component_distribution.cdf(self._pad(x))
                * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix = self.mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix).logsumexp(-1)

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix = self.mixture_distribution.sample(sample_shape).long()
            comp = self.component_distribution.sample(sample_shape)
            index = mix.reshape(tuple(mix.shape) + (1,) * (len(es) + 1))
            index = index.expand(tuple(mix.shape) + (1,) + es)
            return comp.gather(gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  "
                f"{self.component_distribution})")


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
