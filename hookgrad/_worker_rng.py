"""``torch.thread_safe_generator``: the random generator of a DataLoader thread worker."""
from typing import Any


def thread_safe_generator() -> Any:
    """The calling DataLoader thread worker's own ``Generator``; None in the main process
    and in process workers (random functions then use the default generator)."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and \
            getattr(info, "rng", None) is not None:
        return info.rng.torch_generator
    return None
