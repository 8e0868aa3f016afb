"""``torch.fx.graph_module``: :class:`GraphModule`, a Module that runs a :class:`Graph`."""
import operator

from .. import _missing
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from ._codegen import python_code
from .graph import Graph

__all__ = ["GraphModule"]


def _set_at(dst, path, value):
    """Put ``value`` at dotted ``path`` on ``dst``, making the Modules on the way."""
    *prefix, last = path.split(".")
    for part in prefix:
        if getattr(dst, part, None) is None:
            setattr(dst, part, Module())
        dst = getattr(dst, part)
    if isinstance(value, Module):
        dst.add_module(last, value)
    elif isinstance(value, Tensor) and not isinstance(value, Parameter):
        dst.register_buffer(last, value)  # buffers and Tensor constants stay in state_dict
    else:
        setattr(dst, last, value)


class GraphModule(Module):
    """A Module made from ``root``'s submodules and attributes that ``graph`` names; its
    ``forward`` runs the graph's nodes in order. hookgrad interprets the graph (``code`` is
    its source, for reading), so ``graph`` edits take effect without ``recompile``."""

    _interpreter = None  # a slot: fx.interpreter puts its Interpreter class here

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__ = type(class_name, (GraphModule,), {})
        for node in graph.nodes:
            if node.op not in ("call_module", "get_attr"):
                continue
            if not isinstance(root, dict):  # the same objects as the root's, not copies
                _set_at(self, node.target, operator.attrgetter(node.target)(root))
            elif node.target in root:
                _set_at(self, node.target, root[node.target])
            else:
                raise RuntimeError(f"Node {node.name} referenced target {node.target} but "
                                   "that target was not provided in ``root``!")
        self.graph = graph
        graph.owning_module = self

    def recompile(self):
        """Nothing to regenerate: ``forward`` interprets the current graph."""
        return None

    @property
    def code(self) -> str:
        """The Python source of ``forward`` (as PyTorch writes it); what runs is the graph
        itself, through an :class:`Interpreter`."""
        return python_code(self.graph)

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
        return self._interpreter(self).run(*values)


__getattr__ = _missing.module_getattr(__name__)
