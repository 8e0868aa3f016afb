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
scanned for cycles; ``gc.get_objects()`` no longer lists them. ``HOOKGRAD_GC_FREEZE=0``
in the environment, or ``gc.unfreeze()`` afterwards, keeps Python's default.
"""
import gc
import os

ENV = "HOOKGRAD_GC_FREEZE"


def after_import():
    """Freeze the objects alive now, unless ``HOOKGRAD_GC_FREEZE`` says not to."""
    if os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "false", "no"):
        gc.freeze()
