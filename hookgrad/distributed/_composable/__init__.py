"""``torch.distributed._composable``: the composable APIs' old home (FSDP2's
``fully_shard``)."""
from . import fsdp  # noqa: F401

from ... import _missing  # noqa: E402
__getattr__ = _missing.module_getattr(__name__)
