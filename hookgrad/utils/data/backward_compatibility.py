"""``torch.utils.data.backward_compatibility``: kept for old DataLoader code."""

from ... import _missing
from ... import _errors

__all__ = ["worker_init_fn"]


def worker_init_fn(worker_id) -> None:
    """Deprecated and does nothing: DataLoader shards DataPipes in each worker itself."""
    _errors.warn("Usage of `backward_compatibility.worker_init_fn` is deprecated as "
                 "`DataLoader` automatically applies sharding in every worker",
                 FutureWarning)


__getattr__ = _missing.module_getattr(__name__)
