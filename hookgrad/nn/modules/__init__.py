"""Module base class, containers and layers."""
from . import module
from .container import ModuleDict, ModuleList, Sequential
from .layers import *  # noqa: F401,F403 - every layer class
from .layers import __all__ as _layers_all
from .module import Module

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", *_layers_all]


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
