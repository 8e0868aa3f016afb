"""``torch.mtia`` graph capture, which needs the MTIA backend."""
from .. import _missing
from ._backend import MTIA

__all__ = ["MTIAGraph", "graph", "graph_pool_handle"]


def graph_pool_handle():
    """A memory-pool token for graphs (raises: no MTIA backend)."""
    raise MTIA.without("graphPoolHandle")


class MTIAGraph:
    """A captured MTIA graph (raises: no MTIA backend)."""

    def __init__(self, keep_graph=False):
        raise MTIA.without("mtiagraphCreate")


class graph:
    """Context-manager capturing MTIA work into an ``MTIAGraph`` (raises: it asks for the
    current stream, and there is no MTIA device)."""

    default_capture_stream = None

    def __init__(self, mtia_graph, pool=None, stream=None):
        if type(self).default_capture_stream is None:
            MTIA.device_index(None, optional=True)


__getattr__ = _missing.module_getattr(__name__)
