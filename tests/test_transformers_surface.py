"""The PyTorch names Hugging Face transformers touches beyond the ops: library registration
by op name, CUDA graph and stream classes, FSDP2's policies, memory formats, dtype
predicates, and ModelOutput-like dict subclasses through compiled calls."""
import collections
import dataclasses

import numpy as np
import pytest

import hookgrad as hg
from tests.differential import py, same_as_torch
from tests.test_library import uniq


def test_library_register_fake_and_autograd_by_name():
    def f(L):
        name = uniq("double")

        @L.library.custom_op(name, mutates_args=())
        def double(x: L.Tensor) -> L.Tensor:
            return x * 2

        fake = L.library.register_fake(name)(lambda x: L.empty_like(x))
        L.library.register_autograd(name, lambda ctx, g: g * 3)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        double(x).sum().backward()
        return [py(x.grad), callable(fake)]
    assert same_as_torch(f) == [[3.0, 3.0], True]


def test_cuda_graph_and_stream_names_exist_and_refuse_to_capture():
    assert not hg.cuda.is_current_stream_capturing()
    with hg.cuda.StreamContext(None), hg.cuda.stream(None):
        pass
    for make in (hg.cuda.CUDAGraph, hg.cuda.Stream, hg.cuda.Event, hg.cuda.graph,
                 hg.cuda.current_stream):
        with pytest.raises(NotImplementedError, match=r"hookgrad does not implement "
                                                      r"torch\.cuda\.\w+ yet"):
            make()
    with pytest.raises(NotImplementedError, match="only StreamContext\\(None\\)"):
        hg.cuda.StreamContext(object())
    assert issubclass(hg.cuda.ExternalStream, hg.cuda.Stream)


def test_fsdp_policies_are_pytorchs_dataclasses():
    from hookgrad.distributed._composable.fsdp import fully_shard
    from hookgrad.distributed.fsdp import (CPUOffloadPolicy, FullyShardedDataParallel,
                                           MixedPrecisionPolicy, OffloadPolicy)
    assert fully_shard is hg.distributed.fsdp.fully_shard
    mp = MixedPrecisionPolicy(param_dtype=hg.bfloat16)
    assert (mp.param_dtype, mp.reduce_dtype, mp.cast_forward_inputs) == (hg.bfloat16, None, True)
    assert CPUOffloadPolicy().pin_memory and isinstance(CPUOffloadPolicy(), OffloadPolicy)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mp.param_dtype = None
    assert not isinstance(hg.nn.Linear(1, 1), FullyShardedDataParallel)
    with pytest.raises(NotImplementedError, match="FullyShardedDataParallel"):
        FullyShardedDataParallel(hg.nn.Linear(1, 1))


def test_strided_shard_is_a_shard():
    from hookgrad.distributed.tensor.placement_types import Shard, _StridedShard
    assert issubclass(_StridedShard, Shard)


def test_transform_getitem_to_index_leaves_indexing_unchanged():
    from hookgrad._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
    x = hg.arange(5.0)
    with TransformGetItemToIndex():
        assert x[hg.tensor(3)].item() == 3.0


def test_memory_formats_and_dtype_predicates():
    def f(L):
        x = L.tensor([[1.0, 2.0]])
        return [L.is_floating_point(x), L.is_floating_point(x.long()),
                L.is_complex(x), py(x.clone(memory_format=L.contiguous_format)),
                py(x.contiguous(memory_format=L.contiguous_format)),
                isinstance(L.channels_last, L.memory_format)]
    assert same_as_torch(f) == [True, False, False, [[1.0, 2.0]], [[1.0, 2.0]], True]
    assert repr(hg.preserve_format) == "hookgrad.preserve_format"


class _Output(collections.OrderedDict):
    """A dict subclass keeping attributes in step with its keys, as transformers'
    ModelOutput does."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        object.__setattr__(self, key, value)


class _Net(hg.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = hg.nn.Linear(3, 2)

    def forward(self, x):
        out = _Output()
        out["logits"] = self.lin(x)
        out["doubled"] = out["logits"] * 2
        return out


def test_compiled_module_and_step_return_dict_subclasses():
    hg.manual_seed(0)
    net, x = _Net(), hg.randn(4, 3)
    want = net(x)
    got = hg.compile(net)(x)
    assert type(got) is _Output and list(got) == ["logits", "doubled"]
    np.testing.assert_allclose(got.logits.detach().numpy(), want.logits.detach().numpy(),
                               rtol=1e-6)
    stepped = hg.compile(lambda x: net(x))(x)
    assert type(stepped) is _Output
    np.testing.assert_allclose(stepped["doubled"].detach().numpy(),
                               want["doubled"].detach().numpy(), rtol=1e-6)
    got.doubled.sum().backward()
    assert net.lin.weight.grad is not None
