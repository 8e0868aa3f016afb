"""``NAdam``: Adam with Nesterov momentum and PyTorch's momentum-decay schedule."""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from ._adam_family import AdamFamily, check_adam_family, decay_parts
from ._validate import check_nonnegative

__all__ = ["NAdam"]


class ScaleByNAdamState(NamedTuple):
    mu_product: jax.Array  # prod of the momentum coefficients mu_1 .. mu_t
    mu: optax.Updates      # first moment (PyTorch's exp_avg)
    nu: optax.Updates      # second moment (exp_avg_sq)


def scale_by_nadam_schedule(b1, b2, eps, mu_t, mu_next,
                            bias_correction2) -> optax.GradientTransformation:
    """Dozat's NAdam with a momentum coefficient ``mu_t`` that changes per step:
    ``((1-mu_t)/(1-Π mu) g + mu_{t+1}/(1-Π mu·mu_{t+1}) m) / (sqrt(v/c2) + eps)``.

    NOTE: ``optax.scale_by_adam(nesterov=True)`` (``optax.nadam``) weights ``g`` and
    ``m`` by ``(1-b1)/(1-b1ᵗ)`` and ``b1/(1-b1ᵗ⁺¹)``; PyTorch's weights come from the
    ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))`` schedule and its running product
    (state ``mu_product``), which no optax transformation keeps. This piece uses
    optax's moment primitives and keeps that product.
    """

    def init_fn(params):
        return ScaleByNAdamState(mu_product=jnp.ones([], jnp.result_type(mu_t)),
                                 mu=optax.tree.zeros_like(params),
                                 nu=optax.tree.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        mu = optax.tree.update_moment(updates, state.mu, b1, 1)
        nu = optax.tree.update_moment_per_elem_norm(updates, state.nu, b2, 2)
        prod = state.mu_product * mu_t
        c_grad = (1.0 - mu_t) / (1.0 - prod)
        c_mom = mu_next / (1.0 - prod * mu_next)
        out = jax.tree.map(
            lambda g, m, v: (c_grad * g + c_mom * m) / (jnp.sqrt(v / bias_correction2) + eps),
            updates, mu, nu)
        return out, ScaleByNAdamState(mu_product=prod, mu=mu, nu=nu)

    return optax.GradientTransformation(init_fn, update_fn)


class NAdam(AdamFamily):
    r"""NAdam, as ``torch.optim.NAdam``.

    .. code-block:: python

        NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
              momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
              maximize=False, capturable=False, differentiable=False)

    Each step ``t``: ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``; Adam's moments
    ``m``, ``v``; ``p -= lr ((1-mu_t)/(1-Π mu) g + mu_{t+1}/(1-Π mu · mu_{t+1}) m) /
    (sqrt(v/(1-b2ᵗ)) + eps)``. With ``decoupled_weight_decay`` (NAdamW) the decay
    shrinks ``p`` directly. The state keeps ``mu_product`` as PyTorch's does.

    Example::

        >>> opt = hookgrad.optim.NAdam(model.parameters(), lr=2e-3)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        betas = check_adam_family(lr, betas, eps, weight_decay, differentiable)
        check_nonnegative(momentum_decay, "momentum_decay value")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _hyperparams(self, group):
        return dict(super()._hyperparams(group), momentum_decay=group["momentum_decay"])

    @staticmethod
    def _derive(static, hp, count):
        hp = AdamFamily._derive(static, hp, count)
        b1, b2 = hp["b1"], hp["b2"]
        decay = hp.pop("momentum_decay")
        step = jnp.asarray(count) + 1
        hp["mu_t"] = b1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        hp["mu_next"] = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        hp["bias_correction2"] = 1.0 - b2 ** step
        return hp

    @staticmethod
    def _transformation(static, lr, b1, b2, eps, weight_decay, mu_t, mu_next,
                        bias_correction2):
        core = ("nadam", scale_by_nadam_schedule(b1, b2, eps, mu_t, mu_next,
                                                 bias_correction2))
        parts = decay_parts(static, weight_decay, core)
        parts.append(("lr", optax.scale_by_learning_rate(lr)))
        return optax.named_chain(*parts)

    _torch_names = {"mu_product": ("nadam", "mu_product"), "exp_avg": ("nadam", "mu"),
                    "exp_avg_sq": ("nadam", "nu")}

    @staticmethod
    def _entry_shape(name, shape):
        return () if name == "mu_product" else shape


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
