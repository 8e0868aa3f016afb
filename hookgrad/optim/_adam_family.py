"""What PyTorch's Adam family (``Adam``, ``AdamW``, ``NAdam``, ``RAdam``, ``Adamax``)
shares: argument checks, group options, and the weight-decay/maximize parts around their
optax core."""
from __future__ import annotations

from typing import Any

import optax

from .._tensor import Tensor
from ._transform import TransformOptimizer, gradient_parts, replace_part
from ._validate import check_differentiable, check_lr, check_nonnegative


def check_betas(betas) -> tuple[float, float]:
    b1, b2 = betas
    if not 0.0 <= b1 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {b1}")
    if not 0.0 <= b2 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {b2}")
    if not ((isinstance(b1, float) and isinstance(b2, float))
            or (isinstance(b1, Tensor) and isinstance(b2, Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas):
        if isinstance(b, Tensor) and b.numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(b.item() if isinstance(b, Tensor) else b for b in betas)


def check_adam_family(lr, betas, eps, weight_decay, differentiable) -> tuple[float, float]:
    """The argument checks PyTorch's Adam variants share (its order and wording)."""
    check_lr(lr)
    check_nonnegative(eps, "epsilon value")
    betas = check_betas(betas)
    check_nonnegative(weight_decay, "weight_decay value")
    check_differentiable(differentiable)
    return betas


def decay_parts(static, weight_decay, core) -> list[tuple[str, optax.GradientTransformation]]:
    """``[maximize], [L2 weight decay], core, [decoupled weight decay]`` as named parts;
    ``static`` starts with ``(maximize, use_weight_decay, decoupled)``."""
    maximize, use_wd, decoupled = static[:3]
    parts = gradient_parts(maximize, weight_decay if use_wd and not decoupled else None)
    parts.append(core)
    # decoupled: lr * (update + wd * p) == PyTorch's p *= 1 - lr*wd before the update
    if use_wd and decoupled:
        parts.append(("weight_decay", optax.add_decayed_weights(weight_decay)))
    return parts


class AdamMoments:
    """``_to_torch`` / ``_from_torch`` for an optimizer whose state is one optax part with
    ``mu``, ``nu`` and ``count``: ``_moments`` names the part and PyTorch's name of the
    second moment (``exp_avg_sq``; Adamax's ``exp_inf``). RAdam, Adamax, SparseAdam."""
    _moments = ("adam", "exp_avg_sq")

    @classmethod
    def _to_torch(cls, static, inner) -> dict[str, Any]:
        part, second = cls._moments
        return {"exp_avg": inner[part].mu, second: inner[part].nu}

    @classmethod
    def _from_torch(cls, static, inner, d, count) -> Any:
        part, second = cls._moments
        fields = {"count": count}
        if "exp_avg" in d:
            fields["mu"] = d["exp_avg"]
        if second in d:
            fields["nu"] = d[second]
        return replace_part(inner, part, **fields)


class AdamFamily(TransformOptimizer):
    """A ``TransformOptimizer`` with ``betas``, ``eps``, ``weight_decay`` (L2, or
    decoupled where the group says so) and ``maximize``; ``_derive`` splits ``betas``
    into ``b1``, ``b2``."""

    _value_static = ("weight_decay",)

    def _static(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0),
                bool(group.get("decoupled_weight_decay", False)))

    def _hyperparams(self, group):
        return {"lr": group["lr"], "betas": group["betas"], "eps": group["eps"],
                "weight_decay": group["weight_decay"]}

    @staticmethod
    def _derive(static, hp, count):
        hp = dict(hp)
        hp["b1"], hp["b2"] = hp.pop("betas")
        return hp
