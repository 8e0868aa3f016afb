"""Neural-network modules with PyTorch's module hooks (``hookgrad.nn``)."""
from . import functional, init, modules, parameter, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter
from . import parallel  # noqa: E402 - needs modules
from .parallel import DataParallel  # noqa: E402
from . import _optimized_module  # noqa: E402,F401 - fills _compile.state.MODULE_COMPILE
from . import attention  # noqa: E402,F401 - torch.nn.attention comes with torch.nn

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *_modules_all]
__all__ += ["parallel", "DataParallel"]


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
