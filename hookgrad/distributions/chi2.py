"""``Chi2(df)``: the chi-squared distribution, ``Gamma(df / 2, 1 / 2)``."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._tensor import Size
from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    r"""The chi-squared distribution with df degrees of freedom, as
    torch.distributions.Chi2.

    .. code-block:: python

        Chi2(df, validate_args=None)
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Chi2:
        shape = Size(batch_shape)
        return self._new_expanded(Chi2, shape, {"concentration": self.concentration.expand(
            shape), "rate": self.rate.expand(shape)})

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
