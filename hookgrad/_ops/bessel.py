"""The Bessel functions of ``torch.special`` that JAX lacks (``bessel_j0/j1``,
``bessel_y0/y1``, ``modified_bessel_k0/k1`` and their scaled forms, and the Airy function
``airy_ai`` made of them), with those it has (``modified_bessel_i0/i1``) and
``spherical_bessel_j0``. As in PyTorch they have no
derivative: their results never require grad.

Each is computed from an integral representation by a quadrature that converges
geometrically for it, and, for large arguments, from Hankel's asymptotic expansion:

- ``J_n(x) = (1/2pi) int_0^2pi cos(n t - x sin t) dt``: a periodic integrand, so the
  trapezoidal rule on 64 points is exact to rounding for ``|x| <= 25``;
- ``Y_n(x) = (1/pi) int_0^pi sin(x sin t - n t) dt - (1/pi) int_0^inf (e^{nt} + (-1)^n
  e^{-nt}) e^{-x sinh t} dt``, by Gauss-Legendre rules;
- ``K_n(x) = int_0^inf e^{-x cosh t} cosh(n t) dt``: a doubly exponentially decaying
  integrand, so the trapezoidal rule (step 1/4, finer for large ``x``) is exact to rounding.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .dispatch import apply
from .special import _real
from .registry import defop, with_out

_LARGE = 25.0  # beyond it, Hankel's expansion is accurate to float64 rounding
_THETA = np.arange(64) * (2 * np.pi / 64)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(64)
_K_STEPS = np.arange(321)  # up to t = 80: e^{-x cosh 80} underflows for x > 1e-33
_K_W = np.ones(321)
_K_W[0] = 0.5


def _float(x):
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.result_type(float))


def _hankel(n, x):
    """``(P, Q, chi)`` of Hankel's expansion for order ``n`` at ``x > 0``."""
    mu, z = 4.0 * n * n, 8.0 * x
    p, q, term = 1.0, 0.0, 1.0
    for k in range(1, 12):
        term = term * (mu - (2 * k - 1) ** 2) / (k * z)
        if k % 2:
            q = q + (term if k % 4 == 1 else -term)
        else:
            p = p + (term if k % 4 == 0 else -term)
    return p, q, x - (n / 2 + 0.25) * math.pi


def _bessel_j(n, x):
    x = _float(x)
    ax = jnp.abs(x)
    t = jnp.asarray(_THETA, x.dtype)
    near = jnp.mean(jnp.cos(n * t - jnp.minimum(ax, _LARGE)[..., None] * jnp.sin(t)), -1)
    far_x = jnp.maximum(ax, _LARGE)
    p, q, chi = _hankel(n, far_x)
    far = jnp.sqrt(2 / (math.pi * far_x)) * (p * jnp.cos(chi) - q * jnp.sin(chi))
    out = jnp.where(ax <= _LARGE, near, far)
    return jnp.where(x < 0, -out, out) if n % 2 else out


def _gauss(fn, top, dt):
    """``int_0^top fn(t) dt`` by 64-point Gauss-Legendre (``top``: one bound per element,
    with a trailing axis)."""
    t = (jnp.asarray(_GL_X, dt) + 1) * top / 2
    return jnp.sum(fn(t) * jnp.asarray(_GL_W, dt), -1) * top[..., 0] / 2


def _tail_top(x):
    return jnp.arcsinh(60 / x)  # e^{-x sinh t} is below e^{-60} beyond


def _bessel_y(n, x):
    x = _float(x)
    xs = jnp.clip(x, 1e-30, _LARGE)[..., None]
    first = _gauss(lambda t: jnp.sin(xs * jnp.sin(t) - n * t), jnp.full_like(xs, math.pi),
                   x.dtype)
    second = _gauss(lambda t: (jnp.exp(n * t) + (-1) ** n * jnp.exp(-n * t))
                    * jnp.exp(-xs * jnp.sinh(t)), _tail_top(xs), x.dtype)
    far_x = jnp.maximum(x, _LARGE)
    p, q, chi = _hankel(n, far_x)
    far = jnp.sqrt(2 / (math.pi * far_x)) * (p * jnp.sin(chi) + q * jnp.cos(chi))
    out = jnp.where(x <= _LARGE, (first - second) / math.pi, far)
    return jnp.where(x < 0, jnp.nan, jnp.where(x == 0, -jnp.inf, out))


def _bessel_j_fractional(nu, x):
    """``J_nu(x)`` for ``x > 0`` and a fractional order ``nu``."""
    xs = jnp.clip(x, 1e-30, _LARGE)[..., None]
    first = _gauss(lambda t: jnp.cos(nu * t - xs * jnp.sin(t)), jnp.full_like(xs, math.pi),
                   x.dtype)
    second = _gauss(lambda t: jnp.exp(-xs * jnp.sinh(t) - nu * t), _tail_top(xs), x.dtype)
    far_x = jnp.maximum(x, _LARGE)
    p, q, chi = _hankel(nu, far_x)
    far = jnp.sqrt(2 / (math.pi * far_x)) * (p * jnp.cos(chi) - q * jnp.sin(chi))
    return jnp.where(x <= _LARGE, (first - math.sin(nu * math.pi) * second) / math.pi, far)


def _airy_ai(x):
    # Ai(x) = sqrt(x / 3) K_{1/3}(z) / pi for x > 0, and Ai(-x) = sqrt(x) (J_{1/3}(z) +
    # J_{-1/3}(z)) / 3, with z = 2/3 |x|^{3/2}
    x = _float(x)
    z = 2 / 3 * jnp.abs(x) ** 1.5
    right = jnp.sqrt(jnp.abs(x) / 3) / math.pi * jnp.exp(-z) * _bessel_k(1 / 3, z, True)
    left = jnp.sqrt(jnp.abs(x)) / 3 * (_bessel_j_fractional(1 / 3, z)
                                       + _bessel_j_fractional(-1 / 3, z))
    ai0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))
    return jnp.where(x > 0, right, jnp.where(x < 0, left, jnp.asarray(ai0, x.dtype)))


def _bessel_k(n, x, scaled):
    x = _float(x)
    xs = jnp.maximum(x, 0)[..., None]
    # the integrand narrows as e^{-x t^2 / 2} for large x: the step shrinks with it
    h = jnp.minimum(0.25, 0.8 / jnp.sqrt(jnp.maximum(xs, 1e-30)))
    t = jnp.asarray(_K_STEPS, x.dtype) * h
    decay = xs * (jnp.cosh(t) - 1) if scaled else xs * jnp.cosh(t)
    out = jnp.sum(jnp.exp(-decay) * jnp.cosh(n * t) * jnp.asarray(_K_W, x.dtype), -1) * h[..., 0]
    return jnp.where(x < 0, jnp.nan, jnp.where(x == 0, jnp.inf, out))


def _spherical_j0(x):
    x = _float(x)
    small = jnp.abs(x) < 1e-4
    safe = jnp.where(small, 1.0, x)
    return jnp.where(small, 1 - x * x / 6, jnp.sin(safe) / safe)


_FUNCTIONS = {
    "bessel_j0": (lambda x: _bessel_j(0, x), "Bessel function of the first kind of order 0"),
    "bessel_j1": (lambda x: _bessel_j(1, x), "Bessel function of the first kind of order 1"),
    "bessel_y0": (lambda x: _bessel_y(0, x), "Bessel function of the second kind of order 0"),
    "bessel_y1": (lambda x: _bessel_y(1, x), "Bessel function of the second kind of order 1"),
    "modified_bessel_i0": (lambda x: jss.i0(_float(x)), "modified Bessel function of the "
                                                        "first kind of order 0"),
    "modified_bessel_i1": (lambda x: jss.i1(_float(x)), "modified Bessel function of the "
                                                        "first kind of order 1"),
    "modified_bessel_k0": (lambda x: _bessel_k(0, x, False), "modified Bessel function of the "
                                                              "second kind of order 0"),
    "modified_bessel_k1": (lambda x: _bessel_k(1, x, False), "modified Bessel function of the "
                                                              "second kind of order 1"),
    "scaled_modified_bessel_k0": (lambda x: _bessel_k(0, x, True), "scaled modified Bessel "
                                  "function of the second kind of order 0, ``exp(x) K_0(x)``"),
    "scaled_modified_bessel_k1": (lambda x: _bessel_k(1, x, True), "scaled modified Bessel "
                                  "function of the second kind of order 1, ``exp(x) K_1(x)``"),
    "airy_ai": (_airy_ai, "Airy function ``Ai``"),
    "spherical_bessel_j0": (_spherical_j0, "spherical Bessel function of the first kind of "
                                           "order 0, ``sin(x) / x``"),
}


def _public(name, op, what):
    def fn(input):
        return apply(op, (input,))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}(input, *, out=None)``: the {what} (no derivative)."
    fn.__annotations__ = {"return": "Tensor"}
    return with_out(fn)


# PyTorch's CPU kernels (``bessel_j0_cpu``) have no complex form; refused where traced
BESSEL = {name: _public(name, defop(f"special_{name}", _real(f"{name}_cpu", fwd), None), what)
          for name, (fwd, what) in _FUNCTIONS.items()}  # name -> public function
