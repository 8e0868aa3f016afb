"""``torch._utils_internal``: hooks a PyTorch build may customise for its environment."""


def prepare_multiprocessing_environment(path: str) -> None:
    """Prepare the environment of worker processes started from ``path``: nothing to do
    in this build, as in PyTorch's open-source one."""
