"""``from_optax``: any optax ``GradientTransformation`` as a hookgrad optimizer."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from .._ops import tiered
from ._transform import _write_param
from .optimizer import Optimizer, _to_tensor

__all__ = ["OptaxOptimizer", "from_optax"]


def _optax_update(tx, mask, params, grads, state):
    updates, state = tx.update(list(grads), state, list(params))
    new = optax.apply_updates(list(params), updates)
    # parameters without a gradient keep their value (PyTorch skips them)
    return tuple(n if m else p for n, p, m in zip(new, params, mask)), state


class OptaxOptimizer(Optimizer):
    r"""An optimizer that applies an optax ``GradientTransformation`` to each parameter
    group (made by :func:`from_optax`).

    .. code-block:: python

        OptaxOptimizer(params, tx: optax.GradientTransformation)

    The transformation sees a group's parameters as a list (so whole-group transforms
    such as ``optax.clip_by_global_norm`` work); its state, one per group, is
    ``optimizer.optax_state``. Hyper-parameters live in ``tx`` (use
    ``optax.inject_hyperparams`` to change them; LR schedulers need ``group["lr"]`` and
    do not apply). A parameter whose ``.grad`` is None gets a zero gradient and keeps its
    value; a group where every ``.grad`` is None is skipped.
    """

    def __init__(self, params, tx):
        if not (hasattr(tx, "init") and hasattr(tx, "update")):
            raise TypeError("from_optax expects an optax.GradientTransformation, but got "
                            f"{type(tx).__name__}")
        self.tx = tx
        self.optax_state = []
        self._fns = {}
        super().__init__(params, {})

    def _setup_storage(self):
        self._fns = {}

    def __getstate__(self):
        d = super().__getstate__()
        d["tx"] = self.tx
        d["optax_state"] = list(self.optax_state)
        return d

    def __setstate__(self, state):
        self.tx = state["tx"]
        self.optax_state = list(state["optax_state"])
        super().__setstate__(state)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        super().add_param_group(param_group)
        try:
            state = self.tx.init([p._data for p in self.param_groups[-1]["params"]])
        except Exception:
            self.param_groups.pop()
            raise
        self.optax_state.append(state)

    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Apply the transformation once to every group with at least one gradient.

        .. code-block:: python

            step(closure: Callable[[], float] | None = None) -> float | None
        """
        return self._step_with(closure, self._apply_updates)

    def _apply_updates(self):
        results = []
        for i, group in enumerate(self.param_groups):
            params = group["params"]
            mask = tuple(p.grad is not None for p in params)
            if not any(mask):
                continue
            fn = self._fns.get(mask)
            if fn is None:
                fn = self._fns[mask] = tiered.jit(functools.partial(_optax_update, self.tx,
                                                                    mask))
            grads = tuple(p.grad._data if m else jnp.zeros_like(p._data)
                          for p, m in zip(params, mask))
            new, state = fn(tuple(p._data for p in params), grads, self.optax_state[i])
            results.append((i, params, mask, new, state))
        for i, params, mask, new, state in results:  # write only once all succeeded
            for p, m, arr in zip(params, mask, new):
                if m:
                    _write_param(p, arr)
            self.optax_state[i] = state

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout with an empty ``"state"`` plus ``"optax_state"``: the list of
        per-group optax states (pytrees of arrays)."""
        sd = super().state_dict()
        sd["optax_state"] = list(self.optax_state)
        return sd

    def _install(self, state, param_groups, state_dict):
        saved = state_dict.get("optax_state")
        if saved is None:
            raise KeyError("optax_state")
        if len(saved) != len(self.optax_state):
            raise ValueError("loaded state dict has a different number of parameter groups")
        new = []
        for cur, s in zip(self.optax_state, saved):
            if jax.tree_util.tree_structure(cur) != jax.tree_util.tree_structure(s):
                raise ValueError("loaded optax state does not match the structure of this "
                                 "optimizer's transformation state")
            new.append(jax.tree_util.tree_map(
                lambda c, v: _to_tensor(v)._data.astype(jnp.asarray(c).dtype), cur, s))
        super()._install(state, param_groups, state_dict)
        self.optax_state = new

    def _state_arrays(self):
        return {"state": list(self.optax_state), "hparams": []}

    def _load_state_arrays(self, tree):
        self.optax_state = list(tree["state"])


def from_optax(params, tx: optax.GradientTransformation) -> OptaxOptimizer:
    r"""Wrap an optax ``GradientTransformation`` as a hookgrad optimizer.

    .. code-block:: python

        from_optax(params, tx: optax.GradientTransformation) -> OptaxOptimizer

    ``params``: Tensors or parameter-group dicts, as for any optimizer. The learning rate
    is part of ``tx``.

    Example::

        >>> tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
        >>> opt = hookgrad.optim.from_optax(model.parameters(), tx)
        >>> opt.zero_grad(); loss.backward(); opt.step()
    """
    return OptaxOptimizer(params, tx)
