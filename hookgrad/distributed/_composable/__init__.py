"""``torch.distributed._composable``: the composable APIs' old home (FSDP2's
``fully_shard``)."""
from . import fsdp  # noqa: F401
