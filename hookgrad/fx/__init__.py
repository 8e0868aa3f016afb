"""``torch.fx``: symbolic tracing of Modules into a :class:`Graph` of calls, and the
:class:`GraphModule` that runs it.

``symbolic_trace`` records calls to ``torch``'s and ``torch.nn.functional``'s functions,
Tensor methods, operators and built-in layers as far as a :class:`Proxy` can stand for a
hookgrad Tensor (docs/differences.md); data-dependent control flow raises
:class:`~torch.fx.proxy.TraceError` as in PyTorch. ``Interpreter`` runs a graph node by
node, ``Transformer`` rewrites one; ``replace_pattern`` is not implemented.
"""
from .. import _missing
from ._symbolic_trace import Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "replace_pattern", "has_side_effect", "map_arg"]

replace_pattern = _missing.not_implemented("torch.fx.replace_pattern")


def has_side_effect(fn):
    """Mark ``fn`` as having side effects (kept by dead-code elimination, which hookgrad's
    graphs do not run): returns ``fn``."""
    return fn


__getattr__ = _missing.module_getattr(__name__)
