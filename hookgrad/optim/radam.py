"""``RAdam``: Adam with the variance of its adaptive step rectified (Liu et al., 2019)."""
import jax.numpy as jnp
import numpy as np
import optax

from ._adam_family import AdamFamily, AdamMoments, check_adam_family, decay_parts

__all__ = ["RAdam"]

# NOTE: PyTorch rectifies only where rho_t > 5; optax.scale_by_radam tests
# rho_t >= threshold, so the threshold is the next float32 above 5.
_RHO_THRESHOLD = float(np.nextafter(np.float32(5.0), np.float32(6.0)))


class RAdam(AdamMoments, AdamFamily):
    r"""RAdam, as ``torch.optim.RAdam``.

    .. code-block:: python

        RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
              decoupled_weight_decay=False, *, foreach=None, maximize=False,
              capturable=False, differentiable=False)

    Adam's moments; with ``rho_inf = 2/(1-b2) - 1`` and
    ``rho_t = rho_inf - 2t b2ᵗ/(1-b2ᵗ)``, the step is ``lr * r_t * m̂ * sqrt(1-b2ᵗ) /
    (sqrt(v) + eps)`` where ``rho_t > 5`` (``r_t`` the variance rectification) and
    ``lr * m̂`` before. Built from ``optax.scale_by_radam``,
    ``optax.add_decayed_weights`` and ``optax.scale_by_learning_rate``.

    Example::

        >>> opt = hookgrad.optim.RAdam(model.parameters(), lr=1e-3)
    """
    _moments = ("radam", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        betas = check_adam_family(lr, betas, eps, weight_decay, differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    @staticmethod
    def _derive(static, hp, count):
        hp = AdamFamily._derive(static, hp, count)
        # NOTE: PyTorch adds eps to sqrt(v), optax to sqrt(v / (1-b2^t)):
        # m̂ sqrt(c) / (sqrt(v) + eps) == m̂ / (sqrt(v/c) + eps/sqrt(c)), c = 1 - b2^t
        hp["eps"] = hp["eps"] / jnp.sqrt(1.0 - hp["b2"] ** (jnp.asarray(count) + 1))
        return hp

    @staticmethod
    def _transformation(static, lr, b1, b2, eps, weight_decay):
        core = ("radam", optax.scale_by_radam(b1, b2, eps, threshold=_RHO_THRESHOLD))
        parts = decay_parts(static, weight_decay, core)
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
