"""``torch.numa.binding``: the options a launcher (``torchrun --numa-binding``) takes to
bind each worker to the CPUs near its accelerator.

The options are plain data and are PyTorch's; the binding itself (PyTorch's private
functions over the GPU's NUMA node) is not part of hookgrad.
"""
import dataclasses
import enum

from .. import _missing

__all__ = ["AffinityMode", "NumaOptions"]


class AffinityMode(str, enum.Enum):
    """Which CPUs a worker is bound to, relative to its GPU (the one whose local index is
    the worker's local rank)."""

    NODE = "node"
    """All CPUs of the GPU's NUMA node (if in doubt, this one)."""
    SOCKET = "socket"
    """All CPUs of every NUMA node of the GPU's socket."""
    EXCLUSIVE = "exclusive"
    """An exclusive share of the GPU's NUMA node's CPUs (split evenly among its GPUs)."""
    CORE_COMPLEX = "core-complex"
    """One core complex (cores sharing an L3 cache) of the GPU's NUMA node."""


@dataclasses.dataclass(frozen=True)
class NumaOptions:
    """How workers are bound: ``affinity_mode``, and whether a failure to bind is silenced
    (``should_fall_back_if_binding_fails``, for cautious roll-outs)."""

    affinity_mode: AffinityMode
    should_fall_back_if_binding_fails: bool = False


__getattr__ = _missing.module_getattr(__name__)
