"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""
import jax.numpy as jnp
import optax

from ._transform import TransformOptimizer, gradient_parts, replace_part
from ._validate import check_differentiable, check_lr, check_nonnegative

__all__ = ["SGD"]


class SGD(TransformOptimizer):
    r"""Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    .. code-block:: python

        SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
            maximize=False, foreach=None, differentiable=False, fused=None)

    Each step: ``g = ±grad + weight_decay * p``; with momentum
    ``b = momentum * b + (1 - dampening) * g`` (``b = g`` on the first step) and
    ``g = g + momentum * b`` (Nesterov) or ``g = b``; then ``p -= lr * g``. Built from
    ``optax.add_decayed_weights``, ``optax.trace`` and ``optax.scale``.

    ``foreach`` and ``fused`` are accepted and ignored (the update is one jitted program).

    Example::

        >>> opt = hookgrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    _keeps_step = False  # PyTorch's SGD keeps only ``momentum_buffer``

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check_lr(lr)
        check_nonnegative(momentum, "momentum value")
        check_nonnegative(weight_decay, "weight_decay value")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_differentiable(differentiable)
        super().__init__(params, defaults)

    _value_static = ("momentum", "weight_decay")

    def _static(self, group):
        return (bool(group["maximize"]), bool(group["nesterov"]), bool(group["momentum"] != 0),
                bool(group["weight_decay"] != 0))

    def _hyperparams(self, group):
        return {"lr": group["lr"], "momentum": group["momentum"],
                "dampening": group["dampening"], "weight_decay": group["weight_decay"]}

    @staticmethod
    def _derive(static, hp, count):
        # PyTorch's first momentum step copies the gradient into the buffer undampened
        hp = dict(hp)
        hp["dampening"] = jnp.where(jnp.asarray(count) == 0, 0.0, hp["dampening"])
        return hp

    @staticmethod
    def _transformation(static, lr, momentum, dampening, weight_decay):
        maximize, nesterov, use_momentum, use_wd = static
        parts = gradient_parts(maximize, weight_decay if use_wd else None)
        if use_momentum:
            parts.append(("dampening", optax.scale(1.0 - dampening)))
            parts.append(("momentum", optax.trace(decay=momentum, nesterov=nesterov)))
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)

    @staticmethod
    def _to_torch(static, inner):
        if not static[2]:
            return {}
        return {"momentum_buffer": inner["momentum"].trace}

    @staticmethod
    def _from_torch(static, inner, d, count):
        if static[2] and "momentum_buffer" in d:
            inner = replace_part(inner, "momentum", trace=d["momentum_buffer"])
        return inner

    @staticmethod
    def _count_from_torch(static, d):
        # a stored buffer means the first (undampened) momentum step is behind us
        return 1 if "momentum_buffer" in d else 0


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
