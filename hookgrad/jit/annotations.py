"""``torch.jit.annotations``: the type names TorchScript signatures use.

``BroadcastingListN[T]`` annotates an argument given as one ``T`` or a list of ``N`` of
them; as in PyTorch, subscripting it gives None (it only means something to the
TorchScript compiler, which hookgrad does not have).
"""
from typing import Any, Dict, List, Tuple  # noqa: F401 - PyTorch re-exports them here

from .. import _missing

__all__ = ["Any", "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Dict",
           "List", "Tuple"]


class BroadcastingListCls:
    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingListCls()
BroadcastingList2 = BroadcastingListCls()
BroadcastingList3 = BroadcastingListCls()

__getattr__ = _missing.module_getattr(__name__)
