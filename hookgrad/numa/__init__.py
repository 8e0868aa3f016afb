"""``torch.numa``: NUMA binding options for launchers (``torch.numa.binding``)."""
from .. import _missing
from . import binding  # noqa: F401 - PyTorch's import makes it an attribute too

__getattr__ = _missing.module_getattr(__name__)
