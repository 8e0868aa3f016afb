"""``Rprop``: resilient backpropagation, steps of per-coordinate sizes adapted by the signs
of successive gradients."""
import jax
import jax.numpy as jnp
import optax

from ._transform import TransformOptimizer, gradient_parts
from ._validate import check_differentiable, check_lr

__all__ = ["Rprop"]


def scale_by_rprop(lr, eta_minus, eta_plus, min_step, max_step) -> optax.GradientTransformation:
    """PyTorch's Rprop step ``sign(g') * size`` (``g'``: the gradient, zero where its sign
    flipped), in optax's ``ScaleByRpropState`` (``prev_updates`` holds ``g'``).

    ``optax.scale_by_rprop`` returns each step the update of the step before (nothing on the
    first) and does not clamp sizes whose gradient sign is 0, so it cannot give PyTorch's
    trajectory.
    """

    def init_fn(params):
        return optax.ScaleByRpropState(step_sizes=optax.tree.full_like(params, lr),
                                       prev_updates=optax.tree.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        sign = jax.tree.map(lambda g, prev: jnp.sign(g * prev), updates, state.prev_updates)
        sizes = jax.tree.map(
            lambda sg, size: jnp.clip(size * jnp.where(sg > 0, eta_plus, jnp.where(
                sg < 0, eta_minus, 1.0)), min_step, max_step), sign, state.step_sizes)
        grads = jax.tree.map(lambda sg, g: jnp.where(sg < 0, 0.0, g), sign, updates)
        steps = jax.tree.map(lambda g, size: jnp.sign(g) * size, grads, sizes)
        return steps, optax.ScaleByRpropState(step_sizes=sizes, prev_updates=grads)

    return optax.GradientTransformation(init_fn, update_fn)


class Rprop(TransformOptimizer):
    r"""Rprop, as ``torch.optim.Rprop``.

    .. code-block:: python

        Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
              foreach=None, maximize=False, differentiable=False)

    Each step, per coordinate: where ``g * prev > 0`` the step size grows by ``etas[1]``,
    where ``< 0`` it shrinks by ``etas[0]`` and this step skips the coordinate; sizes stay
    within ``step_sizes``; ``p -= sign(g) * size``. Its state is optax's
    ``ScaleByRpropState``.

    Example::

        >>> opt = hookgrad.optim.Rprop(model.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_differentiable(differentiable)
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _static(self, group):
        return (bool(group["maximize"]),)

    def _hyperparams(self, group):
        (eta_minus, eta_plus), (lo, hi) = group["etas"], group["step_sizes"]
        return {"lr": group["lr"], "eta_minus": eta_minus, "eta_plus": eta_plus,
                "min_step": lo, "max_step": hi}

    @staticmethod
    def _transformation(static, lr, eta_minus, eta_plus, min_step, max_step):
        parts = gradient_parts(static[0])
        parts.append(("rprop", scale_by_rprop(lr, eta_minus, eta_plus, min_step, max_step)))
        parts.append(("descend", optax.scale(-1.0)))
        return optax.named_chain(*parts)

    _torch_names = {"prev": ("rprop", "prev_updates"), "step_size": ("rprop", "step_sizes")}

from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
