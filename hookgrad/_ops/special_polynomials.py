"""The orthogonal polynomials of ``torch.special``: Chebyshev (four kinds, and shifted to
``[0, 1]``), Hermite (physicists' and probabilists'), Laguerre and Legendre, each
``p(x, n)`` for an integer degree ``n`` (a Tensor or a number; negative degrees give 0),
evaluated by its three-term recurrence. As in PyTorch they have no derivative: their results
never require grad.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, to_tensor_like, with_out


def _recurrence(first, step, shift=False):
    """``fwd(x, n)``: ``p_n(x)`` from ``p_0 = 1``, ``p_1 = first(x)`` and
    ``p_{k+1} = step(k, x, p_{k-1}, p_k)``, up to the largest degree asked for."""
    def fwd(x, n):
        x, n = jnp.asarray(x), jnp.asarray(n)
        dtype = jnp.result_type(x, n)
        if not jnp.issubdtype(dtype, jnp.inexact):
            dtype = jnp.result_type(float)
        x, n = jnp.broadcast_arrays(x.astype(dtype), n)
        n = n.astype(jnp.int32)  # a fractional degree is truncated, as PyTorch casts it
        if shift:
            x = 2 * x - 1
        p1 = first(x)
        res = jnp.where(n == 0, jnp.ones_like(x), jnp.where(n == 1, p1, jnp.zeros_like(x)))

        def body(k, carry):
            prev, cur, res = carry
            nxt = step(k.astype(dtype), x, prev, cur)
            return cur, nxt, jnp.where(n == k + 1, nxt, res)
        top = jnp.max(n, initial=1) if n.size else 1
        return jax.lax.fori_loop(1, top, body, (jnp.ones_like(x), p1, res))[2]
    return fwd


def _cheb(k, x, prev, cur):
    return 2 * x * cur - prev


_POLYNOMIALS = {
    "chebyshev_polynomial_t": (lambda x: x, _cheb, "Chebyshev polynomial of the first kind"),
    "chebyshev_polynomial_u": (lambda x: 2 * x, _cheb, "Chebyshev polynomial of the second "
                                                       "kind"),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, _cheb, "Chebyshev polynomial of the third "
                                                           "kind"),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, _cheb, "Chebyshev polynomial of the fourth "
                                                           "kind"),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x, p, c: 2 * x * c - 2 * k * p,
                             "physicists' Hermite polynomial"),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, c: x * c - k * p,
                              "probabilists' Hermite polynomial"),
    "laguerre_polynomial_l": (lambda x: 1 - x,
                              lambda k, x, p, c: ((2 * k + 1 - x) * c - k * p) / (k + 1),
                              "Laguerre polynomial"),
    "legendre_polynomial_p": (lambda x: x, lambda k, x, p, c: ((2 * k + 1) * x * c - k * p)
                              / (k + 1), "Legendre polynomial"),
}


def _public(name, op, what):
    def fn(x, n) -> Tensor:
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments "
                            f"- got ({type(x).__name__}, {type(n).__name__}), but expected one "
                            "of:\n * (Tensor x, Tensor n, *, Tensor out = None)\n * (Number x, "
                            "Tensor n, *, Tensor out = None)\n * (Tensor x, Number n, *, "
                            "Tensor out = None)\n")
        return apply(op, (to_tensor_like(x), to_tensor_like(n)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(input, n, *, out=None)``: the {what} of degree ``n`` at "
                  "``input`` (either may be a number; no derivative).")
    return with_out(fn)


def _make():
    out = {}
    for name, (first, step, what) in _POLYNOMIALS.items():
        out[name] = _public(name, defop(f"special_{name}", _recurrence(first, step), None),
                            what)
        if name.startswith("chebyshev"):
            shifted = "shifted_" + name
            out[shifted] = _public(shifted, defop(f"special_{shifted}", _recurrence(
                first, step, shift=True), None), "shifted " + what + " (on ``[0, 1]``)")
    return out


POLYNOMIALS = _make()  # name -> public function
