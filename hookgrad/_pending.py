"""A deferred op output (hookgrad/_ops/lazy.py): what computes it, its shape and dtype,
and where it will be; a Tensor holds one until its array is read."""
from operator import attrgetter


class Pending:
    """An op's output whose computation is deferred (hookgrad/_ops/lazy.py): what runs it
    and its abstract value. ``value`` is set once it has run; ``ref`` (a weak reference
    to its Tensor) and ``saved`` (a node keeps it) say whether anything may read it.

    A multi-output op (``split``) defers as one ``Pending`` whose ``aval`` is a tuple and
    whose ``outs`` holds weak references to its outputs' ``Pending``s, each of which picks
    its item: computing one computes them all."""

    __slots__ = ("fn", "op", "key", "args", "aval", "depth", "value", "ref", "saved", "gen",
                 "outs", "__weakref__")

    # the array's metadata, for the Tensor's (asking computes nothing). NOTE: C getters,
    # not lambdas: a model's step reads a pending shape ~1,000 times, and a Python getter
    # costs a frame each
    shape = property(attrgetter("aval.shape"))
    dtype = property(attrgetter("aval.dtype"))
    ndim = property(attrgetter("aval.ndim"))


FORCE = [None]  # computes a Pending's value: hookgrad/_ops/lazy.py fills the slot (_tensor.FORCE)


def placed(p):
    """An array ``p`` is computed from, or its value: a deferred op runs on the device of
    its inputs (uncommitted, single-device arrays), so this says where ``p`` is without
    computing it."""
    while p.value is None:
        for a in p.args:
            if a.__class__ is Pending:
                p = a
                break
            if hasattr(a, "devices"):
                return a
        else:  # Python numbers only: computing it is the way to know
            return FORCE[0](p)
    return p.value
