"""Questions ``torch`` answers about any object: ``typename``, ``is_storage``, and the
Tensor queries it also offers as functions (``get_device``, ``is_inference``)."""
from typing import Any

from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor


def typename(obj: Any, /) -> str:
    """The fully qualified name of ``obj``'s type: a Tensor's legacy type
    (``'torch.FloatTensor'``), a class's or function's own ``module.qualname``, else its
    class's; builtins go unqualified (``'int'``)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj: Any, /) -> bool:
    """Whether ``obj`` is a storage (``UntypedStorage`` or ``TypedStorage``)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))


def get_device(input: Tensor) -> int:  # noqa: A002 - PyTorch's parameter name
    """``get_device(input)``: the index of the accelerator ``input`` is on; -1 on the CPU."""
    return input.get_device()


def is_inference(input: Tensor) -> bool:  # noqa: A002
    """``is_inference(input)``: whether ``input`` is an inference tensor; False, as
    hookgrad's ``inference_mode`` makes ordinary tensors (docs/differences.md)."""
    return input.is_inference()
