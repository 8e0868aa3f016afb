"""``torch.cuda`` graph capture: JAX compiles whole programs instead (``hookgrad.compile``),
so there is no stream to capture. The names exist for code that mentions them (type
annotations, ``isinstance``); capturing raises ``NotImplementedError``."""
from .. import _missing

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables",
           "is_current_stream_capturing"]

CUDAGraph = _missing.not_implemented_class("torch.cuda.CUDAGraph")
graph = _missing.not_implemented_class("torch.cuda.graph")
graph_pool_handle = _missing.not_implemented("torch.cuda.graph_pool_handle")
make_graphed_callables = _missing.not_implemented("torch.cuda.make_graphed_callables")


def is_current_stream_capturing() -> bool:
    """Whether a CUDA graph capture is under way on the current stream: never under
    hookgrad, which captures none."""
    return False


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
