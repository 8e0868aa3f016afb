"""hookgrad: PyTorch's autograd and hook API on JAX.

Eager (``loss.backward()`` with PyTorch's hook order), compiled (``hookgrad.compile``: the
step, backward and hooks included, as one XLA program) and functional
(``hookgrad.func.functional_call`` under ``jax.grad``/``vmap``/``jit``).
"""
from . import _backend_start
_backend_start.watch()  # names what starts JAX, for init_process_group's error
from . import _compilation_cache  # noqa: E402
_compilation_cache.configure()  # before the first program is compiled
from ._compile_count import compile_count  # noqa: E402 - counts from the first program on
from . import _x64  # noqa: E402
_x64.configure()  # before the first array is made
from . import autograd  # noqa: E402 - first: the engine imports the Tensor class
from ._tensor import Size, Tensor
from . import _ops
from ._dtype import (bfloat16, bool, cdouble, cfloat, complex64, complex128, device, double,
                     dtype, float, float16, float32, float64, get_default_dtype, half, int,
                     int8, int16, int32, int64, long, set_default_dtype, short, uint8,
                     uint16, uint32, uint64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
                     float8_e5m2fnuz, float8_e8m0fnu, complex32, chalf)
from ._device import get_default_device, set_default_device
from ._layout import (layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr,
                      strided)
from ._storage import TypedStorage, UntypedStorage
from ._type_info import finfo, iinfo
from ._threads import (get_num_interop_threads, get_num_threads, set_num_interop_threads,
                       set_num_threads)
from ._windows import (bartlett_window, blackman_window, hamming_window, hann_window,
                       kaiser_window)
from ._vmap import vmap
from ._memory_format import (channels_last, channels_last_3d, contiguous_format,
                             memory_format, preserve_format)
from ._factory import *  # noqa: F401,F403
from ._factory import __all__ as _factory_all
from ._legacy_tensor import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor,
                             FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)
from ._autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                  is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,
                                     set_anomaly_enabled)
from .random import manual_seed, seed, initial_seed, get_rng_state, set_rng_state
from . import _C, _missing, random, return_types, utils
from ._qscheme import (per_channel_affine, per_channel_affine_float_qparams,  # noqa: E402,F401
                       per_channel_symmetric, per_tensor_affine, per_tensor_symmetric, qscheme)
from ._generator import Generator, default_generator
from .backends import (are_deterministic_algorithms_enabled, get_float32_matmul_precision,
                       is_deterministic_algorithms_warn_only_enabled,
                       set_float32_matmul_precision, use_deterministic_algorithms)
from ._backend_queries import cudnn_is_acceptable, is_vulkan_available  # noqa: E402
from ._repr import set_printoptions
from math import e, inf, nan, pi  # noqa: E402 - torch.inf, torch.pi, ...
newaxis = None
from .utils import hooks as _hooks  # noqa: F401 - hookgrad.utils.hooks
from ._engine.backward import is_warn_always_enabled, set_warn_always
from . import amp  # noqa: E402
from .amp import GradScaler, autocast  # noqa: E402
from .amp.autocast_mode import (autocast_decrement_nesting, autocast_increment_nesting,  # noqa: E402
                                clear_autocast_cache, get_autocast_cpu_dtype,
                                get_autocast_dtype, get_autocast_gpu_dtype,
                                is_autocast_cache_enabled, is_autocast_cpu_enabled,
                                is_autocast_enabled, set_autocast_cache_enabled,
                                set_autocast_cpu_dtype, set_autocast_cpu_enabled,
                                set_autocast_dtype, set_autocast_enabled,
                                set_autocast_gpu_dtype)

__version__ = "0.1.0"

globals().update(_ops.FUNCTIONS)
from . import _torch_function  # noqa: E402,F401 - Tensor subclasses' __torch_function__


# heavier subpackages, imported on first use
_LAZY = frozenset({"nn", "optim", "func", "library", "testing", "cuda", "futures",
                   "multiprocessing", "distributions", "distributed", "version",
                   "accelerator", "overrides", "jit", "compiler", "_dynamo", "hub", "fx",
                   "functional", "ops", "cpu", "linalg", "profiler", "export", "xpu", "mps",
                   "mtia", "masked", "numa", "signal", "fft", "special"})
# names PyTorch keeps at ``torch.*`` from a heavier subpackage: (module, name there)
_LAZY_NAMES = {"fork": ("jit", "fork"), "wait": ("jit", "wait"), "Future": ("futures", "Future"),
               "ScriptModule": ("jit", "ScriptModule"),
               "ScriptFunction": ("jit", "ScriptFunction")}


def _assert(condition, message):
    """A wrapper around Python's assert: raises ``AssertionError(message)`` unless
    ``condition`` holds (unlike ``assert``, also under ``python -O``)."""
    if not condition:
        raise AssertionError(message)


def __getattr__(name):
    import importlib
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        module, attr = _LAZY_NAMES[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    if name == "compile":  # the module is callable: hookgrad.compile(fn), .host_hook
        return importlib.import_module(f"{__name__}.compile")
    raise _missing.missing("module 'hookgrad'", "torch", name)


from ._build_config import (compiled_with_cxx11_abi, has_lapack, has_mkl, has_openmp,  # noqa: E402
                            has_spectral)
from ._object_queries import get_device, is_inference, is_storage, typename  # noqa: E402
from ._errors import AcceleratorError, OutOfMemoryError  # noqa: E402
from ._memory_format import contiguous_format as legacy_contiguous_format  # noqa: E402
from ._legacy_tensor import set_default_tensor_type  # noqa: E402
from ._threads import init_num_threads  # noqa: E402
from ._utils import classproperty  # noqa: E402
from ._utils_internal import prepare_multiprocessing_environment  # noqa: E402
from ._device_module import get_device_module  # noqa: E402
from ._worker_rng import thread_safe_generator  # noqa: E402
from .backends._numerics import (get_deterministic_debug_mode,  # noqa: E402
                                 set_deterministic_debug_mode, set_flush_denormal)
from . import torch_version  # noqa: E402,F401
from ._streams import Event, Stream  # noqa: E402
from ._dlpack import from_dlpack, to_dlpack  # noqa: E402
from ._asarray import asarray  # noqa: E402
from ._higher_order import cond, while_loop  # noqa: E402
from ._file_archive import PyTorchFileReader, PyTorchFileWriter  # noqa: E402
from ._legacy_storage import (BFloat16Storage, BoolStorage, ByteStorage,  # noqa: E402
                              CharStorage, ComplexDoubleStorage, ComplexFloatStorage,
                              DoubleStorage, FloatStorage, HalfStorage, IntStorage, LongStorage,
                              QInt8Storage, QInt32Storage, QUInt2x4Storage, QUInt4x2Storage,
                              QUInt8Storage, ShortStorage, Storage, StorageBase)
from ._legacy_storage import storage_type as _storage_type  # noqa: E402
Tensor.storage_type = _storage_type
from ._dtype_lowbit import (bits1x8, bits2x4, bits4x2, bits8, bits16,  # noqa: E402
                            float4_e2m1fn_x2, int1, int2, int3, int4, int5, int6, int7, qint8,
                            qint32, quint2x4, quint4x2, quint8, uint1, uint2, uint3, uint4,
                            uint5, uint6, uint7)
from ._symbolic_shapes import (SymBool, SymFloat, SymInt, sym_constrain_range,  # noqa: E402
                               sym_constrain_range_for_size, sym_float, sym_fresh_size,
                               sym_int, sym_ite, sym_max, sym_min, sym_not, sym_sqrt, sym_sum)
from . import serialization  # noqa: E402 - after the Tensor and dtypes it pickles
from .serialization import load, save  # noqa: E402
from . import _functional  # noqa: E402,F401 - registers the functional backend with _mode
from . import _import_heap  # noqa: E402 - last: every import-time object exists by now
_import_heap.after_import()
