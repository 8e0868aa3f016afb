"""``torch.fx.graph_module``: :class:`GraphModule`, a Module that runs a :class:`Graph`."""
from .. import _missing
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph
from .interpreter import Interpreter

__all__ = ["GraphModule"]


def _copy_attr(src, dst, path):
    """Put ``src``'s attribute at dotted ``path`` on ``dst`` (the same object), making the
    Modules on the way."""
    *prefix, last = path.split(".")
    for part in prefix:
        src = getattr(src, part)
        if not hasattr(dst, part) or getattr(dst, part) is None:
            setattr(dst, part, Module())
        dst = getattr(dst, part)
    value = getattr(src, last)
    if isinstance(value, Module):
        dst.add_module(last, value)
    elif isinstance(value, Tensor) and not isinstance(value, Parameter):
        dst.register_buffer(last, value)  # buffers and Tensor constants stay in state_dict
    else:
        setattr(dst, last, value)


class GraphModule(Module):
    """A Module made from ``root``'s submodules and attributes that ``graph`` names; its
    ``forward`` runs the graph's nodes in order. hookgrad interprets the graph (it does
    not generate Python source), so ``graph`` edits take effect without ``recompile``."""

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__ = type(class_name, (GraphModule,), {})
        for node in graph.nodes:
            if node.op in ("call_module", "get_attr"):
                if isinstance(root, dict):
                    _copy_attr(_Namespace(root), self, node.target)
                else:
                    _copy_attr(root, self, node.target)
        self.graph = graph
        graph.owning_module = self

    def recompile(self):
        """Nothing to regenerate: ``forward`` interprets the current graph."""
        return None

    @property
    def code(self):
        _missing.not_implemented("torch.fx.GraphModule.code")()

    def forward(self, *args, **kwargs):
        """Run the graph (an :class:`Interpreter`) on the arguments, bound to the
        placeholders by position, then by name, then from their defaults."""
        values, args = [], list(args)
        for node in self.graph.nodes:
            if node.op != "placeholder":
                continue
            if args:
                values.append(args.pop(0))
            elif node.target in kwargs:
                values.append(kwargs[node.target])
            elif node.args:
                values.append(node.args[0])
            else:
                raise TypeError(f"forward() missing 1 required positional argument: "
                                f"'{node.target}'")
        return Interpreter(self).run(*values)


class _Namespace:
    """A dict of dotted names as an object, for a GraphModule made from a dict."""

    def __init__(self, d):
        self._d = d

    def __getattr__(self, name):
        if name in self._d:
            return self._d[name]
        return _Namespace({k[len(name) + 1:]: v for k, v in self._d.items()
                           if k.startswith(name + ".")})


__getattr__ = _missing.module_getattr(__name__)
