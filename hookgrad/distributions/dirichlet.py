"""``Dirichlet(concentration)``: a distribution over the probability simplex."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._ops.random_gamma import standard_gamma
from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _index0(like):
    from .._factory import tensor
    return tensor([0], device=like.device)


class Dirichlet(ExponentialFamily):
    r"""The Dirichlet distribution over the last dimension of concentration, as
    torch.distributions.Dirichlet.

    .. code-block:: python

        Dirichlet(concentration, validate_args=None)

    rsample normalises reparameterised gamma samples.
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Dirichlet:
        shape = Size(batch_shape)
        return self._new_expanded(Dirichlet, shape, {"concentration": self.concentration.expand(
            shape + self.event_shape)})

    def rsample(self, sample_shape=()) -> Tensor:
        g = standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ((c - 1.0).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        c = (self.concentration - 1).clamp(min=0.0)
        mode = c / c.sum(-1, keepdim=True)
        # all concentrations below 1: PyTorch's argmax of the all-NaN row, the first corner
        first = (c.new_zeros(()).expand(c.shape).clone()).index_fill(-1, _index0(c), 1.0)
        return first.where((self.concentration < 1).all(-1, keepdim=True), mode)

    @property
    def variance(self) -> Tensor:
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((c - 1.0) * c.digamma()).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x) -> Tensor:
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
