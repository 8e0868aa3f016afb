"""``RMSprop``: scaling by a running average of squared gradients (optionally centered)."""
import optax

from ._transform import TransformOptimizer, gradient_parts, replace_part
from ._validate import check_differentiable, check_lr, check_nonnegative

__all__ = ["RMSprop"]


class RMSprop(TransformOptimizer):
    r"""RMSprop, as ``torch.optim.RMSprop``.

    .. code-block:: python

        RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                centered=False, capturable=False, foreach=None, maximize=False,
                differentiable=False)

    Each step: ``g = ±grad (+ weight_decay * p)``; ``v = alpha*v + (1-alpha)*g²``;
    ``d = sqrt(v) + eps`` (centered: ``a = alpha*a + (1-alpha)*g``,
    ``d = sqrt(v - a²) + eps``); with momentum ``b = momentum*b + g/d``, ``p -= lr*b``,
    else ``p -= lr * g/d``. Built from ``optax.scale_by_rms`` / ``optax.scale_by_stddev``
    (``eps_in_sqrt=False``: PyTorch adds eps outside the root), ``optax.trace`` and
    ``optax.scale_by_learning_rate``.

    Example::

        >>> opt = hookgrad.optim.RMSprop(model.parameters(), lr=1e-2, centered=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        check_nonnegative(eps, "epsilon value")
        check_nonnegative(momentum, "momentum value")
        check_nonnegative(weight_decay, "weight_decay value")
        check_nonnegative(alpha, "alpha value")
        check_differentiable(differentiable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    _value_static = ("momentum", "weight_decay")

    def _static(self, group):
        return (bool(group["maximize"]), bool(group["centered"]), bool(group["momentum"] > 0),
                bool(group["weight_decay"] != 0))

    def _hyperparams(self, group):
        return {"lr": group["lr"], "alpha": group["alpha"], "eps": group["eps"],
                "weight_decay": group["weight_decay"], "momentum": group["momentum"]}

    @staticmethod
    def _transformation(static, lr, alpha, eps, weight_decay, momentum):
        maximize, centered, use_momentum, use_wd = static
        parts = gradient_parts(maximize, weight_decay if use_wd else None)
        scale = optax.scale_by_stddev if centered else optax.scale_by_rms
        parts.append(("rms", scale(decay=alpha, eps=eps, eps_in_sqrt=False)))
        if use_momentum:
            parts.append(("momentum", optax.trace(decay=momentum)))
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)

    @staticmethod
    def _to_torch(static, inner):
        out = {"square_avg": inner["rms"].nu}
        if static[2]:
            out["momentum_buffer"] = inner["momentum"].trace
        if static[1]:
            out["grad_avg"] = inner["rms"].mu
        return out

    @staticmethod
    def _from_torch(static, inner, d, count):
        fields = {}
        if "square_avg" in d:
            fields["nu"] = d["square_avg"]
        if static[1] and "grad_avg" in d:
            fields["mu"] = d["grad_avg"]
        if fields:
            inner = replace_part(inner, "rms", **fields)
        if static[2] and "momentum_buffer" in d:
            inner = replace_part(inner, "momentum", trace=d["momentum_buffer"])
        return inner


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
