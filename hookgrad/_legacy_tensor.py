"""PyTorch's legacy tensor types (``torch.FloatTensor``, ``torch.LongTensor``, ...): each
constructs a CPU tensor of its dtype, and ``isinstance(x, torch.FloatTensor)`` asks for a
CPU float32 Tensor."""
from . import _dtype
from ._factory import empty, tensor
from ._tensor import Size, Tensor


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
        if device is not None and _dtype.device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{_dtype.device(device).type} was passed")
        if not args:
            return empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype is not cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {args[0].dtype})")
            return args[0]
        if len(args) == 1 and isinstance(args[0], Size):
            return empty(args[0], dtype=cls.dtype)
        if len(args) == 1 and not isinstance(args[0], int):
            return tensor(args[0], dtype=cls.dtype)
        if not all(isinstance(a, int) for a in args):
            raise TypeError(f"new(): argument 'size' must be tuple of ints, but found element of "
                            f"type {type(args[-1]).__name__}")
        return empty(*args, dtype=cls.dtype)


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
