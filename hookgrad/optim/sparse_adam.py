"""``SparseAdam``: Adam applied only to the rows a gradient touches (PyTorch's optimizer for
``nn.Embedding(sparse=True)``)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from .._tensor import Tensor
from ._adam_family import AdamMoments
from ._blocks import Params
from ._transform import TransformOptimizer, gradient_parts

__all__ = ["SparseAdam"]


def _touched(g):
    """The rows (slices along dim 0) where ``g`` is not all zero, broadcastable to ``g``:
    the indices of the sparse gradient PyTorch's embedding backward would give."""
    if g.ndim <= 1:
        return g != 0
    return jnp.any(g != 0, axis=tuple(range(1, g.ndim)), keepdims=True)


def scale_by_sparse_adam(b1, b2, eps, step_size) -> optax.GradientTransformation:
    """PyTorch's SparseAdam step on the touched rows: ``m += (1-b1)(g - m)``,
    ``v += (1-b2)(g² - v)`` and the update ``step_size * m / (sqrt(v) + eps)`` there;
    other rows keep their moments and get no update (``step_size`` carries the bias
    corrections). Its state is optax's ``ScaleByAdamState``."""

    def init_fn(params):
        return optax.ScaleByAdamState(count=jnp.zeros([], jnp.int32),
                                      mu=optax.tree.zeros_like(params),
                                      nu=optax.tree.zeros_like(params))

    def update_fn(updates, state, params=None):
        del params
        out, mus, nus = [], [], []
        for g, m, v in zip(updates, state.mu, state.nu):
            rows = _touched(g)
            m = jnp.where(rows, m + (g - m) * (1.0 - b1), m)
            v = jnp.where(rows, v + (g * g - v) * (1.0 - b2), v)
            out.append(jnp.where(rows, step_size * m / (jnp.sqrt(v) + eps), 0.0).astype(g.dtype))
            mus.append(m), nus.append(v)
        return Params(out), optax.ScaleByAdamState(count=optax.safe_increment(state.count),
                                                   mu=Params(mus), nu=Params(nus))

    return optax.GradientTransformation(init_fn, update_fn)


class SparseAdam(AdamMoments, TransformOptimizer):
    r"""SparseAdam, as ``torch.optim.SparseAdam``: Adam that updates only the rows the
    gradient touches (``nn.Embedding(sparse=True)``'s looked-up rows), keeping the other
    rows' moments.

    .. code-block:: python

        SparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False)

    hookgrad's gradients are dense: a row counts as touched where the gradient is not all
    zero there (PyTorch's sparse gradient of an embedding lists the looked-up rows, so a
    looked-up row whose gradient is exactly zero is updated by PyTorch and left alone
    here), and a dense gradient is accepted where PyTorch raises. Each step ``t``, on the
    touched rows: ``g = ±grad``; ``m = b1 m + (1-b1) g``; ``v = b2 v + (1-b2) g²``;
    ``p -= lr sqrt(1-b2ᵗ)/(1-b1ᵗ) * m / (sqrt(v) + eps)``. ``state[p]["step"]`` is a
    Python int, as in PyTorch.

    Example::

        >>> emb = hookgrad.nn.Embedding(1000, 16, sparse=True)
        >>> opt = hookgrad.optim.SparseAdam(emb.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def _static(self, group):
        return (bool(group.get("maximize", False)),)

    def _hyperparams(self, group):
        return {"lr": group["lr"], "betas": group["betas"], "eps": group["eps"]}

    @staticmethod
    def _derive(static, hp, count):
        hp = dict(hp)
        b1, b2 = hp.pop("betas")
        step = jnp.asarray(count) + 1
        hp["step_size"] = hp.pop("lr") * jnp.sqrt(1.0 - b2 ** step) / (1.0 - b1 ** step)
        hp["b1"], hp["b2"] = b1, b2
        return hp

    @staticmethod
    def _transformation(static, eps, step_size, b1, b2):
        parts = gradient_parts(static[0])
        parts.append(("adam", scale_by_sparse_adam(b1, b2, eps, step_size)))
        parts.append(("descend", optax.scale(-1.0)))
        return optax.named_chain(*parts)

    def _export(self, slot):
        out = super()._export(slot)
        if not isinstance(slot.state.count, jax.core.Tracer):  # a traced one stays an array
            out["step"] = int(jax.device_get(slot.state.count))
        return out


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
