"""hookgrad.testing.assert_close: PyTorch's tolerances by dtype, its checks of shape and
dtype, containers item by item, and its failure messages word for word."""
import numpy as np
import pytest

import hookgrad as hg
from hookgrad.testing import assert_close
from tests.differential import torch


def _message(lib, make):
    """What ``lib.testing.assert_close`` raises on the pair ``make(lib)``: (type, text)."""
    a, b, kw = make(lib)
    try:
        lib.testing.assert_close(a, b, **kw)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e)
    return None


CASES = {
    "one_element_off": lambda L: (L.tensor([1., 2., 3.]), L.tensor([1., 2.5, 3.]), {}),
    "shape": lambda L: (L.tensor([1., 2.]), L.tensor([1., 2., 3.]), {}),
    "dtype": lambda L: (L.tensor([1.]), L.tensor([1.], dtype=L.float64), {}),
    "dtype_unchecked": lambda L: (L.tensor([1.]), L.tensor([1]), dict(check_dtype=False)),
    "integers_exact": lambda L: (L.tensor([1, 2]), L.tensor([1, 3]), {}),
    "nan": lambda L: (L.tensor([1., float("nan")]), L.tensor([1., float("nan")]), {}),
    "nan_equal": lambda L: (L.tensor([1., float("nan")]), L.tensor([1., float("nan")]),
                            dict(equal_nan=True)),
    "within_float32_tolerance": lambda L: (L.tensor([1., 2.]), L.tensor([1., 2. + 1e-6]), {}),
    "float64_is_stricter": lambda L: (L.tensor([1., 2.], dtype=L.float64),
                                      L.tensor([1., 2. + 1e-6], dtype=L.float64), {}),
    "two_d_index": lambda L: (L.tensor([[1., 2.], [3, 4]]), L.tensor([[1., 2.], [3, 5]]), {}),
    "list_item": lambda L: ([L.tensor(1.)], [L.tensor(2.)], {}),
    "dict_item": lambda L: ({"a": L.tensor(1.)}, {"a": L.tensor(2.)}, {}),
    "lengths": lambda L: ([1, 2], [1, 2, 3], {}),
    "python_floats": lambda L: (1.0, 1.5, {}),
    "python_ints": lambda L: (3, 4, {}),
    "numpy_arrays": lambda L: (np.array([1., 2.]), np.array([1., 2.1]), {}),
    "explicit_tolerances": lambda L: (L.tensor([1.]), L.tensor([1.05]), dict(rtol=0, atol=0.1)),
    "rtol_without_atol": lambda L: (L.tensor([1.]), L.tensor([1.1]), dict(rtol=0)),
    "tensor_and_float": lambda L: (L.tensor(1.), 1.0, {}),
    "custom_msg": lambda L: (L.tensor([1.]), L.tensor([2.]), dict(msg="mine")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_outcome_and_message_as_pytorch(case):
    got = _message(hg, CASES[case])
    if torch is not None:
        want = _message(torch, CASES[case])
        if got and got[0] == "TypeError":  # the classes are named after each library
            want = (want[0], want[1].replace("torch.Tensor", "hookgrad._tensor.Tensor"))
        assert got == want
    passes = {"dtype_unchecked", "nan_equal", "within_float32_tolerance", "explicit_tolerances"}
    assert (got is None) == (case in passes)


def test_messages_name_what_differs_without_torch():
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 3 \(33.3%\)\n"
                                             r"Greatest absolute difference: 0.5 at index \(1,\)"):
        assert_close(hg.tensor([1., 2., 3.]), hg.tensor([1., 2.5, 3.]))
    with pytest.raises(AssertionError, match=r"attribute 'dtype' do not match: "
                                             r"torch.float32 != torch.float64"):
        assert_close(hg.ones(1), hg.ones(1, dtype=hg.float64))
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['a'\]\[1\]"):
        assert_close({"a": [1.0, hg.tensor(2.)]}, {"a": [1.0, hg.tensor(3.)]})
    with pytest.raises(AssertionError, match="^prefix: Scalars"):
        assert_close(1.0, 2.0, msg=lambda m: "prefix: " + m)


def test_gradients_compare_with_grad_tensors():
    x = hg.randn(3, requires_grad=True)
    (x * x).sum().backward()
    assert_close(x.grad, 2 * x.detach())
