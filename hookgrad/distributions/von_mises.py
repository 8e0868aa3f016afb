"""``VonMises(loc, concentration)``: the circular normal distribution of an angle."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import jax
import numpy as np

from .. import random
from .._factory import tensor
from .._ops.pointwise import where
from .._tensor import Size
from . import constraints
from ._simple import _CentredAtLoc
from .distribution import Distribution, broadcast_all
from .utils import lazy_property

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4: I_0 and I_1 below 3.75 as polynomials in (x / 3.75)^2
# (I_1 times x), above as e^x / sqrt(x) times polynomials in 3.75 / x
_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
          [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411])
_LARGE = ([0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
           0.02635537, -0.01647633, 0.00392377],
          [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
           -0.02895312, 0.01787654, -0.00420059])


def _poly(y, coefs):
    result = coefs[-1]
    for c in reversed(coefs[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """``log I_order(x)`` for ``x > 0`` and ``order`` 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    small = _poly((x / 3.75) ** 2, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _poly(3.75 / x, _LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


def _rejection_sample(loc, kappa, proposal_r, rng):
    """Best & Fisher (1979), in float64 on the host (float32 stalls for small kappa)."""
    x = np.zeros(loc.shape)
    done = np.zeros(loc.shape, dtype=bool)
    while not done.all():
        u1, u2, u3 = rng.random((3,) + loc.shape)
        z = np.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = kappa * (proposal_r - f)
        with np.errstate(divide="ignore"):
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        x = np.where(accept & ~done, np.sign(u3 - 0.5) * np.arccos(f), x)
        done |= accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(_CentredAtLoc, Distribution):
    r"""The von Mises distribution of an angle (radians; ``loc`` and values are read
    modulo ``2 pi``), as ``torch.distributions.VonMises``.

    .. code-block:: python

        VonMises(loc, concentration, validate_args=None)

    ``mean`` and ``variance`` are the circular ones. ``sample`` uses Best and Fisher's
    rejection sampler in float64, seeded from hookgrad's global key.
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> VonMises:
        shape = Size(batch_shape)
        return self._new_expanded(VonMises, shape, {
            "loc": self.loc.expand(shape), "concentration": self.concentration.expand(shape)})

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _proposal_r(self) -> np.ndarray:
        kappa = np.asarray(self.concentration.detach().numpy(), dtype=np.float64)
        tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        # below 1e-5: the second-order expansion around 0
        return np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        seed = int(jax.random.randint(random.next_key(), (), 0, 2 ** 31 - 1))
        rng = np.random.default_rng(seed)
        loc = np.broadcast_to(self.loc.detach().numpy().astype(np.float64), shape)
        kappa = np.broadcast_to(self.concentration.detach().numpy().astype(np.float64), shape)
        r = np.broadcast_to(self._proposal_r, shape)
        return tensor(_rejection_sample(loc, kappa, r, rng).tolist(), dtype=self.loc.dtype)

    @lazy_property
    def variance(self) -> Tensor:
        c = self.concentration
        return 1 - (_log_modified_bessel_fn(c, order=1)
                    - _log_modified_bessel_fn(c, order=0)).exp()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
