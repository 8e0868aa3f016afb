"""``torch.onnx.symbolic_helper``: the decorator symbolic functions are written with."""
import functools

from .. import _missing

__all__ = ["parse_args"]


def parse_args(*arg_descriptors):
    """Declare how an ONNX symbolic function's arguments are read (``"v"`` value, ``"i"``
    int, ``"f"`` float, ...). The decorated function runs only during an ONNX export,
    which hookgrad does not implement: calling it raises."""
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            raise NotImplementedError(f"hookgrad does not implement torch.onnx export yet, so "
                                      f"the symbolic function {fn.__qualname__} cannot run")
        wrapper._arg_descriptors = arg_descriptors
        return wrapper
    return decorator


__getattr__ = _missing.module_getattr(__name__)
