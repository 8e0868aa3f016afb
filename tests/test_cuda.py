"""Devices: ``hookgrad.device``, ``hookgrad.cuda`` and moving tensors and modules, checked
against PyTorch's CPU build (JAX has no GPU on a CPU-only machine, so both report none)."""
import os
import pickle
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch

HAS_GPU = hookgrad.cuda.is_available()
cpu_only = pytest.mark.skipif(HAS_GPU, reason="checks the behaviour without a GPU")
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a JAX GPU backend")
NO_CUDA = "^Torch not compiled with CUDA enabled"


# --------------------------------------------------------------------------- device
def test_device_parsing_and_equality():
    def fn(L):
        d = L.device
        return [repr(d("cuda:0")), repr(d("cuda", 1)), repr(d(type="cpu")), str(d("cuda", 2)),
                repr(d(d("cpu"))), d("cpu:0").index, d("cuda") == d("cuda", 0),
                d("cpu") == d("cpu"), d("cpu") == d("cpu", 0), d("cuda:1") == d("cuda", 1),
                d("cpu") == "cpu", d("cpu") != "cpu", d("cuda:1") in {d("cuda", 1)},
                repr(d("mps")), repr(d("meta"))]
    out = same_as_torch(fn)
    assert out[:2] == ["device(type='cuda', index=0)", "device(type='cuda', index=1)"]
    assert out[6:] == [False, True, False, True, False, True, True, "device(type='mps')",
                       "device(type='meta')"]


@pytest.mark.parametrize("args, error, match", [
    (("foo",), RuntimeError, "device type at start of device string: foo"),
    (("CPU",), RuntimeError, "device type at start of device string: CPU"),
    (("cuda:x",), RuntimeError, "Invalid device string: 'cuda:x'"),
    (("cuda:0:1",), RuntimeError, "Invalid device string: 'cuda:0:1'"),
    (("cpu", -1), RuntimeError, "Device index must not be negative"),
    (("cuda:0", 1), RuntimeError, "type \\(string\\) must not include an index because index "
                                  "was passed explicitly: cuda:0"),
    (("cuda", "x"), TypeError, "argument 'index' \\(position 2\\) must be int, not str"),
    ((1.5,), TypeError, "device\\(\\) received an invalid combination of arguments - got "
                        "\\(float\\)"),
])
def test_device_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        hookgrad.device(*args)
    same_as_torch(lambda L: raises(L.device, *args))


def test_device_is_immutable_and_pickles():
    d = hookgrad.device("cuda", 1)
    with pytest.raises(AttributeError, match="not writable"):
        d.index = 2
    assert pickle.loads(pickle.dumps(d)) == d


@cpu_only
def test_int_device_needs_an_accelerator():
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                           "available"):
        hookgrad.device(0)
    same_as_torch(lambda L: raises(L.device, 0))


def test_tensor_device_attributes():
    x = hookgrad.zeros(2)
    same_as_torch(lambda L: [repr(L.zeros(2).device), L.zeros(2).is_cuda,
                             L.zeros(2).get_device()] if not HAS_GPU else [])
    assert x.device.type == ("cuda" if HAS_GPU else "cpu")


# --------------------------------------------------------------------------- hookgrad.cuda
@cpu_only
def test_cuda_queries_without_a_gpu():
    def fn(L):
        c = L.cuda
        return [c.is_available(), c.device_count(), c.memory_allocated(),
                c.max_memory_allocated(), c.memory_reserved(), c.max_memory_reserved(),
                c.is_initialized(), c.manual_seed(1), c.manual_seed_all(1), c.seed(),
                c.empty_cache(), dict(c.memory_stats()), c.is_bf16_supported()]
    assert same_as_torch(fn) == [False, 0, 0, 0, 0, 0, False, None, None, None, None, {},
                                 False]


@cpu_only
@pytest.mark.parametrize("call", ["current_device()", "get_device_name()",
                                  "get_device_properties(0)", "get_device_capability()",
                                  "synchronize()", "initial_seed()", "mem_get_info()",
                                  "init()"])
def test_cuda_calls_needing_a_gpu_raise_torchs_error(call):
    with pytest.raises(AssertionError, match=NO_CUDA) as info:
        eval("c." + call, {"c": hookgrad.cuda})
    assert "keep tensors on 'cpu'" in str(info.value)  # says what to do
    same_as_torch(lambda L: raises(eval, "c." + call, {"c": L.cuda}))


@cpu_only
def test_cuda_device_context_manager():
    with hookgrad.cuda.device(-1), hookgrad.cuda.device(None):
        pass  # no-ops, as documented
    with pytest.raises(RuntimeError, match="PyTorch was compiled without CUDA support"):
        with hookgrad.cuda.device(0):
            pass
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        hookgrad.cuda.device("cpu")
    with hookgrad.cuda.device_of(hookgrad.zeros(1)):  # a CPU tensor: no-op
        pass
    same_as_torch(lambda L: [raises(lambda: L.cuda.device(0).__enter__()),
                             raises(L.cuda.device, "cpu")])


def test_cuda_manual_seed_checks_its_argument():
    with pytest.raises(ValueError, match="invalid literal for int"):
        hookgrad.cuda.manual_seed("a")
    same_as_torch(lambda L: raises(L.cuda.manual_seed, "a"))


@needs_gpu
def test_cuda_on_a_gpu():
    c = hookgrad.cuda
    assert c.device_count() == len(jax.devices("gpu")) and c.current_device() == 0
    assert c.get_device_name() == jax.devices("gpu")[0].device_kind
    props = c.get_device_properties(0)
    assert props.total_memory > 0 and props.major >= 1
    before = c.memory_allocated()
    x = hookgrad.ones(1024, 1024, device="cuda")
    c.synchronize()
    assert c.memory_allocated() >= before + 4 * 2 ** 20
    assert c.max_memory_allocated() >= c.memory_allocated() > 0
    assert c.memory_reserved() >= c.memory_allocated()
    free, total = c.mem_get_info()
    assert 0 < free <= total
    with pytest.raises(AssertionError, match="Invalid device id"):
        c.get_device_name(c.device_count())
    del x


# --------------------------------------------------------------------------- moving
@cpu_only
@pytest.mark.parametrize("move", [
    lambda L, x: x.to("cuda"), lambda L, x: x.cuda(), lambda L, x: x.cuda(L.device("cuda", 1)),
    lambda L, x: x.to("cuda:1"), lambda L, x: x.to(L.device("cuda")),
    lambda L, x: L.zeros(2, device="cuda"), lambda L, x: L.nn.Linear(2, 2).cuda(),
    lambda L, x: L.nn.Linear(2, 2).to("cuda"), lambda L, x: L.tensor([1.0], device="cuda")])
def test_moving_to_cuda_without_a_gpu_raises_torchs_error(move):
    with pytest.raises(AssertionError, match=NO_CUDA):
        move(hookgrad, hookgrad.ones(2))
    same_as_torch(lambda L: raises(move, L, L.ones(2)))


@pytest.mark.parametrize("move, error, match", [
    pytest.param(lambda L, x: x.cuda(1), RuntimeError, "Cannot access accelerator device",
                 marks=cpu_only),
    pytest.param(lambda L, x: L.nn.Linear(2, 2).cuda(1), RuntimeError,
                 "Cannot access accelerator device", marks=cpu_only),
    (lambda L, x: x.to("mps"), RuntimeError, "not linked with support for mps devices"),
    (lambda L, x: x.cuda("cpu"), RuntimeError, "Invalid device, must be cuda device"),
    (lambda L, x: L.nn.Linear(2, 2).cuda("cpu"), RuntimeError,
     "Invalid device, must be cuda device"),
    (lambda L, x: x.to("cpu", foo=1), TypeError, "to\\(\\) received an invalid combination of "
                                                 "arguments - got \\(str, foo=int\\)"),
    (lambda L, x: L.nn.Linear(2, 2).to(L.int32), TypeError,
     "nn.Module.to only accepts floating point or complex dtypes"),
])
def test_moving_bad_input(move, error, match):
    with pytest.raises(error, match=match):
        move(hookgrad, hookgrad.ones(2))
    same_as_torch(lambda L: raises(move, L, L.ones(2)))


@cpu_only  # hookgrad's tensors start on the GPU where there is one
def test_to_keeps_or_copies_as_torch():
    def fn(L):
        x = L.ones(2, requires_grad=True)
        y = L.ones(3)
        copied = x.to(L.float32, copy=True)
        return [x.to("cpu") is x, x.cpu() is x, x.to(y) is x, x.to(L.float32) is x,
                x.to("cpu", L.float32, False, False) is x, copied is x,
                copied.grad_fn.name(), x.to("cpu", non_blocking=True) is x,
                x.to("cpu", L.float16).dtype == L.float16,
                x.to(L.float16).grad_fn.name(), py(copied)]
    assert same_as_torch(fn) == [True] * 5 + [False, "ToCopyBackward0", True, True,
                                              "ToCopyBackward0", [1.0, 1.0]]


@cpu_only
def test_module_to_missing_device_leaves_the_module_untouched():
    m = hookgrad.nn.Linear(2, 2)
    w = m.weight
    before = np.asarray(w.detach())
    with pytest.raises(AssertionError, match=NO_CUDA):
        m.to("cuda", hookgrad.float16)
    assert m.weight is w and w.dtype == hookgrad.float32
    np.testing.assert_array_equal(np.asarray(w.detach()), before)
    assert m.cpu() is m and m.to(device="cpu") is m and m.weight is w


_TWO_DEVICES = textwrap.dedent("""
    import jax, hookgrad
    cpus = jax.devices("cpu")
    assert len(cpus) == 2, cpus
    x = hookgrad.ones(3, requires_grad=True)
    y = x.to("cpu:1")
    assert y._data.devices() == {cpus[1]} and y.device == hookgrad.device("cpu")
    (y * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    m = hookgrad.nn.Linear(2, 2).to("cpu:1")
    assert m.weight._data.devices() == {cpus[1]}
    try:
        x.to("cpu:2")
    except RuntimeError as e:
        assert "cpu:2 does not exist: JAX has 2 cpu device(s)" in str(e), e
    else:
        raise AssertionError("cpu:2 should not exist")
    print("ok")
""")


def test_two_simulated_cpu_devices_in_a_subprocess():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", _TWO_DEVICES], cwd=root, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
