"""``nn.parallel.DistributedDataParallel``: data parallelism as a sharding of compiled steps.

With a device mesh (given, or all devices when there are several or a process group is
initialized) the wrapper asks every ``hookgrad.compile`` step that runs it to split its
array arguments over the mesh's (first) axis along their first dimension and to replicate
the parameters, their ``.grad`` and the optimizer state: XLA's SPMD partitioner turns the
backward into per-device backwards and an all-reduce. Eagerly, the wrapper places its
inputs so, and JAX's computation follows the data. With one device it calls the module
as it is (world size 1).
"""
from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import jax
from jax.sharding import NamedSharding, PartitionSpec

from ..._autograd.grad_mode import is_grad_enabled
from ..._compile import sharding as _sharding
from ..._arguments import keep
from ..._tensor import Tensor
from . import _comm_hook, _reducer
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """PyTorch's ``DistributedDataParallel`` on a JAX device mesh.

    ::

        DistributedDataParallel(module, device_ids=None, output_device=None, dim=0,
                                broadcast_buffers=True, init_sync=True, process_group=None,
                                bucket_cap_mb=None, find_unused_parameters=False,
                                check_reduction=False, gradient_as_bucket_view=False,
                                static_graph=False, ...)

    In a job of several processes (``init_process_group``, launched by ``torchrun`` or
    ``python -m hookgrad.distributed.run``) and no ``device_mesh``, it is
    PyTorch's: each process runs the module on its own batch, its hooks see its own
    gradients, and when backward ends ``.grad`` holds the average over the processes
    (``register_comm_hook``'s hook reduces it instead; ``no_sync()`` defers it); rank 0's
    parameters and buffers are copied to all at construction (buffers again before each
    forward with ``broadcast_buffers``).

    Within one process, ``device_mesh``: a 1-D ``hookgrad.distributed.DeviceMesh`` (or
    ``jax.sharding.Mesh``); by default all of JAX's devices when there are several or
    ``init_process_group`` ran, else none (calls run ``module`` unchanged). A compiled
    step running the wrapper is sharded: its array arguments split over the mesh axis
    along their first dimension (``compile(in_shardings=...)`` overrides), parameters
    replicated. Parameters' hooks see
    the global, batch-reduced gradient (docs/distributed.md). Unlike PyTorch, no process
    group is needed. ``no_sync()`` accumulates: ``.grad`` after backwards inside it and
    one outside is PyTorch's after its synchronizing backward (deferring the reduction
    only with a comm hook). ``register_comm_hook`` hands the gradients to a
    hook (``hookgrad.distributed.algorithms.ddp_comm_hooks.default_hooks``) inside
    ``shard_map``. ``join()`` is accepted; ``state_dict()`` keys start with ``module.``.

    Example::

        >>> ddp = hookgrad.nn.parallel.DistributedDataParallel(model)
        >>> with ddp.no_sync():
        ...     ddp(x).sum().backward()      # accumulate without synchronizing
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        if (delay_all_reduce_named_params is None) != (param_to_hook_all_reduce is None):
            raise ValueError("delay_all_reduce_named_params and param_to_hook_all_reduce "
                             "need to be set at the same time.")
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        params = list(module.parameters())
        if not any(p.requires_grad for p in params):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids or output_device:
            # as PyTorch for a CPU module: device placement is for single-device GPU modules
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{ {p.device for p in params} }.")
        self._across_processes = device_mesh is None and _processes() > 1
        mesh = None if self._across_processes else _default_mesh(device_mesh)
        self.module = module
        if mesh is not None:
            if len(mesh.axis_names) != 1:
                raise RuntimeError("DistributedDataParallel: only a 1-D device_mesh is "
                                   f"supported, got the axes {tuple(mesh.axis_names)}")
            axis = mesh.axis_names[0]
            # the no_sync() accumulators of a comm hook are split over the data axis
            self._compile_sharding = _sharding.Config(
                mesh, batch_axis=axis, source="DistributedDataParallel",
                param_shardings=[(rf"^{_comm_hook.LOCAL}\d+$", PartitionSpec(axis))])
            _replicate(module, self._compile_sharding.replicated)
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        keep(self, locals(), "find_unused_parameters", "gradient_as_bucket_view", "static_graph")
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._comm_hook = None
        # NOTE: a compiled step's programs are keyed by its Modules' hook dicts (attributes
        # named *forward*/*backward* ... *hook*), not by plain attributes: a comm hook and
        # no_sync() mark this one, so a step traced with a different reduction (the hook's,
        # or deferred) is another cached program
        self._reduction_backward_hooks = {}
        if self._across_processes:
            _reducer.attach(self)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._across_processes:
            if self.broadcast_buffers:
                _reducer.sync_buffers(self)
            if is_grad_enabled() and self.require_backward_grad_sync:
                _reducer.arm(self)
            return self.module(*inputs, **kwargs)
        cfg = self.__dict__.get(_sharding.MODULE_ATTR)
        if self._comm_hook is not None:
            return _comm_hook.hooked_forward(self, self._hook_config(), inputs, kwargs)
        if cfg is not None:   # eagerly: the batch is split over the mesh, ops follow it
            inputs = tuple(_split_batch(x, cfg) for x in inputs)
            kwargs = {k: _split_batch(v, cfg) for k, v in kwargs.items()}
        return self.module(*inputs, **kwargs)

    def _hook_config(self):
        cfg = self.__dict__.get(_sharding.MODULE_ATTR)
        if cfg is None:   # one device: the hook reduces over a mesh of one
            cfg = _sharding.Config(jax.sharding.Mesh(jax.devices()[:1], ("data",)),
                                   batch_axis="data", source="DistributedDataParallel")
        return cfg

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Gradient accumulation: ``.grad`` after the first backward outside the block is
        the batch-reduced sum of its backward and those inside, as PyTorch's. With a comm
        hook the reduction waits as in PyTorch: inside, each device's share accumulates
        in a buffer and ``.grad`` is untouched; the next backward reduces the total once.
        Without one, every backward reduces (``.grad`` inside is already global)."""
        old = self.require_backward_grad_sync
        if self._comm_hook is not None and not self._across_processes:
            _comm_hook.local_grads(self, [p for p in self.module.parameters() if
                                          p.requires_grad], self._hook_config(), create=True)
        self.require_backward_grad_sync = False
        marks = self._reduction_backward_hooks
        self._reduction_backward_hooks = {**marks, "no_sync": None}
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
            self._reduction_backward_hooks = marks

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Iterator[None]:
        """Uneven inputs across processes: with one process there is nothing to join."""
        yield

    def register_comm_hook(self, state: object, hook: Callable[..., Any]) -> None:
        """Reduce the gradients with ``hook(state, bucket) -> Future[Tensor]`` instead of
        XLA's own all-reduce.

        ::

            register_comm_hook(state, hook)

        ``bucket`` is a ``hookgrad.distributed.GradBucket`` holding this replica's
        gradients flattened into one ``buffer()``; the hook returns a
        ``hookgrad.futures.Future`` of the reduced buffer. It runs, traced, in the backward
        of each shard of the batch inside ``shard_map`` over the mesh's data axis, where
        ``hookgrad.distributed.all_reduce`` is ``jax.lax.psum``. The built-in hooks are in
        ``hookgrad.distributed.algorithms.ddp_comm_hooks.default_hooks``. Call it once,
        before the first backward.

        Example::

            >>> from hookgrad.distributed.algorithms.ddp_comm_hooks import default_hooks
            >>> ddp.register_comm_hook(None, default_hooks.bf16_compress_hook)
        """
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        _check_comm_hook(hook)
        self._comm_hook = (state, hook)
        self._reduction_backward_hooks = {**self._reduction_backward_hooks, "comm_hook": None}


def _check_comm_hook(hook):
    from ... import futures
    from ...distributed import GradBucket
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    try:
        sig = inspect.signature(hook)
    except (TypeError, ValueError):
        return
    if "bucket" not in sig.parameters or len(sig.parameters) != 2:
        raise TypeError("Communication hook must take two arguments, (state, bucket), got "
                        f"{getattr(hook, '__qualname__', hook)}{sig}")
    ann = sig.parameters["bucket"].annotation
    if ann is not inspect.Parameter.empty and ann != GradBucket and ann != "dist.GradBucket":
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
    ret = sig.return_annotation
    if ret is not inspect.Signature.empty and ret != futures.Future[Tensor] and \
            ret != "torch.futures.Future[torch.Tensor]":
        raise ValueError("Communication hook: return annotation should be "
                         "torch.futures.Future[torch.Tensor].")


def _processes():
    # a torchrun-style job: every process runs its own replica on its own batch
    from ...distributed import is_initialized
    return jax.process_count() if is_initialized() else 1


def _default_mesh(device_mesh):
    if device_mesh is not None:
        return _sharding.auto_mesh(getattr(device_mesh, "jax_mesh", device_mesh),
                                   "device_mesh")
    from ...distributed import init_device_mesh, is_initialized
    if len(jax.devices()) > 1 or is_initialized():
        kind = "cuda" if jax.default_backend() == "gpu" else jax.default_backend()
        return init_device_mesh(kind, (len(jax.devices()),),
                                mesh_dim_names=("data",)).jax_mesh
    return None


def _replicate(module, sharding):
    # NOTE: the same values, placed on every device of the mesh (PyTorch broadcasts rank
    # 0's parameters at construction; one JAX program has one value per array)
    for t in list(module.parameters()) + list(module.buffers()):
        if not isinstance(t._data, jax.core.Tracer):
            t._data = jax.device_put(t._data, sharding)


def _split_batch(x, cfg):
    if not isinstance(x, Tensor) or isinstance(x._data, jax.core.Tracer) or x.ndim == 0 \
            or x.requires_grad:
        return x
    n = cfg.mesh.shape[cfg.batch_axis]
    if x.shape[0] % n:
        return x
    return Tensor._wrap(jax.device_put(
        x._data, NamedSharding(cfg.mesh, PartitionSpec(cfg.batch_axis))))


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
