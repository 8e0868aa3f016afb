"""``Error``: a graph node that raises when backward reaches it (PyTorch's
``torch::autograd::Error``), for outputs whose derivative is not implemented. In the graph's
layer, so that ops (``set_``) and Functions (``once_differentiable``) can both make one."""
from .graph import _Node


class Error(_Node):
    """Node that fails when reached: outputs of a ``once_differentiable`` backward."""

    __slots__ = ("_msg", "_meta")
    _apply_undefined = True

    def __init__(self, msg, meta):
        _Node.__init__(self, ())
        self._msg = msg
        self._meta = meta

    def name(self):
        return "torch::autograd::Error"

    def _out_meta(self):
        return self._meta

    def _apply(self, grads, create_graph):
        raise RuntimeError(self._msg)


_DelayedError = Error  # the name the graph's users import (PyTorch's DelayedError makes it)
