"""``torch._dynamo._trace_wrapped_higher_order_op``: what Dynamo needs to trace some
higher-order calls. Only :class:`TransformGetItemToIndex` is here."""
import contextlib

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(contextlib.AbstractContextManager):
    """Within the block, ``tensor[i]`` with a 0-d Tensor ``i`` indexes without reading the
    index's value, so it works under ``vmap``. hookgrad's indexing never reads an index
    Tensor's value (JAX indexes by traced arrays), so the block runs unchanged."""

    def __exit__(self, *exc):
        return None


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
