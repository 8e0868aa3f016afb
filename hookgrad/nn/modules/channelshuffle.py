"""``ChannelShuffle``: interleaves groups of channels (ShuffleNet)."""
from .. import functional as F
from ._functional_module import _Stored

__all__ = ["ChannelShuffle"]


class ChannelShuffle(_Stored):
    """Splits the channels of ``(N, C, *)`` into ``groups`` and interleaves them:
    ``ChannelShuffle(groups)``."""
    _fn, _args = staticmethod(F.channel_shuffle), ("groups",)

    def __init__(self, groups: int) -> None:
        super().__init__(groups)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
