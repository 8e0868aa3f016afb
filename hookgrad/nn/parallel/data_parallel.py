"""``nn.DataParallel``, single-process: the wrapped module runs on the default device."""
from __future__ import annotations

from typing import Any, Generic, TypeVar

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]

T = TypeVar("T", bound=Module)


class DataParallel(Module, Generic[T]):
    """Wraps ``module`` as PyTorch's ``DataParallel`` does on a machine without CUDA
    devices: calls run ``module`` unchanged, ``device_ids`` is ``[]``.

    ::

        DataParallel(module, device_ids=None, output_device=None, dim=0)

    The wrapped module is ``.module``, so ``state_dict()`` keys start with ``module.``.

    Example::

        >>> net = hookgrad.nn.DataParallel(model)
        >>> out = net(x)
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self.module = module
        # NOTE: PyTorch keeps only ``module`` and ``device_ids = []`` when it finds no
        # accelerator; hookgrad runs every module on its one JAX device likewise
        self.device_ids = []
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None) -> Any:
    """The functional form of :class:`DataParallel`: ``module(*inputs, **module_kwargs)``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
