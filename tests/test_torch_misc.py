"""torch's odds and ends: object queries, build flags, numerics switches, the legacy
constructor ``Tensor.new`` and ``set_default_tensor_type``, ``classproperty``, the
version string, ``get_device_module``, ``fork``/``wait``: each against PyTorch."""
import warnings

import pytest

import hookgrad
from tests._storage_warning import quiet as _quiet
from tests.differential import py, raises, same_as_torch


def _name(dtype):
    return str(dtype).split(".")[-1]


def test_typename_names_tensors_classes_and_objects():
    got = same_as_torch(lambda L: [L.typename(L.ones(2)), L.typename(L.ones(2).long()),
                                   L.typename(3), L.typename(len), L.typename(None)])
    assert got == ["torch.FloatTensor", "torch.LongTensor", "int", "len", "NoneType"]
    assert hookgrad.typename(hookgrad.nn.Linear) == "hookgrad.nn.modules.linear.Linear"


def test_is_storage_get_device_is_inference():
    got = same_as_torch(_quiet(lambda L: [
        L.is_storage(L.ones(2).untyped_storage()), L.is_storage(L.ones(2).storage()),
        L.is_storage(L.ones(2)), L.get_device(L.ones(2)), L.is_inference(L.ones(2))]))
    assert got == [True, True, False, -1, False]


def test_fill_makes_a_new_filled_tensor_with_gradients():
    def run(L):
        x = L.ones(2, 3, requires_grad=True)
        v = L.tensor(2.0, requires_grad=True)
        a, b = L.fill(x * 1, 3.0), L.fill(x * 1, v)
        (a.sum() + (b * L.arange(6.0).reshape(2, 3)).sum()).backward()
        return [py(a), py(b), type(a.grad_fn).__name__, type(b.grad_fn).__name__, py(x.grad),
                py(v.grad), raises(lambda: L.fill(x, L.ones(2)))]
    got = same_as_torch(run)
    assert got[1] == [[2.0] * 3] * 2 and got[5] == 15.0


def test_build_flags():
    got = same_as_torch(lambda L: [L.has_lapack, L.has_spectral, L.compiled_with_cxx11_abi()])
    assert got == [True, True, True]
    # jaxlib links neither MKL nor OpenMP (docs/differences.md)
    assert hookgrad.has_mkl is False and hookgrad.has_openmp is False
    assert hookgrad.init_num_threads() is None


def test_deterministic_debug_mode_sets_the_deterministic_algorithms():
    def run(L):
        out = []
        try:
            for mode in ("warn", 2, "default", 1, 0):
                L.set_deterministic_debug_mode(mode)
                out.append([L.get_deterministic_debug_mode(),
                            L.are_deterministic_algorithms_enabled(),
                            L.is_deterministic_algorithms_warn_only_enabled()])
            out += [raises(L.set_deterministic_debug_mode, 3),
                    raises(L.set_deterministic_debug_mode, "loud"),
                    raises(L.set_deterministic_debug_mode, 1.5)]
        finally:
            L.set_deterministic_debug_mode(0)
        return out
    got = same_as_torch(run)
    assert got[0] == [1, True, True] and got[-1]["raises"] == "TypeError"


def test_set_flush_denormal():
    def run(L):
        try:
            return [L.set_flush_denormal(True), raises(L.set_flush_denormal, 1)]
        finally:  # PyTorch's sets the CPU's flush mode for the whole process (NumPy too)
            L.set_flush_denormal(False)
    assert same_as_torch(run)[0] is True
    # XLA's CPU programs always flush: False cannot be honoured (docs/differences.md)
    assert hookgrad.set_flush_denormal(False) is False


def test_error_classes_are_runtime_errors():
    same_as_torch(lambda L: [issubclass(L.OutOfMemoryError, RuntimeError),
                             issubclass(L.AcceleratorError, RuntimeError),
                             L.OutOfMemoryError.__name__, L.AcceleratorError.__name__])


def test_legacy_contiguous_format_is_contiguous_format():
    assert same_as_torch(lambda L: L.legacy_contiguous_format is L.contiguous_format)


def test_new_is_the_legacy_constructor():
    def run(L):
        x = L.ones(2, 3, dtype=L.float64)
        y = L.ones(2, requires_grad=True)
        z = y.new(y)
        return [list(x.new(2, 3).shape), _name(x.new(2).dtype), list(x.new().shape),
                py(x.new([1, 2])), _name(x.new([1, 2]).dtype), py(x.new((2, 3))),
                list(x.new(L.Size([4])).shape), z is y, z._base is y, z.requires_grad,
                raises(x.new, L.tensor([1, 2])), raises(x.new, "a"), raises(x.new, 2, "b"),
                raises(lambda: x.new(2, dtype=L.float32)),
                raises(lambda: x.new(2, device="meta"))]
    got = same_as_torch(run)
    assert got[3] == [1.0, 2.0] and got[5] == [2.0, 3.0]


def test_set_default_tensor_type():
    def run(L):
        out = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                L.set_default_tensor_type(L.DoubleTensor)
                out.append([_name(L.tensor([1.5]).dtype), _name(L.get_default_dtype())])
                L.set_default_tensor_type("torch.FloatTensor")
                out.append(_name(L.get_default_dtype()))
                out += [raises(L.set_default_tensor_type, L.LongTensor),
                        raises(L.set_default_tensor_type, "torch.cuda.FloatTensor"),
                        raises(L.set_default_tensor_type, L.float64)]
            finally:
                L.set_default_dtype(L.float32)
        out.append(sorted({str(x.category.__name__) for x in w}))
        return out
    got = same_as_torch(run)
    assert got[0] == ["float64", "float64"] and got[-1] == ["UserWarning"]


def test_set_default_tensor_type_warns_at_the_callers_line():
    with pytest.warns(UserWarning, match="deprecated") as w:
        try:
            hookgrad.set_default_tensor_type(hookgrad.FloatTensor)
        finally:
            hookgrad.set_default_dtype(hookgrad.float32)
    assert w[0].filename == __file__


def test_classproperty():
    def run(L):
        class A:
            @L.classproperty
            def name(cls):
                return cls.__name__ + "!"

        class B(A):
            pass
        return [A.name, B.name, B().name]
    assert same_as_torch(run) == ["A!", "B!", "B!"]


def test_torch_version_compares_as_a_version():
    def run(L):
        v = L.torch_version.TorchVersion("2.13.0")
        return [v > "2.9", v >= (2, 13), v < (2, 13, 1), v == "2.13", v > "2.13.0rc1",
                v < "2.13.0.post1", L.torch_version.TorchVersion("parrot") < "python",
                isinstance(v, str), L.torch_version.__version__ == L.__version__ if
                L is not hookgrad else True]
    assert same_as_torch(run)[:3] == [True, True, True]


def test_get_device_module():
    def run(L):
        return [L.get_device_module("cpu").__name__.split(".")[-1],
                L.get_device_module(L.device("cuda:0")).__name__.split(".")[-1],
                L.get_device_module().__name__.split(".")[-1],
                raises(L.get_device_module, 3)]
    assert same_as_torch(run)[:3] == ["cpu", "cuda", "cpu"]


def test_fork_wait_future_and_the_multiprocessing_hook():
    def run(L):
        fut = L.jit.fork(lambda a: a * 2, 21)
        return [L.wait(fut), isinstance(fut, L.Future), L.fork(len, [1, 2]).wait(),
                L.prepare_multiprocessing_environment("/tmp"), L.thread_safe_generator()]
    assert same_as_torch(run)[:3] == [42, True, 2]


def test_script_classes_exist_for_isinstance():
    def run(L):
        m = L.nn.Linear(1, 1)
        return [isinstance(m, L.ScriptModule), isinstance(len, L.ScriptFunction),
                L.ScriptModule.__name__, L.ScriptFunction.__name__]
    assert same_as_torch(run)[:2] == [False, False]
    with pytest.raises(NotImplementedError, match="hookgrad does not implement "
                                                  "torch.jit.ScriptFunction"):
        hookgrad.ScriptFunction()
