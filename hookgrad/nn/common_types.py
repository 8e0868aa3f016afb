"""``hookgrad.nn.common_types``: the type aliases layer signatures use, PyTorch's names:
``_size_2_t`` (an int or a pair of ints), ``_ratio_3_t`` (a float or three), ..."""
from typing import TypeVar, Union

from .._tensor import Tensor

T = TypeVar("T")

_scalar_or_tuple_any_t = Union[T, tuple[T, ...]]
# "a T or n of them", n = 1 .. 6: _scalar_or_tuple_1_t, ... and their int forms _size_n_t
for _n in range(1, 7):
    globals()[f"_scalar_or_tuple_{_n}_t"] = Union[T, tuple[(T,) * _n]]
    globals()[f"_size_{_n}_t"] = globals()[f"_scalar_or_tuple_{_n}_t"][int]
del _n

_size_any_t = _scalar_or_tuple_any_t[int]
_size_any_opt_t = _scalar_or_tuple_any_t[Union[int, None]]
_size_2_opt_t = _scalar_or_tuple_2_t[Union[int, None]]  # noqa: F821 - made above
_size_3_opt_t = _scalar_or_tuple_3_t[Union[int, None]]  # noqa: F821
_ratio_2_t = _scalar_or_tuple_2_t[float]  # noqa: F821
_ratio_3_t = _scalar_or_tuple_3_t[float]  # noqa: F821
_ratio_any_t = _scalar_or_tuple_any_t[float]
_tensor_list_t = _scalar_or_tuple_any_t[Tensor]
_maybe_indices_t = _scalar_or_tuple_2_t[Tensor]  # noqa: F821


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
