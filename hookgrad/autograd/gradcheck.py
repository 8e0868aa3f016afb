"""``gradcheck`` and ``gradgradcheck``: analytical Jacobians against finite differences.

Unlike PyTorch, the check always runs in float64 (JAX's x64 mode is switched on for its
duration and the inputs are copied to float64), so float32 inputs need no conversion.
"""
from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from ..testing import _gradients as _t

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails."""


def _diff_positions(inputs):
    diff = [i for i, a in enumerate(inputs) if isinstance(a, Tensor) and a.requires_grad
            and (a.dtype.is_floating_point or a.dtype.is_complex)]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    return diff


def _analytic_jacobians(func, xs, diff):
    from . import grad
    outs = _t.float_outputs(func(*xs))
    jac = [[np.zeros((o.numel(), xs[i].numel())) for i in diff] for o in outs]
    live = [k for k, o in enumerate(outs) if o.requires_grad]
    for k in live:
        o = outs[k]
        for e in range(o.numel()):
            onehot = np.zeros(o.numel())
            onehot[e] = 1.0
            v = Tensor._wrap(jnp.asarray(onehot.reshape(o.shape), jnp.float64))
            gs = grad([o], [xs[i] for i in diff], [v], retain_graph=True, allow_unused=True)
            for col, g in enumerate(gs):
                if g is not None:
                    jac[k][col][e, :] = np.asarray(g._data, np.float64).reshape(-1)
    return jac


def _forward_jacobians(func, xs, diff, numeric):
    """The Jacobians forward-mode AD gives: one ``jvp`` per input element, its tangent a
    one-hot Tensor, as PyTorch's gradcheck computes them with ``check_forward_ad``."""
    from . import forward_ad as fwAD
    jac = [[np.zeros_like(n) for n in row] for row in numeric]
    for col, i in enumerate(diff):
        x = xs[i]
        for e in range(x.numel()):
            onehot = np.zeros(x.numel())
            onehot[e] = 1.0
            tangent = Tensor._wrap(jnp.asarray(onehot.reshape(x.shape), x._data.dtype))
            with fwAD.dual_level():
                args = list(xs)
                args[i] = fwAD.make_dual(x.detach(), tangent)
                outs = _t.float_outputs(func(*args))
                tans = [fwAD.unpack_dual(o).tangent for o in outs]
            for k, t in enumerate(tans):
                if t is not None:
                    jac[k][col][:, e] = np.asarray(t._data, np.float64).reshape(-1)
    return jac


def _compare(analytic, numeric, diff, rtol, atol, mode=""):
    for k in range(len(numeric)):
        for col, i in enumerate(diff):
            a, n = analytic[k][col], numeric[k][col]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian {mode}mismatch for output {k:d} with respect to input {i:d},\n"
                    f"numerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n")


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def gradcheck(func: Callable[..., Any], inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3,
              raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
              check_grad_dtypes=False, check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None) -> bool:
    """Check the gradients of ``func`` w.r.t. its Tensor inputs that require grad.

    ::

        gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True)

    Every entry of the analytical Jacobian (one backward per output element) must be
    within ``atol + rtol * |numerical|`` of the central-difference one; with
    ``check_forward_ad=True`` so must the one forward-mode AD gives (one ``jvp`` per
    input element, through :mod:`hookgrad.autograd.forward_ad`). Inputs are
    evaluated in float64. Returns ``True``; on a mismatch raises ``GradcheckError``
    (a ``RuntimeError``) or, with ``raise_exception=False``, returns ``False``.

    Example::

        >>> x = hookgrad.randn(3, requires_grad=True)
        >>> hookgrad.autograd.gradcheck(lambda x: x.exp() * x, (x,))
        True
    """
    if check_batched_forward_grad:
        raise NotImplementedError("gradcheck: check_batched_forward_grad is not supported by "
                                  "hookgrad (it needs vmap over forward-mode AD)")
    if not (check_backward_ad or check_forward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    inputs = _as_tuple(inputs)
    diff = _diff_positions(inputs)
    try:
        with _t.x64():
            xs = _t.promote(inputs, set(diff))
            outs, numeric = _t.numeric_jacobians(func, xs, diff, eps)
            if check_backward_ad:
                _compare(_analytic_jacobians(func, xs, diff), numeric, diff, rtol, atol)
            if check_forward_ad and outs:
                _compare(_forward_jacobians(func, xs, diff, numeric), numeric, diff, rtol, atol,
                         "computed with forward mode ")
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _fmt(a):
    return np.array2string(a, precision=4, max_line_width=100, threshold=64)


def gradgradcheck(func: Callable[..., Any], inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5,
                  rtol=1e-3, gen_non_contig_grad_outputs=False, raise_exception=True,
                  nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False) -> bool:
    """Check second derivatives: :func:`gradcheck` of
    ``(inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs,
    create_graph=True)``.

    ::

        gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001)

    ``grad_outputs`` defaults to random tensors in ``[-1, 1)`` that require grad.
    """
    from . import grad
    if check_fwd_over_rev:
        # NOTE: saved tensors do not carry forward-mode tangents into backward yet
        raise NotImplementedError("gradgradcheck: check_fwd_over_rev (forward-mode AD over "
                                  "backward) is not supported by hookgrad")
    inputs = _as_tuple(inputs)
    diff = _diff_positions(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _t.float_outputs(func(*inputs))
        grad_outputs = tuple(
            Tensor._wrap(jnp.asarray(rng.uniform(-1, 1, o.shape), o._data.dtype)).requires_grad_()
            for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def new_func(*args):
        xs, vs = args[:n_in], args[n_in:]
        outs = _t.float_outputs(func(*xs))
        pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        if not pairs:
            return ()
        gs = grad([o for o, _ in pairs], [xs[i] for i in diff], [v for _, v in pairs],
                  create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


class _CallableModule(types.ModuleType):
    """``hookgrad.autograd.gradcheck`` is this module once something imported it by path
    (``from hookgrad.autograd.gradcheck import GradcheckError``); calling it still runs
    :func:`gradcheck`, as ``torch.autograd.gradcheck(...)`` does."""

    def __call__(self, *args, **kwargs):
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
