"""Memory formats (``torch.contiguous_format`` ...): how a Tensor's elements are laid out
in its storage. hookgrad's arrays are XLA's, laid out by XLA, so a ``memory_format``
argument is accepted and changes no result; ``channels_last`` does not reorder strides
(docs/differences.md)."""

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]


class memory_format:
    """A memory format, named as in PyTorch."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "hookgrad." + self._name

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
