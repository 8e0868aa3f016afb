"""``ChannelShuffle``: interleaves groups of channels (ShuffleNet)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Splits the channels of ``(N, C, *)`` into ``groups`` and interleaves them:
    ``ChannelShuffle(groups)``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
