"""The objects passed to a compiled step (a KV cache) keyed by their structure, not
identity (``hookgrad._compile.arg_objects``): a signature found to run eagerly is not
traced again."""
import itertools
import warnings

import numpy as np

import hookgrad as hg


def test_a_tensor_the_object_holds_is_an_input_and_in_place_writes_come_back():
    class Holder:
        def __init__(self):
            self.scale = hg.ones(3)
            self.total = hg.zeros(3)

    def step(x, h):
        h.total.add_(x * h.scale)
        return h.total.sum()
    f = hg.compile(step)
    a, b = Holder(), Holder()
    for i in range(3):
        with hg.no_grad():
            a.scale.fill_(i + 1.0)
            b.scale.fill_(i + 1.0)
        assert f(hg.arange(3.0), a).item() == step(hg.arange(3.0), b).item()
    np.testing.assert_array_equal(a.total.numpy(), b.total.numpy())
    assert f.trace_count == 1


def _falls_back(step, make, calls=5):
    """Run ``step`` compiled on new objects from ``make``, against eager runs; the
    "runs eagerly" warnings, and after the first call the traces of the step and the
    programs JAX traced (the eager runs first: an eager op chain seen again compiles on
    its own, ``_ops.lazy``)."""
    # counted where no undo of the trace's effects reaches (``effects.Watch.undo``)
    traces = itertools.count()
    note = hg.compile.trace_only(lambda: hg.compiler.is_compiling() and next(traces))

    def counted(x, obj):
        note()
        return step(x, obj)
    want = [step(hg.ones(2), make()).tolist() for _ in range(calls)]
    f = hg.compile(counted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = f(hg.ones(2), make()).tolist()
        traced, count = next(traces), hg.compile_count()   # (a read counts one)
        got = [first] + [f(hg.ones(2), make()).tolist() for _ in range(calls - 1)]
    ran = [w for w in caught if "runs eagerly" in str(w.message)]
    assert got == want and traced >= 1
    return ran, next(traces) - traced - 1, hg.compile_count() - count


def test_a_list_appended_to_runs_eagerly_once_warned_and_not_traced_again():
    class Log:
        def __init__(self):
            self.seen = []

    def step(x, log):
        log.seen.append(x.sum().detach())
        return x * 2
    ran, traced, compiled = _falls_back(step, Log)
    assert len(ran) == 1 and ran[0].filename == __file__
    assert "changed" in str(ran[0].message) and "Log" in str(ran[0].message)
    assert traced == 0 and compiled == 0


def test_an_object_made_in_the_trace_runs_eagerly():
    class Box:
        def __init__(self):
            self.v = None

    def step(x, box):
        box.v = [x * 2]   # a new list: not a value the replay can set
        return x + 1
    ran, traced, compiled = _falls_back(step, Box)
    assert len(ran) == 1 and ran[0].filename == __file__ and traced == 0 and compiled == 0


def test_a_tensor_with_a_graph_set_on_an_object_runs_eagerly():
    w = hg.ones(2, requires_grad=True)

    class Box:
        def __init__(self):
            self.v = None

    def step(x, box):
        box.v = x * w   # its grad_fn cannot be made again by a replay
        return box.v.sum()
    ran, traced, _ = _falls_back(step, Box)
    assert len(ran) == 1 and traced == 0


def test_a_step_whose_key_changes_each_call_stops_tracing_at_the_limit():
    class Log:
        def __init__(self, n):
            self.n, self.seen = n, []

    def step(x, log):
        log.seen.append(log.n)   # an effect: eager; ``n`` keys each call anew
        return x * log.n
    f = hg.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [f(hg.ones(2), Log(n)).tolist() for n in range(12)]
    assert got == [[float(n)] * 2 for n in range(12)]
    assert sum(type(v).__name__ == "Eager" for v in f._cache.values()) == 8
    limit = [w for w in caught if "recompile_limit" in str(w.message)]
    assert len(limit) == 1 and limit[0].filename == __file__
    count = hg.compile_count()
    f(hg.ones(2), Log(20))
    assert hg.compile_count() == count
