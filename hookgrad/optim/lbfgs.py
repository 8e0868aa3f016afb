"""``LBFGS``: limited-memory BFGS with PyTorch's inner loop and termination tests; the
two-loop recursion is optax's (the preconditioner of ``optax.scale_by_lbfgs``)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .._autograd.grad_mode import enable_grad
from ._line_search import strong_wolfe
from ._transform import _write_param
from ._validate import check_lr
from .optimizer import Optimizer

__all__ = ["LBFGS"]


@functools.lru_cache(maxsize=None)
def _two_loop():
    # NOTE: optax's L-BFGS preconditioner is private (the public scale_by_lbfgs also
    # stores every pair and scales the first step differently from PyTorch, which skips
    # pairs with y·s <= 1e-10); imported here so only LBFGS depends on its name.
    from optax._src.transform import _precondition_by_lbfgs
    return jax.jit(_precondition_by_lbfgs)


@jax.jit
def _ring_write(ring, idx, s, y, rho):
    stps, dirs, rhos = ring
    return stps.at[idx].set(s), dirs.at[idx].set(y), rhos.at[idx].set(rho)


class _History:
    """PyTorch's ``old_stps`` / ``old_dirs`` / ``ro`` lists (oldest first) mirrored in the
    fixed-size ring buffers optax's two-loop recursion reads (slot ``idx`` is the oldest
    once full; empty slots have weight 0 and leave the direction unchanged)."""

    def __init__(self, stps, dirs, ro, size, n, dtype):
        self.stps, self.dirs, self.ro = stps, dirs, ro
        self.size = size
        k = len(stps)
        pad = jnp.zeros((size - k, n), dtype)
        stack = (lambda xs: jnp.concatenate([jnp.stack([x._data for x in xs]), pad])
                 if k else jnp.zeros((size, n), dtype))
        rhos = jnp.zeros((size,), dtype)
        if k:
            rhos = rhos.at[:k].set(jnp.stack([jnp.asarray(r._data if isinstance(r, Tensor)
                                                          else r, dtype) for r in ro]))
        self.ring = (stack(stps), stack(dirs), rhos)
        self.idx = k % size

    def in_sync(self, stps, dirs, ro):
        return stps is self.stps and dirs is self.dirs and ro is self.ro

    def append(self, s, y, rho):
        if len(self.stps) == self.size:  # forget the oldest pair
            for xs in (self.stps, self.dirs, self.ro):
                xs.pop(0)
        self.stps.append(Tensor._wrap(s))
        self.dirs.append(Tensor._wrap(y))
        self.ro.append(Tensor._wrap(rho))
        self.ring = _ring_write(self.ring, self.idx, s, y, rho)
        self.idx = (self.idx + 1) % self.size

    def direction(self, g, h_diag):
        """``-H g`` for the inverse-Hessian approximation ``H`` of the stored pairs."""
        stps, dirs, rhos = self.ring
        return _two_loop()(-g, stps, dirs, rhos, h_diag, self.idx)


def _val(x):
    return x._data if isinstance(x, Tensor) else x


class LBFGS(Optimizer):
    r"""L-BFGS, as ``torch.optim.LBFGS``.

    .. code-block:: python

        LBFGS(params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
              tolerance_change=1e-9, history_size=100, line_search_fn=None)

    ``step(closure)`` runs up to ``max_iter`` iterations: the direction ``d = -H g`` from
    the last ``history_size`` curvature pairs (optax's two-loop recursion; a pair is kept
    when ``y·s > 1e-10``), a step ``t = lr`` (the first ever ``min(1, 1/|g|₁) * lr``),
    then ``closure`` again; it stops early as PyTorch does (gradient below
    ``tolerance_grad``, change below ``tolerance_change``, ``max_eval`` evaluations).
    With ``line_search_fn="strong_wolfe"`` the step length comes from a line search
    satisfying the strong Wolfe conditions (PyTorch's constants: ``c1=1e-4``,
    ``c2=0.9``, at most ``max_eval`` evaluations per ``step``). One parameter group only.

    Example::

        >>> opt = hookgrad.optim.LBFGS(model.parameters(), lr=1, history_size=10)
        >>> def closure():
        ...     opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); return loss
        >>> opt.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._history = None

    # compiled mode: step() refuses to run inside hookgrad.compile, so a compiled closure
    # (which may call zero_grad) has no optimizer state to lift, and must not write back
    # a stale copy of it while step() is between evaluations
    def _state_arrays(self):
        return {"state": [], "hparams": []}

    def _load_state_arrays(self, tree):
        pass

    def _flat_grad(self):
        return jnp.concatenate([
            (p.grad._data if p.grad is not None else jnp.zeros(p.shape, p._data.dtype))
            .reshape(-1) for p in self._params])

    def _add_to_params(self, t, d):
        offset = 0
        for p in self._params:
            n = p.numel()
            _write_param(p, p._data + t * d[offset:offset + n].reshape(p.shape).astype(
                p._data.dtype))
            offset += n

    def _history_for(self, state, group, n, dtype):
        h = self._history
        lists = (state["old_stps"], state["old_dirs"], state["ro"])
        if h is None or not h.in_sync(*lists) or h.size != group["history_size"]:
            h = self._history = _History(*lists, group["history_size"], n, dtype)
        return h

    def _line_search(self, evaluate, t, d, loss, g, gtd, tol_change, max_ls):
        """Strong-Wolfe search along ``d`` from the current parameters, which it leaves
        as they were; returns ``(loss, flat_grad, t, evaluations)`` at the step found."""
        start = [p._data for p in self._params]

        def at(step):
            self._add_to_params(step, d)
            f = float(evaluate())
            g_new = self._flat_grad()
            for p, arr in zip(self._params, start):
                _write_param(p, arr)
            return f, g_new, float(jnp.dot(g_new, d))

        return strong_wolfe(at, float(t), float(jnp.abs(d).max()), (0, loss, g, float(gtd)),
                            tolerance_change=tol_change, max_ls=max_ls)

    def step(self, closure: Callable[[], Any]) -> Any:
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` (required) zeroes the
        gradients, computes the loss, calls ``backward()`` and returns the loss.
        Returns the loss of the first evaluation."""
        group = self.param_groups[0]
        line_search = group["line_search_fn"]
        if line_search is not None and line_search != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")
        lr = float(_val(group["lr"]))
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]

        def evaluate():
            with enable_grad():
                return closure()

        orig_loss = evaluate()
        if isinstance(getattr(orig_loss, "_data", None), jax.core.Tracer):
            raise RuntimeError(
                "LBFGS.step(closure) cannot run inside hookgrad.compile: how many times it "
                "calls the closure depends on the loss values. Call opt.step(closure) "
                "eagerly; the closure itself may be a compiled function returning the loss")
        loss = float(orig_loss)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if float(jnp.abs(g).max()) <= tol_grad:
            return orig_loss
        d, t = _val(state.get("d")), _val(state.get("t"))
        h_diag, prev_g = _val(state.get("H_diag")), _val(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -g
                state["old_dirs"], state["old_stps"], state["ro"] = [], [], []
                h_diag = 1.0
            else:
                hist = self._history_for(state, group, g.shape[0], g.dtype)
                y, s = g - prev_g, d * t
                ys = jnp.dot(y, s)
                if float(ys) > 1e-10:  # curvature condition: keep the pair
                    hist.append(s, y, 1.0 / ys)
                    h_diag = ys / jnp.dot(y, y)
                d = hist.direction(g, jnp.asarray(h_diag, g.dtype))
            prev_g, prev_loss = g, loss
            # the first step ever is scaled by the gradient's size; later ones take lr
            t = (min(1.0, 1.0 / jnp.abs(g).sum()) * lr if state["n_iter"] == 1 else lr)
            gtd = jnp.dot(g, d)
            if float(gtd) > -tol_change:  # not a descent direction
                break
            if line_search is not None:
                loss, g, t, ls_evals = self._line_search(evaluate, t, d, loss, g, gtd,
                                                         tol_change, max_eval - evals)
                self._add_to_params(t, d)
                opt_cond = float(jnp.abs(g).max()) <= tol_grad
            else:
                self._add_to_params(t, d)
                ls_evals = 0
                if n_iter != max_iter:
                    loss = float(evaluate())
                    g = self._flat_grad()
                    ls_evals = 1
                opt_cond = ls_evals and float(jnp.abs(g).max()) <= tol_grad
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == max_iter or evals >= max_eval or opt_cond
                    or float(jnp.abs(d * t).max()) <= tol_change
                    or abs(loss - prev_loss) < tol_change):
                break
        wrap = (lambda x: Tensor._wrap(jnp.asarray(x)) if isinstance(x, jax.Array) else x)
        state.update(d=wrap(d), t=wrap(t), H_diag=wrap(h_diag), prev_flat_grad=wrap(prev_g),
                     prev_loss=prev_loss)
        return orig_loss


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
