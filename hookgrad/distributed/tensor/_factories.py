"""PyTorch's DTensor factories: ``ones``, ``zeros``, ``empty``, ``full``, ``rand``,
``randn`` of a global size, laid out on a mesh."""
from __future__ import annotations

from typing import Any, Sequence

from ... import _factory
from ._api import DTensor, _as_device_mesh, _check_placements, distribute_tensor
from .placement_types import Placement

__all__ = ["ones", "zeros", "empty", "full", "rand", "randn"]


def _size(size: tuple) -> tuple[int, ...]:
    # ``ones(2, 3)`` or ``ones((2, 3))``, as PyTorch's
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


def _make(init: Any, size: tuple[int, ...], device_mesh: Any, placements: Any,
          requires_grad: bool, layout: Any, what: str, **kwargs: Any) -> DTensor:
    if layout is not None:
        raise NotImplementedError(f"hookgrad does not implement torch.distributed.tensor."
                                  f"{what}(layout=...) yet: Tensors are strided")
    mesh = _as_device_mesh(device_mesh)
    places = _check_placements(placements, mesh, len(size))
    out = distribute_tensor(init(size, **kwargs), mesh, places)
    return out.requires_grad_(True) if requires_grad else out


def _factory_of(init: Any, name: str) -> Any:
    def make(*size: Any, dtype: Any = None, layout: Any = None, requires_grad: bool = False,
             device_mesh: Any = None, placements: Sequence[Placement] | None = None
             ) -> DTensor:
        return _make(init, _size(size), device_mesh, placements, requires_grad, layout, name,
                     dtype=dtype)
    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"A DTensor of global size ``size`` filled as ``hookgrad.{name}`` fills "
                    "one, laid out on ``device_mesh`` by ``placements`` (default: "
                    f"replicated).\n\n::\n\n    {name}(*size, dtype=None, layout=None, "
                    "requires_grad=False, device_mesh=None, placements=None)\n")
    return make


ones = _factory_of(_factory.ones, "ones")
zeros = _factory_of(_factory.zeros, "zeros")
empty = _factory_of(_factory.empty, "empty")
rand = _factory_of(_factory.rand, "rand")
randn = _factory_of(_factory.randn, "randn")


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, layout: Any = None,
         requires_grad: bool = False, device_mesh: Any = None,
         placements: Sequence[Placement] | None = None) -> DTensor:
    """A DTensor of global size ``size`` filled with ``fill_value``, laid out on
    ``device_mesh`` by ``placements`` (default: replicated).

    ::

        full(size, fill_value, *, dtype=None, layout=None, requires_grad=False,
             device_mesh=None, placements=None)
    """
    return _make(lambda s, **kw: _factory.full(s, fill_value, **kw), tuple(size), device_mesh,
                 placements, requires_grad, layout, "full", dtype=dtype)
