"""Attributes a compiled step sets on the objects passed to it (a KV cache's layers), done
again after each run (``hookgrad._compile.arg_objects``); the objects keyed by their
structure, not identity; and a signature found to run eagerly is not traced again."""
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hookgrad as hg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Layer:
    def __init__(self):
        self.keys = None
        self.ready = False


class _Cache:
    """As transformers' DynamicCache: a list of layers whose Tensors the step replaces."""

    def __init__(self, n=2):
        self.layers = [_Layer() for _ in range(n)]
        self.meta = {"steps": 0}


def _step(x, cache):
    for i, layer in enumerate(cache.layers):
        k = x * (i + 1)
        if not layer.ready:
            layer.dtype, layer.ready = x.dtype, True
            layer.keys = hg.zeros(x.shape[0], 0)
        layer.keys = hg.cat([layer.keys, k[:, None]], dim=1)
    cache.meta["steps"] = cache.meta["steps"] + 1
    return cache.layers[-1].keys.sum(), cache


def _same_cache(a, b):
    assert a.meta == b.meta
    for la, lb in zip(a.layers, b.layers):
        assert (la.ready, la.__dict__.get("dtype")) == (lb.ready, lb.__dict__.get("dtype"))
        assert type(la.keys) is hg.Tensor and la.keys.shape == lb.keys.shape
        np.testing.assert_array_equal(la.keys.numpy(), lb.keys.numpy())


def _decode(f, cache, n=4):
    out = []
    for i in range(n):
        loss, got = f(hg.arange(3.0) + i, cache)
        assert got is cache   # the call's own object, not the one traced
        out.append(loss.item())
    return out


def test_attributes_set_on_an_argument_object_are_set_after_each_run():
    f = hg.compile(_step)
    c, e = _Cache(), _Cache()
    assert _decode(f, c) == _decode(_step, e)
    _same_cache(c, e)
    # a program per cache length (the shapes are static), none run eagerly
    assert f.trace_count == 4
    assert not any(type(v).__name__ == "Eager" for v in f._cache.values())


def test_a_new_object_of_the_same_structure_compiles_nothing():
    f = hg.compile(_step)
    _decode(f, _Cache())
    traced, count = f.trace_count, hg.compile_count()
    c, e = _Cache(), _Cache()
    assert _decode(f, c) == _decode(_step, e)
    _same_cache(c, e)
    assert f.trace_count == traced and hg.compile_count() == count


def test_an_object_of_another_structure_traces_again():
    f = hg.compile(_step)
    _decode(f, _Cache(2), 2)
    traced = f.trace_count
    c, e = _Cache(3), _Cache(3)   # three layers: another program per length
    assert _decode(f, c, 2) == _decode(_step, e, 2)
    _same_cache(c, e)
    assert f.trace_count == traced + 2


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


def test_a_tensor_set_and_returned_is_one_tensor_as_eagerly():
    class Pair:
        def __init__(self):
            self.a = self.b = None

    def step(x, p):
        p.a = p.b = x * 2
        return p.a, x + 1
    f = hg.compile(step)
    for _ in range(2):
        p, q = Pair(), Pair()
        got, want = f(hg.arange(3.0), p), step(hg.arange(3.0), q)
        assert got[0] is p.a and p.a is p.b and want[0] is q.a and q.a is q.b
        assert p.a.tolist() == q.a.tolist() and got[1].tolist() == want[1].tolist()
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


def test_a_dict_entry_set_on_an_argument_object_is_set_after_each_run():
    class Stats:
        def __init__(self):
            self.d = {"last": None, "n": 0}

    def step(x, s):
        s.d["last"] = x * 3
        s.d["n"] = s.d["n"] + 1
        return x.sum()
    f = hg.compile(step)
    a, b = Stats(), Stats()
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no "runs eagerly"
        for i in range(3):
            x = hg.arange(2.0) + i
            assert f(x, a).item() == step(x, b).item()
            assert a.d["n"] == b.d["n"]
            np.testing.assert_array_equal(a.d["last"].numpy(), b.d["last"].numpy())
    traced = f.trace_count
    assert traced == 3   # ``n`` is keyed: a program per count
    c = Stats()
    for i in range(3):   # a new object: the same programs (the count keys them)
        f(hg.arange(2.0), c)
    assert f.trace_count == traced and c.d["n"] == 3


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


_HF_GENERATE = r"""
import json, sys, warnings
import hookgrad, hookgrad.as_torch
hookgrad.as_torch.install()
import torch
import transformers as tf

def gpt2():
    return tf.GPT2LMHeadModel(tf.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=128,
                                            n_positions=32))

def llama():
    return tf.LlamaForCausalLM(tf.LlamaConfig(
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=32,
        intermediate_size=64, vocab_size=128, max_position_embeddings=64, pad_token_id=0,
        bos_token_id=1, eos_token_id=127))

out = {}
for name, make in (("gpt2", gpt2), ("llama", llama)):
    torch.manual_seed(0)
    model = make().eval()
    ids = torch.randint(2, 120, (2, 7))
    gen = lambda: model.generate(ids, max_new_tokens=4, do_sample=False, pad_token_id=0)
    eager = gen().tolist()
    model.forward = f = torch.compile(model.forward)
    runs = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            t = f.trace_count
            runs.append([gen().tolist(), f.trace_count - t])
    out[name] = {"eager": eager, "runs": runs,
                 "eagerly": [str(w.message) for w in caught if "runs eagerly" in str(w.message)]}
print("RESULT " + json.dumps(out))
"""


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                    reason="transformers is not installed")
def test_compiled_generate_of_gpt2_and_llama_steadies_with_eagers_tokens():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + sys.path))
    proc = subprocess.run([sys.executable, "-c", _HF_GENERATE], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.splitlines()[-1][len("RESULT "):])
    for name, r in got.items():
        assert r["eagerly"] == [], (name, r["eagerly"])
        tokens = [run[0] for run in r["runs"]]
        assert tokens == [r["eager"]] * 3, name
        # a program per forward (the prompt, then one per cache length), traced once:
        # the second generate (a new cache) traces none (``generate``'s own eager ops,
        # outside the compiled forward, compile on their own schedule: ``lazy``)
        assert [run[1] for run in r["runs"]] == [4, 0, 0], name
