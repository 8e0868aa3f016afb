"""``hookgrad.hub``, PyTorch's ``torch.hub``: where downloaded models and weights are kept.

The cache directories follow PyTorch's rules (``$TORCH_HOME``, else
``$XDG_CACHE_HOME/torch``, else ``~/.cache/torch``), so a library that computes its data
directory from them (torchvision does at import) finds the same place. Fetching from
GitHub or a URL is not implemented: those functions raise when called.
"""
import os
import warnings

from . import _missing

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir() -> str:
    """Get the Torch Hub cache directory used for storing downloaded models & weights.

    If :func:`set_dir` is not called, the default path is ``$TORCH_HOME/hub``, where the
    environment variable ``$TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch`` and
    ``$XDG_CACHE_HOME`` to ``~/.cache``.
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    """Optionally set the Torch Hub directory used to save downloaded models & weights.

    Args:
        d (str): path to a local folder to save downloaded models & weights.
    """
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


download_url_to_file = _missing.not_implemented("torch.hub.download_url_to_file")
help = _missing.not_implemented("torch.hub.help")  # noqa: A001 - PyTorch's name
list = _missing.not_implemented("torch.hub.list")  # noqa: A001 - PyTorch's name
load = _missing.not_implemented("torch.hub.load")
load_state_dict_from_url = _missing.not_implemented("torch.hub.load_state_dict_from_url")

__getattr__ = _missing.module_getattr(__name__)
