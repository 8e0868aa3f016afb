"""hookgrad.testing.make_tensor: shapes, dtypes, value ranges, flags and errors as
torch.testing.make_tensor's."""
import pytest

import hookgrad as hg
from hookgrad.testing import make_tensor


@pytest.mark.parametrize("shape", [(2, 3), ((2, 3),), ([2, 3],), (hg.Size([2, 3]),)])
def test_shape_as_varargs_or_one_sequence(shape):
    assert make_tensor(*shape, dtype=hg.float32, device="cpu").shape == (2, 3)


@pytest.mark.parametrize("dtype,lo,hi", [(hg.float32, -9, 9), (hg.float64, -9, 9),
                                         (hg.int64, -9, 9), (hg.uint8, 0, 9)])
def test_default_ranges(dtype, lo, hi):
    t = make_tensor(400, dtype=dtype, device="cpu")
    assert t.dtype is dtype
    assert lo <= t.min().item() and t.max().item() <= hi


def test_bounds_flags_and_views():
    t = make_tensor(300, dtype=hg.int32, device="cpu", low=-1, high=2, exclude_zero=True)
    assert set(t.tolist()) <= {-1, 1}
    f = make_tensor(3, 4, dtype=hg.float32, device="cpu", low=2.0, high=3.0,
                    requires_grad=True, noncontiguous=True)
    assert f.is_leaf and f.requires_grad and not f.is_contiguous() and f.stride() == (8, 2)
    assert 2.0 <= f.min().item() and f.max().item() < 3.0
    assert make_tensor(4, dtype=hg.bool, device="cpu").dtype is hg.bool


@pytest.mark.parametrize("kwargs,match", [
    (dict(low=3, high=1), r"`low` must be less than `high`, but got 3 >= 1"),
    (dict(low=float("nan")), r"`low` and `high` cannot be NaN, but got low=nan and high=9"),
    (dict(dtype=hg.int64, requires_grad=True),
     r"`requires_grad=True` is not supported for boolean and integral dtypes, "
     r"but got dtype=torch.int64"),
])
def test_bad_arguments_raise_pytorchs_errors(kwargs, match):
    kwargs = dict(dict(dtype=hg.float32), **kwargs)
    with pytest.raises(ValueError, match=match):
        make_tensor(2, device="cpu", **kwargs)
