"""Lazy modules against torch.nn: the repr before the first call, the class, parameter and
buffer shapes after it, and (with torch's initial values copied in) the outputs and
gradients of the next call; UninitializedParameter's materialize."""
import numpy as np
import pytest

import hookgrad
import hookgrad.nn as nn

from .test_layers import _copy_from_torch, _forward, _spec

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
_rng = np.random.default_rng(0)

LAZY = [
    ("linear", lambda nn: nn.LazyLinear(4), (2, 3)),
    ("linear_nobias", lambda nn: nn.LazyLinear(4, bias=False), (2, 5, 3)),
    ("conv1d_unbatched", lambda nn: nn.LazyConv1d(4, 3, bias=False), (3, 5)),
    ("conv2d", lambda nn: nn.LazyConv2d(4, 3, padding=1), (2, 3, 5, 5)),
    ("conv3d_groups", lambda nn: nn.LazyConv3d(4, 2, groups=2), (1, 2, 3, 3, 3)),
    ("conv_transpose1d", lambda nn: nn.LazyConvTranspose1d(4, 3, 2), (2, 3, 5)),
    ("conv_transpose2d", lambda nn: nn.LazyConvTranspose2d(2, 3, 2, 1, 1), (2, 3, 4, 4)),
    ("conv_transpose3d", lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 2, 2, 2)),
    ("batchnorm1d", lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    ("batchnorm2d", lambda nn: nn.LazyBatchNorm2d(momentum=0.2), (2, 3, 4, 4)),
    ("batchnorm3d_no_stats", lambda nn: nn.LazyBatchNorm3d(track_running_stats=False),
     (2, 3, 2, 2, 2)),
    ("instancenorm1d", lambda nn: nn.LazyInstanceNorm1d(affine=True), (2, 3, 5)),
    ("instancenorm2d", lambda nn: nn.LazyInstanceNorm2d(track_running_stats=True),
     (2, 3, 4, 4)),
    ("instancenorm3d", lambda nn: nn.LazyInstanceNorm3d(affine=True), (1, 2, 2, 3, 2)),
]


@needs_torch
@pytest.mark.parametrize("name,make,shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_module_matches_torch(name, make, shape):
    torch.manual_seed(0)
    hm, tm = make(nn), make(torch.nn)
    assert repr(hm) == repr(tm)
    assert hm.has_uninitialized_params() and tm.has_uninitialized_params()
    x = _rng.standard_normal(shape).astype(np.float32)
    hm(hookgrad.tensor(x))
    tm(torch.tensor(x))
    assert type(hm).__name__ == type(tm).__name__
    assert type(hm) is getattr(nn, type(tm).__name__)
    assert _spec(hm) == _spec(tm) and repr(hm) == repr(tm)
    _copy_from_torch(hm, tm)
    (hx,), hout = _forward(hm, hookgrad, [x])
    (tx,), tout = _forward(tm, torch, [x])
    np.testing.assert_allclose(hout.detach().numpy(), tout.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    g = _rng.standard_normal(tuple(tout.shape)).astype(np.float32)
    hout.backward(hookgrad.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(hx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (n, hp), (_, tp) in zip(hm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(hp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=n)


@needs_torch
def test_uninitialized_parameter_materializes_like_torch():
    for L in (hookgrad, torch):
        p = L.nn.UninitializedParameter()
        assert isinstance(p, L.nn.Parameter) and p.requires_grad
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            p.shape
        p.materialize((2, 3))
        assert type(p) is L.nn.Parameter and tuple(p.shape) == (2, 3)
        b = L.nn.UninitializedBuffer()
        b.materialize((4,))
        assert type(b) is L.Tensor and tuple(b.shape) == (4,)


@needs_torch
def test_load_state_dict_materializes_like_torch():
    src = torch.nn.Linear(3, 4)
    sd = src.state_dict()
    hm, tm = nn.LazyLinear(4), torch.nn.LazyLinear(4)
    hm.load_state_dict({k: hookgrad.tensor(v.numpy()) for k, v in sd.items()})
    tm.load_state_dict(sd)
    assert not hm.has_uninitialized_params() and not tm.has_uninitialized_params()
    assert _spec(hm) == _spec(tm)
    x = _rng.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(hm(hookgrad.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert type(hm).__name__ == type(tm).__name__ == "Linear"
