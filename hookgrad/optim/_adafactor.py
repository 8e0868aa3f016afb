"""``Adafactor``: Adam-like steps from a factored second moment (Shazeer and Stern, 2018),
as PyTorch 2.13 computes them."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from .._tensor import Tensor
from ._blocks import Params
from ._transform import TransformOptimizer, gradient_parts

__all__ = ["Adafactor"]


class AdafactorState(NamedTuple):
    # per parameter: row and column factors for 2-D and more, else the full variance;
    # the entries a parameter does not have are None
    row_var: optax.Updates
    col_var: optax.Updates
    variance: optax.Updates


def _factored(p) -> bool:
    return p.ndim > 1


def _init_one(p):
    if _factored(p):
        return (jnp.zeros(p.shape[:-1] + (1,), p.dtype),
                jnp.zeros(p.shape[:-2] + (1,) + p.shape[-1:], p.dtype), None)
    return None, None, jnp.zeros_like(p)


def _rms(x):
    return jnp.sqrt(jnp.mean(x * x)) if x.size else jnp.zeros([], x.dtype)


def _update_one(p, g, row, col, var, *, lr, weight_decay, eps1, eps2, d, beta2_t, rho_t):
    """One parameter's step: the update to add, and its new factors."""
    eps1 = jnp.finfo(p.dtype).eps if eps1 is None else eps1
    alpha = jnp.maximum(eps2, _rms(p)) * rho_t  # from p before its weight decay
    if row is not None:
        row = row + beta2_t * (jnp.mean(g * g, axis=-1, keepdims=True) - row)
        col = col + beta2_t * (jnp.mean(g * g, axis=-2, keepdims=True) - col)
        estimate = row * col / jnp.maximum(jnp.mean(row, axis=-2, keepdims=True), eps1)
    else:
        var = var + beta2_t * (g * g - var)
        estimate = var
    u = jax.lax.rsqrt(jnp.maximum(estimate, eps1 * eps1)) * g
    denom = jnp.maximum(1.0, _rms(u) / d)
    return -lr * weight_decay * p - alpha / denom * u, (row, col, var)


def scale_by_pytorch_adafactor(lr, weight_decay, eps1, eps2, d, beta2_t,
                               rho_t) -> optax.GradientTransformation:
    """PyTorch's Adafactor step, weight decay included (it needs ``p`` before the decay).

    NOTE: ``optax.scale_by_factored_rms`` (``optax.adafactor``) differs from PyTorch's:
    it factors only dimensions of at least 128, adds ``eps`` to the squared gradient
    before averaging, uses ``decay_rate`` with a step offset, and clips before scaling by
    the parameter's RMS, so it cannot give PyTorch's trajectory.
    """
    hp = {"lr": lr, "weight_decay": weight_decay, "eps1": eps1, "eps2": eps2, "d": d,
          "beta2_t": beta2_t, "rho_t": rho_t}

    def init_fn(params):
        rows, cols, vars_ = zip(*map(_init_one, params))
        return AdafactorState(Params(rows), Params(cols), Params(vars_))

    def update_fn(updates, state, params):
        out, rows, cols, vars_ = [], [], [], []
        for p, g, r, c, v in zip(params, updates, *state):
            u, (r, c, v) = _update_one(p, g, r, c, v, **hp)
            out.append(u), rows.append(r), cols.append(c), vars_.append(v)
        return Params(out), AdafactorState(Params(rows), Params(cols), Params(vars_))

    return optax.GradientTransformation(init_fn, update_fn)


class Adafactor(TransformOptimizer):
    r"""Adafactor, as ``torch.optim.Adafactor``.

    .. code-block:: python

        Adafactor(params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                  weight_decay=0.0, *, foreach=None, maximize=False)

    Each step ``t``: ``G = ±grad``; ``b = t^beta2_decay``; ``rho = min(lr, 1/sqrt(t))``;
    ``alpha = max(eps2, RMS(p)) * rho``; ``p *= 1 - lr*weight_decay``. For a parameter of
    2 or more dimensions the row and column means of ``G²`` are averaged (``row_var``,
    ``col_var``, weight ``b``) and ``V = row_var col_var / max(mean(row_var), eps1)``;
    otherwise ``V`` is the average of ``G²`` itself (``variance``). Then
    ``U = G / max(sqrt(V), eps1)`` and ``p -= alpha * U / max(1, RMS(U)/d)``. ``eps1``
    ``None`` is the machine epsilon of the parameter's dtype.

    Example::

        >>> opt = hookgrad.optim.Adafactor(model.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        for ok, what, value in ((0.0 <= lr, "Learning rate should be >= 0", lr),
                                (0.0 >= beta2_decay, "beta2_decay should be <= 0", beta2_decay),
                                (eps[0] is None or 0.0 <= eps[0], "epsilon1 should be >= 0",
                                 eps[0]),
                                (0.0 <= eps[1], "epsilon2 should be >= 0", eps[1]),
                                (1.0 <= d, "Clipping threshold d should be >= 1", d),
                                (0.0 <= weight_decay, "weight_decay should be >= 0",
                                 weight_decay)):
            if not ok:
                raise ValueError(f"{what} but is: {value}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _static(self, group):
        return (bool(group["maximize"]), group["eps"][0] is None)

    def _hyperparams(self, group):
        eps1, eps2 = group["eps"]
        return {"lr": group["lr"], "beta2_decay": group["beta2_decay"],
                "eps1": 0.0 if eps1 is None else eps1, "eps2": eps2, "d": group["d"],
                "weight_decay": group["weight_decay"]}

    @staticmethod
    def _derive(static, hp, count):
        hp = dict(hp)
        step = jnp.asarray(count) + 1.0
        hp["beta2_t"] = step ** hp.pop("beta2_decay")
        hp["rho_t"] = jnp.minimum(hp["lr"], jax.lax.rsqrt(step))
        return hp

    @staticmethod
    def _transformation(static, lr, eps1, eps2, d, weight_decay, beta2_t, rho_t):
        maximize, machine_eps = static
        parts = gradient_parts(maximize)
        parts.append(("adafactor", scale_by_pytorch_adafactor(
            lr, weight_decay, None if machine_eps else eps1, eps2, d, beta2_t, rho_t)))
        return optax.named_chain(*parts)

    @staticmethod
    def _entry_shape(name, shape):
        if name == "row_var":
            return shape[:-1] + (1,)
        if name == "col_var":
            return shape[:-2] + (1,) + shape[-1:]
        return shape

    _torch_names = {name: ("adafactor", name) for name in AdafactorState._fields}

from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
