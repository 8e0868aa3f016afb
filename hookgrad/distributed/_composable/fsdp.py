"""``torch.distributed._composable.fsdp``: FSDP2's names at their older path, the same
objects as ``hookgrad.distributed.fsdp``'s."""
from ..fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

__all__ = ["fully_shard", "MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy"]

from ... import _missing  # noqa: E402
__getattr__ = _missing.module_getattr(__name__)
