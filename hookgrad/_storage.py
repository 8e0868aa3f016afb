"""A Tensor's storage and the address of its bytes: ``data_ptr()``, ``untyped_storage()``,
``storage()``.

A Tensor's storage is its root's array (the Tensor itself, or the base its view or
``.data``/``detach()`` alias reads; hookgrad/_views.py): writes through views keep that
array current, in C order. On the CPU its address is the array's buffer, which lives as
long as the array, so ``data_ptr()`` is the real address readers such as safetensors
read through ctypes. Where no host address exists (an accelerator's buffer, a traced
value) reading it raises; a meta Tensor's is 0, as PyTorch's.
"""

import jax
import numpy as np

from ._errors import traced_value_error
from ._meta import MetaArray
from . import _errors


def _root(t):
    """(the Tensor whose array holds ``t``'s elements, ``t``'s offset in it, in elements)."""
    info = t._view
    if info is None or info.gen != info.base._gen:  # no alias, or no longer one
        return t, 0
    return info.base, info.geom[2]


def _address(root):
    """The address of the first byte of ``root``'s array on the host; 0 where it has no
    bytes (the meta device, no elements)."""
    arr = root._data  # a deferred value is computed here: its bytes must exist
    if arr.__class__ is MetaArray or arr.size == 0:
        return 0
    if isinstance(arr, jax.core.Tracer):
        raise traced_value_error("data_ptr()")
    if arr.is_deleted():
        raise RuntimeError("data_ptr(): the Tensor's array was deleted (donated to a compiled "
                           "step); read the Tensor the step returned instead")
    devices = arr.devices()
    if len(devices) != 1 or next(iter(devices)).platform != "cpu":
        # NotImplementedError: what readers such as safetensors expect of a storage
        # without an address (they then copy the Tensor to the CPU)
        where = (f"is sharded over {len(devices)} devices" if len(devices) != 1 else
                 f"lives on {next(iter(devices))}, not in host memory")
        raise NotImplementedError(
            f"hookgrad cannot give the address of this Tensor's bytes: its JAX array {where}. "
            "Copy it to the CPU first: t.cpu().data_ptr()")
    arr.block_until_ready()  # the bytes are written once the op that makes them has run
    return arr.unsafe_buffer_pointer()


def data_ptr(t):
    """The address of ``t``'s first element: its storage's address plus
    ``storage_offset() * element_size()``."""
    root, offset = _root(t)
    base = _address(root)
    return base + offset * t.element_size() if base else 0


class _FromTensor:
    """A storage hookgrad makes only from a Tensor: ``cls._of(tensor)`` makes one that
    holds it (``_hold``); constructing one directly raises, naming the class."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"hookgrad does not implement torch.{type(self).__name__}"
                                  "(...) yet: a storage comes from a Tensor "
                                  "(t.untyped_storage())")

    @classmethod
    def _of(cls, tensor):
        s = object.__new__(cls)
        s._hold(tensor)
        return s


class UntypedStorage(_FromTensor):
    """The bytes of a Tensor's storage, as ``torch.UntypedStorage`` (what
    ``Tensor.untyped_storage()`` returns): ``data_ptr()``, ``nbytes()``, ``device``.

    hookgrad makes storages only from Tensors; ``UntypedStorage(size)`` and the methods
    that write bytes are not implemented (JAX arrays are values).
    """

    def _hold(self, tensor):
        self._tensor = _root(tensor)[0]

    def data_ptr(self) -> int:
        return _address(self._tensor)

    def nbytes(self) -> int:
        t = self._tensor
        return t.numel() * t.element_size()

    def size(self) -> int:
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    @property
    def device(self):
        return self._tensor.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_meta(self):
        return self._tensor.is_meta

    def tolist(self) -> list:
        return np.ascontiguousarray(np.asarray(self._tensor._data)).view(np.uint8) \
            .reshape(-1).tolist()

    def __repr__(self):
        return f"UntypedStorage of {self.nbytes()} bytes on {self.device}"


class TypedStorage(_FromTensor):
    """A storage of elements of one dtype, as ``torch.TypedStorage`` (what the deprecated
    ``Tensor.storage()`` returns)."""

    def _hold(self, tensor):
        self._untyped, self.dtype = UntypedStorage._of(tensor), tensor.dtype

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def size(self) -> int:
        return self.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    @property
    def device(self):
        return self._untyped.device

    @property
    def is_cuda(self):
        return self._untyped.is_cuda

    def tolist(self) -> list:
        return self._untyped._tensor.reshape(-1).tolist()

    def __repr__(self):
        return f"TypedStorage of {self.size()} {self.dtype} elements on {self.device}"


_warned = [False]


def warn_typed_storage(stacklevel):
    """PyTorch's deprecation warning for ``Tensor.storage()``, once per process."""
    if not _warned[0]:
        _warned[0] = True
        _errors.warn("TypedStorage is deprecated. It will be removed in the future and "
                     "UntypedStorage will be the only storage class. This should only "
                     "matter to you if you are using storages directly.  To access "
                     "UntypedStorage directly, use tensor.untyped_storage() instead of "
                     "tensor.storage()", UserWarning)
