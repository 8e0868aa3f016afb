"""``AdamW``: Adam with decoupled weight decay."""
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""AdamW, as ``torch.optim.AdamW``: Adam whose weight decay shrinks the parameters
    directly (``p -= lr * weight_decay * p``) instead of adding to the gradient.

    .. code-block:: python

        AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
              amsgrad=False, *, maximize=False, foreach=None, capturable=False,
              differentiable=False, fused=None)

    Built from ``optax.scale_by_adam`` followed by ``optax.add_decayed_weights`` and
    ``optax.scale_by_learning_rate`` (optax's ``adamw`` chain).

    Example::

        >>> opt = hookgrad.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
