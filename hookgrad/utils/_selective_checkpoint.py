"""Selective activation checkpointing: which ops' outputs a checkpointed segment keeps.

``create_selective_checkpoint_contexts`` returns the two dispatch modes that
``checkpoint(..., context_fn=...)`` enters: around the forward, one asks the policy about
every op and keeps (detached) the outputs of those to save; around the re-computation in
backward, the other hands out those outputs instead of running their ops again.
"""
from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..ops import OpOverload as _CustomOverload, OpOverloadPacket as _CustomPacket
from .._ops.overloads import OpOverload as _RowOverload, OpOverloadPacket as _RowPacket
from ._python_dispatch import TorchDispatchMode

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    """Whether an op's output is saved in forward (``MUST_SAVE``, ``PREFER_SAVE``) or
    recomputed in backward (``MUST_RECOMPUTE``, ``PREFER_RECOMPUTE``); ``*_CPU_OFFLOAD``
    saves it on the CPU. ``MUST_*`` is not overridden by other systems, ``PREFER_*`` may
    be."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE,
         CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD)


class SelectiveCheckpointContext:
    """What a policy function is told besides the op: whether this call is the
    re-computation, and (in forward) the op's output."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None):
        self.is_recompute = is_recompute
        self.op_output = op_output


_RECOMPUTE = object()  # a storage entry: the op runs again
_CONSUMED = object()   # a storage entry handed out by a backward already


class _Cached:
    """A kept output and its version when kept: a later in-place write is an error."""

    def __init__(self, value):
        self.value = value.detach() if isinstance(value, Tensor) else value
        self.version = value._version if isinstance(value, Tensor) else None

    def get(self, allow_mutation):
        if self.version is not None and not allow_mutation and \
                self.value._version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been "
                               "mutated")
        return self.value


def _each(fn, out):
    return type(out)(fn(o) for o in out) if isinstance(out, (tuple, list)) else fn(out)


class _CachingMode(TorchDispatchMode):
    """Around the forward: asks the policy about each op; keeps the outputs to save."""

    def __init__(self, policy_fn, storage):
        super().__init__()
        self.policy_fn, self.storage = policy_fn, storage
        self.counter = defaultdict(int)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        idx = self.counter[func]
        self.counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        self.storage[func][idx] = _each(_Cached, out) if policy in _SAVE else _RECOMPUTE
        return out


class _CachedMode(TorchDispatchMode):
    """Around the re-computation: hands out what the forward kept, runs the rest."""

    def __init__(self, storage, allow_cache_entry_mutation):
        super().__init__()
        self.storage, self.allow_mutation = storage, allow_cache_entry_mutation
        self.counter = defaultdict(int)

    def __enter__(self):
        self.counter.clear()  # a second backward reaches "an extra time", not "not found"
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        idx = self.counter[func]
        self.counter[func] += 1
        entries = self.storage.get(func)
        mismatch = ("This can happen if the operations in the checkpointed region are "
                    "nondeterministic or depend on global state that changed between "
                    "forward and backward.")
        if entries is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. "
                               f"{mismatch}")
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but "
                               f"not found in storage. {mismatch}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        if entry is _RECOMPUTE:
            return func(*args, **(kwargs or {}))
        entries[idx] = _CONSUMED
        return _each(lambda c: c.get(self.allow_mutation), entry)


def create_selective_checkpoint_contexts(policy_fn_or_list: Callable | list,
                                         allow_cache_entry_mutation: bool = False):
    """The two context managers, for ``checkpoint(..., use_reentrant=False,
    context_fn=...)``, that save the outputs of the ops a policy chooses rather than
    recomputing them in backward.

    ``policy_fn_or_list``: ``policy_fn(ctx, op, *args, **kwargs) -> CheckpointPolicy``
    (``ctx`` a :class:`SelectiveCheckpointContext`, ``op`` an ``OpOverload`` such as
    ``torch.ops.aten.mm.default``), or a list of ``OpOverload`` s to save (every other op
    is recomputed). ``allow_cache_entry_mutation``: do not raise when a saved output was
    changed in place before backward.
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, (_RowOverload, _CustomOverload)):
                hint = ("Please update the OpOverloadPacket to a specific OpOverload.For "
                        "example, if you have `torch.ops.aten.mm`, change it to "
                        "`torch.ops.aten.mm.default`.") \
                    if isinstance(op, (_RowPacket, _CustomPacket)) else ""
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. {hint}")
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)
