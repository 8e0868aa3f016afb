"""``ASGD``: averaged stochastic gradient descent (Polyak and Juditsky, 1992)."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from ._transform import TransformOptimizer, gradient_parts
from ._validate import check_differentiable, check_lr, check_nonnegative

__all__ = ["ASGD"]


class ASGDState(NamedTuple):
    eta: jax.Array      # this step's step size (PyTorch's ``eta``, per parameter)
    mu: jax.Array       # this step's averaging weight (``mu``)
    ax: optax.Updates   # the running average of the iterates (``ax``)


def scale_by_asgd(lr, lambd, alpha, t0, step) -> optax.GradientTransformation:
    """PyTorch's ASGD step as an update: ``p' = p (1 - lambd eta) - eta g``; then
    ``ax += mu (p' - ax)`` (``ax = p'`` while ``mu == 1``), and the next step's
    ``eta = lr / (1 + lambd lr t)^alpha``, ``mu = 1 / max(1, t - t0)`` (``t``: ``step``).

    optax has no averaged SGD; ``eta`` and ``mu`` are state (as PyTorch keeps them):
    ``eta`` follows the ``lr`` of the step before, so an LR schedule acts a step late.
    """

    def init_fn(params):
        dtype = jax.tree.leaves(params)[0].dtype
        return ASGDState(eta=jnp.asarray(lr, dtype), mu=jnp.ones([], dtype),
                         ax=optax.tree.zeros_like(params))

    def update_fn(updates, state, params):
        eta, mu = state.eta, state.mu
        new = jax.tree.map(lambda p, g: p * (1.0 - lambd * eta) - eta * g, params, updates)
        ax = jax.tree.map(lambda a, p: jnp.where(mu != 1.0, a + (p - a) * mu, p),
                          state.ax, new)
        out = jax.tree.map(jnp.subtract, new, params)
        next_eta = (lr / (1.0 + lambd * lr * step) ** alpha).astype(eta.dtype)
        next_mu = (1.0 / jnp.maximum(1.0, step - t0)).astype(mu.dtype)
        return out, ASGDState(eta=next_eta, mu=next_mu, ax=ax)

    return optax.GradientTransformation(init_fn, update_fn)


class ASGD(TransformOptimizer):
    r"""Averaged stochastic gradient descent, as ``torch.optim.ASGD``.

    .. code-block:: python

        ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
             maximize=False, differentiable=False, capturable=False)

    Each step ``t``: ``g = ±grad (+ weight_decay * p)``; ``p = p (1 - lambd*eta) - eta*g``;
    ``ax = ax + mu (p - ax)``; then ``eta = lr / (1 + lambd*lr*t)^alpha`` and
    ``mu = 1 / max(1, t - t0)``. The state holds ``step``, ``eta``, ``mu`` and ``ax`` (the
    averaged parameters) under PyTorch's names.

    Example::

        >>> opt = hookgrad.optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_nonnegative(weight_decay, "weight_decay value")
        check_differentiable(differentiable)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    _value_static = ("weight_decay",)

    def _static(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _hyperparams(self, group):
        return {k: group[k] for k in ("lr", "lambd", "alpha", "t0", "weight_decay")}

    @staticmethod
    def _derive(static, hp, count):
        return dict(hp, step=jnp.asarray(count) + 1)

    @staticmethod
    def _transformation(static, lr, lambd, alpha, t0, weight_decay, step):
        maximize, use_wd = static
        parts = gradient_parts(maximize, weight_decay if use_wd else None)
        parts.append(("asgd", scale_by_asgd(lr, lambd, alpha, t0, step)))
        return optax.named_chain(*parts)

    @staticmethod
    def _entry_shape(name, shape):
        return () if name in ("eta", "mu") else shape

    _torch_names = {"eta": ("asgd", "eta"), "mu": ("asgd", "mu"), "ax": ("asgd", "ax")}

from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
