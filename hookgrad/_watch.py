"""Counters of changes to Module structure and hooks, and to Tensors' attributes.

``hookgrad.compile`` reuses its walk of a step's state, and its last call's plan, while
nothing they saw has changed. Most of what they see is a Module's slots and hook dicts
and the hook dicts of Tensors and their ``AccumulateGrad`` nodes; those are the dicts
below, which count every change in one global counter, so a call checks one number
instead of every dict. Dicts of other types (a plain dict a user installed) are compared
item by item each call instead.

The second counter, :func:`writes`, counts every attribute written to (or deleted from) a
Tensor that already existed: its array, ``.grad``, flags, hooks (``Tensor.__setattr__``).
A compiled step re-run on what its last call wrote checks it before comparing each state
Tensor.
"""
from collections import OrderedDict

# NOTE: one-item lists, counted and read in place (a compiled step's check reads both;
# ``Tensor.__setattr__`` increments WRITES: the cheapest write there)
EPOCH = [0]
WRITES = [0]


def epoch():
    """The number of changes counted so far."""
    return EPOCH[0]


def writes():
    """The number of attribute writes to existing Tensors so far."""
    return WRITES[0]


def bump():
    EPOCH[0] += 1


class Moving:
    """A Tensor's version that moves with a shared counter (a one-item list): ``base``
    plus ``step`` per count since ``start``. A steady compiled step
    (``hookgrad._compile.steady``) puts one in each state Tensor it bumps and moves the
    counter once per call, instead of writing each Tensor's version."""

    __slots__ = ("counter", "start", "base", "step")

    def __init__(self, counter, base, step):
        self.counter, self.start, self.base, self.step = counter, counter[0], base, step

    def value(self):
        return self.base + (self.counter[0] - self.start) * self.step


class WatchedDict(dict):
    """A dict whose changes are counted (a Module's ``_parameters``, ``_buffers``,
    ``_modules``)."""

    __slots__ = ()

    def __reduce__(self):   # pickles (and deep-copies) as a plain dict's items
        return (type(self), (dict(self),))


class WatchedOrderedDict(OrderedDict):
    """An OrderedDict whose changes are counted (Module and global hook dicts)."""

    def __reduce__(self):
        return (type(self), (list(self.items()),))


class WatchedList(list):
    """A list whose changes are counted (an optimizer param group's ``"params"``)."""

    __slots__ = ()

    def __reduce__(self):   # pickles (and deep-copies) as a plain list's items
        return (type(self), (list(self),))


def _count(cls, base, name):
    method = getattr(base, name)

    def counted(self, *args, **kwargs):
        EPOCH[0] += 1
        return method(self, *args, **kwargs)
    counted.__name__ = counted.__qualname__ = name
    setattr(cls, name, counted)


for _cls, _base in ((WatchedDict, dict), (WatchedOrderedDict, OrderedDict)):
    for _name in ("__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem",
                  "setdefault", "update") + (("move_to_end",) if _base is OrderedDict else ()):
        _count(_cls, _base, _name)
for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend",
              "insert", "pop", "remove", "clear", "sort", "reverse"):
    _count(WatchedList, list, _name)

WATCHED = (WatchedDict, WatchedOrderedDict, WatchedList)
