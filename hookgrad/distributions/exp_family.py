"""``ExponentialFamily``: the base of distributions whose density is
``exp(<t(x), theta> - F(theta) + k(x))``."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .distribution import Distribution

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    r"""Base class of exponential-family distributions, as
    ``torch.distributions.ExponentialFamily``: a subclass gives its natural parameters
    ``_natural_params``, the log normalizer ``_log_normalizer(*natural_params)`` and the
    expected carrier measure ``_mean_carrier_measure``; ``entropy`` (and the Bregman-
    divergence ``kl_divergence`` between two of the same type) follow by autograd.
    """

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy ``F(theta) - <theta, grad F(theta)> - E[k(x)]``."""
        from .._engine.backward import grad
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = grad(log_norm.sum(), params, create_graph=True)
        result = -self._mean_carrier_measure + log_norm
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
