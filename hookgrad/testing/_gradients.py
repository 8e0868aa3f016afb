"""Gradient checking against finite differences, for op authors and tests.

:func:`check_grads` (in the spirit of HIPS autograd's) compares the gradients hookgrad's
tape computes with central finite differences. Both are evaluated in float64 (JAX's x64
mode is switched on for the duration of the check), so the comparison is not swamped by
float32 rounding; ``hookgrad.autograd.gradcheck`` and ``gradgradcheck`` are built on the
same machinery.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor

__all__ = ["check_grads"]


@contextlib.contextmanager
def x64() -> Iterator[None]:
    """JAX's 64-bit mode for the duration of the block (the previous mode after it)."""
    enable = getattr(jax, "enable_x64", None)
    if enable is None:  # older JAX
        from jax.experimental import enable_x64 as enable
    with enable(True):
        yield


def _is_float(t):
    return isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def promote(args, diff) -> list[Any]:
    """``args`` with the positions in ``diff`` as new float64 leaves requiring grad and the
    other floating Tensors as float64 constants. Call inside :func:`x64`."""
    out = []
    for i, a in enumerate(args):
        if i in diff or _is_float(a):
            arr = a._data if isinstance(a, Tensor) else a
            if jnp.iscomplexobj(arr):
                raise NotImplementedError("gradient checks of complex inputs are not supported")
            t = Tensor._wrap(jnp.asarray(np.asarray(arr), jnp.float64))
            if i in diff:
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(a)
    return out


def float_outputs(res) -> list[Tensor]:
    """The floating Tensors among ``fn``'s result (a Tensor or a sequence of them)."""
    return [o for o in _as_tuple(res) if _is_float(o)]


def _flat(t):
    return np.asarray(t._data, np.float64).reshape(-1)


def analytic_vjp(fn, args, diff, cotangents, create_graph=False) -> list[Tensor]:
    """Gradients of ``sum_k <cotangents[k], outputs[k]>`` w.r.t. ``args[i]``, i in ``diff``
    (zeros where an input is unused)."""
    from .._engine.backward import grad
    outs = float_outputs(fn(*args))
    inputs = [args[i] for i in diff]
    used = [(o, v) for o, v in zip(outs, cotangents) if o.requires_grad]
    if not used:
        return [Tensor._wrap(jnp.zeros_like(x._data)) for x in inputs]
    gs = grad([o for o, _ in used], inputs, [v for _, v in used], create_graph=create_graph,
              allow_unused=True)
    return [g if g is not None else Tensor._wrap(jnp.zeros_like(x._data))
            for g, x in zip(gs, inputs)]


def numeric_jacobians(fn, args, diff, eps) -> tuple[Any, Any]:
    """Central-difference Jacobians: ``J[k][i]`` of output k w.r.t. ``args[diff[i]]``, each
    an array of shape ``(out_k.numel(), arg.numel())``."""
    # grad mode stays on and the moved inputs require grad: ``fn`` may itself take
    # gradients (the order-2 check differentiates a function that calls autograd.grad)
    base = float_outputs(fn(*args))
    jac = [[np.zeros((o.numel(), args[i].numel())) for i in diff] for o in base]
    for col, i in enumerate(diff):
        x = args[i]
        flat = np.asarray(x._data, np.float64).reshape(-1)
        for j in range(flat.size):
            vals = []
            for step in (eps, -eps):
                pert = flat.copy()
                pert[j] += step
                moved = list(args)
                moved[i] = Tensor._wrap(jnp.asarray(pert.reshape(x.shape), jnp.float64))
                moved[i].requires_grad_(True)
                vals.append([_flat(o) for o in float_outputs(fn(*moved))])
            for k in range(len(base)):
                jac[k][col][:, j] = (vals[0][k] - vals[1][k]) / (2 * eps)
    return base, jac


def _fmt(a):
    return np.array2string(np.asarray(a), precision=6, max_line_width=100, threshold=40)


def _check_once(fn, args, diff, eps, atol, rtol, order, rng):
    outs, jac = numeric_jacobians(fn, args, diff, eps)
    if not outs:
        raise AssertionError("check_grads: fn returned no floating-point Tensor")
    vs = [Tensor._wrap(jnp.asarray(rng.standard_normal(o.shape), jnp.float64)) for o in outs]
    analytic = analytic_vjp(fn, args, diff, vs)
    for col, i in enumerate(diff):
        numeric = sum(_flat(v) @ jac[k][col] for k, v in enumerate(vs))
        got = _flat(analytic[col])
        if got.shape != numeric.shape or not np.allclose(got, numeric, rtol=rtol, atol=atol):
            err = np.max(np.abs(got - numeric)) if got.shape == numeric.shape else "shape"
            raise AssertionError(
                f"check_grads: order-{order} gradient w.r.t. argument {i} does not match "
                f"finite differences (max abs error {err}, atol={atol}, rtol={rtol})\n"
                f"  analytic (tape): {_fmt(got)}\n  numeric (float64 central differences, "
                f"eps={eps}): {_fmt(numeric)}")
    return vs


def check_grads(fn: Callable[..., Any], args, order: int = 1, modes=("rev",), eps=1e-6, atol=1e-5,
                rtol=1e-3) -> None:
    """Check hookgrad's gradients of ``fn`` at ``args`` against finite differences.

    ::

        check_grads(fn, args, order=1, modes=("rev",), eps=1e-6, atol=1e-5, rtol=1e-3)

    ``fn(*args)`` returns a Tensor or a tuple of Tensors. Its arguments that are Tensors
    requiring grad (all floating-point Tensor and array arguments when none does) are
    differentiated: for a random cotangent ``v``, the vector-Jacobian product the tape
    computes (``autograd.grad(out, args, v)``) must match the one from central
    differences of ``fn``, up to ``atol + rtol * |numeric|``. With ``order=2`` the same
    check is then run on ``args -> autograd.grad(fn(*args), args, v, create_graph=True)``
    (gradients of gradients), and so on. Everything is evaluated in float64.

    Raises ``AssertionError`` naming the argument and order on a mismatch.

    Example::

        >>> from hookgrad.testing import check_grads
        >>> check_grads(lambda x: (x.sin() * x).sum(), (hookgrad.randn(3),), order=2)
    """
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    for m in modes:
        if m == "fwd":
            raise NotImplementedError("check_grads: forward mode ('fwd') is not supported: "
                                      "hookgrad records a reverse-mode tape; use modes=('rev',)")
        if m != "rev":
            raise ValueError(f"check_grads: unknown mode {m!r} (expected 'rev')")
    if order < 1:
        raise ValueError(f"check_grads: order must be >= 1, got {order}")
    args = _as_tuple(args)
    diff = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    if not diff:
        diff = [i for i, a in enumerate(args)
                if _is_float(a) or (isinstance(a, (np.ndarray, jax.Array))
                                    and jnp.issubdtype(a.dtype, jnp.floating))]
    if not diff:
        raise ValueError("check_grads: no floating-point Tensor argument to differentiate")
    rng = np.random.default_rng(0)
    with x64():
        xs = promote(args, set(diff))
        _check_order(fn, xs, diff, order, eps, atol, rtol, rng, 1)


def _check_order(fn, xs, diff, order, eps, atol, rtol, rng, level):
    vs = _check_once(fn, xs, diff, eps, atol, rtol, level, rng)
    if level >= order:
        return

    def grad_fn(*args):
        return tuple(analytic_vjp(fn, args, diff, vs, create_graph=True))
    _check_order(grad_fn, xs, diff, order, eps, atol, rtol, rng, level + 1)
