"""``torch.xpu`` graph capture: without an XPU backend, PyTorch's placeholders raise."""
from .. import _missing
from .._absent_backend import dummy_type

__all__ = ["XPUGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]


class XPUGraph(dummy_type("_XPUGraph")):
    """A captured XPU graph (needs an XPU device: making one raises)."""

    def __init__(self, keep_graph=False):
        super().__init__()


# the bindings' placeholders, made once as PyTorch's are: transformers' ``generate`` asks
# ``is_current_stream_capturing`` every step (``is_tracing``), and a class made per call
# cost more than the rest of the question
_capturing = dummy_type("_xpu_isCurrentStreamCapturing")
_pool_handle = dummy_type("_xpu_graph_pool_handle")


def is_current_stream_capturing():
    """Whether the current XPU stream is capturing (needs the XPU binding)."""
    _capturing()


def graph_pool_handle():
    """A memory-pool token for graphs (needs the XPU binding)."""
    _pool_handle()


class graph:
    """Context-manager capturing XPU work into an ``XPUGraph`` on a side stream (making
    the stream needs an XPU device: it raises)."""

    default_capture_stream = None

    def __init__(self, xpu_graph, pool=None, stream=None):
        from .streams import Stream
        if type(self).default_capture_stream is None:
            type(self).default_capture_stream = Stream()


def make_graphed_callables(callables, sample_args, num_warmup_iters=3,
                           allow_unused_input=False, pool=None):
    """Capture callables into XPU graphs: the arguments are checked as PyTorch checks them,
    then making each graph raises (it needs an XPU device)."""
    import hookgrad
    from ..utils import _pytree
    if hookgrad.is_autocast_enabled() and hookgrad.is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables does not support the autocast caching. "
                           "Please set `cache_enabled=False`.")
    if not isinstance(callables, tuple):
        callables, sample_args = (callables,), (sample_args,)
    for c, args in zip(callables, sample_args):
        if isinstance(c, hookgrad.nn.Module):
            if c._backward_hooks or c._forward_hooks or c._forward_pre_hooks:
                raise RuntimeError(
                    "Modules must not have hooks registered at the time they are passed. "
                    "However, registering hooks on modules after passing them through "
                    "make_graphed_callables is allowed.")
            if any(b.requires_grad for b in c.buffers()):
                raise RuntimeError(
                    "In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`"
                    ", only parameters may be trainable. All buffers must have "
                    "``requires_grad=False``.")
        if not all(isinstance(a, hookgrad.Tensor) for a in _pytree.tree_leaves(tuple(args))):
            raise TypeError("In the beta API, sample_args for each callable must contain only "
                            "Tensors. Other types are not allowed.")
    XPUGraph()


__getattr__ = _missing.module_getattr(__name__)
