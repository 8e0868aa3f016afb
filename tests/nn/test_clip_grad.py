"""hookgrad.nn.utils: clip_grad_norm_ / clip_grad_value_ / get_total_norm against PyTorch
and by formula; parameters_to_vector / vector_to_parameters."""
import math
import warnings

import numpy as np
import pytest

import hookgrad
import hookgrad.nn as nn
from hookgrad.nn import utils

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
_rng = np.random.default_rng(0)
GRADS = [_rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5,), (2, 2, 2))]


def _params(L, grads=GRADS, none_at=()):
    ps = []
    for i, g in enumerate(grads):
        p = L.nn.Parameter(L.zeros(*g.shape))
        if i not in none_at:
            p.grad = L.tensor(g)
        ps.append(p)
    return ps


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    hp, tp = _params(hookgrad, none_at=(1,)), _params(torch, none_at=(1,))
    got = utils.clip_grad_norm_(hp, max_norm, norm_type)
    want = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5)
    for a, b in zip(hp, tp):
        if b.grad is None:
            assert a.grad is None
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_in_place_by_formula():
    ps = _params(hookgrad)
    grads = [p.grad for p in ps]
    versions = [g._version for g in grads]
    total = math.sqrt(sum(float((g ** 2).sum()) for g in GRADS))
    got = utils.clip_grad_norm_(iter(ps), max_norm=1.0)
    assert isinstance(got, hookgrad.Tensor) and got.ndim == 0
    np.testing.assert_allclose(got.item(), total, rtol=1e-5)
    coef = 1.0 / (total + 1e-6)
    for p, g, g0, v in zip(ps, grads, GRADS, versions):
        assert p.grad is g                        # the same tensor, modified in place
        assert g._version == v + 1
        np.testing.assert_allclose(g.numpy(), g0 * coef, rtol=1e-5)
    new_total = math.sqrt(sum(float((p.grad.numpy() ** 2).sum()) for p in ps))
    assert abs(new_total - 1.0) < 1e-4


def test_clip_grad_norm_single_tensor_and_no_grads():
    p = nn.Parameter(hookgrad.zeros(3))
    p.grad = hookgrad.tensor([3.0, 4.0, 0.0])
    assert utils.clip_grad_norm_(p, 10.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [3.0, 4.0, 0.0], rtol=1e-6)
    q = nn.Parameter(hookgrad.zeros(2))
    assert utils.clip_grad_norm_([q], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        utils.clip_grad_norm_((x for x in []), 1.0)


def test_clip_grad_norm_nonfinite():
    p = nn.Parameter(hookgrad.zeros(2))
    p.grad = hookgrad.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite"):
        utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(p.grad.numpy(), [float("inf"), 1.0])  # left untouched
    assert math.isinf(utils.clip_grad_norm_([p], 1.0).item())


def test_clip_grad_value():
    ps = _params(hookgrad, none_at=(2,))
    assert utils.clip_grad_value_(ps, 0.3) is None
    for p, g in zip(ps[:2], GRADS[:2]):
        np.testing.assert_allclose(p.grad.numpy(), np.clip(g, -0.3, 0.3))
    assert ps[2].grad is None


def test_get_total_norm_and_clip_grads_with_norm():
    total = utils.get_total_norm([hookgrad.tensor(g) for g in GRADS], norm_type=1)
    np.testing.assert_allclose(total.item(), sum(np.abs(g).sum() for g in GRADS), rtol=1e-5)
    ps = _params(hookgrad)
    utils.clip_grads_with_norm_(ps, 1.0, hookgrad.tensor(4.0))
    np.testing.assert_allclose(ps[0].grad.numpy(), GRADS[0] / (4.0 + 1e-6), rtol=1e-5)


def test_deprecated_clip_grad_norm_warns():
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        utils.clip_grad_norm(_params(hookgrad), 1.0)


def test_parameters_to_vector_roundtrip():
    ps = [nn.Parameter(hookgrad.tensor(g)) for g in GRADS]
    vec = utils.parameters_to_vector(ps)
    np.testing.assert_array_equal(vec.detach().numpy(),
                                  np.concatenate([g.ravel() for g in GRADS]))
    vec.sum().backward()                          # recorded: gradients reach the parameters
    np.testing.assert_array_equal(ps[1].grad.numpy(), np.ones(5))
    new = hookgrad.arange(vec.numel(), dtype=hookgrad.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        utils.vector_to_parameters(new, ps)
    np.testing.assert_array_equal(ps[0].detach().numpy(), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(ps[2].detach().numpy(), np.arange(17, 25).reshape(2, 2, 2))
    assert ps[0].is_leaf and ps[0].requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        utils.vector_to_parameters([1.0], ps)
