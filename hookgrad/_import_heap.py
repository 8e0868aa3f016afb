"""The objects importing hookgrad leaves behind, kept out of the cyclic garbage collector.

``import hookgrad`` (with JAX, jaxlib and NumPy) leaves ~120,000 container objects that live
as long as the process: modules, functions, classes, JAX's tables. A full collection of
Python's cyclic garbage collector (generation 2) walks every one of them: 50-350 ms on the
CPUs measured. Eager ops make short-lived objects (a Tensor, its node, their tuples) that
survive the young generations while the backward is pending, so full collections come
every few hundred small training steps, and in some first seconds of a script, where one
collection was a quarter to a third of the time (issue 32's measurements).
``after_import()`` moves those objects into the collector's permanent generation
(``gc.freeze()``, what pre-forking servers do): a full collection then walks only what the
program made since. The import-time objects are still reference counted, just never
scanned for cycles; ``gc.get_objects()`` no longer lists them.

It also raises the young generation's threshold from Python's default (700) to ``YOUNG``,
where the program has not set its own: an eager step keeps ~6 collector-tracked objects
per recorded op alive until its backward (a Tensor, its node, its pending value, their
tuples), so a tiny Llama forward alone (~110 ops) took the young count past 700 and a
collection (~0.17 ms, which found no garbage: nothing there is cyclic) ran inside nearly
every step; each one moved the step's live objects into the older generations, whose
growth brought a full collection every ~400 such steps (135 ms each: ~0.5 ms a step in
all, 15% of the step, where medians do not show it). ``YOUNG`` is past what such steps
hold at once, so they collect nothing mid-step; cyclic garbage waits at most ``YOUNG``
allocations for its collection instead of 700.

``HOOKGRAD_GC_FREEZE=0`` in the environment keeps Python's defaults (no freeze, the
threshold as it was); ``gc.unfreeze()`` and ``gc.set_threshold`` afterwards undo either.
"""
import gc
import os

ENV = "HOOKGRAD_GC_FREEZE"
YOUNG = 10_000   # the young generation's threshold (Python's default: 700)
_PYTHON_YOUNG = 700


def after_import():
    """Freeze the objects alive now and raise the young generation's threshold, unless
    ``HOOKGRAD_GC_FREEZE`` says not to."""
    if os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no"):
        gc.freeze()
        young, *older = gc.get_threshold()
        if young == _PYTHON_YOUNG:  # NOTE: a threshold the program set stays its own
            gc.set_threshold(YOUNG, *older)
