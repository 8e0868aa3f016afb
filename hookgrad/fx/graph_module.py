"""``torch.fx.graph_module``: :class:`GraphModule`, a Module that runs a :class:`Graph`."""
import operator

from .. import _missing
from ..nn.modules.module import Module
from .graph import Graph
from .node import map_arg

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
        env, args = {}, list(args)
        for node in self.graph.nodes:
            if node.op == "placeholder":
                if args:
                    env[node] = args.pop(0)
                elif node.target in kwargs:
                    env[node] = kwargs[node.target]
                elif node.args:
                    env[node] = node.args[0]
                else:
                    raise TypeError(f"forward() missing required argument: '{node.target}'")
                continue
            a = map_arg(node.args, env.__getitem__)
            k = map_arg(node.kwargs, env.__getitem__)
            if node.op == "output":
                return a[0]
            env[node] = self._run(node, a, k)
        return None

    def _run(self, node, args, kwargs):
        if node.op == "get_attr":
            return operator.attrgetter(node.target)(self)
        if node.op == "call_module":
            return self.get_submodule(node.target)(*args, **kwargs)
        if node.op == "call_method":
            return getattr(args[0], node.target)(*args[1:], **kwargs)
        return node.target(*args, **kwargs)


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
