"""Module backward hooks, and the extent of a functional call's backward, in functional mode.

``hook_identity`` is the functional form of the identity op that
``hookgrad._autograd.backward_hook.BackwardHook`` puts around a module's inputs and
outputs: a ``custom_vjp`` identity whose backward runs the post-hooks of its
``BackwardHookFunctionBackward`` node, as the engine runs the eager node's. So one
``BackwardHook`` carries the module hooks of both modes.

``mark_backward_begin``/``mark_backward_end`` bracket JAX's backward of a
``functional_call`` with a graph task (``engine.graph_task``), so that
``current_graph_task_id()``, ``queue_callback`` and ``ModTracker.is_bw`` work in hooks as
they do eagerly.
"""
import weakref

import jax.numpy as jnp

from .hooks import FunctionalNode, _identity, _inexact, _wrap, open_tasks
from .._tensor import Tensor
from .._engine import engine
from .._autograd import hooks as _rules
from .._autograd.backward_hook import NODE_NAME, as_hook_view
from .._autograd.graph import _Node


# --------------------------------------------------------------------------- module hooks


class _HookIdentityNode(FunctionalNode):
    """``BackwardHookFunctionBackward`` in functional mode: its post-hooks run in the
    backward of the identity, with PyTorch's arguments (``grad_inputs`` with zeros where no
    gradient came, ``grad_outputs`` with None)."""

    __slots__ = ()
    register_hook = _Node.register_hook  # the identity itself is the boundary


def hook_identity(tensors):
    """The identity op of ``BackwardHook`` in functional mode. Returns (node, new tensors)."""
    node = _HookIdentityNode(None, (), [], [], name=NODE_NAME)
    meta = [(t._data.shape, t._data.dtype) for t in tensors]
    pos = [i for i, t in enumerate(tensors) if t._requires_grad and _inexact(t._data.dtype)]

    def on_grads(gs):
        go = [None] * len(meta)
        for i, g in zip(pos, gs):
            go[i] = None if g is None else _wrap(g)
        gi = [_wrap(jnp.zeros(shape, dt)) if g is None else g
              for g, (shape, dt) in zip(go, meta)]
        gi = _rules.run_after(node, gi, go)
        return [None if gi[i] is None else gi[i]._data for i in pos]

    arrays = _identity(tuple(tensors[i]._data for i in pos), on_grads, always=True)
    new = []
    for t in tensors:
        n = Tensor._wrap(t._data)
        n._base = t  # a tensor that takes no gradient stays an alias of the input
        new.append(n)
    for i, arr in zip(pos, arrays):
        n = new[i] = Tensor._wrap(arr, node, i)
        n._requires_grad = True
        as_hook_view(n, tensors[i], i)  # not to be written in place, as eagerly
    node._outs = tuple(weakref.ref(t) for t in new)
    node._out_data = tuple(t._data for t in new)
    return node, new


# --------------------------------------------------------------------------- backward extent


def mark_backward_end(tensors):
    """Wrap the arrays of ``tensors`` (the substituted parameters and array arguments: the
    first values of the forward, so the last of the backward) in an identity whose
    backward ends the graph task: queued callbacks run, then it is closed."""
    tensors = [t for t in tensors if _inexact(t._data.dtype)]
    if not tensors:
        return

    def on_grads(gs):
        if open_tasks.scopes:
            open_tasks.scopes.pop().close()
        return gs

    new = _identity(tuple(t._data for t in tensors), on_grads)
    for t, arr in zip(tensors, new):
        t._data = arr


def mark_backward_begin(tensors):
    """Wrap the outputs' arrays in an identity whose backward (the first to run) opens
    the graph task."""
    tensors = [t for t in tensors if _inexact(t._data.dtype)]
    if not tensors:
        return

    def on_grads(gs):
        while open_tasks.scopes:
            open_tasks.scopes.pop().close(ok=False)  # a backward that never reached its end
        scope = engine.graph_task(keep_graph=True)
        scope.open()
        open_tasks.scopes.append(scope)
        return gs

    new = _identity(tuple(t._data for t in tensors), on_grads)
    for t, arr in zip(tensors, new):
        t._data = arr
