"""Activation checkpointing: keep a segment's inputs, recompute its activations in backward.

Eagerly, as ``torch.utils.checkpoint``:

- ``use_reentrant=False``: the segment runs with grad, but its saved tensors go through
  pack hooks that keep only their position; the first unpack in backward re-runs the
  segment (with the PRNG key it started with) and hands out what the re-run saved;
- ``use_reentrant=True`` (the default when ``use_reentrant`` is not passed, with
  PyTorch's warning): the segment runs under ``no_grad`` inside one custom Function whose
  backward re-runs it with grad and backpropagates through the re-run.

In functional mode (``hookgrad.func``, where JAX differentiates) the segment is
``jax.checkpoint`` of the segment as a pure function (a ``checkpoint`` primitive in the
jaxpr). Inside ``hookgrad.compile`` the eager algorithm is traced, and the re-run's
inputs go through ``jax.lax.optimization_barrier`` so that XLA does not merge the
re-computation with the forward.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

import jax

from .. import _mode
from .._random import GLOBAL as _KEY
from .._compile.host_hook import _flatten_containers
from .._tensor import Tensor
from .._autograd import grad_mode
from .._engine.engine import current_graph_task_id
from .._autograd.saved import SavedTensor, saved_tensors_hooks
from .._engine.function import Function
from .. import _errors
from ._selective_checkpoint import (CheckpointPolicy, SelectiveCheckpointContext,
                                    create_selective_checkpoint_contexts)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "noop_context_fn", "detach_variable", "check_backward_validity",
           "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    """The re-computation of a checkpointed segment differed from its forward."""


def noop_context_fn() -> tuple[contextlib.AbstractContextManager,
                               contextlib.AbstractContextManager]:
    """The default ``context_fn``: no context around the forward or the re-computation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Detached copies of the Tensors of a tuple, keeping ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(isinstance(i, Tensor) and i.requires_grad for i in inputs):
        _errors.warn("None of the inputs have requires_grad=True. Gradients will be None")


def _rng_key():
    return _KEY.get()


def _rng(key):
    """Random ops draw from ``key`` (the forward's) in the block; the global key is restored."""
    return contextlib.nullcontext() if key is None else _KEY.swapped(key)


def _rerun_inputs(args):
    """Detached inputs for the re-run; traced ones behind an optimization barrier, so that
    XLA keeps the re-computation instead of reusing the forward's values."""
    args = detach_variable(tuple(args))
    traced = [a for a in args if isinstance(a, Tensor) and isinstance(a._data, jax.core.Tracer)]
    if traced:
        fenced = jax.lax.optimization_barrier(tuple(a._data for a in traced))
        for a, d in zip(traced, fenced):
            a._data = d
    return args


class CheckpointFunction(Function):
    """The reentrant variant: forward under ``no_grad``, backward re-runs and differentiates."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng = _rng_key() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads) -> tuple[Tensor | None, ...]:
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _rerun_inputs(inputs)
        with _rng(ctx.rng), grad_mode.enable_grad():
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, Tensor) and o.requires_grad:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        from .._engine.backward import backward
        backward(outs, gs)
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None
                                    for a in detached)


class _Frame:
    """One non-reentrant checkpointed call: what its forward saved is re-made on demand."""

    def __init__(self, function, args, kwargs, key, recompute_context):
        # the inputs are saved as an op saves a tensor (outer pack hooks see them, as in
        # PyTorch); the segment's own saves go through ``pack`` below
        self.args = [(SavedTensor(a, False), type(a), a._requires_grad)
                     if isinstance(a, Tensor) else a for a in args]
        self.function, self.kwargs = function, kwargs
        self.key, self.recompute_context = key, recompute_context
        self.n_packed = 0
        # graph task id -> position -> re-made tensor; a position is dropped when unpacked
        # (as PyTorch frees it), so each backward re-runs the segment once
        self.recomputed = {}

    def pack(self, _tensor):
        self.n_packed += 1
        return self.n_packed - 1   # the position only: the activation is not kept

    def unpack(self, index):
        gid = current_graph_task_id()
        values = self.recomputed.get(gid)
        if values is None:
            values = dict(enumerate(self._recompute()))
            values["count"] = len(values)
            if gid != -1:  # outside backward (grad_fn._saved_*), each access recomputes
                self.recomputed[gid] = values
        if index >= values["count"]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {self.n_packed}\n"
                f"Number of tensors saved during recomputation: {values['count']}")
        if index not in values:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, make "
                "sure to do so only once. Otherwise please open an issue with details on your "
                "use case.")
        return values.pop(index)

    def _recompute(self):
        saved = []

        def keep(t):
            saved.append(t)

        def never(_):
            raise CheckpointError("torch.utils.checkpoint: a tensor saved during the "
                                  "re-computation was unpacked")
        args = []
        for a in self.args:
            if isinstance(a, tuple) and len(a) == 3 and isinstance(a[0], SavedTensor):
                t = a[1]._wrap(a[0].unpack(None, False))
                t._requires_grad = a[2]
                a = t
            args.append(a)
        args = _rerun_inputs(args)
        with _rng(self.key), grad_mode.enable_grad(), saved_tensors_hooks(keep, never), \
                self.recompute_context:
            self.function(*args, **self.kwargs)
        return saved


def _functional_checkpoint(function, args, kwargs):
    """``jax.checkpoint`` of the segment as a function of its Tensor arguments' arrays."""
    leaves, rebuild = _flatten_containers((args, kwargs))
    pos = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
    box = {}

    def pure(*arrs):
        new = list(leaves)
        for i, a in zip(pos, arrs):
            t = type(leaves[i])._wrap(a)
            t._requires_grad = leaves[i]._requires_grad
            new[i] = t
        a, k = rebuild(new)
        out, build = _flatten_containers(function(*a, **k))
        box["build"] = build
        box["spec"] = [(type(v), v._requires_grad) if isinstance(v, Tensor) else ("S", v)
                       for v in out]
        return [v._data for v in out if isinstance(v, Tensor)]

    arrays = jax.checkpoint(pure)(*[leaves[i]._data for i in pos])
    it = iter(arrays)
    res = []
    for s in box["spec"]:
        if s[0] == "S":
            res.append(s[1])
            continue
        t = s[0]._wrap(next(it))
        t._requires_grad = s[1]
        res.append(t)
    return box["build"](res)


def checkpoint(function: Callable[..., Any], *args, use_reentrant: bool | None = None,
               context_fn=noop_context_fn, determinism_check="default", debug=False,
               early_stop=True, **kwargs) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its activations for backward:
    backward re-runs it (with the PRNG key of the forward, so dropout masks are the same).

    ::

        checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
                   determinism_check="default", debug=False, early_stop=True,
                   preserve_rng_state=True, **kwargs)

    Pass ``use_reentrant`` explicitly (``False`` is recommended); without it PyTorch's
    warning is raised and the reentrant variant runs. Under ``hookgrad.func`` the segment
    becomes ``jax.checkpoint`` (remat); inside ``hookgrad.compile`` the re-computation is
    traced into the backward.

    Example::

        >>> h = checkpoint(block, x, use_reentrant=False)
        >>> h.sum().backward()       # block's forward runs again here
    """
    if use_reentrant is None:
        _errors.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    if _mode.state.backend is not None:  # JAX differentiates: remat is jax.checkpoint
        return _functional_checkpoint(function, args, kwargs)
    if use_reentrant:
        return CheckpointFunction.apply(function, preserve, *args)
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, _rng_key() if preserve else None,
                   recompute_context)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs) -> Any:
    """Run a sequence of modules (an ``nn.Sequential`` or a list) in ``segments`` chunks,
    checkpointing every chunk but the last.

    ::

        checkpoint_sequential(functions, segments, input, use_reentrant=None,
                              preserve_rng_state=True)

    Example::

        >>> out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    """
    if use_reentrant is None:
        _errors.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
