"""Guards: the plain Python values a compiled step's program was traced with.

A program bakes in what its Python read while it was traced: ``loss * scale`` with a
global ``scale = 2.0``, ``if cfg["clip"]:`` in a hook, a Module's ``self.temperature``.
Where the step reads such a value and it changes between calls, the program must change
with it, as Dynamo's guards make ``torch.compile`` recompile. hookgrad guards every plain
value (a number, string, bool or ``None``) that :class:`hookgrad._compile.effects.Watch`
found the step and its hooks can reach: its globals and closure variables, the items of
the dicts and the attributes of the objects they hold; of a Module's attributes, those
its trace read (``hookgrad._compile.reads``). What a host hook can reach is left out (a
host hook writes on every call; the program never reads it).

:class:`Guards` keeps one list of places per step. The cache key of a call holds their
values (:meth:`Guards.values`), so a new value traces a new program and an old one finds
its program again; a re-run call (``hookgrad._compile.replay``) compares them in C.
"""
from itertools import repeat

from .effects import _EMPTY, _cell
from .state import _module_cls

__all__ = ["Guards"]

_PLAIN = (int, float, complex, str, bytes, bool, type(None))
_CELL = object()   # ``_add``'s key for a closure cell (a dict's key may be None)


class Guards:
    """The places (a dict and a key, or a cell) whose plain values key a step's programs."""

    __slots__ = ("dicts", "keys", "cells", "_places")

    def __init__(self):
        self.dicts, self.keys, self.cells = [], [], []
        self._places = set()

    def __bool__(self):
        return bool(self.dicts or self.cells)

    def values(self):
        """The guarded values now (read in C where they sit in dicts)."""
        # (each re-run call compares them: no ``__bool__`` call, no empty map)
        dicts, cells = self.dicts, self.cells
        if not cells:
            return (tuple(map(dict.get, dicts, self.keys, repeat(_EMPTY))), ()) if dicts \
                else ()
        return (tuple(map(dict.get, dicts, self.keys, repeat(_EMPTY))),
                tuple(map(_cell, cells)))

    def add(self, watch, skip=()):
        """Guard the plain values ``watch`` recorded, but in the holders ``skip`` (ids:
        what host calls write; ``(dict id, key)``: a counter the step's program moves,
        ``_compile.after_run``); whether a place was new."""
        n = len(self._places)
        module_cls = _module_cls()
        for kind, holder, key, saved, _ in watch.guardable():
            if id(holder) in skip:
                continue
            if kind == "cell":
                if type(saved) in _PLAIN:
                    self._add((id(holder),), holder, _CELL)
            elif kind == "global":
                if type(saved) in _PLAIN and (id(holder), key) not in skip:
                    self._add((id(holder), key), holder, key)
            elif kind in ("map", "attrs", "public attrs"):
                d = holder if kind == "map" else holder.__dict__
                if type(d) is not dict:
                    continue
                # a Module's ``training`` is keyed already; its ``_private`` flags are
                # hookgrad's bookkeeping (hooks: keyed by the hook dicts)
                module = kind != "map" and module_cls is not None and \
                    isinstance(holder, module_cls)
                # a Module's: those its trace read (``_compile.reads``)
                read = watch.reads.of(holder) if module and watch.reads else None
                for k, v in saved.items():
                    if type(v) in _PLAIN and not (module and (k == "training" or
                                                              k.startswith("_"))) and \
                            (read is None or k in read):
                        self._add((id(d), k), d, k)
        return len(self._places) != n

    def _add(self, place, holder, key):
        try:
            if place in self._places:
                return
        except TypeError:   # an unhashable dict key
            return
        self._places.add(place)
        if key is _CELL:
            self.cells.append(holder)
        else:
            self.dicts.append(holder)
            self.keys.append(key)
