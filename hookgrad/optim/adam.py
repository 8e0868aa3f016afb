"""``Adam``: adaptive moment estimation (with AMSGrad, L2 or decoupled weight decay)."""
import jax.numpy as jnp
import optax

from ._adam_family import AdamFamily, check_betas
from ._transform import gradient_parts, replace_part
from ._validate import check_differentiable, check_lr, check_nonnegative

__all__ = ["Adam"]


class Adam(AdamFamily):
    r"""Adam, as ``torch.optim.Adam``.

    .. code-block:: python

        Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
             *, foreach=None, maximize=False, capturable=False, differentiable=False,
             fused=None, decoupled_weight_decay=False)

    Each step: ``g = ±grad (+ weight_decay * p)``; ``m = b1*m + (1-b1)*g``,
    ``v = b2*v + (1-b2)*g²`` (AMSGrad: ``v_max = max(v_max, v)``);
    ``p -= lr/(1-b1ᵗ) * m / (sqrt(v)/sqrt(1-b2ᵗ) + eps)``. With
    ``decoupled_weight_decay`` the decay is ``p -= lr * weight_decay * p`` instead (AdamW).
    Built from ``optax.scale_by_adam`` / ``optax.scale_by_amsgrad``,
    ``optax.add_decayed_weights`` and ``optax.scale_by_learning_rate``.

    ``foreach``, ``capturable`` and ``fused`` are accepted and ignored.

    Example::

        >>> opt = hookgrad.optim.Adam(model.parameters(), lr=1e-3, amsgrad=True)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        check_lr(lr)
        check_nonnegative(eps, "epsilon value")
        betas = check_betas(betas)
        check_nonnegative(weight_decay, "weight_decay value")
        check_differentiable(differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _static(self, group):
        maximize, use_wd, decoupled = super()._static(group)
        return (maximize, bool(group["amsgrad"]), use_wd, decoupled)

    @staticmethod
    def _derive(static, hp, count):
        hp = AdamFamily._derive(static, hp, count)
        # AMSGrad as PyTorch: the max is over the raw second moment, divided afterwards by
        # sqrt(1 - b2^t): m̂ / (sqrt(v_max)/c + eps) == c * m̂ / (sqrt(v_max) + eps*c)
        hp["bc2_sqrt"] = (jnp.sqrt(1.0 - hp["b2"] ** (jnp.asarray(count) + 1)) if static[1]
                          else 1.0)
        return hp

    @staticmethod
    def _transformation(static, lr, b1, b2, eps, weight_decay, bc2_sqrt):
        maximize, amsgrad, use_wd, decoupled = static
        parts = gradient_parts(maximize, weight_decay if use_wd and not decoupled else None)
        if amsgrad:
            parts.append(("adam", optax.scale_by_amsgrad(b1, b2, eps=eps * bc2_sqrt,
                                                         bias_correction_nu=False)))
            parts.append(("bias_correction2", optax.scale(bc2_sqrt)))
        else:
            parts.append(("adam", optax.scale_by_adam(b1, b2, eps)))
        if use_wd and decoupled:
            parts.append(("weight_decay", optax.add_decayed_weights(weight_decay)))
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)

    @staticmethod
    def _to_torch(static, inner):
        adam = inner["adam"]
        out = {"exp_avg": adam.mu, "exp_avg_sq": adam.nu}
        if static[1]:
            out["max_exp_avg_sq"] = adam.nu_max
        return out

    @staticmethod
    def _from_torch(static, inner, d, count):
        fields = {"count": count}
        for torch_name, field in (("exp_avg", "mu"), ("exp_avg_sq", "nu"),
                                  ("max_exp_avg_sq", "nu_max")):
            if torch_name in d and (field != "nu_max" or static[1]):
                fields[field] = d[torch_name]
        return replace_part(inner, "adam", **fields)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
