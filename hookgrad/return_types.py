"""Named-tuple results of ops that return several tensors (``hookgrad.return_types.max``)."""
from ._ops.reduction import return_types as _types

max = _types["max"]  # noqa: A001 - PyTorch's names
min = _types["min"]  # noqa: A001
sort = _types["sort"]
topk = _types["topk"]
kthvalue = _types["kthvalue"]
median = _types["median"]
aminmax = _types["aminmax"]
cummax = _types["cummax"]
cummin = _types["cummin"]

__all__ = ["max", "min", "sort", "topk", "kthvalue", "median", "aminmax", "cummax", "cummin"]


from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
