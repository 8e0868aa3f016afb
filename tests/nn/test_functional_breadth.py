"""The functional forms added for breadth (issue 30) against torch.nn.functional: outputs,
gradients and node names, with the runner of test_functional."""
import numpy as np
import pytest

import hookgrad
import hookgrad.nn.functional as F

from .test_functional import _run, r

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

X5 = r(2, 3, 5, 6, 7)

# (id, fn(F, *tensors), arrays, positions that are integer / non-differentiable)
CASES = [
    ("conv_transpose3d", lambda F, x, w, b: F.conv_transpose3d(
        x, w, b, stride=2, padding=1, output_padding=1), [X5, r(3, 2, 2, 3, 2), r(2)], ()),
    ("conv_transpose3d_groups", lambda F, x, w: F.conv_transpose3d(
        x[:, :2], w, groups=2, dilation=(2, 1, 1)), [X5, r(2, 3, 3, 2, 2)], ()),
    ("adaptive_max_pool3d", lambda F, x: F.adaptive_max_pool3d(x, (2, 4, 3)), [X5], ()),
    ("adaptive_max_pool3d_none", lambda F, x: F.adaptive_max_pool3d(x[0], (None, 1, 5)),
     [X5], ()),
    ("adaptive_max_pool2d_with_indices", lambda F, x: F.adaptive_max_pool2d_with_indices(
        x[0], 3)[0], [X5], ()),
]


@needs_torch
@pytest.mark.parametrize("name,fn,arrays,fixed", [pytest.param(*c, id=c[0]) for c in CASES])
def test_matches_torch(name, fn, arrays, fixed):
    got, got_g, got_name = _run(hookgrad, F, fn, arrays, fixed)
    want, want_g, want_name = _run(torch, TF, fn, arrays, fixed)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(got_g) == len(want_g)
    for a, b in zip(got_g, want_g):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert got_name == want_name


@needs_torch
@pytest.mark.parametrize("fn,x", [("adaptive_max_pool1d_with_indices", X5[0, 0, 0]),
                                  ("adaptive_max_pool2d_with_indices", X5[0, 0]),
                                  ("adaptive_max_pool3d_with_indices", X5[0])])
def test_adaptive_max_pool_indices_match_torch(fn, x):
    got = getattr(F, fn)(hookgrad.tensor(x), 3)
    want = getattr(TF, fn)(torch.tensor(x), 3)
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy())


@needs_torch
def test_adaptive_max_pool3d_errors():
    with pytest.raises(RuntimeError, match=r"Expected 4D or 5D tensor, but got: \[2, 3\]"):
        F.adaptive_max_pool3d(hookgrad.zeros(2, 3), 2)
    with pytest.raises(RuntimeError, match="dimension 1 being empty"):
        F.adaptive_max_pool3d(hookgrad.zeros(1, 0, 2, 2, 2), 2)
