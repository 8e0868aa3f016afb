"""A Tensor's metadata: its shape, dtype, device and layout, read without computing it."""
import math

from . import _device, _dtype, _errors
from ._memo import keep
from ._meta import MetaArray
from ._pending import Pending, placed

_META = _dtype.device("meta")
_ON_ONE, _ArrayImpl = _device.ON_ONE, _device.ARRAY  # a concrete array's class
_BY_NP = _dtype._BY_NP


class Size(tuple):
    """The shape of a Tensor: a tuple of ints, printed as ``hookgrad.Size([2, 3])``."""

    def __repr__(self):
        return f"hookgrad.Size({list(self)})"

    def numel(self):
        return math.prod(self)

    def __getitem__(self, idx):  # ``x.shape[-1]`` per op: an int is read at once
        r = tuple.__getitem__(self, idx)
        return Size(r) if idx.__class__ is slice else r


class Metadata:
    """The methods and properties of ``Tensor`` that describe it (``shape``, ``dtype``,
    ``device``, ``is_contiguous`` ...)."""

    __slots__ = ()

    # NOTE: metadata reads ``_arr``: a pending value knows its shape and dtype, so asking
    # them computes nothing
    @property
    def shape(self):
        return Size(self._arr.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._arr.shape)
        if dim.__class__ is bool:  # a tuple takes it as an index; PyTorch's parser refuses it
            raise TypeError("size(): argument 'dim' (position 1) must be int, not bool")
        shape = self._arr.shape
        try:
            return shape[dim]
        except IndexError:
            raise _errors.dim_out_of_range(dim, len(shape)) from None

    def dim(self):  # NOTE: JAX's and a pending value's ``ndim`` cost one more call
        return len(self._arr.shape)

    ndimension = dim
    ndim = property(dim)

    def numel(self):
        return math.prod(self._arr.shape)

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def dtype(self):
        dt = self._arr.dtype  # NOTE: the table first: a model's step asks ~100 times
        d = _BY_NP.get(dt)
        return _dtype.from_jax(dt) if d is None else d

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    @property
    def device(self):
        arr = self._arr
        if arr.__class__ is Pending:  # asking computes nothing: its inputs' device
            arr = placed(arr)
        if arr.__class__ is MetaArray:
            return _META
        # NOTE: ``_sharding``, what JAX's ``sharding`` property returns, without its frame
        if arr.__class__ is _ArrayImpl and (d := _ON_ONE.get(getattr(arr._sharding, "_device",
                                                                     0))):
            return d  # a model asks per step (``arange(n, device=x.device)``)
        return _device.of_array(arr)

    @property
    def is_meta(self):
        """Whether this Tensor is on the meta device: a shape and a dtype, and no data."""
        return self._arr.__class__ is MetaArray

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_quantized(self):
        """False: hookgrad has no quantized Tensors."""
        return False

    def get_device(self):
        d = self.device
        return -1 if d.type == "cpu" else (d.index or 0)

    def is_contiguous(self, memory_format=None):
        """Whether the elements lie in C order without gaps in the base's storage."""
        info = self._view
        if info is None:
            return True
        geom = info.geom  # NOTE: one read of the property (a view per few ops)
        key = geom[:2]
        found = _CONTIGUOUS.get(key)  # a model's views repeat their geometries each step
        if found is None:
            found = keep(_CONTIGUOUS, key, _contiguous(*key))
        return found

    def _is_view(self):
        # ``.data`` and ``detach()`` alias their source but are not views, as in PyTorch
        info = self._view
        return info is not None and info.diff


def _contiguous(size, stride):
    """Whether elements of sizes ``size`` at strides ``stride`` lie in C order without gaps."""
    if 0 in size:  # an empty tensor is contiguous, as PyTorch's
        return True
    want = 1
    for sz, st in reversed(tuple(zip(size, stride))):
        if sz != 1:
            if st != want:
                return False
            want *= sz
    return True


_CONTIGUOUS = {}  # (sizes, strides) -> whether they are C-contiguous
