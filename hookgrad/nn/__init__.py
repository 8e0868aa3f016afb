"""Neural-network modules with PyTorch's module hooks (``hookgrad.nn``)."""
from . import common_types, functional, grad, init, modules, parameter, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from . import parallel  # noqa: E402 - needs modules
from .parallel import DataParallel  # noqa: E402
from . import _optimized_module  # noqa: E402,F401 - fills _compile.state.MODULE_COMPILE
from . import attention  # noqa: E402,F401 - torch.nn.attention comes with torch.nn
from . import quantized  # noqa: E402,F401 - as torch.nn.quantized comes with torch.nn

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional",
           "init", "utils", *_modules_all]
__all__ += ["parallel", "DataParallel"]


def factory_kwargs(kwargs):
    """The ``device``/``dtype``/``memory_format`` factory arguments of ``kwargs`` as one dict
    (merged with a ``factory_kwargs`` entry); a key given twice or any other key is a
    ``TypeError``."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - (simple | {"factory_kwargs"})
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for k in simple & kwargs.keys():
        if k in out:
            raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
        out[k] = kwargs[k]
    return out


__all__ += ["factory_kwargs"]


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
