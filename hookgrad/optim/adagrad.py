"""``Adagrad``: per-coordinate steps scaled by the root of the summed squared gradients."""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax

from ._transform import TransformOptimizer, gradient_parts
from ._validate import check_differentiable, check_lr, check_nonnegative

__all__ = ["Adagrad"]


def scale_by_root_sum_of_squares(initial_accumulator_value: float,
                                 eps: float) -> optax.GradientTransformation:
    """``g / (sqrt(s) + eps)`` with ``s += g²``: PyTorch's Adagrad denominator.

    ``optax.scale_by_rss`` puts eps inside the root (``g / sqrt(s + eps)``, and 0 where
    ``s == 0``), which differs from PyTorch's for small sums or a large eps; the state is
    optax's ``ScaleByRssState``.
    """

    def init_fn(params):
        return optax.ScaleByRssState(
            sum_of_squares=optax.tree.full_like(params, initial_accumulator_value))

    def update_fn(updates, state, params=None):
        del params
        sums = jax.tree.map(lambda g, s: s + g * g, updates, state.sum_of_squares)
        updates = jax.tree.map(lambda g, s: g / (jnp.sqrt(s) + eps), updates, sums)
        return updates, optax.ScaleByRssState(sum_of_squares=sums)

    return optax.GradientTransformation(init_fn, update_fn)


class Adagrad(TransformOptimizer):
    r"""Adagrad, as ``torch.optim.Adagrad``.

    .. code-block:: python

        Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None)

    Each step ``t``: ``g = ±grad (+ weight_decay * p)``; ``s += g²``;
    ``p -= lr / (1 + (t-1)*lr_decay) * g / (sqrt(s) + eps)``. As in PyTorch, every
    parameter's state (``step`` 0, ``sum`` = ``initial_accumulator_value``) exists from
    construction on.

    Example::

        >>> opt = hookgrad.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=1e-3)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        check_lr(lr)
        check_nonnegative(lr_decay, "lr_decay value")
        check_nonnegative(weight_decay, "weight_decay value")
        check_nonnegative(initial_accumulator_value, "initial_accumulator_value value")
        check_nonnegative(eps, "epsilon value")
        check_differentiable(differentiable)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        static = self._static(group)
        hp = self._group_hp(len(self.param_groups) - 1, group)
        if group["params"]:
            for block in self._fresh_blocks(static, hp, group["params"]):
                self._set_block(block)

    _value_static = ("weight_decay",)

    def _static(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _hyperparams(self, group):
        return {"lr": group["lr"], "lr_decay": group["lr_decay"], "eps": group["eps"],
                "weight_decay": group["weight_decay"],
                "initial_accumulator_value": group["initial_accumulator_value"]}

    @staticmethod
    def _derive(static, hp, count):
        hp = dict(hp)
        hp["lr_decay"] = 1.0 / (1.0 + jnp.asarray(count) * hp["lr_decay"])
        return hp

    @staticmethod
    def _transformation(static, lr, lr_decay, eps, weight_decay, initial_accumulator_value):
        # lr_decay arrives as _derive's factor 1 / (1 + (t-1) * lr_decay)
        maximize, use_wd = static
        parts = gradient_parts(maximize, weight_decay if use_wd else None)
        parts.append(("sum", scale_by_root_sum_of_squares(initial_accumulator_value, eps)))
        parts.append(("lr_decay", optax.scale(lr_decay)))
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)

    _torch_names = {"sum": ("sum", "sum_of_squares")}

from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
