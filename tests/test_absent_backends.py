"""``torch.xpu``, ``torch.mps``, ``torch.mtia`` and ``torch.numa`` answer as PyTorch's build
without those backends does: for every public name of each module (tools/torch_modules.txt)
the result, or the exception's type and message, equals real torch's on this machine (a
CPU-only build), for a call with no arguments and for the calls below."""
import collections
import importlib
import os

import pytest

import hookgrad

torch = pytest.importorskip("torch")

# PyTorch's own mps.Event fails in __del__ when its constructor raised
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GROUPS = ("torch.xpu", "torch.mps", "torch.mtia", "torch.numa")


def _names():
    with open(os.path.join(ROOT, "tools", "torch_modules.txt")) as f:
        for line in f:
            path, *names = line.split()
            if path.split(".")[:2] and ".".join(path.split(".")[:2]) in GROUPS:
                yield from ((path, n) for n in names)


NAMES = sorted(set(_names()))

# calls with arguments: (module path, expression over `t` (torch or hookgrad) and `m` (the
# module)); `enter(x)` enters a context manager
CALLS = [
    ("torch.xpu", "m.manual_seed(0)"), ("torch.xpu", "m.manual_seed_all(3)"),
    ("torch.xpu", "m.manual_seed('a')"), ("torch.xpu", "m.set_device(0)"),
    ("torch.xpu", "m.set_device(-1)"), ("torch.xpu", "m.device(0)"),
    ("torch.xpu", "enter(m.device(0))"), ("torch.xpu", "enter(m.device(None))"),
    ("torch.xpu", "m.device('cpu')"), ("torch.xpu", "m.device('xpu:1').idx"),
    ("torch.xpu", "enter(m.device_of(t.zeros(2)))"), ("torch.xpu", "m.device_of(t.zeros(2)).idx"),
    ("torch.xpu", "enter(m.StreamContext(None))"), ("torch.xpu", "enter(m.stream(None))"),
    ("torch.xpu", "m.set_rng_state(t.zeros(2, dtype=t.uint8))"),
    ("torch.xpu", "m.set_rng_state(t.zeros(2, dtype=t.uint8), 'cuda')"),
    ("torch.xpu", "m.set_rng_state_all([])"),
    ("torch.xpu", "m.set_per_process_memory_fraction(0.5)"),
    ("torch.xpu", "m.can_device_access_peer(0, 1)"), ("torch.xpu", "m.memory_allocated(0)"),
    ("torch.xpu", "m.memory_allocated('cuda')"), ("torch.xpu", "m.get_stream_from_external(0)"),
    ("torch.xpu", "m.set_stream(None)"), ("torch.xpu", "m.reset_peak_memory_stats('cuda')"),
    ("torch.xpu", "m.reset_accumulated_memory_stats(0)"), ("torch.xpu", "m.Stream(0)"),
    ("torch.xpu", "m.graph(None)"), ("torch.xpu", "m.make_graphed_callables(abs, (1,))"),
    ("torch.xpu", "m.make_graphed_callables(t.nn.Linear(2, 2), (t.zeros(1, 2),))"),
    ("torch.xpu", "m.make_graphed_callables((abs, abs), ((t.zeros(1),), (t.ones(1),)))"),
    ("torch.xpu", "enter(m.use_mem_pool(None))"), ("torch.xpu", "m.change_current_allocator(None)"),
    ("torch.xpu", "m.XPUPluggableAllocator('no-such-lib.so', 'a', 'b')"),
    ("torch.xpu", "m.temperature('cuda')"), ("torch.xpu", "m.memory_stats(0)"),
    ("torch.mps", "m.manual_seed(0)"), ("torch.mps", "m.manual_seed('a')"),
    ("torch.mps", "m.set_rng_state(t.zeros(2, dtype=t.uint8))"),
    ("torch.mps", "m.set_per_process_memory_fraction(0.5)"),
    ("torch.mps", "m.set_per_process_memory_fraction(5)"),
    ("torch.mps", "m.set_per_process_memory_fraction(3.0)"), ("torch.mps", "m.compile_shader('x')"),
    ("torch.mps", "m.load_metallib('x')"), ("torch.mps", "m.load_metallib(b'x')"),
    ("torch.mps", "m.load_metallib(3)"), ("torch.mps.profiler", "enter(m.profile())"),
    ("torch.mps.profiler", "m.start('Event')"),
    ("torch.mps.profiler", "enter(m.metal_capture('x'))"),
    ("torch.mtia", "m.manual_seed(0)"), ("torch.mtia", "m.manual_seed_all(0)"),
    ("torch.mtia", "m.manual_seed('a')"), ("torch.mtia", "m.set_device(0)"),
    ("torch.mtia", "m.set_device(-1)"), ("torch.mtia", "m.set_device('cpu')"),
    ("torch.mtia", "m.set_device('mtia')"), ("torch.mtia", "m.device('cuda')"),
    ("torch.mtia", "enter(m.device(0))"), ("torch.mtia", "enter(m.device(-1))"),
    ("torch.mtia", "m.device('mtia:2').idx"), ("torch.mtia", "m.StreamContext(None)"),
    ("torch.mtia", "m.stream(None)"), ("torch.mtia", "m.set_stream(None)"),
    ("torch.mtia", "m.current_stream(0)"), ("torch.mtia", "m.default_stream(0)"),
    ("torch.mtia", "m.get_device_capability(0)"), ("torch.mtia", "m.get_device_properties(0)"),
    ("torch.mtia", "m.synchronize(0)"),
    ("torch.mtia", "m.set_rng_state(t.zeros(2, dtype=t.uint8))"),
    ("torch.mtia", "m.set_rng_state(t.zeros(2, dtype=t.uint8), 0)"),
    ("torch.mtia", "m.set_rng_state_all([])"),
    ("torch.mtia", "m.attach_out_of_memory_observer(print)"),
    ("torch.mtia", "m.graph(None)"), ("torch.mtia", "m.record_memory_history()"),
    ("torch.mtia", "m.memory_stats(0)"),
    ("torch.mtia", "issubclass(m.DeferredMtiaCallError, Exception)"),
    ("torch.numa.binding", "[(x.name, x.value) for x in m.AffinityMode]"),
    ("torch.numa.binding", "m.AffinityMode('socket') == 'socket'"),
    ("torch.numa.binding", "repr(m.NumaOptions(m.AffinityMode.NODE))"),
    ("torch.numa.binding", "m.NumaOptions(m.AffinityMode.EXCLUSIVE, True)"
                           ".should_fall_back_if_binding_fails"),
]


def enter(cm):
    with cm:
        return "entered"


def _plain(value, module):
    """What a result is, comparably across libraries: plain values as they are, objects of
    the module's own classes by class name."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return type(value).__name__, value
    if isinstance(value, (list, tuple, dict)):
        return type(value).__name__, repr(value)
    if isinstance(value, type):
        return "class", value.__name__
    return "object", type(value).__name__


def outcome(lib, path, expr):
    mod = importlib.import_module(lib.__name__ + path[len("torch"):])
    try:
        return "returns", _plain(eval(expr, {"t": lib, "m": mod, "enter": enter}), mod)
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return "raises", type(e).__name__, str(e)


def _default_call(path, name):
    obj = getattr(importlib.import_module(path), name)
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return f"m.{name}.__mro__[1].__name__"
    return f"m.{name}()" if callable(obj) else f"m.{name}"


@pytest.mark.parametrize("path,name", NAMES, ids=[f"{p}.{n}" for p, n in NAMES])
def test_name_answers_as_torch(path, name):
    expr = _default_call(path, name)
    assert outcome(hookgrad, path, expr) == outcome(torch, path, expr)


@pytest.mark.parametrize("path,expr", CALLS, ids=[f"{p}:{e}" for p, e in CALLS])
def test_call_answers_as_torch(path, expr):
    assert outcome(hookgrad, path, expr) == outcome(torch, path, expr)


def test_every_name_is_covered():
    assert {n for _, n in NAMES} >= {"is_available", "device_count", "memory_allocated",
                                     "empty_cache", "current_device", "AffinityMode"}
    assert collections.Counter(p.split(".")[1] for p, _ in NAMES).keys() >= {"xpu", "mps", "mtia",
                                                                             "numa"}


def test_cpu_only_answers():
    assert hookgrad.xpu.is_available() is False and hookgrad.xpu.device_count() == 0
    with pytest.raises(AssertionError, match="Torch not compiled with XPU enabled"):
        hookgrad.xpu.current_device()
    with pytest.raises(RuntimeError, match=r"Cannot execute emptyCache\(\) without MPS backend"):
        hookgrad.mps.empty_cache()
