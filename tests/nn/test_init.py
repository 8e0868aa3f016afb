"""hookgrad.nn.init: in-place fills (no recording, version bump), the distributions'
moments and bounds, gains and fans as PyTorch computes them, errors, reproducibility."""
import math

import numpy as np
import pytest

import hookgrad
import hookgrad.nn as nn
from hookgrad.nn import init

try:
    import torch
    import torch.nn.init as tinit
except ImportError:
    torch = tinit = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")


def _param(*shape):
    return nn.Parameter(hookgrad.zeros(*shape))


def test_fills_in_place_without_recording():
    p = _param(64, 32)
    v = p._version
    for fn, args in ((init.uniform_, (-1.0, 1.0)), (init.normal_, ()),
                     (init.trunc_normal_, ()), (init.constant_, (0.5,)), (init.ones_, ()),
                     (init.zeros_, ()), (init.eye_, ()), (init.xavier_uniform_, ()),
                     (init.xavier_normal_, ()), (init.kaiming_uniform_, ()),
                     (init.kaiming_normal_, ()), (init.orthogonal_, ())):
        out = fn(p, *args)
        assert out is p
        assert p.grad_fn is None and p.is_leaf and p.requires_grad
        assert p._version == v + 1, fn.__name__
        v = p._version
    assert p.dtype == hookgrad.float32


def test_write_through_data_alias_and_dtype_kept():
    p = _param(3, 3)
    init.ones_(p.data)
    np.testing.assert_array_equal(p.detach().numpy(), np.ones((3, 3)))
    d = hookgrad.zeros(2, 2, dtype=hookgrad.bfloat16)
    init.normal_(d)
    assert d.dtype == hookgrad.bfloat16 and np.any(d.float().numpy() != 0)
    i = hookgrad.zeros(2, 2, dtype=hookgrad.int32)
    init.constant_(i, 3)
    assert i.dtype == hookgrad.int32 and i.tolist() == [[3, 3], [3, 3]]


def test_uniform_normal_constant_values():
    hookgrad.manual_seed(0)
    t = hookgrad.empty(200, 200)
    a = init.uniform_(t, -2.0, 3.0).numpy()
    assert a.min() >= -2.0 and a.max() <= 3.0
    assert abs(a.mean() - 0.5) < 0.05 and abs(a.std() - 5 / math.sqrt(12)) < 0.03
    n = init.normal_(t, 1.5, 0.5).numpy()
    assert abs(n.mean() - 1.5) < 0.01 and abs(n.std() - 0.5) < 0.01
    np.testing.assert_array_equal(init.constant_(t, 0.25).numpy(), 0.25)
    np.testing.assert_array_equal(init.eye_(hookgrad.empty(3, 4)).numpy(), np.eye(3, 4))


def test_trunc_normal_bounds_and_moments():
    hookgrad.manual_seed(0)
    t = init.trunc_normal_(hookgrad.empty(300, 300), mean=0.5, std=1.0, a=0.0, b=1.0).numpy()
    assert t.min() >= 0.0 and t.max() <= 1.0
    # the mean of N(0.5, 1) truncated symmetrically around its mean is 0.5
    assert abs(t.mean() - 0.5) < 0.01
    s = init.trunc_normal_(hookgrad.empty(300, 300), std=0.02).numpy()
    assert abs(s.std() - 0.02) < 0.002 and np.abs(s).max() <= 2.0


def test_xavier_and_kaiming_scales():
    hookgrad.manual_seed(0)
    t = hookgrad.empty(256, 128, 3)
    fan_in, fan_out = 128 * 3, 256 * 3
    xu = init.xavier_uniform_(t, gain=2.0).numpy()
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(xu).max() <= bound and np.abs(xu).max() > 0.99 * bound
    xn = init.xavier_normal_(t).numpy()
    assert abs(xn.std() - math.sqrt(2 / (fan_in + fan_out))) < 0.002
    ku = init.kaiming_uniform_(t, a=math.sqrt(5)).numpy()
    kb = math.sqrt(3) * math.sqrt(2 / (1 + 5)) / math.sqrt(fan_in)
    assert np.abs(ku).max() <= kb and np.abs(ku).max() > 0.99 * kb
    kn = init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu").numpy()
    assert abs(kn.std() - math.sqrt(2 / fan_out)) < 0.002


def test_orthogonal_dirac_sparse():
    hookgrad.manual_seed(0)
    w = init.orthogonal_(hookgrad.empty(4, 6), gain=2.0).numpy()
    np.testing.assert_allclose(w @ w.T, 4 * np.eye(4), atol=1e-5)
    w = init.orthogonal_(hookgrad.empty(6, 2, 2)).numpy().reshape(6, 4)
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-5)
    d = init.dirac_(hookgrad.empty(4, 2, 3, 3), groups=2).numpy()
    expect = np.zeros((4, 2, 3, 3))
    for o, i in ((0, 0), (1, 1), (2, 0), (3, 1)):
        expect[o, i, 1, 1] = 1
    np.testing.assert_array_equal(d, expect)
    s = init.sparse_(hookgrad.empty(10, 5), sparsity=0.3).numpy()
    assert np.all((s == 0).sum(0) == 3)


def test_manual_seed_reproducible_and_generator():
    hookgrad.manual_seed(5)
    a = init.normal_(hookgrad.empty(5, 5)).numpy()
    b = init.normal_(hookgrad.empty(5, 5)).numpy()
    hookgrad.manual_seed(5)
    np.testing.assert_array_equal(init.normal_(hookgrad.empty(5, 5)).numpy(), a)
    assert not np.array_equal(a, b)


def test_zero_element_tensor_warns():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(hookgrad.empty(0, 3))


def test_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor "
                                         "with fewer than 2 dimensions"):
        init.xavier_uniform_(hookgrad.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of "
                                         r"\['fan_in', 'fan_out'\]"):
        init.kaiming_uniform_(hookgrad.empty(3, 4), mode="fan_avg")
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(hookgrad.empty(3, 4, 5))
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(hookgrad.empty(3))
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
        init.dirac_(hookgrad.empty(3, 4))


@needs_torch
@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",),
                                  ("relu",), ("leaky_relu",), ("leaky_relu", 0.2), ("selu",),
                                  ("conv_transpose3d",)])
def test_calculate_gain_matches_torch(args):
    assert init.calculate_gain(*args) == tinit.calculate_gain(*args)


@needs_torch
@pytest.mark.parametrize("shape", [(3, 4), (8, 3, 5), (4, 2, 3, 3), (2, 3, 1, 2, 2)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(hookgrad.empty(*shape)) == \
        tinit._calculate_fan_in_and_fan_out(torch.empty(*shape))


@needs_torch
def test_deterministic_fills_match_torch():
    for fn, shape, args in ((init.eye_, (3, 5), ()), (init.dirac_, (6, 3, 3, 3), (2,)),
                            (init.dirac_, (2, 3, 4), ()), (init.constant_, (2, 3), (1.5,))):
        want = getattr(tinit, fn.__name__)(torch.empty(*shape), *args).numpy()
        np.testing.assert_array_equal(fn(hookgrad.empty(*shape), *args).numpy(), want)
