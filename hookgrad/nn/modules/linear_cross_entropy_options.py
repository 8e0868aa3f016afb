"""``nn.LinearCrossEntropyOptions``: the settings of PyTorch's chunked
``linear_cross_entropy`` kernel. hookgrad accepts and validates them; its loss is always
the reference computation, compiled by XLA as one program."""
import dataclasses

from ... import _dtype

__all__ = ["LinearCrossEntropyOptions"]

_POLICIES = {"auto", "accurate", "balanced", "compact"}


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How PyTorch's chunked ``linear_cross_entropy`` splits the batch.

    ::

        LinearCrossEntropyOptions(allow_retain_graph=False, batch_chunk_size=None,
                                  chunking_method='auto', acc_policy='auto', acc_dtype=None)

    ``batch_chunk_size``: rows per chunk (None: one chunk); ``chunking_method``: ``'auto'``,
    ``'aspect_ratio'`` or ``'aspect_ratio:N'``, or None to use ``batch_chunk_size``;
    ``acc_policy``: ``'auto'``, ``'accurate'``, ``'balanced'`` or ``'compact'``;
    ``acc_dtype``: the accumulation dtype (None: chosen per input). Validated on
    construction; hookgrad's loss does not chunk (docs/differences.md).
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        allowed = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)
        if self.acc_dtype is not None and self.acc_dtype not in allowed:
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
