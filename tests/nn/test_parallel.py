"""``nn.DataParallel`` and ``nn.parallel.DistributedDataParallel``: single-process wrappers."""
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import nn
from hookgrad.nn.parallel import DistributedDataParallel as DDP

from ..differential import needs_torch, torch


def _arr(t):
    return np.asarray(t._data, dtype=np.float64)


def _model(L):
    if L is hg:
        hg.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))


def test_data_parallel_runs_the_module():
    m = _model(hg)
    dp = nn.DataParallel(m)
    assert dp.module is m and dp.device_ids == [] and nn.parallel.DataParallel is nn.DataParallel
    x = hg.randn(5, 3, requires_grad=True)
    out = dp(x)
    np.testing.assert_allclose(_arr(out), _arr(m(x)))
    out.sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    assert list(dp.state_dict()) == ["module." + k for k in m.state_dict()]
    np.testing.assert_allclose(_arr(nn.parallel.data_parallel(m, x)), _arr(m(x)))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        nn.DataParallel(3)


@needs_torch
def test_wrappers_state_dict_and_repr_as_torch():
    hm, tm = _model(hg), _model(torch)
    hd, td = nn.DataParallel(hm), torch.nn.DataParallel(tm)
    assert list(hd.state_dict()) == list(td.state_dict())
    assert repr(hd) == repr(td)
    assert hd.device_ids == td.device_ids   # no CUDA device: []
    assert repr(DDP(hm)) == repr(td).replace("DataParallel", "DistributedDataParallel")


def test_ddp_single_process():
    m = _model(hg)
    ddp = DDP(m, find_unused_parameters=True)
    assert ddp.module is m and ddp.find_unused_parameters
    assert list(ddp.state_dict()) == ["module." + k for k in m.state_dict()]
    x = hg.randn(5, 3)
    with ddp.no_sync():
        assert ddp.require_backward_grad_sync is False
        ddp(x).sum().backward()
    assert ddp.require_backward_grad_sync is True
    g = [_arr(p.grad) for p in m.parameters()]
    m.zero_grad()
    m(x).sum().backward()
    for a, p in zip(g, m.parameters()):
        np.testing.assert_allclose(a, _arr(p.grad))
    with ddp.join():
        ddp(x)
    ddp.register_comm_hook(None, lambda state, bucket: None)   # tests/test_distributed_comm.py


def test_ddp_bad_arguments():
    m = _model(hg)
    with pytest.raises(ValueError, match="device_ids can only be None or contain a single"):
        DDP(m, device_ids=[0, 1])
    with pytest.raises(ValueError, match="device_ids and output_device arguments only work"):
        DDP(m, device_ids=[0])
    with pytest.raises(RuntimeError, match="Cannot specify both process_group and device_mesh"):
        DDP(m, process_group=object(), device_mesh=object())
    m.requires_grad_(False)
    with pytest.raises(RuntimeError, match="DistributedDataParallel is not needed when a module "
                       "doesn't have any parameter that requires a gradient."):
        DDP(m)


def test_scatter_splits_tensors_and_repeats_other_values():
    from hookgrad.nn.parallel.scatter_gather import gather, scatter, scatter_kwargs
    x = hg.arange(8.0).reshape(4, 2).requires_grad_()
    parts = scatter((x, 3, {"m": x}), ["cpu", "cpu"])
    assert len(parts) == 2 and parts[0][1] == 3 and parts[1][1] == 3
    assert parts[0][0].tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert parts[1][2]["m"].tolist() == [[4.0, 5.0], [6.0, 7.0]]
    back = gather([p[0] for p in parts], -1)
    assert back.tolist() == x.tolist()
    back.sum().backward()  # the split and the join are ops: gradients flow through
    assert x.grad.tolist() == [[1.0, 1.0]] * 4
    args, kwargs = scatter_kwargs((x,), {"scale": 2}, ["cpu", "cpu"])
    assert len(args) == len(kwargs) == 2 and kwargs[1] == {"scale": 2}
    assert scatter(x, []) == []


def test_scatter_to_a_missing_accelerator_raises_moving_errors():
    from hookgrad.nn.parallel.scatter_gather import scatter
    if hg.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        scatter(hg.ones(4), [0, 1])
