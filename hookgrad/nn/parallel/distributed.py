"""``nn.parallel.DistributedDataParallel``, single-process (world size 1)."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """PyTorch's ``DistributedDataParallel`` for one process: the gradient all-reduce over
    a world of size 1 is the identity, so calls run ``module`` unchanged.

    ::

        DistributedDataParallel(module, device_ids=None, output_device=None, dim=0,
                                broadcast_buffers=True, init_sync=True, process_group=None,
                                bucket_cap_mb=None, find_unused_parameters=False,
                                check_reduction=False, gradient_as_bucket_view=False,
                                static_graph=False, ...)

    Unlike PyTorch, no process group is needed (PyTorch raises ``ValueError`` until
    ``init_process_group`` ran). ``no_sync()`` and ``join()`` are accepted as context
    managers; ``state_dict()`` keys start with ``module.``.

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
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Disable gradient synchronization in the block (gradients accumulate locally;
        with one process they are the same either way)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Iterator[None]:
        """Uneven inputs across processes: with one process there is nothing to join."""
        yield

    def register_comm_hook(self, state: object, hook: Callable[..., Any]) -> None:
        raise NotImplementedError(
            "DistributedDataParallel.register_comm_hook: hookgrad's DistributedDataParallel is "
            "single-process (no process group, no gradient buckets), so there is no "
            "communication to hook. Use a post-accumulate-grad hook on the parameters "
            "(p.register_post_accumulate_grad_hook) to act on gradients instead.")
