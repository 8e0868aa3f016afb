"""``nn.SyncBatchNorm`` against PyTorch's in a single process: training and evaluation
outputs, gradients, running statistics, its input checks and ``convert_sync_batchnorm``."""
import numpy as np
import pytest

from ..differential import py, raises_as_torch, same_as_torch

_rng = np.random.default_rng(3)
X = _rng.standard_normal((4, 3, 5, 2)).astype(np.float32)


def _run(L, momentum):
    bn = L.nn.SyncBatchNorm(3, momentum=momentum)
    with L.no_grad():
        bn.weight.copy_(L.tensor([0.5, 1.5, -1.0]))
    x = L.tensor(X, requires_grad=True)
    y = bn(x)
    (y * y).sum().backward()
    first = [y, x.grad, bn.weight.grad, bn.running_mean, bn.running_var,
             bn.num_batches_tracked, y.grad_fn.name()]
    bn(x[:2])
    bn.eval()
    return py(first + [bn(x[1:])])


@pytest.mark.parametrize("momentum", [0.1, None])
def test_single_process_matches_torch(momentum):
    same_as_torch(lambda L: _run(L, momentum), tol=1e-4)


def _convert(L):
    model = L.nn.Sequential(L.nn.Conv2d(3, 4, 1), L.nn.BatchNorm2d(4, momentum=0.3),
                            L.nn.Sequential(L.nn.ReLU(), L.nn.BatchNorm1d(4, affine=False)))
    model[1].eval()
    out = L.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group="pg")
    bn = out[1]
    return py([type(out[1]).__name__, type(out[2][1]).__name__, out[1].momentum,
               bn.weight is model[1].weight, bn.running_mean is model[1].running_mean,
               bn.training, out[2][1].affine, out[1].process_group,
               type(L.nn.SyncBatchNorm.convert_sync_batchnorm(L.nn.BatchNorm3d(2))).__name__])


def test_convert_sync_batchnorm_matches_torch():
    got = same_as_torch(_convert)
    assert got[:2] == ["SyncBatchNorm", "SyncBatchNorm"] and got[3] is True


@pytest.mark.parametrize("call,match", [
    (lambda L: L.nn.SyncBatchNorm(3)(L.ones(3)), r"expected at least 2D input \(got 1D input\)"),
    (lambda L: L.nn.SyncBatchNorm(0)(L.ones(2, 0)),
     "SyncBatchNorm number of input channels should be non-zero"),
])
def test_input_checks_as_torch(call, match):
    raises_as_torch(call, ValueError, match)
