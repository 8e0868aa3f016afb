"""``Adamax``: Adam with the infinity norm in place of the second moment."""
import optax

from ._adam_family import AdamFamily, AdamMoments, check_adam_family, decay_parts

__all__ = ["Adamax"]


class Adamax(AdamMoments, AdamFamily):
    r"""Adamax, as ``torch.optim.Adamax``.

    .. code-block:: python

        Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
               foreach=None, *, maximize=False, differentiable=False, capturable=False)

    Each step: ``g = ±grad (+ weight_decay * p)``; ``m = b1*m + (1-b1)*g``,
    ``u = max(b2*u, |g| + eps)``; ``p -= lr/(1-b1ᵗ) * m/u``. Built from
    ``optax.scale_by_adamax``, ``optax.add_decayed_weights`` and
    ``optax.scale_by_learning_rate``.

    Example::

        >>> opt = hookgrad.optim.Adamax(model.parameters(), lr=2e-3)
    """
    _moments = ("adamax", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        betas = check_adam_family(lr, betas, eps, weight_decay, differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    @staticmethod
    def _transformation(static, lr, b1, b2, eps, weight_decay):
        parts = decay_parts(static, weight_decay,
                            ("adamax", optax.scale_by_adamax(b1, b2, eps)))
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
