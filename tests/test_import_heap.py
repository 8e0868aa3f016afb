"""``import hookgrad`` moves the objects it leaves into the garbage collector's permanent
generation (``hookgrad/_import_heap.py``), so a full collection walks only what the program
made, and raises the young generation's threshold so that an eager step's live objects
are not collected (and promoted) mid-step; ``HOOKGRAD_GC_FREEZE=0`` keeps Python's
defaults. What the program makes afterwards is collected as before."""
import gc
import os
import subprocess
import sys
import weakref

import pytest

import hookgrad
from hookgrad import _import_heap

_PROBE = ("import gc, hookgrad; print(gc.get_freeze_count(), "
          "len(gc.get_objects(generation=2)), *gc.get_threshold())")

# a training step of ~200 recorded ops, its objects alive until its backward: the young
# generation's collections (and what they find) over 20 steps, after a warm-up
_STEPS = """
import gc, hookgrad
w = hookgrad.ones(8, 8, requires_grad=True)
def step():
    h = hookgrad.ones(4, 8)
    for _ in range(50):
        h = (h @ w).sin() * 0.5 + h
    h.sum().backward()
    w.grad = None
for _ in range(5):
    step()
gc.collect()  # the young count from zero: the window's steps alone decide
seen = []
gc.callbacks.append(lambda phase, info: phase == "stop" and seen.append(info["collected"]))
for _ in range(20):
    step()
print(len(seen), sum(seen))
"""


def _probe(env, code=_PROBE):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True)
    assert out.stderr == ""
    return [int(n) for n in out.stdout.split()]


def test_import_freezes_what_it_leaves_and_the_environment_can_say_no():
    frozen, old, young, *older = _probe({})
    assert frozen > 10_000 and old < frozen // 10   # a full collection walks little
    assert (young, *older) == (_import_heap.YOUNG, 10, 10)
    for off in ("0", "off", "false"):
        assert _probe({"HOOKGRAD_GC_FREEZE": off})[0:3:2] == [0, 700]


def test_a_threshold_the_program_set_stays_its_own():
    code = "import gc; gc.set_threshold(500, 20, 30); " + _PROBE.split("; ", 1)[1]
    assert _probe({}, code)[2:] == [500, 20, 30]


def test_eager_steps_run_no_collection_mid_step():
    # with Python's threshold every step collected (nothing: nothing there is cyclic)
    collections, found = _probe({}, _STEPS)
    assert (collections, found) == (0, 0)
    assert _probe({"HOOKGRAD_GC_FREEZE": "0"}, _STEPS)[0] >= 20


@pytest.mark.parametrize("requires_grad", [False, True])
def test_cycles_made_after_import_are_still_collected(requires_grad):
    class Holder:
        pass

    h = Holder()
    h.t = hookgrad.ones(3, requires_grad=requires_grad) * 2
    h.self = h                                  # a cycle only the collector can break
    gone = weakref.ref(h)
    del h
    gc.collect()
    assert gone() is None
