"""``torch.export.custom_obj``: TorchScript objects in an exported program. hookgrad has no
TorchScript objects, so there are none to describe."""
from .. import _missing

__all__ = ["ScriptObjectMeta"]

ScriptObjectMeta = _missing.not_implemented_class("torch.export.custom_obj.ScriptObjectMeta")

__getattr__ = _missing.module_getattr(__name__)
