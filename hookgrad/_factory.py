"""Tensor creation: ``tensor``, ``zeros``, ``arange``, ``rand``, ``*_like`` ..."""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import _device, _dtype, _factory_checks as _checks, _host_transfer, _jax_trace, _meta, \
    random
from ._errors import type_name
from ._host_value import DTYPES as _HOST_DTYPES, Host
from ._tensor import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
           "linspace", "logspace", "eye", "zeros_like", "ones_like", "full_like", "empty_like",
           "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
           "scalar_tensor", "is_tensor", "numel", "frombuffer", "is_floating_point",
           "is_complex"]


def _finish(arr, requires_grad, device):
    # the default device (``set_default_device``, ``with device(...)``) where none is given
    t = Tensor._wrap(_device.place(arr, device))
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):  # the factories' wording
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


_NUMBER_TYPES = frozenset((bool, int, float))
_NOT_NUMBERS = frozenset((str, list, tuple))  # an element of ragged data, a str: refused


def _number_kinds(data):
    """The Python types of a flat list or tuple of Python numbers (a collate's labels),
    else None: the general path walks nested data for Tensors and NumPy scalars."""
    if data.__class__ is list or data.__class__ is tuple:
        kinds = set(map(type, data))
        if kinds <= _NUMBER_TYPES:
            return kinds
    return None


def _infer_dtype(data):
    """PyTorch's inference: bools -> bool, ints -> int64, floats -> default dtype."""
    kinds = _number_kinds(data)
    if kinds is not None:
        return _dtype.get_default_dtype() if float in kinds or not kinds else \
            _dtype.int64 if int in kinds else _dtype.bool
    if isinstance(data, np.ndarray):
        return None
    try:
        flat = np.asarray(data, dtype=object).reshape(-1)
    except ValueError:  # ragged: PyTorch's words
        _checks.refuse_data(data, None)
        raise
    kinds = set()
    for v in flat:
        if v is None or v.__class__ in _NOT_NUMBERS:  # PyTorch's words, not NaN or NumPy's
            _checks.refuse_data(data, None)
        if isinstance(v, (bool, np.bool_)):
            kinds.add("b")
        elif isinstance(v, (int, np.integer)):
            kinds.add("i")
        elif isinstance(v, complex):
            kinds.add("c")
        else:
            kinds.add("f")
    if "c" in kinds:
        return _dtype.complex64
    if "f" in kinds or not kinds:
        return _dtype.get_default_dtype()
    if "i" in kinds:
        return _dtype.int64
    return _dtype.bool


def _to_numpy(data):
    if isinstance(data, Tensor):
        return np.asarray(data._data)
    if isinstance(data, (list, tuple)) and _number_kinds(data) is None and \
            any(isinstance(d, Tensor) for d in _flat(data)):
        return np.asarray(_tolist(data))
    return data


def _flat(x):
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _flat(v)
    else:
        yield x


def _tolist(x):
    if isinstance(x, Tensor):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [_tolist(v) for v in x]
    return x


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf Tensor holding a copy of ``data`` (nested lists, numbers, arrays, Tensors).

    Example::

        >>> hookgrad.tensor([1.0, 2.0], requires_grad=True)
        tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor):
        arr = data._data
        if dtype is not None:
            arr = arr.astype(_dtype.to_jax(dtype))
        if data.is_meta:  # no values: a meta Tensor of its shape, as PyTorch's
            if device is not None and not _device.is_meta(device):
                raise NotImplementedError(_meta.NO_DATA)
            return _finish(arr, requires_grad, "meta")
        return _finish(jnp.array(arr, copy=True), requires_grad, device)
    if isinstance(data, jax.Array) and not isinstance(data, jax.core.Tracer):
        data = np.asarray(data)
    if isinstance(data, jax.core.Tracer):
        arr = data if dtype is None else data.astype(_dtype.to_jax(dtype))
        return _finish(arr, requires_grad, device)
    data = _to_numpy(data)
    if dtype is None:
        if isinstance(data, (np.ndarray, np.generic)):
            dt = _dtype.from_jax(data.dtype) if data.dtype != np.float64 else \
                (_dtype.float64 if _dtype.x64_enabled() else _dtype.float32)
        else:
            dt = _infer_dtype(data)
    elif dtype.__class__ is str:
        raise _checks.public("tensor", _checks.not_a_dtype(dtype))
    else:
        dt = _dtype.as_dtype(dtype)
        if data is None or data.__class__ in (list, tuple) and _number_kinds(data) is None:
            _checks.refuse_none(data, dt)  # (NumPy reads None as NaN; not for flat numbers)
    # a copy of the caller's data, as PyTorch's tensor() makes: a small one held on the
    # host (``_held_on_host``), else transferred by from_host, and a small one remembered:
    # host ops read it with no transfer (``_ops/stages/host.py``)
    try:
        host = np.array(data, dtype=_dtype.to_jax(dt), copy=True)
    except (ValueError, TypeError):  # a str, a ragged nesting: PyTorch's words
        _checks.refuse_data(data, dt.is_floating_point is False)
        raise
    return _made(host, requires_grad, device)


def _made(arr, requires_grad, device):
    """A new Tensor of ``arr``. A NumPy array, which nothing else holds, is held on the
    host where ``_held_on_host`` allows it (generate's stopping criteria make two ``full``s
    a step that only host ops read), else transferred, a small one remembering its values
    (host ops and index reads of it copy nothing back)."""
    if arr.__class__ is np.ndarray:
        if not requires_grad and _host_device(device) and _held_on_host(arr):
            return Tensor._wrap(Host(arr, None))
        host, arr = arr, _dtype.from_host(arr)
        _host_transfer.remember(arr, host)
    return _finish(arr, requires_grad, device)


def _host_device(device):
    """Whether ``tensor()`` given ``device`` may hold its copy on the host: none given, or
    the CPU named without an index (``device=x.device``: transformers' ``generate`` makes
    its token tensors so per step), where a value held on the host is (``_held_on_host``
    checks that no default device moves it)."""
    return device is None or device.__class__ is _device.device and \
        device._type == "cpu" and device._index is None


def _held_on_host(host):
    """Whether ``tensor()`` holds its copy ``host`` on the host, read-only, as the host
    stage's results are (docs/modes.md): a small CPU value of a dtype the host computes
    in, made outside a JAX trace and a dispatch mode, with no default device set. The
    first op that needs XLA copies it in (``Tensor._data``)."""
    if host.size > _host_transfer.HOST_MAX or host.dtype not in _HOST_DTYPES or MODES[0] or \
            _device._state.default is not None or jax.config.jax_default_device is not None \
            or _host_transfer._entry() is None or not _jax_trace.no_trace() or \
            (host.dtype.itemsize == 8 and not _dtype.x64_enabled()):
        return False
    host.setflags(write=False)
    return True


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    return _PLAIN["tensor"](data, dtype=dtype, device=device)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D Tensor of ``dtype`` read from an object that has the buffer protocol (bytes,
    bytearray, array.array, mmap, NumPy arrays): ``count`` elements (-1: all) from byte
    ``offset``.

    The Tensor holds a copy of the bytes (JAX arrays are values): later writes to
    ``buffer`` do not reach it, where PyTorch's would. The default device does not apply.

    Example::

        >>> hookgrad.frombuffer(b"\\x01\\x02", dtype=hookgrad.int8)
        tensor([1, 2], dtype=hookgrad.int8)
    """
    try:
        raw = memoryview(buffer).cast("B")
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    size, item = len(raw), _dtype.as_dtype(dtype).itemsize
    if size == 0 or count == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if not 0 <= offset < size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({size} bytes) minus 1")
    if count < 0:
        if (size - offset) % item:
            raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({item})")
        count = (size - offset) // item
    elif offset + count * item > size:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({size} bytes)")
    host = np.frombuffer(raw, np.dtype(_dtype.to_jax(dtype)), count, offset).copy()
    return _finish(_dtype.from_host(host), requires_grad, "cpu")


def from_numpy(ndarray):
    return _PLAIN["tensor"](ndarray)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _PLAIN["tensor"](s, dtype=dtype or _dtype.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating-point type (float64/32/16, bfloat16...)."""
    return input.is_floating_point()


def is_complex(input):
    """Whether ``input``'s dtype is a complex type (complex64, complex128)."""
    return input.is_complex()


def numel(input):
    return input.numel()


_size = _jax_trace.size_args  # a factory's sizes, as the views take them


def _jd(dtype, default=None):
    d = dtype if dtype is not None else (default or _dtype.get_default_dtype())
    jd = _FIXED_JAX.get(d) if d.__class__ is _dtype.dtype else None
    if jd is not None:  # (the table: a model's factories, per step)
        return jd
    if d.__class__ is str:
        raise _checks.not_a_dtype(d)
    return _dtype.to_jax(d)


_FIXED_JAX = _dtype.FIXED_JAX


def _on_meta(device):
    """Whether a factory given ``device`` makes a meta Tensor (it then computes nothing)."""
    if device.__class__ is _device.device:  # ``device=x.device``: a model's, per step
        return device._type == "meta"
    return _device.is_meta(device if device is not None else _device.default())


def _filled(shape, value, dtype, device=None):
    if _on_meta(device):
        _refuse_negative(shape, meta=True)
        return _meta.MetaArray(shape, dtype)
    try:
        # small arrays come from the host: no XLA compilation per new shape (a symbolic
        # size, torch.export's, has no host array)
        for s in shape:
            if type(s) is not int:
                break
        else:
            if math.prod(shape) <= 1 << 16:
                return np.full(shape, value, dtype)  # (``_made`` holds or puts it)
        return jnp.full(shape, value, dtype)
    except (ValueError, TypeError):  # NumPy's or JAX's refusal: PyTorch's words
        _refuse_negative(shape)
        raise


def _refuse_negative(shape, meta=False):
    error = _checks.negative_size(shape, meta)
    if error is not None:
        raise error from None  # (NumPy's refusal, where it came from, is no help)


def _input_device(input, device):
    """The device of a ``*_like``/``new_*`` Tensor: ``device``, else ``input``'s (which the
    default device does not change, as in PyTorch)."""
    if device is not None or (_device.default() is None and not input.is_meta):
        return device
    return input.device


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return _made(_filled(_size(size), 0, _jd(dtype), device), requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return _made(_filled(_size(size), 1, _jd(dtype), device), requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          memory_format=None, pin_memory=False):
    return _made(_filled(_size(size), 0, _jd(dtype), device), requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None):
    if dtype is None:
        if isinstance(fill_value, bool):
            dtype = _dtype.bool
        elif isinstance(fill_value, int):
            dtype = _dtype.int64
    if fill_value.__class__ not in _NUMBER_TYPES:
        _checks.check_fill(fill_value)
        if dtype is None and isinstance(fill_value, complex):  # not its real part alone
            dtype = _dtype.complex128 if _dtype.get_default_dtype() == _dtype.float64 \
                else _dtype.complex64
    return _made(_filled(_size((size,)), fill_value, _jd(dtype), device), requires_grad, device)


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
             layout=None):
        dt = dtype if dtype is not None else input.dtype
        return fn(input.shape, dtype=dt, device=_input_device(input, device),
                  requires_grad=requires_grad)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None):
    return _PLAIN["full"](input.shape, fill_value, dtype=dtype or input.dtype,
                          device=_input_device(input, device), requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if dtype.__class__ is str:  # (a step of 1 given is not told from the default)
        raise _checks.arange_dtype([start] if end is None else [start, end] +
                                   ([step] if step != 1 else []), dtype)
    if end is None:
        start, end = 0, start
    if start.__class__ is int and end.__class__ is int and step.__class__ is int:
        vals = [start, end, step]  # a model's ``arange(n, device=d)``: plain ints
        if dtype is None:
            dtype = _dtype.int64
    else:
        if dtype is None:
            is_float = any(isinstance(v, float) or (isinstance(v, Tensor) and
                                                    v.is_floating_point())
                           for v in (start, end, step))
            dtype = _dtype.get_default_dtype() if is_float else _dtype.int64
        vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    _check_range(*vals)
    jd = _dtype.to_jax(dtype)
    if jd.kind in "iu" and all(v.__class__ is int for v in vals) and \
            _jax_trace.no_trace():
        # NOTE: integer positions (a model's position ids, every forward) are made on the
        # host, not by JAX's eager iota and cast (two dispatches): a small one is held
        # there (``_made``), so generate's ``arange(n, device=d).view(1, -1) + ...`` runs
        # as host ops; the first XLA op to read it copies it in one transfer
        return _made(np.arange(*vals, dtype=jd), requires_grad, device)
    return _finish(jnp.arange(*vals, dtype=jd), requires_grad, device)


def _check_range(start, end, step):
    """PyTorch's checks of arange's arguments, in its order and words."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    for v in (start, end):
        if not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    return _finish(_spaced(jnp.linspace, start, end, steps, dtype), requires_grad, device)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    return _finish(_spaced(jnp.logspace, start, end, steps, dtype, base=base), requires_grad,
                   device)


def _spaced(space, start, end, steps, dtype, **kwargs):
    try:
        return space(start, end, int(steps), dtype=_jd(dtype), **kwargs)
    except ValueError:  # NumPy's words for a negative count
        if int(steps) < 0:
            raise RuntimeError("number of steps must be non-negative") from None
        raise
    except _checks.Unnamed as error:
        raise _checks.public(space.__name__, error) from None


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    try:
        arr = jnp.eye(n, m, dtype=_jd(dtype))
    except ValueError:  # NumPy's words for a negative size
        _checks.check_eye(n, m)
        raise
    except _checks.Unnamed as error:
        raise _checks.public("eye", error) from None
    return _finish(arr, requires_grad, device)


def _gen_key(generator):
    return random.next_key() if generator is None else generator.next_key()


def _drawn(arr, dtype):
    # NOTE: eager draws are NumPy arrays: cast on the host, so that no XLA conversion
    # program is compiled per shape
    if isinstance(arr, np.ndarray):
        return _dtype.from_host(arr.astype(dtype))
    return jnp.asarray(arr, dtype)


def _draw(kind, shape, generator):
    try:
        return random.draw(kind, shape, generator=generator)
    except ValueError:  # NumPy's words for a negative size
        _refuse_negative(shape)
        raise


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    if _on_meta(device):  # nothing drawn, as PyTorch's meta tensors
        _checks.check_meta_draw(_size(size), False)
        return _finish(_meta.MetaArray(_size(size), _jd(dtype)), requires_grad, device)
    arr = _draw("uniform", _size(size), generator)
    return _finish(_drawn(arr, _jd(dtype)), requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    if _on_meta(device):
        _checks.check_meta_draw(_size(size), True)
        return _finish(_meta.MetaArray(_size(size), _jd(dtype)), requires_grad, device)
    arr = _draw("normal", _size(size), generator)
    return _finish(_drawn(arr, _jd(dtype)), requires_grad, device)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
        if not isinstance(size, (tuple, list)):
            raise _checks.public("randint", _checks.Unnamed(
                f"argument 'size' (position 2) must be tuple of ints, not "
                f"{type_name(size)}"))
    key, dt = _gen_key(generator), _jd(dtype, _dtype.int64)
    if isinstance(key, jax.core.Tracer):
        arr = jax.random.randint(key, tuple(size), low, high, dt)
    else:  # drawn on the host, as random.draw
        try:
            drawn = random.host_generator(key).integers(low, high, tuple(size))
        except ValueError:  # NumPy's words: PyTorch's
            _checks.check_randint(low, high, tuple(size))
            raise
        arr = _drawn(drawn, dt)
    return _finish(arr, requires_grad, device)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    key, dt = _gen_key(generator), _jd(dtype, _dtype.int64)
    if isinstance(key, jax.core.Tracer):
        arr = jax.random.permutation(key, int(n)).astype(dt)
    else:
        arr = _drawn(random.host_generator(key).permutation(int(n)), dt)
    return _finish(arr, requires_grad, device)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _PLAIN["rand"](input.shape, dtype=dtype or input.dtype,
                          device=_input_device(input, device), requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _PLAIN["randn"](input.shape, dtype=dtype or input.dtype,
                           device=_input_device(input, device), requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    return _PLAIN["randint"](low, high, input.shape, dtype=dtype or input.dtype,
                             device=_input_device(input, device))


def _new(fn):
    def method(self, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        try:
            return fn(*args, **kwargs, dtype=dtype or self.dtype,
                      device=_input_device(self, device), requires_grad=requires_grad)
        except _checks.REWORDED as error:
            raise _checks.public("new_" + fn.__name__, error) from None
    return method


Tensor.new_zeros = _new(zeros)
Tensor.new_ones = _new(ones)
Tensor.new_empty = _new(empty)
Tensor.new_full = _new(full)
Tensor.new_tensor = lambda self, data, *, dtype=None, device=None, requires_grad=False: \
    _PLAIN["tensor"](data, dtype=dtype or self.dtype, device=_input_device(self, device),
                     requires_grad=requires_grad)


# the dispatch modes' stage: [the entered modes, ``call``] (``_ops/stages/modes.py``, which
# sits above, fills it)
MODES = [(), None]


def _seen_by_modes(name, fn, sized):
    """``fn``, a factory that the entered dispatch modes see as the ATen op ``name``, its
    size (``sized``) as a list and ``requires_grad`` applied afterwards, as PyTorch's
    autograd does around the op."""
    op = name.split(".")[0]

    @functools.wraps(fn)
    def factory(*args, **kwargs):
        try:
            if not MODES[0]:
                return fn(*args, **kwargs)
            requires_grad = kwargs.pop("requires_grad", False)
            if sized:
                args = (list(_size(args)),)
            t = MODES[1](name, fn, args, kwargs)
            return t.requires_grad_() if requires_grad else t
        except _checks.REWORDED as error:  # PyTorch's words name the function called
            raise _checks.public(op, error) from None
        except AttributeError as error:  # a ``*_like`` given no Tensor
            _checks.reword_like(op, args, error)
            raise
    return factory


def _lifted(fn):
    """``tensor``, whose new Tensor the entered dispatch modes see as PyTorch's do: passed
    through ``aten.lift_fresh`` (which returns it), then made to require grad."""
    @functools.wraps(fn)
    def tensor(data, *, requires_grad=False, **kwargs):
        if not MODES[0] or isinstance(data, Tensor):
            return fn(data, requires_grad=requires_grad, **kwargs)
        t = MODES[1]("lift_fresh.default", _fresh, (fn(data, **kwargs),), {})
        return t.requires_grad_() if requires_grad else t
    return tensor


def _fresh(t):
    return t


_PLAIN = {"tensor": tensor}
tensor = _lifted(tensor)
SEEN = {"lift_fresh.default": _fresh}  # ATen name -> the function a mode's ``func`` runs
# the factories as PyTorch's ATen ops (``func`` of a dispatch mode); factories that call
# another call its plain form, so that a mode sees the one op
for _name, _aten in (("zeros", "zeros.default"), ("ones", "ones.default"),
                     ("empty", "empty.memory_format"), ("rand", "rand.default"),
                     ("randn", "randn.default"), ("full", "full.default"),
                     ("zeros_like", "zeros_like.default"), ("ones_like", "ones_like.default"),
                     ("empty_like", "empty_like.default"), ("full_like", "full_like.default"),
                     ("rand_like", "rand_like.default"), ("randn_like", "randn_like.default"),
                     ("randint", "randint.low"), ("randperm", "randperm.default"),
                     ("scalar_tensor", "scalar_tensor.default")):
    _PLAIN[_name] = SEEN[_aten] = globals()[_name]
    globals()[_name] = _seen_by_modes(_aten, _PLAIN[_name],
                                      _name in ("zeros", "ones", "empty", "rand", "randn"))
del _name, _aten
