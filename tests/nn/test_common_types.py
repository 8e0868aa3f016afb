"""``nn.common_types``: PyTorch's aliases, the same types."""
import pytest

import hookgrad.nn.common_types as ours

try:
    import torch.nn.common_types as theirs
except ImportError:
    theirs = None

NAMES = ["_size_1_t", "_size_2_t", "_size_3_t", "_size_6_t", "_size_any_t", "_size_2_opt_t",
         "_size_3_opt_t", "_size_any_opt_t", "_ratio_2_t", "_ratio_3_t", "_ratio_any_t",
         ]


@pytest.mark.skipif(theirs is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", NAMES)
def test_alias_is_torchs(name):
    assert getattr(ours, name) == getattr(theirs, name)


@pytest.mark.skipif(theirs is None, reason="PyTorch not installed")
def test_generic_aliases_give_torchs_when_filled():
    assert ours._scalar_or_tuple_2_t[float] == theirs._ratio_2_t
    assert ours._scalar_or_tuple_any_t[int] == theirs._size_any_t
    assert ours._scalar_or_tuple_5_t[int] == theirs._size_5_t


def test_tensor_aliases_name_hookgrads_tensor():
    import hookgrad
    assert ours._tensor_list_t.__args__[0] is hookgrad.Tensor
    assert ours._maybe_indices_t.__args__ == (hookgrad.Tensor, tuple[hookgrad.Tensor,
                                                                   hookgrad.Tensor])
