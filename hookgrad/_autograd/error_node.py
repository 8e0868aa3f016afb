"""``Error``: a graph node that raises when backward reaches it (PyTorch's
``torch::autograd::Error``), for outputs whose derivative is not implemented. In the graph's
layer, so that ops (``set_``) and Functions (``once_differentiable``) can both make one."""
from .graph import _Node


class _MetaNode(_Node):
    """A node with no inputs of its own, made for outputs of the given metadata (one
    ``_InputMetadata`` per output): ``Error``, ``torch._C._functions.UndefinedGradBackward``."""

    __slots__ = ("_meta",)

    def __init__(self, meta):
        _Node.__init__(self, ())
        self._meta = meta

    def _out_meta(self):
        return self._meta


class Error(_MetaNode):
    """Node that fails when reached: outputs of a ``once_differentiable`` backward."""

    __slots__ = ("_msg",)
    _apply_undefined = True

    def __init__(self, msg, meta):
        _MetaNode.__init__(self, meta)
        self._msg = msg

    def name(self):
        return "torch::autograd::Error"

    def _apply(self, grads, create_graph):
        raise RuntimeError(self._msg)


_DelayedError = Error  # the name the graph's users import (PyTorch's DelayedError makes it)
