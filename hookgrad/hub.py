"""``torch.hub``: downloading checkpoints into a cache (:func:`load_state_dict_from_url`, what
model code such as torchvision's calls). Loading models from GitHub repositories
(``load``, ``list``, ``help``) is not implemented."""
import hashlib
import os
import re
import shutil
import tempfile
import urllib.parse
import urllib.request

from . import _missing

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir = None

try:  # the progress bar PyTorch re-exports here (torchvision imports it from model_zoo)
    from tqdm import tqdm
except ImportError:  # pragma: no cover - tqdm is optional
    tqdm = _missing.not_implemented_class("torch.hub.tqdm")


def _get_torch_home():
    """``$TORCH_HOME``, else ``$XDG_CACHE_HOME/torch`` (``~/.cache/torch``): where PyTorch
    and libraries (torchvision's datasets) keep downloads."""
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir() -> str:
    """The hub cache directory: ``set_dir``'s, else ``$TORCH_HOME/hub``, else
    ``$XDG_CACHE_HOME/torch/hub`` (``~/.cache/torch/hub``)."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    """Use ``d`` as the hub cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True) -> None:
    """Download ``url`` to the file ``dst`` (written whole or not at all); with
    ``hash_prefix``, the file's SHA-256 must start with it."""
    dst = os.path.expanduser(dst)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(dst)), suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url) as src:
            while chunk := src.read(1 << 16):
                out.write(chunk)
                digest.update(chunk)
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                               f'"{digest.hexdigest()}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Load the object saved at ``url`` (``hookgrad.load``), downloading it into
    ``model_dir`` (``<hub dir>/checkpoints``) unless it is there already. With
    ``check_hash``, the file name's ``-<hex>.`` part must prefix its SHA-256."""
    model_dir = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress)
    from .serialization import load
    return load(cached, map_location=map_location, weights_only=weights_only)


load = _missing.not_implemented("torch.hub.load")
list = _missing.not_implemented("torch.hub.list")  # noqa: A001 - PyTorch's name
help = _missing.not_implemented("torch.hub.help")  # noqa: A001 - PyTorch's name

__getattr__ = _missing.module_getattr(__name__)
