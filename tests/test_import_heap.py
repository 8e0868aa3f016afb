"""``import hookgrad`` moves the objects it leaves into the garbage collector's permanent
generation (``hookgrad/_import_heap.py``), so a full collection walks only what the program
made; ``HOOKGRAD_GC_FREEZE=0`` keeps Python's default. What the program makes afterwards
is collected as before."""
import gc
import os
import subprocess
import sys
import weakref

import pytest

import hookgrad

_PROBE = ("import gc, hookgrad; print(gc.get_freeze_count(), "
          "len(gc.get_objects(generation=2)))")


def _probe(env):
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True)
    assert out.stderr == ""
    return [int(n) for n in out.stdout.split()]


def test_import_freezes_what_it_leaves_and_the_environment_can_say_no():
    frozen, old = _probe({})
    assert frozen > 10_000 and old < frozen // 10   # a full collection walks little
    for off in ("0", "off", "false"):
        assert _probe({"HOOKGRAD_GC_FREEZE": off})[0] == 0


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
