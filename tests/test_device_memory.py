"""Device flags, device moves without a backend, pinned/shared memory, record_stream,
const_data_ptr, dim_order, is_set_to, module_load, volatile, and torch.Stream/Event on the
CPU: against PyTorch's CPU build."""
import warnings

import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch

FLAGS = ["is_cpu", "is_mps", "is_xpu", "is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_xla"]


def test_device_flags():
    got = same_as_torch(lambda L: [getattr(L.ones(2), n) for n in FLAGS] +
                        [getattr(L.ones(2, device="meta"), n) for n in FLAGS])
    assert got[:2] == [True, False] and got[8] is False


def test_moves_to_devices_without_a_backend_raise_pytorchs_errors():
    got = same_as_torch(lambda L: [raises(L.ones(2).xpu), raises(L.ones(2).mtia),
                                   raises(L.ones(2).ipu)])
    assert [g["raises"] for g in got] == ["AssertionError", "AssertionError", "RuntimeError"]
    with pytest.raises(AssertionError, match="Torch not compiled with XPU enabled"):
        hookgrad.ones(2).xpu()


def test_pinned_and_shared_memory():
    def run(L):
        x = L.ones(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            pinned = x.is_pinned("cpu")
        return [x.is_pinned(), pinned, [str(i.category.__name__) for i in w],
                raises(x.pin_memory), x.is_distributed()]
    got = same_as_torch(run)
    assert got[2] == ["DeprecationWarning"] and got[3]["raises"] == "RuntimeError"
    # JAX arrays are never in shared memory (docs/differences.md)
    x = hookgrad.ones(2)
    assert x.share_memory_() is x and x.is_shared() is False


def test_record_stream_on_a_cpu_tensor_raises():
    same_as_torch(lambda L: [raises(L.ones(2).record_stream, L.Stream()),
                             raises(L.ones(2).record_stream, 3)])
    with pytest.raises(NotImplementedError, match="aten::record_stream.*'CPU' backend"):
        hookgrad.ones(2).record_stream(hookgrad.Stream())


def test_const_data_ptr_and_is_set_to():
    def run(L):
        x = L.arange(6.0).reshape(2, 3)
        return [x.const_data_ptr() == x.data_ptr(),
                x[1].const_data_ptr() - x.const_data_ptr(), x.is_set_to(x),
                x[0].is_set_to(x[0]), x.is_set_to(x.clone()), x.is_set_to(x.view(6)),
                x.t().is_set_to(x), raises(x.is_set_to, 3)]
    assert same_as_torch(run)[:4] == [True, 12, True, True]


def test_dim_order():
    def run(L):
        x = L.ones(2, 3, 4)
        return [x.dim_order(), x.permute(2, 0, 1).dim_order(), x.transpose(0, 1).dim_order(),
                L.ones(2, 1, 4).dim_order(), x[:, :, ::2].dim_order(),
                L.ones(3, 1).expand(3, 4).dim_order(),
                raises(lambda: L.ones(1, 3).dim_order(ambiguity_check=True)),
                L.ones(2, 3).dim_order(ambiguity_check=True),
                L.ones(1, 3).dim_order(ambiguity_check=[L.contiguous_format]),
                raises(lambda: x.dim_order(ambiguity_check=3)),
                raises(lambda: x.dim_order(ambiguity_check=["a"]))]
    got = same_as_torch(run)
    assert got[1] == (1, 2, 0) and got[6]["raises"] == "RuntimeError"


def test_module_load():
    def run(L):
        p = L.nn.Parameter(L.zeros(2))
        other = L.ones(2, requires_grad=True) * 3
        with L.no_grad():  # as load_state_dict calls it
            a = p.module_load(other)
        b = p.module_load(other, assign=True)
        return [py(a), a.requires_grad, a is p, py(p), py(b), b.requires_grad]
    assert same_as_torch(run)[0] == [3.0, 3.0]


def test_volatile_is_gone_with_pytorchs_warnings():
    def run(L):
        x = L.ones(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = x.volatile
            x.volatile = True
            again = x.volatile
        return [got, again, [str(i.message) for i in w]]
    got = same_as_torch(run)
    assert got[0] is False and "volatile was removed" in got[2][0]


def test_stream_and_event_on_the_cpu():
    def run(L):
        s, e, t = L.Stream(), L.Event(), L.Event(enable_timing=True)
        with s:
            pass
        return [repr(s), repr(e), repr(t), str(s.device), s.device_type, s.device_index,
                s.stream_id, s.query(), s.synchronize(), s.wait_event(e), s.is_capturing(),
                s == L.Stream("cpu"), s == L.Stream("meta"), hash(s) == hash(L.Stream()),
                raises(s.wait_stream, s), raises(s.record_event), e.query(), e.synchronize(),
                e.wait(), e.wait(s), raises(e.record), raises(e.elapsed_time, e),
                raises(t.elapsed_time, t), raises(L.Stream, "xpu"), str(L.Stream("meta").device),
                L.Stream("meta").device_type]
    got = same_as_torch(run)
    assert got[0] == "torch.Stream device_type=cpu, device_index=-1, stream_id=0"
    with pytest.raises(RuntimeError, match="cpu backend doesn't support events"):
        hookgrad.Event().record()
