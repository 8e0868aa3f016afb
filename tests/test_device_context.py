"""The default device: ``with device(...)`` and ``set_default_device``/``get_default_device``
place what factories and Module constructors make, as PyTorch's DeviceContext does."""
import threading

import pytest

import hookgrad
from hookgrad import nn

from .differential import same_as_torch


@pytest.fixture(autouse=True)
def _reset_default_device():
    yield
    hookgrad.set_default_device(None)


def _placed(L):
    """Which device each kind of factory picks inside a meta block."""
    cpu = L.ones(2, device="cpu")
    with L.device("meta") as d:
        made = {
            "entered": str(d), "default": str(L.get_default_device()),
            "zeros": L.zeros(2), "ones": L.ones(2, 3), "empty": L.empty(2), "full": L.full((2,), 1.0),
            "arange": L.arange(3), "linspace": L.linspace(0, 1, 4), "eye": L.eye(2),
            "rand": L.rand(2), "randn": L.randn(2), "randint": L.randint(0, 3, (2,)),
            "randperm": L.randperm(3), "tensor": L.tensor([1.0]), "as_tensor": L.as_tensor([1]),
            "explicit": L.zeros(2, device="cpu"),
            # *_like and new_* follow their input, not the default device
            "zeros_like": L.zeros_like(cpu), "rand_like": L.rand_like(cpu),
            "new_zeros": cpu.new_zeros(2), "new_tensor": cpu.new_tensor([1.0]),
            "linear": nn.Linear(2, 3).weight if L is hookgrad else L.nn.Linear(2, 3).weight,
            "batchnorm": [str(t.device) for t in (L.nn.BatchNorm1d(2).buffers())],
        }
    after = L.zeros(1)
    return {k: v if isinstance(v, (str, list)) else str(v.device) for k, v in made.items()} | {
        "after": str(after.device), "default_after": str(L.get_default_device())}


def test_factories_and_modules_inside_a_device_block():
    got = same_as_torch(_placed)
    assert got["zeros"] == got["linear"] == got["randperm"] == "meta"
    assert got["zeros_like"] == got["new_zeros"] == got["explicit"] == got["after"] == "cpu"


def test_set_default_device_and_nesting():
    def run(L):
        out = [str(L.get_default_device())]
        L.set_default_device("meta")
        out.append(str(L.zeros(1).device))
        with L.device("cpu"):
            out.append(str(L.zeros(1).device))
            with L.device("meta"):
                out.append(str(L.get_default_device()))
            out.append(str(L.get_default_device()))
        out.append(str(L.zeros(1).device))
        L.set_default_device(None)
        out.append(str(L.zeros(1).device))
        return out
    assert same_as_torch(run) == ["cpu", "meta", "cpu", "meta", "cpu", "meta", "cpu"]


def test_the_default_device_is_per_thread():
    seen = []
    with hookgrad.device("meta"):
        t = threading.Thread(target=lambda: seen.append(hookgrad.zeros(1).device.type))
        t.start()
        t.join()
        assert hookgrad.zeros(1).device.type == "meta"
    assert seen == ["cpu"]


def test_a_block_restores_the_device_after_an_exception():
    with pytest.raises(ValueError, match="inside"):
        with hookgrad.device("meta"):
            raise ValueError("inside")
    assert hookgrad.get_default_device() == hookgrad.device("cpu")
    assert hookgrad.zeros(1).device.type == "cpu"


def test_a_cuda_default_places_on_the_gpu_or_fails_at_the_factory():
    hookgrad.set_default_device("cuda")  # accepted without a GPU, as PyTorch's
    assert hookgrad.get_default_device() == hookgrad.device("cuda", 0)
    if hookgrad.cuda.is_available():
        assert hookgrad.zeros(1).device == hookgrad.device("cuda", 0)
    else:
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            hookgrad.zeros(1)


def test_a_tensors_device_is_read_from_its_sharding_once(monkeypatch):
    # ``x.device`` per step (``arange(n, device=x.device)``): an array on one device names
    # it by its sharding, and JAX's ``devices()`` (a set built per call) is asked once
    import torch
    from jax._src.array import ArrayImpl
    asked = []
    real = ArrayImpl.devices
    monkeypatch.setattr(ArrayImpl, "devices", lambda a: asked.append(1) or real(a))
    first = hookgrad.ones(2, 3)
    assert str(first.device) == str(torch.ones(2, 3).device) == "cpu"
    del asked[:]
    for t in (hookgrad.zeros(5), hookgrad.arange(4) * 2, first.sum(), hookgrad.tensor([1, 2])):
        t._data  # a concrete array
        assert t.device == hookgrad.device("cpu") and t.device.type == "cpu"
        assert t.get_device() == torch.tensor([1]).get_device() == -1
    assert asked == []
    with hookgrad.device("meta"):
        assert str(hookgrad.zeros(2).device) == "meta"
