"""``distribute_module``: a Module's parameters and buffers made DTensors, and hooks that
lay out its inputs and outputs."""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable

from ._api import DTensor, _as_device_mesh, distribute_tensor
from .placement_types import Replicate
from ... import _errors

if TYPE_CHECKING:
    from ...nn import Module  # noqa: F401

__all__ = ["distribute_module"]


def _replicate_params_buffers(m: Module, mesh: Any) -> None:
    full = [Replicate()] * mesh.ndim
    for key, param in m._parameters.items():
        if param is not None and not isinstance(param, DTensor):
            # nn.Parameter of a DTensor is that DTensor, flagged as a parameter (the class
            # comes from the parameter: importing nn here closes a cycle via nn.parallel)
            m.register_parameter(key, type(param)(distribute_tensor(param.data, mesh, full),
                                                  requires_grad=param.requires_grad))
    for key, buf in m._buffers.items():
        if buf is not None and not isinstance(buf, DTensor):
            m._buffers[key] = distribute_tensor(buf, mesh, full)


def _hook(fn: Callable, kind: str, mesh: Any, pre: bool) -> Callable:
    n = len(inspect.signature(fn).parameters)
    if n == 2:
        _errors.warn(f"Deprecating {kind} that takes two arguments (inputs, device_mesh), "
                     f"please use {kind} that takes in (module, inputs, device_mesh) "
                     "instead!", FutureWarning)
        return (lambda mod, inputs: fn(inputs, mesh)) if pre else \
            (lambda mod, inputs, outputs: fn(outputs, mesh))
    if n == 3:
        return (lambda mod, inputs: fn(mod, inputs, mesh)) if pre else \
            (lambda mod, inputs, outputs: fn(mod, outputs, mesh))
    raise ValueError(f"{kind} should take in 3 arguments, but got {n} arguments!")


def distribute_module(module: Module, device_mesh: Any = None,
                      partition_fn: Callable | None = None, input_fn: Callable | None = None,
                      output_fn: Callable | None = None) -> Module:
    """Make ``module``'s parameters and buffers DTensors on ``device_mesh``.

    ::

        distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                          output_fn=None)

    ``partition_fn(name, submodule, device_mesh)`` runs on every submodule and may shard
    its parameters (``nn.Parameter(distribute_tensor(...))``); what it leaves as plain
    Tensors is replicated. ``input_fn(module, inputs, device_mesh)`` runs as a forward
    pre-hook, ``output_fn(module, outputs, device_mesh)`` as a forward hook. Returns
    ``module``.

    Example::

        >>> def shard_rows(name, mod, mesh):
        ...     if isinstance(mod, nn.Linear):
        ...         mod.weight = nn.Parameter(distribute_tensor(mod.weight, mesh, [Shard(0)]))
        >>> distribute_module(model, mesh, shard_rows,
        ...                   input_fn=lambda mod, x, mesh: tuple(
        ...                       distribute_tensor(t, mesh) for t in x))
    """
    if getattr(module, "_distribute_module_applied", False):
        raise RuntimeError("distribute_module should only be called once on a module, but it "
                           "has already been called on this module!")
    mesh = _as_device_mesh(device_mesh)
    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, mesh)
        _replicate_params_buffers(sub, mesh)
    if input_fn is not None:
        module.register_forward_pre_hook(_hook(input_fn, "input_fn", mesh, True))
    if output_fn is not None:
        module.register_forward_hook(_hook(output_fn, "output_fn", mesh, False))
    module._distribute_module_applied = True
    return module
