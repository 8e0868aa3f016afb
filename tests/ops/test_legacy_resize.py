"""The deprecated out-of-place ``Tensor.resize`` and ``resize_as``: a reshape recorded as
PyTorch's ``Resize`` Function (``ResizeBackward``), with its warning and its error."""
import warnings

import pytest

from tests.differential import py, raises, same_as_torch


def _resized(L, how):
    x = L.arange(6.).requires_grad_()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = how(x, L)
    (y * L.arange(6.).reshape(y.shape)).sum().backward()
    return [list(y.shape), y.grad_fn.name(), py(x.grad), str(caught[0].message),
            caught[0].filename == __file__]


@pytest.mark.parametrize("how", [lambda x, L: x.resize(2, 3),
                                 lambda x, L: x.resize_as(L.zeros(3, 2))],
                         ids=["resize", "resize_as"])
def test_resize_is_a_reshape_recorded_as_resize_backward(how):
    got = same_as_torch(lambda L: _resized(L, how))
    assert got[1] == "ResizeBackward" and got[4]


def test_resize_keeps_the_number_of_elements():
    def f(L):
        x = L.arange(6.)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [raises(x.resize, 4), raises(x.resize, (3, 2))]
    got = same_as_torch(f)
    assert got[0]["message"].startswith("requested resize to 4 (4 elements in total), but "
                                        "the given tensor has a size of 6 (6 elements)")
