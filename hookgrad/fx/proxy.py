"""``torch.fx.proxy``: a :class:`Proxy` stands for a value while a function is traced; what is
done to it is recorded in the tracer's graph instead of computed."""
import dis
import inspect
import operator

from .. import _missing
from .node import Node

__all__ = ["Proxy", "Attribute", "TraceError"]


class TraceError(ValueError):
    """A traced program did something with a Proxy that cannot be recorded."""


class Proxy:
    """The value of ``node`` during tracing: operators, method calls and attribute reads on
    it, and hookgrad functions called with it, add nodes to ``tracer``'s graph."""

    def __init__(self, node: Node, tracer=None):
        self.node, self.tracer = node, tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, name):
        if name.startswith("_"):
            # private probes (copy, pickle, NumPy, hookgrad's own dispatch) are not recorded
            raise AttributeError(f"'Proxy' object has no attribute {name!r}")
        return Attribute(self, name)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti and inst.opname == "UNPACK_SEQUENCE":
                return iter([self[i] for i in range(inst.argval)])
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function "
                         "argument. See the torch.fx docs on pytorch.org for a more detailed "
                         "explanation of what types of control flow can be traced, and check "
                         "out the Proxy docstring for help troubleshooting Proxy iteration "
                         "errors")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call torch.fx.wrap('len') "
                           "at module scope")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    def __index__(self):
        raise TraceError("symbolically traced variables cannot be used as an index (int)")


class Attribute(Proxy):
    """``proxy.name``: a method call when called, else a ``getattr`` node when used."""

    def __init__(self, root: Proxy, attr: str):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __repr__(self):
        return f"Attribute({self.root!r}.{self.attr})"

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(op):
    def forward(self, other):
        return self.tracer.create_proxy("call_function", op, (self, other), {})

    def reflected(self, other):
        return self.tracer.create_proxy("call_function", op, (other, self), {})
    return forward, reflected


def _unary(op):
    def method(self):
        return self.tracer.create_proxy("call_function", op, (self,), {})
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
              "or", "xor", "lshift", "rshift"):
    _fwd, _rev = _binary(getattr(operator, _name + "_" if _name in ("and", "or") else _name))
    setattr(Proxy, f"__{_name}__", _fwd)
    setattr(Proxy, f"__r{_name}__", _rev)
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__

__getattr__ = _missing.module_getattr(__name__)
