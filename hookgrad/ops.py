"""``hookgrad.ops``, PyTorch's ``torch.ops``: operators by namespace.

``torch.ops.<namespace>.<name>`` is the operator ``"<namespace>::<name>"`` defined with
:func:`hookgrad.library.custom_op` (or the older ``hookgrad._custom_op`` API), and
``torch.ops.<namespace>.<name>.default`` its single overload; calling either runs it.
``torch.ops.aten.<name>.<overload>`` is an op-table row, named as ATen names it
(``torch.ops.aten.mm.default``, ``torch.ops.aten.mul.Tensor``), which dispatch modes
receive as ``func``.

:func:`load_library` cannot load a C++ extension built for PyTorch: its code registers
operators with libtorch's dispatcher, which hookgrad does not have. For the extensions
listed in ``hookgrad._extensions`` (torchvision's ``_C``), it defines the same
operators, with the same schemas, computed with JAX instead, so the Python code of those
libraries runs unchanged.
"""
import importlib as _importlib
import os as _os
import types as _types

from . import _extensions, _missing
from . import library as _library
from ._custom_op import impl as _old_api
from ._ops import overloads as _overloads

__all__ = ["import_module", "load_library", "loaded_libraries"]

loaded_libraries = set()


def _lookup(qualname):
    opdef = _library.OPDEFS.get(qualname)
    return opdef if opdef is not None else _old_api.global_registry.get(qualname)


class OpOverload:
    """One overload of an operator, ``torch.ops.<ns>.<name>.default``; call it to run."""

    def __init__(self, packet, op):
        self._overloadpacket, self._op = packet, op
        self._name = packet._qualified_op_name
        self._overloadname = "default"
        self.__name__ = f"{packet.__name__}.default"
        self.__module__ = packet.__module__

    @property
    def _schema(self):
        return self._op._schema

    @property
    def overloadpacket(self):
        return self._overloadpacket

    def name(self):
        return self._name

    @property
    def namespace(self):
        return self._name.split("::")[0]

    def __repr__(self):
        ns, name = self._name.split("::")
        return f"<OpOverload(op='{ns}.{name}', overload='default')>"

    def __call__(self, /, *args, **kwargs):
        return self._op(*args, **kwargs)


class OpOverloadPacket:
    """All overloads of an operator, ``torch.ops.<ns>.<name>``: calling it runs the one
    the arguments select (hookgrad's operators have one, ``default``)."""

    def __init__(self, qualified_op_name, op_name, op):
        self._qualified_op_name, self._op = qualified_op_name, op
        self.__name__ = op_name
        self.__module__ = "torch.ops." + qualified_op_name.split("::")[0]
        self.default = OpOverload(self, op)

    @property
    def _schema(self):
        return self._op._schema

    def overloads(self):
        return ["default"]

    def __repr__(self):
        return "<OpOverloadPacket(op='{}.{}')>".format(*self._qualified_op_name.split("::"))

    def __call__(self, /, *args, **kwargs):
        return self._op(*args, **kwargs)


class _OpNamespace(_types.ModuleType):
    """``torch.ops.<ns>``: its operators are looked up (and cached) on first access."""

    def __init__(self, name):
        super().__init__("torch.ops." + name)
        self.name = name
        self._dir = []

    def __iter__(self):
        return iter(self._dir)

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(f"Invalid attribute '{op_name}' for '_OpNamespace' '{self.name}'")
        op = _lookup(f"{self.name}::{op_name}")
        if op is None and self.name == "aten":  # an op-table row
            found = _overloads.packet(op_name)
            if found is not None:
                setattr(self, op_name, found)
                self._dir.append(op_name)
                return found
        if op is None:
            if self.name in ("aten", "prims"):  # PyTorch's own operators
                raise _missing.missing(f"'_OpNamespace' '{self.name}' object",
                                       f"torch.ops.{self.name}", op_name)
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'")
        packet = OpOverloadPacket(f"{self.name}::{op_name}", op_name, op)
        setattr(self, op_name, packet)
        self._dir.append(op_name)
        return packet


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    namespace = globals()[name] = _OpNamespace(name)  # torch.ops.<ns>, made on first use
    return namespace


def _default_overload(opdef):
    ns, name = opdef._qualname.split("::")
    return getattr(getattr(_ns_module(ns), name), "default")


def _ns_module(ns):
    found = globals().get(ns)
    return found if found is not None else __getattr__(ns)


_library.OVERLOAD_OF[0] = _default_overload


def import_module(module):
    """Import a Python module that has ``torch.library`` registrations."""
    _importlib.import_module(module)


def load_library(path):
    """Load the operators of the shared library at ``path``.

    hookgrad cannot run a C++ extension built for PyTorch (it registers its operators
    with libtorch). For an extension whose operators hookgrad supplies (torchvision's
    ``_C``), it defines them, with the extension's schemas, computed with JAX; any other
    raises ``OSError``, as PyTorch does for a library it cannot load. After loading,
    ``path`` is in :data:`loaded_libraries`.
    """
    path = _os.path.realpath(_os.fspath(path))
    supplier = _extensions.supplier(path)
    if supplier is None:
        raise OSError(f"Could not load this library: {path}: hookgrad cannot load a C++ "
                      "extension built for PyTorch (its operators register with libtorch). "
                      f"hookgrad supplies the operators of {_extensions.supplied()}; define "
                      "others with hookgrad.library.custom_op")
    _importlib.import_module(supplier)
    loaded_libraries.add(path)
