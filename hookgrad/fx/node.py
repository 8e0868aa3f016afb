"""``torch.fx.node``: a :class:`Node` is one operation of a :class:`~torch.fx.Graph`."""
import builtins

from .. import _missing

__all__ = ["Node", "map_arg", "map_aggregate"]

# how a target prints: PyTorch's paths for hookgrad's own functions (filled by the tracer)
QUALNAMES = {}
_MODULE_NAMES = {"_operator": "operator", "builtins": "builtins"}


def qualified_name(target) -> str:
    """``torch.relu``, ``operator.add``: the dotted name a call_function target prints as."""
    if isinstance(target, str):
        return target
    known = QUALNAMES.get(id(target))
    if known is not None:
        return known
    module = getattr(target, "__module__", None) or "builtins"
    module = _MODULE_NAMES.get(module, module)
    if module == "hookgrad" or module.startswith("hookgrad."):
        module = "torch" + module[len("hookgrad"):]
    return f"{module}.{target.__name__}"


def map_aggregate(a, fn):
    """``a`` with ``fn`` applied to each item inside its tuples, lists, dicts and slices."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """``a`` with ``fn`` applied to each :class:`Node` inside it."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(a):
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, tuple) and not hasattr(a, "_fields"):
        items = ", ".join(_format_arg(x) for x in a)
        return f"({items},)" if len(a) == 1 else f"({items})"
    if isinstance(a, list):
        return "[" + ", ".join(_format_arg(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in a.items()) + "}"
    return str(a)


class Node:
    """One operation: ``op`` is ``placeholder``, ``get_attr``, ``call_function``,
    ``call_module``, ``call_method`` or ``output``; ``target`` what it calls or reads;
    ``args``/``kwargs`` its inputs (other Nodes among them); ``users`` the Nodes that read it.
    """

    def __init__(self, graph, name, op, target, args, kwargs):
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.args, self.kwargs = tuple(args), dict(kwargs)
        self.users = {}
        self.meta = {}
        for n in self.all_input_nodes:
            n.users.setdefault(self, None)

    @property
    def all_input_nodes(self) -> list:
        found = {}
        map_arg((self.args, self.kwargs), lambda n: found.setdefault(n, None))
        return list(found)

    def format_node(self) -> str:
        """The node as ``str(graph)`` prints it."""
        if self.op == "output":
            return f"return {self.args[0]!r}"
        head = f"%{self.name} : [num_users={len(self.users)}] = {self.op}"
        target = qualified_name(self.target) if self.op == "call_function" else self.target
        if self.op == "placeholder":
            default = f"(default={self.args[0]})" if self.args else ""
            return f"{head}[target={target}]{default}"
        if self.op == "get_attr":
            return f"{head}[target={target}]"
        return (f"{head}[target={target}](args = {_format_arg(self.args)}, "
                f"kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self):
        return self.name


# what a node may not be named (it would shadow these in generated code)
ILLEGAL_NAMES = set(dir(builtins)) | {"inf", "nan", "torch", "math", "device",
                                      "fx_pytree", "pytree", "NoneType"}

__getattr__ = _missing.module_getattr(__name__)
