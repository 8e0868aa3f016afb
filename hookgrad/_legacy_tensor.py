"""PyTorch's legacy tensor types (``torch.FloatTensor``, ``torch.LongTensor``, ...): each
constructs a CPU tensor of its dtype, and ``isinstance(x, torch.FloatTensor)`` asks for a
CPU float32 Tensor."""
import importlib

from . import _dtype
from ._ops.legacy_new import legacy_new
from ._tensor import Tensor
from . import _errors


class tensortype(type):
    """The metaclass of the legacy types: instances are the Tensors of one dtype on the
    CPU."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


class _LegacyTensor(metaclass=tensortype):
    dtype = None
    is_cuda = False
    is_sparse = False

    def __new__(cls, *args, device=None):
        """``FloatTensor(*sizes)`` (uninitialised), ``FloatTensor(data)`` (a sequence, or a
        Tensor of the same dtype) or ``FloatTensor()`` (empty)."""
        return legacy_new(cls.dtype, _dtype.device("cpu"), args,
                          {} if device is None else {"device": device}, cpu_only=True)


def _legacy(d):
    name = _dtype.TORCH_KINDS[d.name] + "Tensor"
    return tensortype(name, (_LegacyTensor,), {"dtype": d, "__module__": "torch",
                                               "__qualname__": name})


FloatTensor = _legacy(_dtype.float32)
DoubleTensor = _legacy(_dtype.float64)
HalfTensor = _legacy(_dtype.float16)
BFloat16Tensor = _legacy(_dtype.bfloat16)
ByteTensor = _legacy(_dtype.uint8)
CharTensor = _legacy(_dtype.int8)
ShortTensor = _legacy(_dtype.int16)
IntTensor = _legacy(_dtype.int32)
LongTensor = _legacy(_dtype.int64)
BoolTensor = _legacy(_dtype.bool)


def set_default_tensor_type(t, /) -> None:
    """Deprecated (``set_default_dtype`` and ``set_default_device`` replace it): make the
    floating legacy type ``t`` (``hookgrad.DoubleTensor`` or its name
    ``"torch.DoubleTensor"``) the default, i.e. its dtype the default dtype."""
    _errors.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                 "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                 UserWarning)
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module in ("torch.cuda", "hookgrad.cuda"):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if module == "torch" or module.startswith("torch."):
            module = "hookgrad" + module[len("torch"):]
        t = getattr(importlib.import_module(module), name)
    if not (isinstance(t, tensortype) and t.dtype.is_floating_point):
        if isinstance(t, tensortype):
            raise TypeError("only floating-point types are supported as the default type")
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    _dtype.set_default_dtype(t.dtype)
