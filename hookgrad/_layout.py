"""``torch.layout`` and ``torch.memory_format``: the named constants PyTorch code compares
and passes (``torch.strided``, ``torch.channels_last``). hookgrad's tensors are all
strided; a memory format is accepted and has no effect on the values (JAX chooses the
physical layout)."""


class _Named:
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name


class layout(_Named):
    """A tensor layout (``strided``; the sparse ones name PyTorch's, which hookgrad lacks)."""

    __slots__ = ()


class memory_format(_Named):
    """A memory format: ``contiguous_format``, ``channels_last``, ``channels_last_3d``,
    ``preserve_format``."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = memory_format("legacy_contiguous_format")
