"""A Tensor's values read on the host: ``item``, ``tolist``, ``numpy``, ``__array__``,
Python's conversions (``bool``, ``float``, ``int``, ``len``, iteration) and printing. ``Tensor``
inherits them; a traced Tensor has no value to read, and while ``hookgrad.compile``
runs a hook on the host, ``READER`` says which array a read reads.
"""
import jax
import numpy as np

from . import _host_transfer
from ._host_value import Host
from ._errors import traced_value_error


class HostValues:
    """The methods of ``Tensor`` that read its value into Python or NumPy."""

    __slots__ = ()

    def item(self):
        h = self._arr
        if h.__class__ is Host and READER[0] is None and h.np.size == 1:
            return h.np.item()  # a loop's ``labels[i].item()``: its host memory, read
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return _one(self, ".item()")

    def tolist(self):
        h = self._arr
        if h.__class__ is Host and READER[0] is None:
            return h.np.tolist()
        arr = _readable(self, ".tolist()")
        host = _host_transfer.known(arr)
        return np.asarray(arr if host is None else host).tolist()

    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.is_meta:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        return np.asarray(_readable(self, ".numpy()"))

    def __array__(self, dtype=None, copy=None):
        # read-only where it is the device buffer itself
        arr = np.asarray(_readable(self, "np.asarray(tensor)"))
        if dtype is not None and arr.dtype != np.dtype(dtype):
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return arr.astype(dtype)
        # NOTE: np.array(t) asks for a copy (copy=True) and must get a writable one
        return arr.copy() if copy else arr

    def __jax_array__(self):
        return self._data

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(_one(self, "bool(tensor)"))

    def _one_value(self):
        if self.numel() != 1:  # PyTorch's error type here: ValueError
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __float__(self):
        return float(self._one_value())

    def __int__(self):
        return int(self._one_value())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec) if spec else repr(self)

    def __repr__(self):
        _check_concrete(self, "printing a Tensor")
        from ._repr import tensor_repr
        return tensor_repr(self)


def _one(t, what):
    """The one value of ``t`` (one element) as a Python number, read as ``what``: its host
    memory, or the NumPy copy a small array remembers, else one transfer. NOTE: no
    ``reshape(())`` of the array first: that is an XLA dispatch, costlier than the read."""
    h = t._arr
    if h.__class__ is Host and READER[0] is None:  # held on the host: no transfer
        return h.np.item()
    arr = _readable(t, what)
    host = _host_transfer.known(arr)  # read on the host already: no transfer
    return (arr if host is None else host).item()


def _check_concrete(t, what):
    # a traced Tensor (inside hookgrad.compile or a JAX transformation) has no value yet
    if isinstance(t._data, jax.core.Tracer):
        raise traced_value_error(what)


# while ``hookgrad.compile`` traces a hook or runs it on the host: ``read(t, what)``, the
# array a value read of ``t`` reads (``hookgrad._compile.host_run``)
READER = [None]


def _readable(t, what):
    """The array to read ``t``'s value from (``.item()``, ``.tolist()``, ``.numpy()``)."""
    reader = READER[0]
    if reader is not None:
        return reader(t, what)
    h = t._arr
    if h.__class__ is Host:  # held on the host: its memory, read-only, and no transfer
        v = h.np.view()
        v.flags.writeable = False
        return v
    _check_concrete(t, what)
    return t._data
