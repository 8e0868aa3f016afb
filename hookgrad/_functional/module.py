"""Module backward hooks, and the extent of a functional call's backward, in functional mode.

``call_with_backward_hooks`` is what ``Module._call_impl`` calls in functional mode for a
module with full backward (pre-)hooks: the module's forward becomes one ``custom_vjp``.
``mark_backward_begin``/``mark_backward_end`` bracket JAX's backward of a
``functional_call`` with a stand-in graph task, so that ``current_graph_task_id()``,
``queue_callback`` and ``ModTracker.is_bw`` work in hooks as they do eagerly.
"""
import warnings
import weakref

import jax
import jax.numpy as jnp

from .. import random as _random
from . import hooks as _hooks_mod
from .hooks import FunctionalNode, _HookEnv, _identity, _inexact, _wrap
from .._tensor import Tensor, wrap_as
from .._autograd import grad_mode

_gm = grad_mode._state


# --------------------------------------------------------------------------- module hooks


_NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
    "register_full_backward_hook for more details.")


def call_with_backward_hooks(module, forward_fn, args, kwargs, bw_pre_hooks, bw_hooks):
    """Run ``forward_fn(*args, **kwargs)`` as one ``custom_vjp`` whose backward runs
    ``bw_pre_hooks`` (``hook(module, grad_output)``), the module's vjp, then ``bw_hooks``
    (``hook(module, grad_input, grad_output)``), with PyTorch's tuples: one entry per
    positional argument (None for non-Tensors) and per output Tensor."""
    if not _gm.enabled:
        return forward_fn(*args, **kwargs)
    tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    req = {i for i in tpos if args[i]._requires_grad}
    in_arrs = [args[i]._data for i in tpos]
    n_args = len(args)
    box = {}
    key_before = _random._state["key"]

    def g(*xs):
        new_args = list(args)
        for i, x in zip(tpos, xs):
            t = Tensor._wrap(x, _BW_NODE if i in req else None)
            t._requires_grad = i in req
            new_args[i] = t
        res = forward_fn(*new_args, **kwargs)
        single = isinstance(res, Tensor)
        items = (res,) if single else res
        if not isinstance(items, tuple):
            box["passthrough"] = res
            return []
        box["single"] = single
        box["items"] = [None if isinstance(v, Tensor) else v for v in items]
        box["types"] = [type(v) if isinstance(v, Tensor) else None for v in items]
        box["rg"] = [v._requires_grad if isinstance(v, Tensor) else False for v in items]
        return [v._data for v in items if isinstance(v, Tensor)]

    conv, consts = jax.closure_convert(g, *in_arrs)
    if _random._state["key"] is not key_before:
        # randomness drawn inside was traced from the key as it was; move the key on
        _random._state["key"] = jax.random.fold_in(key_before, 0x6B) if key_before is not None \
            else None
    if "passthrough" in box:
        warnings.warn("For backward hooks to be called, module output should be a Tensor or a "
                      f"tuple of Tensors but received {type(box['passthrough'])}", stacklevel=4)
        return forward_fn(*args, **kwargs)
    items = box["items"]
    opos = [i for i, v in enumerate(items) if v is None]
    n_x = len(in_arrs)
    from .._autograd.engine import _check_single

    @jax.custom_vjp
    def call(xs, cs):
        return conv(*xs, *cs)

    def fwd(xs, cs):
        out, pull = jax.vjp(lambda *a: conv(*a), *xs, *cs)
        return out, pull

    def bwd(pull, gouts):
        with _HookEnv():
            grad_output = [None] * len(items)
            for i, gg in zip(opos, gouts):
                grad_output[i] = _wrap(gg)
            grad_output = tuple(grad_output)
            for hook in bw_pre_hooks:
                res = hook(module, grad_output)
                if res is None:
                    continue
                if len(res) != len(grad_output):
                    raise RuntimeError("Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(res)}, but expected "
                                       f"{len(grad_output)}")
                grad_output = tuple(res)
            cts = pull([grad_output[i]._data if grad_output[i] is not None
                        else jnp.zeros_like(gg) for i, gg in zip(opos, gouts)])
            cx, cc = list(cts[:n_x]), list(cts[n_x:])
            if not req:
                warnings.warn(_NO_INPUT_GRAD_WARNING, stacklevel=2)
                gi = (None,) * n_args
                for hook in bw_hooks:
                    res = hook(module, gi, grad_output)
                    if res is not None and not (isinstance(res, tuple)
                                                and all(el is None for el in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for "
                                           "all gradients.")
                return cx, cc
            gi = [None] * n_args
            for k, i in enumerate(tpos):
                gi[i] = _wrap(cx[k]) if i in req else _wrap(jnp.zeros_like(cx[k]))
            gi = tuple(gi)
            for hook in bw_hooks:
                res = hook(module, gi, grad_output)
                if res is None:
                    continue
                if len(res) != len(gi):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(res)}, but expected {len(gi)}")
                gi = tuple(res)
            for k, i in enumerate(tpos):
                if i in req and gi[i] is not None:
                    new = gi[i]
                    if not isinstance(new, Tensor):
                        raise TypeError(f"expected Variable, but hook returned "
                                        f"'{type(new).__name__}'")
                    cx[k] = _check_single(_wrap(cx[k]), new, hook)._data
            return cx, cc

    call.defvjp(fwd, bwd)
    out_arrs = call(in_arrs, consts)
    node = FunctionalNode(None, (), [], [], name="BackwardHookFunctionBackward")
    result = list(items)
    outs = []
    for i, arr in zip(opos, out_arrs):
        t = wrap_as(box["types"][i], arr)
        if box["rg"][i]:
            t.grad_fn = node
            t._output_nr = len(outs)
            t._requires_grad = True
        result[i] = t
        outs.append(t)
    node._outs = tuple(weakref.ref(t) for t in outs)
    node._out_data = tuple(t._data for t in outs)
    if box["single"]:
        return result[0]
    return tuple(result)


_BW_NODE = FunctionalNode(None, (), [], [], name="BackwardHookFunctionBackward")


# --------------------------------------------------------------------------- backward extent


def _functional_task_cls():
    from .._autograd import engine

    class _FunctionalTask(engine.GraphTask):
        """Stands for eager's graph task while JAX runs a functional call's backward, so
        that ``current_graph_task_id()`` and ``queue_callback`` work in hooks."""
        __slots__ = ()
    return _FunctionalTask


_TASK_CLS = []


def _ensure_task():
    from .._autograd import engine
    if not engine._local.tasks:
        if not _TASK_CLS:
            _TASK_CLS.append(_functional_task_cls())
        engine._local.tasks.append(_TASK_CLS[0](True))


_hooks_mod.ensure_task[0] = _ensure_task


def mark_backward_end(tensors):
    """Wrap the arrays of ``tensors`` (the substituted parameters and array arguments: the
    first values of the forward, so the last of the backward) in an identity whose
    backward ends the pseudo graph task: queued callbacks run, then it is popped."""
    tensors = [t for t in tensors if _inexact(t._data.dtype)]
    if not tensors:
        return

    def on_grads(gs):
        from .._autograd import engine
        tasks = engine._local.tasks
        if tasks and _TASK_CLS and isinstance(tasks[-1], _TASK_CLS[0]):
            task = tasks[-1]
            try:
                i = 0
                while i < len(task.callbacks):
                    task.callbacks[i]()
                    i += 1
            finally:
                tasks.pop()
                for fn in task.cleanups:
                    fn()
        return gs

    new = _identity(tuple(t._data for t in tensors), on_grads)
    for t, arr in zip(tensors, new):
        t._data = arr


def mark_backward_begin(tensors):
    """Wrap the outputs' arrays in an identity whose backward (the first to run) starts
    the pseudo graph task."""
    tensors = [t for t in tensors if _inexact(t._data.dtype)]
    if not tensors:
        return

    def on_grads(gs):
        from .._autograd import engine
        if not _TASK_CLS:
            _TASK_CLS.append(_functional_task_cls())
        tasks = engine._local.tasks
        while tasks and isinstance(tasks[-1], _TASK_CLS[0]):
            tasks.pop()  # a backward that never reached its end (stale)
        tasks.append(_TASK_CLS[0](True))
        return gs

    new = _identity(tuple(t._data for t in tensors), on_grads)
    for t, arr in zip(tensors, new):
        t._data = arr
