"""``torch.nn.modules.lazy``: ``LazyModuleMixin``, the base of modules whose parameters take
their shapes from the first input. hookgrad has no lazy modules yet: the class exists for
``isinstance`` checks (no hookgrad Module is one), and constructing one raises."""
from ... import _missing

__all__ = ["LazyModuleMixin"]

LazyModuleMixin = _missing.not_implemented_class("torch.nn.modules.lazy.LazyModuleMixin")

__getattr__ = _missing.module_getattr(__name__)
