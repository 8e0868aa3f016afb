"""Ops in functional mode: no tape; JAX's AD differentiates the arrays an op computes.

An op still gets a ``grad_fn`` (a :class:`~hookgrad._functional.hooks.FunctionalNode`),
so hooks can be placed on it; with saved-tensor hooks active it runs as the
``custom_vjp`` of ``hookgrad._functional.saved``.
"""
import weakref

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .._autograd.saved import hook_state
from . import saved
from .hooks import FunctionalNode, _gm, _inexact


def functional_apply(op, key, args, out):
    """``dispatch.apply`` when functional mode is on and an input requires grad."""
    from .._ops import views
    from .._ops.stages import inplace
    fn = op._fwd_cache.get(key) or op.forward_fn(key)
    record = _gm.enabled and op.node is not None
    arrs = [a._data if isinstance(a, Tensor) else a for a in args]
    if not record:
        # no_grad (or a non-differentiable op): eagerly no gradient flows, so none does here
        arrs = [jax.lax.stop_gradient(x) if isinstance(a, Tensor) and a._requires_grad
                and _inexact(x.dtype) else x for a, x in zip(args, arrs)]
    if out is not None:
        views.check_inplace(out, record)  # PyTorch's checks, as eagerly
    stack = hook_state.stack
    box = None
    if record and stack:
        res, box = saved.with_saved_hooks(op, key, fn, args, arrs, stack[-1])
    else:
        res = fn(*arrs)
    multi = isinstance(res, tuple)
    if out is not None:
        if record:
            res = _keep_history(out._data, res)
        inplace._write_inplace(out, res, op)
        outs = (out,)
    elif multi:
        outs = tuple(Tensor._wrap(r) for r in res)
    else:
        outs = (Tensor._wrap(res),)
    if record:
        node = FunctionalNode(op, key, args, arrs)
        node._outs = tuple(weakref.ref(t) for t in outs)
        node._out_data = tuple(t._data for t in outs)
        for i, t in enumerate(outs):
            if _inexact(t._data.dtype):
                t.grad_fn = node
                t._output_nr = i
                t._requires_grad = True
    if box is not None:
        saved.watch(box, args, outs, out)
    if multi and out is None:
        return outs
    return outs[0]


def _keep_history(old, res):
    """``res``, the value an in-place op writes over ``old``, still joined to ``old``.

    PyTorch's in-place node keeps an edge to the written tensor's history and passes it a
    gradient, zeros where the write covers it, so hooks there run (with zeros). A write
    that does not read ``old`` (``fill_``, ``copy_``, ``t[...] = v``) leaves JAX's AD only
    a symbolic zero for ``old``, and the custom_vjp boundaries of its hooks are skipped:
    a select of ``res`` everywhere keeps ``old`` an input, whose cotangent is real zeros
    (XLA folds the select away)."""
    if not isinstance(old, jax.core.Tracer) or isinstance(res, tuple) or \
            res.shape != old.shape or res.dtype != old.dtype or not _inexact(old.dtype):
        return res
    return jax.lax.select(jnp.ones(res.shape, bool), res, old)


