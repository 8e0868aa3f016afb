"""``torch.fx.graph``: a :class:`Graph` is the list of :class:`Node` s a trace recorded."""
import keyword
import re

from .. import _missing
from .._held_collection import _HeldCollection
from .node import ILLEGAL_NAMES, Node, qualified_name

__all__ = ["Graph"]

_SNAKE = re.compile(r"(?<=[a-z])([A-Z])")
_ILLEGAL_CHARS = re.compile("[^0-9a-zA-Z_]+")
_SUFFIX = re.compile(r"^(.*?)(?:_(\d+))?$")


class _Namespace:
    """Unique Python names for nodes: ``add``, ``add_1``, ...; never a builtin or keyword."""

    def __init__(self):
        self._used, self._next = set(), {}

    def create_name(self, candidate: str) -> str:
        name = _ILLEGAL_CHARS.sub("_", _SNAKE.sub(r"_\1", candidate).lower()) or "_unnamed"
        if name[0].isdigit():
            name = f"_{name}"
        base, num = _SUFFIX.match(name).groups()
        if num is None and name not in self._used and name not in ILLEGAL_NAMES \
                and not keyword.iskeyword(name):
            self._used.add(name)
            return name
        i = self._next.get(base, 1) if num is None else int(num)
        while f"{base}_{i}" in self._used:
            i += 1
        self._next[base] = i + 1
        name = f"{base}_{i}"
        self._used.add(name)
        return name


class _NodeList(_HeldCollection):
    _held = "_nodes"

    def __init__(self, nodes):
        self._nodes = nodes

    def __reversed__(self):
        return reversed(self._nodes)


class Graph:
    """The operations of a traced program, in order, ending with one ``output`` node."""

    def __init__(self, owning_module=None):
        self._nodes, self._names = [], _Namespace()
        self.owning_module = owning_module

    @property
    def nodes(self):
        return _NodeList(self._nodes)

    def create_node(self, op, target, args=(), kwargs=None, name=None, type_expr=None):
        """Append a :class:`Node` and return it."""
        if name is None:
            if op == "call_function":
                name = qualified_name(target).rsplit(".", 1)[-1]
            elif op == "output":
                name = "output"
            else:
                name = str(target).replace(".", "_")
        node = Node(self, self._names.create_name(name), op, target, args, kwargs or {})
        self._nodes.append(node)
        return node

    def placeholder(self, name, type_expr=None, default_value=None, has_default=False):
        return self.create_node("placeholder", name, (default_value,) if has_default else ())

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args or (), kwargs)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args or (), kwargs)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args or (), kwargs)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,))

    def __str__(self):
        return "\n".join(["graph():"] + ["    " + n.format_node() for n in self._nodes])


__getattr__ = _missing.module_getattr(__name__)
