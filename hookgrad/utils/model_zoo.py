"""``torch.utils.model_zoo``: ``load_url``, the older name of
``torch.hub.load_state_dict_from_url``."""
from ..hub import load_state_dict_from_url as load_url
from ..hub import tqdm  # noqa: F401 - PyTorch's model_zoo re-exports it too

__all__ = ["load_url"]

from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
