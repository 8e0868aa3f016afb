"""``Adadelta``: steps scaled by the ratio of running RMS of updates and of gradients."""
import optax

from ._transform import TransformOptimizer, gradient_parts
from ._validate import check_differentiable, check_lr, check_nonnegative

__all__ = ["Adadelta"]


class Adadelta(TransformOptimizer):
    r"""Adadelta, as ``torch.optim.Adadelta``.

    .. code-block:: python

        Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False)

    Each step: ``g = ±grad (+ weight_decay * p)``; ``v = rho*v + (1-rho)*g²``;
    ``d = sqrt(u + eps) / sqrt(v + eps) * g``; ``u = rho*u + (1-rho)*d²``; ``p -= lr*d``.
    Built from ``optax.scale_by_adadelta``, ``optax.add_decayed_weights`` and
    ``optax.scale_by_learning_rate``.

    Example::

        >>> opt = hookgrad.optim.Adadelta(model.parameters(), lr=1.0)
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(eps, "epsilon value")
        check_nonnegative(weight_decay, "weight_decay value")
        check_differentiable(differentiable)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    _value_static = ("weight_decay",)

    def _static(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _hyperparams(self, group):
        return {"lr": group["lr"], "rho": group["rho"], "eps": group["eps"],
                "weight_decay": group["weight_decay"]}

    @staticmethod
    def _transformation(static, lr, rho, eps, weight_decay):
        maximize, use_wd = static
        parts = gradient_parts(maximize, weight_decay if use_wd else None)
        parts.append(("adadelta", optax.scale_by_adadelta(rho=rho, eps=eps)))
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)

    _torch_names = {"square_avg": ("adadelta", "e_g"), "acc_delta": ("adadelta", "e_x")}

from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
