"""``torch.fx.interpreter``: :class:`Interpreter` runs a Graph node by node; subclasses
override one kind of node (``call_function``, ...) to change what running means.
:class:`Transformer` runs it on Proxies, to make a new graph."""
import operator

from .. import _missing
from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs ``graph`` (``module.graph`` by default) with ``module``'s submodules and
    attributes: :meth:`run` gives the placeholders their values, calls :meth:`run_node`
    for each node in order and returns the output node's value."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.garbage_collect_values = garbage_collect_values
        self.env = {}

    def run(self, *args, initial_env=None, enable_io_processing=True):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        # a value no later node reads is dropped after its last reader
        last_use = {}
        if self.garbage_collect_values:
            for node in self.graph.nodes:
                for inp in node.all_input_nodes:
                    last_use[inp] = node
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for inp in node.all_input_nodes:
                    if last_use.get(inp) is node:
                        del self.env[inp]
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target, args, kwargs):
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from None

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    def fetch_attr(self, target: str):
        """The attribute at dotted path ``target`` of the module."""
        try:
            return operator.attrgetter(target)(self.module)
        except AttributeError:
            raise RuntimeError(f"Node referenced nonexistent target {target}") from None

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        def value(node):
            if node not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {node}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[node]
        return map_arg(args, value)

    def boxed_run(self, args_list):
        args = list(args_list)
        args_list.clear()
        return self.run(*args)


__getattr__ = _missing.module_getattr(__name__)


class Transformer(Interpreter):
    """Makes a new GraphModule from ``module``'s graph: each node is run on Proxies, so
    what a subclass's methods return (another target, more calls) is recorded in the new
    graph in the node's place."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = Tracer()
        self.tracer.is_leaf_module = lambda m, name: True  # the graph's calls stay calls
        self.tracer.graph, self.tracer.root = self.new_graph, module
        self.tracer._paths = {id(m): n for n, m in module.named_modules()}
        self.tracer._tensor_paths = {id(t): n for n, t in module.named_parameters()}
        self.tracer._tensor_paths.update({id(t): n for n, t in module.named_buffers()})

    def placeholder(self, target, args, kwargs):
        node = self.new_graph.placeholder(target, default_value=args[0] if args else None,
                                          has_default=bool(args))
        return self._proxy(node)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def _proxy(self, node):
        return Proxy(node, self.tracer)

    def transform(self):
        """The new GraphModule (its class named as PyTorch names it, ``GraphModule``)."""
        result = self.run(*[None] * sum(n.op == "placeholder" for n in self.graph.nodes))
        self.new_graph.output(self.tracer.create_arg(result))
        return GraphModule(self.module, self.new_graph)


GraphModule._interpreter = Interpreter  # GraphModule.forward runs its graph with one
