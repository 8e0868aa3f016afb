"""``LogisticNormal(loc, scale)``: a normal vector pushed onto the simplex by stick
breaking."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    r"""The logistic-normal distribution on the simplex, as
    ``torch.distributions.LogisticNormal``: ``StickBreakingTransform()(Normal(loc,
    scale))``, one more component than ``loc``'s last dimension.

    .. code-block:: python

        LogisticNormal(loc, scale, validate_args=None)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
