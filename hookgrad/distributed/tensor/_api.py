"""``DTensor``: PyTorch's distributed Tensor class, over a ``NamedSharding``-sharded array.

A DTensor holds the *global* ``jax.Array``, laid out on its mesh's devices by a
``NamedSharding``; JAX's computation follows the data, so an op on DTensors is the op on
the global values and XLA moves what must move (``_dispatch`` makes its outputs DTensors).
PyTorch runs one process per device, each with its local shard; a JAX process drives all
its local devices, so the *local* tensor of ``from_local`` and ``to_local`` is the
process's: on one host, the whole tensor. ``Partial`` is kept as a placement, while the
array holds the reduced value (the sum over one process is its own value).
"""
from __future__ import annotations

from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding

from ..._ops import dispatch
from ..._ops.stages import modes
from ..._tensor import _NONLEAF_GRAD_WARNING, Tensor
from ..._torch_function import _disabled_torch_function_impl
from ..._engine.function import Function
from ..device_mesh import DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard, of_array, to_spec
from ... import _errors

__all__ = ["DTensor", "distribute_tensor"]

# ``_dispatch``'s op stage, for ``dispatch.apply``'s slot once a DTensor exists (during an
# op the stage empties the slot: the op's DTensor outputs leave it so)
STAGE: list[Any] = [None]
_slot = modes.INTERCEPT
_DOC_MISSING = "(see docs/api_coverage.md for what it covers)"


class DTensor(Tensor):
    """A Tensor laid out on a :class:`DeviceMesh` by one :class:`Placement` per mesh
    dimension: ``Shard(dim)``, ``Replicate()`` or ``Partial()``.

    Ops on DTensors return DTensors whose values are the op on the global values; the
    arrays stay split as JAX's sharding propagation places them. Build one with
    :func:`distribute_tensor` (from a global Tensor) or :meth:`DTensor.from_local`; read it
    back with :meth:`to_local` or :meth:`full_tensor`; move it with :meth:`redistribute`.

    Example::

        >>> mesh = init_device_mesh("cuda", (4,))
        >>> d = distribute_tensor(hookgrad.randn(8, 16), mesh, [Shard(0)])
        >>> (d * 2).relu().placements
        (Shard(dim=0),)
    """

    __torch_function__ = _disabled_torch_function_impl

    __module__ = "hookgrad.distributed.tensor"  # its public path, as PyTorch's

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("hookgrad does not implement torch.distributed.tensor.DTensor(local_"
                           "tensor, spec) yet: build a DTensor with DTensor.from_local or "
                           f"distribute_tensor {_DOC_MISSING}")

    @staticmethod
    def from_local(local_tensor: Tensor, device_mesh: Any = None,
                   placements: Sequence[Placement] | None = None, *, run_check: bool = False,
                   shape: Sequence[int] | None = None, stride: Sequence[int] | None = None,
                   grad_placements: Sequence[Placement] | None = None) -> DTensor:
        """A DTensor from this process's ``local_tensor`` (differentiable).

        ::

            DTensor.from_local(local_tensor, device_mesh=None, placements=None, *,
                               run_check=False, shape=None, stride=None,
                               grad_placements=None)

        One hookgrad process drives all its local devices, so its local tensor is the
        global one on a single host: the result holds ``local_tensor``'s values, laid out
        by ``placements`` (default: replicated). The gradient flows back to
        ``local_tensor`` laid out by ``grad_placements`` (default: the forward placements,
        ``Partial`` becoming ``Replicate``). ``run_check`` has nothing to compare in one
        process; ``shape``/``stride``, if given, must be the local tensor's.
        """
        if isinstance(local_tensor, DTensor):
            raise RuntimeError("the local_tensor argument only accepts torch.Tensor but got "
                               f"{type(local_tensor)} value.")
        if not isinstance(local_tensor, Tensor):
            raise TypeError("from_local(): argument 'local_tensor' must be a Tensor, got "
                            f"{type(local_tensor).__name__}")
        if (shape is None) != (stride is None):
            raise RuntimeError(f"Found shape:{shape}, stride:{stride}. Please pass both shape "
                               "and stride at the same time.")
        _one_process("DTensor.from_local")
        mesh = _as_device_mesh(device_mesh)
        places = _check_placements(placements, mesh, local_tensor.ndim)
        if shape is not None and tuple(shape) != tuple(local_tensor.shape):
            raise ValueError(f"from_local(): shape {tuple(shape)} is not the local tensor's "
                             f"{tuple(local_tensor.shape)}; one process holds the whole "
                             "tensor, so the global shape is the local one")
        grads = None if grad_placements is None else \
            _check_placements(grad_placements, mesh, local_tensor.ndim)
        return _FromTorchTensor.apply(local_tensor, mesh, places, grads)

    def to_local(self, *, grad_placements: Sequence[Placement] | None = None) -> Tensor:
        """This process's part of the DTensor as a plain Tensor (differentiable): on a
        single host, the whole tensor. ``grad_placements`` lays out the gradient that
        flows back (default: this DTensor's placements, ``Partial`` as ``Replicate``)."""
        _one_process("DTensor.to_local")
        grads = None if grad_placements is None else \
            _check_placements(grad_placements, self.device_mesh, self.ndim)
        return _ToTorchTensor.apply(self, grads)

    def redistribute(self, device_mesh: Any = None,
                     placements: Sequence[Placement] | None = None, *,
                     async_op: bool = False, forward_dtype: Any = None,
                     backward_dtype: Any = None) -> DTensor:
        """The same global values laid out by ``placements`` (differentiable): JAX moves
        the shards (``jax.device_put`` to the new ``NamedSharding``). Only ``Partial``
        placements the DTensor already has may be asked for."""
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        mesh = self.device_mesh if device_mesh is None else _as_device_mesh(device_mesh)
        if mesh != self.device_mesh:
            raise NotImplementedError("hookgrad does not implement torch.distributed.tensor."
                                      "DTensor.redistribute to another device mesh yet "
                                      f"{_DOC_MISSING}")
        places = _check_placements(placements, mesh, self.ndim)
        for i, p in enumerate(places):
            if p.is_partial() and self.placements[i] != p:
                raise RuntimeError(f"Can not redistribute from {self.placements[i]} to {p}, "
                                   "redistributing to Partial is for internal use only!")
        # (``async_op``: JAX dispatches asynchronously anyway; the result is usable as is)
        return Redistribute.apply(self, places, _dtype(forward_dtype), _dtype(backward_dtype))

    def full_tensor(self, *, grad_placements: Sequence[Placement] | None = None) -> Tensor:
        """The whole tensor as a plain Tensor, replicated on the mesh (differentiable):
        ``redistribute(placements=[Replicate()] * mesh.ndim).to_local()``."""
        full = self.redistribute(placements=[Replicate()] * self.device_mesh.ndim)
        return full.to_local(grad_placements=grad_placements)

    @property
    def device_mesh(self) -> DeviceMesh:
        """The :class:`DeviceMesh` the DTensor lies on (read-only)."""
        mesh = self.__dict__.get("_mesh")
        if mesh is None:  # a compiled program's output, made a DTensor by its class alone
            mesh = self.__dict__["_mesh"] = _mesh_of(self._data)
        return mesh

    @property
    def placements(self) -> tuple[Placement, ...]:
        """One :class:`Placement` per mesh dimension (read-only): ``Shard`` and
        ``Replicate`` as the array lies, ``Partial`` where the DTensor was made so."""
        mesh = self.device_mesh
        kept = self.__dict__.get("_placements") or (Replicate(),) * mesh.ndim
        sharding = getattr(self._data, "sharding", None)
        if not isinstance(sharding, NamedSharding) or sharding.mesh != mesh.jax_mesh:
            return kept  # a traced value: the placements it was made with
        now = of_array(self._data)
        return tuple(k if k.is_partial() else p for k, p in zip(kept, now))

    def detach(self) -> DTensor:
        return as_dtensor(Tensor.detach(self), self.device_mesh, self.placements)

    @property
    def data(self) -> DTensor:
        return as_dtensor(Tensor.data.fget(self), self.device_mesh, self.placements)

    @data.setter
    def data(self, value: Any) -> None:
        Tensor.data.fset(self, value)

    def _write_(self, arr: Any) -> DTensor:
        # an in-place write (an optimizer step, an in-place op) keeps the DTensor's layout,
        # as PyTorch's keep its spec: the new array goes where the old one was
        kept = self.__dict__.get("_placements")
        if kept is not None and isinstance(arr, (jax.Array, jax.core.Tracer)):
            mesh = self.device_mesh.jax_mesh
            want = NamedSharding(mesh, to_spec(kept, arr.ndim, mesh.axis_names))
            if isinstance(arr, jax.core.Tracer):
                arr = jax.lax.with_sharding_constraint(arr, want)
            elif not arr.sharding.is_equivalent_to(want, arr.ndim):
                arr = jax.device_put(arr, want)
        return Tensor._write_(self, arr)

    def __reduce_ex__(self, protocol: int) -> Any:
        mesh = self.device_mesh
        return (_rebuild, (np.asarray(self._data), self._requires_grad, mesh.device_type,
                           mesh._ids, mesh.mesh_dim_names, self.placements,
                           "_is_param" in self.__dict__))

    @property
    def grad(self):
        # the engine accumulates plain Tensors: the gradient lies on this DTensor's mesh
        g = self._grad
        if g is None:
            if self.grad_fn is not None and not self._retains_grad:
                _errors.warn(_NONLEAF_GRAD_WARNING, UserWarning)
            return None
        return g if isinstance(g, DTensor) else as_dtensor(g, self.device_mesh)

    @grad.setter
    def grad(self, value):
        Tensor.grad.fset(self, value)

    def __repr__(self) -> str:
        return (f"DTensor(local_tensor={Tensor.__repr__(self)}, device_mesh="
                f"{self.device_mesh}, placements={self.placements})")


def as_dtensor(t: Tensor, mesh: DeviceMesh, placements: Sequence[Placement] | None = None
               ) -> DTensor:
    """``t`` itself, made a DTensor on ``mesh`` (its placements: ``placements``, or as its
    array lies); ``t`` is a Tensor no one else holds as a plain one."""
    object.__setattr__(t, "__class__", DTensor)
    t.__dict__["_mesh"] = mesh
    if placements is None:
        arr = t._arr
        placements = of_array(arr) if isinstance(getattr(arr, "sharding", None),
                                                 NamedSharding) else None
        placements = placements or (Replicate(),) * mesh.ndim
    t.__dict__["_placements"] = tuple(placements)
    if _slot[0] is None:
        _slot[0] = STAGE[0]
    return t


def _rebuild(values: Any, requires_grad: bool, device_type: str, ids: Any,
             names: Any, placements: tuple[Placement, ...], is_param: bool) -> DTensor:
    """A pickled DTensor (or DTensor parameter), back on a mesh of the same devices."""
    mesh = DeviceMesh(device_type, ids, mesh_dim_names=names)
    out = distribute_tensor(Tensor(values), mesh, placements)
    if is_param:
        out._is_param = True
    return out.requires_grad_(True) if requires_grad else out


def _mesh_of(arr: Any) -> DeviceMesh:
    """The mesh ``arr`` lies on, or a 1-D one of its devices."""
    sharding = getattr(arr, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return _as_device_mesh(sharding.mesh)
    devices = sorted(arr.devices(), key=lambda d: d.id) if hasattr(arr, "devices") else \
        jax.devices()[:1]
    kind = devices[0].platform
    return DeviceMesh("cuda" if kind == "gpu" else kind, [d.id for d in devices])


def _flatten(t: DTensor) -> Any:
    return (t._data,), (t.device_mesh, t.placements, t._requires_grad,
                        "_is_param" in t.__dict__)


def _unflatten(aux: Any, children: Any) -> DTensor:
    mesh, placements, requires_grad, is_param = aux
    t = as_dtensor(Tensor._wrap(children[0]), mesh, placements)
    t._requires_grad = requires_grad
    if is_param:
        t._is_param = True
    return t


# a DTensor crosses JAX transformations as its array, its layout kept beside it
jax.tree_util.register_pytree_node(DTensor, _flatten, _unflatten)


def _placed(arr: Any, mesh: DeviceMesh, placements: Sequence[Placement]) -> Any:
    return jax.device_put(arr, NamedSharding(mesh.jax_mesh,
                                             to_spec(placements, arr.ndim,
                                                     mesh.jax_mesh.axis_names)))


class _ToTorchTensor(Function):
    """``to_local``: the same values as a plain Tensor; the gradient comes back as a
    DTensor laid out by the grad placements."""

    @staticmethod
    def forward(ctx, dt, grad_placements):
        ctx.mesh = dt.device_mesh
        ctx.grads = grad_placements or _for_grad(dt.placements)
        return Tensor._wrap(dt._data)

    @staticmethod
    def backward(ctx, grad):
        return as_dtensor(Tensor._wrap(_placed(grad._data, ctx.mesh, ctx.grads)), ctx.mesh,
                          ctx.grads), None


class _FromTorchTensor(Function):
    """``from_local``: the same values as a DTensor; the gradient comes back as the local
    tensor laid out by the grad placements."""

    @staticmethod
    def forward(ctx, local, mesh, placements, grad_placements):
        ctx.mesh = mesh
        ctx.grads = grad_placements or _for_grad(placements)
        return as_dtensor(Tensor._wrap(_placed(local._data, mesh, placements)), mesh,
                          placements)

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(_placed(grad._data, ctx.mesh, ctx.grads)), None, None, None


class Redistribute(Function):
    """``redistribute``: the values moved to new placements, cast to ``forward_dtype``; the
    gradient moves back to the input's placements (``Partial`` as ``Replicate``), cast to
    ``backward_dtype`` and back."""

    @staticmethod
    def forward(ctx, dt, placements, forward_dtype, backward_dtype):
        ctx.mesh, ctx.back = dt.device_mesh, _for_grad(dt.placements)
        ctx.dtypes = (backward_dtype, dt._data.dtype)
        arr = dt._data if forward_dtype is None else dt._data.astype(forward_dtype)
        return as_dtensor(Tensor._wrap(_placed(arr, ctx.mesh, placements)), ctx.mesh,
                          placements)

    @staticmethod
    def backward(ctx, grad):
        op_dtype, out_dtype = ctx.dtypes
        arr = grad._data if op_dtype is None else grad._data.astype(op_dtype)
        arr = _placed(arr.astype(out_dtype), ctx.mesh, ctx.back)
        return as_dtensor(Tensor._wrap(arr), ctx.mesh, ctx.back), None, None, None


def _for_grad(placements: Sequence[Placement]) -> tuple[Placement, ...]:
    # PyTorch's gradient placements: a Partial forward placement has a Replicate gradient
    return tuple(Replicate() if p.is_partial() else p for p in placements)


def _dtype(dtype: Any) -> Any:
    from ... import _dtype as d
    return None if dtype is None else d.to_jax(dtype)


def _one_process(what: str) -> None:
    if jax.process_count() > 1:
        raise NotImplementedError(f"hookgrad does not implement torch.distributed.tensor."
                                  f"{what} across several processes yet {_DOC_MISSING}")


def _default_mesh() -> DeviceMesh:
    from ..device_mesh import init_device_mesh
    kind = "cuda" if jax.default_backend() == "gpu" else jax.default_backend()
    return init_device_mesh(kind, (len(jax.devices()),))


def _as_device_mesh(mesh: Any) -> DeviceMesh:
    """``mesh`` as a DeviceMesh: a DeviceMesh, a ``jax.sharding.Mesh``, or None (all
    devices, 1-D)."""
    if mesh is None:
        return _default_mesh()
    if isinstance(mesh, DeviceMesh):
        return mesh
    if isinstance(mesh, Mesh):
        ids = np.vectorize(lambda d: d.id, otypes=[np.int64])(mesh.devices)
        kind = mesh.devices.flat[0].platform
        return DeviceMesh("cuda" if kind == "gpu" else kind, ids,
                          mesh_dim_names=mesh.axis_names)
    raise TypeError(f"expected a DeviceMesh or a jax.sharding.Mesh as device_mesh, got "
                    f"{type(mesh).__name__}")


def _check_placements(placements: Sequence[Placement] | None, mesh: DeviceMesh,
                      ndim: int) -> tuple[Placement, ...]:
    """``placements`` (default: replicated) with each Shard's dim made non-negative,
    checked against the mesh and the tensor's dimensions."""
    if placements is None:
        return (Replicate(),) * mesh.ndim
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError("`placements` must have the same length as `device_mesh.ndim`! Found "
                         f"placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    to_spec(placements, ndim, mesh.jax_mesh.axis_names)  # the type and range checks
    ops = {p.reduce_op for p in placements if isinstance(p, Partial)}
    if len(ops) > 1:
        raise ValueError(f"Cannot have mixed Partial reduce types in placements: "
                         f"{sorted(ops)}")
    return tuple(Shard(p.dim + ndim) if isinstance(p, Shard) and p.dim < 0 else p
                 for p in placements)


def distribute_tensor(tensor: Tensor, device_mesh: Any = None,
                      placements: Sequence[Placement] | None = None, *,
                      src_data_rank: int | None = 0) -> DTensor:
    """A leaf DTensor with ``tensor``'s values laid out on ``device_mesh`` by ``placements``.

    ::

        distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0)

    ``device_mesh``: a ``DeviceMesh`` or ``jax.sharding.Mesh`` (default: all devices, 1-D);
    ``placements``: one ``Shard(dim)``, ``Replicate()`` or ``Partial()`` per mesh dimension
    (default: replicated). The result ``requires_grad`` as ``tensor`` does; the ops on it
    return DTensors, laid out as JAX's sharding propagation places their arrays.

    Example::

        >>> mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
        >>> x = distribute_tensor(hookgrad.randn(8, 16), mesh, [Shard(0), Replicate()])
        >>> x.placements
        (Shard(dim=0), Replicate())
    """
    from ..._compile.sharding import check_fits
    if not isinstance(tensor, Tensor):
        raise TypeError(f"distribute_tensor(): argument 'tensor' must be a Tensor, got "
                        f"{type(tensor).__name__}")
    if not tensor.is_leaf:
        raise RuntimeError("`distribute_tensor` should be used to distribute leaf tensors! but "
                           "found non-leaf tensor!")
    mesh = _as_device_mesh(device_mesh)
    places = _check_placements(placements, mesh, tensor.ndim)
    if isinstance(tensor, DTensor):
        if tensor.device_mesh != mesh:
            raise ValueError(f"Cannot distribute a DTensor with device mesh "
                             f"{tensor.device_mesh} to a different device mesh {mesh}.")
        if tensor.placements != places:
            raise ValueError(f"Cannot distribute a DTensor with placements {tensor.placements} "
                             f"to a different placements {list(places)}. do you want to call "
                             "`redistribute` instead?")
        return tensor
    jm = mesh.jax_mesh
    check_fits(tuple(tensor.shape), to_spec(places, tensor.ndim, jm.axis_names), jm,
               "distribute_tensor(): argument 'tensor'")
    out = as_dtensor(Tensor._wrap(_placed(tensor.detach()._data, mesh, places)), mesh, places)
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out
