"""The Module attributes a trace reads: the plain values a program can have baked in.

A Module holds plain values its forward never reads (``Linear``'s ``in_features``, a
config copied onto it); a change to one of those cannot change the program, so guarding
it (``hookgrad._compile.guards``) costs every re-run call a read for nothing. While a
step is traced, :class:`Reads` notes each attribute looked up on a Module by name
(``self.p``, ``getattr(self, "p")``, a hook's ``module.p``), and only those are guarded.

A read the lookup does not see makes the Module's every plain value a guard again
(:meth:`Reads.of` gives None): its ``__dict__`` or ``vars()`` taken by code outside hookgrad
(which takes it for its own keys: parameters, hooks, sharding), or a class of its own
``__getattribute__``. A read by ``object.__getattribute__(module, name)`` is not seen.

# NOTE: the lookup is seen by setting ``Module.__getattribute__`` for the trace alone and
# removing it after, so eager calls keep CPython's own lookup.
"""
import sys

from .state import _module_cls

__all__ = ["Reads"]

_OPEN = []          # the ``Reads`` open (a trace within a trace's step)
_OWN = "hookgrad."  # hookgrad's code: its ``__dict__`` reads are its own keys


def _noted(self, name):
    """``Module.__getattribute__`` while a trace runs: the lookup, noted."""
    for reads in _OPEN:
        reads.note(self, name)
    return super(_module_cls(), self).__getattribute__(name)


class Reads:
    """``with Reads():`` notes the attributes read on each Module; :meth:`of` gives a
    Module's names."""

    __slots__ = ("_names", "_all")

    def __init__(self):
        self._names, self._all = {}, set()

    def note(self, module, name):
        if name == "__dict__" and \
                not sys._getframe(2).f_globals.get("__name__", "").startswith(_OWN):
            self._all.add(id(module))
        names = self._names.get(id(module))
        if names is None:
            names = self._names[id(module)] = set()
        names.add(name)

    def of(self, module):
        """The names read on ``module``; None where some reads were not seen."""
        # (``_noted`` where a trace around this one is still open: not this class's own)
        if id(module) in self._all or \
                type(module).__getattribute__ not in (object.__getattribute__, _noted):
            return None
        return self._names.get(id(module), ())

    def __enter__(self):
        cls = _module_cls()
        if cls is not None:
            if not _OPEN:
                cls.__getattribute__ = _noted
            _OPEN.append(self)
        return self

    def __exit__(self, *exc):
        if self in _OPEN:
            _OPEN.remove(self)
            if not _OPEN:
                del _module_cls().__getattribute__
        return False
