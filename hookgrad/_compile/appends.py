"""Lists the step's own Python appends to, replayed after each run.

``losses.append(loss.detach())`` and ``losses.append(loss.item())`` in a step are its own
Python, so they used to run the step eagerly. Such an append is replayed instead, when
the trace shows it is only that:

- the list is held by one closure variable or one global (the place the step names it
  by), and nothing the code that runs during the step does with that name is anything
  but ``name.append(...)`` (read from the bytecode of the step, the helpers it names,
  its hooks, its Modules' and optimizers' hooks and methods, and the functions the
  objects it reaches hold): the step does not read the list;
- what was appended is values of the program: detached Tensors it computed (not aliases
  of its state Tensors: those change with them on later calls), or values it read
  (``speculate.Scalar``); no host call writes the list.

The trace's appends are taken back at its end; the program gives the values as extra
outputs; after each run they are appended, in order, to the list the name holds then
(as the step's ``losses.append`` finds it). A name that no longer holds something with an
``append`` traces the step again.

# NOTE: code the step runs without naming it or holding it (a callback a library keeps
# elsewhere) is not read: one that reads the list sees it without this call's values.
"""
import dis
import functools
import types

import jax

from .._tensor import Tensor
from . import effects as _effects
from .speculate import Scalar
from .state import _code_names, _user_function

__all__ = ["found", "collect", "ready", "replay", "note", "Stale"]

_Tracer = jax.core.Tracer
_LOADS = frozenset(("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_NAME",
                    "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS"))
_METHOD = frozenset(("LOAD_METHOD", "LOAD_ATTR"))


class Stale(Exception):
    """A list's place holds nothing to append to any more: the program is traced again."""


def found(cf, plan, watch, reader, reached):
    """The appends the step's trace made that can be replayed, taken back: a list of
    ``(place, values)`` (``place``: ``("cell", cell)`` or ``("global", dict, name)``)."""
    if watch is None:
        return []
    records = watch._records
    out, scan = [], None
    # a detached state Tensor aliases it across calls, eagerly: not a value of one run
    state = {id(t) for t in plan.state.tensors} | \
        {id(t._grad) for t in plan.state.tensors if t._grad is not None}
    for kind, holder, key, saved, _ in records:
        if kind != "seq" or type(holder) is not list or id(holder) in reached:
            continue
        now = list.copy(holder)
        if len(now) <= len(saved) or not _effects._same_items(now[:len(saved)], saved):
            continue
        new = now[len(saved):]
        if not all(_program_value(v, reader, state) for v in new):
            continue
        parents = [r for r in records if _holds(r, holder)]
        if len(parents) != 1 or parents[0][0] not in ("cell", "global"):
            continue
        pkind, pholder, pkey = parents[0][:3]
        if scan is None:
            scan = _Scan(cf, plan, records)
        name = pkey if pkind == "global" else scan.cell_names.get(id(pholder))
        if name is None or not scan.only_appended(name):
            continue
        del holder[len(saved):]
        out.append(((pkind, pholder, pkey), new))
    return out


def _program_value(v, reader, state):
    if type(v) is Scalar:
        return v.reader is reader
    if type(v) is not Tensor or v._requires_grad or not isinstance(v._data, _Tracer):
        return False
    return id(v if v._view is None else v._view.base) not in state


def _holds(record, obj):
    kind, _, _, saved, _ = record
    if kind in ("cell", "global"):
        return saved is obj
    values = saved.values() if isinstance(saved, dict) else saved
    return any(v is obj for v in values)


class _Scan:
    """The code that can run during the step and name a list's place: the step, its
    helpers (followed through closures and globals), everything ``effects._functions``
    lists (hooks, Module methods), and for a global, the functions of its module."""

    def __init__(self, cf, plan, records):
        self.codes, self.cell_names, self._seen = [], {}, set()
        for f, _ in _effects._functions(cf, plan):
            self._visit(f, 0)
        for opt in plan.state.optimizers:   # its step hooks run inside ``opt.step()``
            for d in (getattr(opt, "_optimizer_step_pre_hooks", None),
                      getattr(opt, "_optimizer_step_post_hooks", None)):
                for h in (d or {}).values():
                    self._visit(h, 0)
        # a function the step's objects hold (a callback in a dict, an attribute)
        for kind, _, _, saved, _ in records:
            values = (saved,) if kind in ("cell", "global") else \
                saved.values() if isinstance(saved, dict) else saved
            for v in values:
                if callable(v):
                    self._visit(v, 0)

    def _visit(self, f, depth):
        if isinstance(f, types.MethodType):
            f = f.__func__
        if isinstance(f, functools.partial):
            f = f.func
        f = getattr(f, "_fn", f)   # a compiled helper
        if not isinstance(f, types.FunctionType) or id(f) in self._seen or depth > 8 or \
                not _user_function(f):
            return
        self._seen.add(id(f))
        self.codes.append(f.__code__)
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            self.cell_names[id(cell)] = name
            try:
                self._visit(cell.cell_contents, depth + 1)
            except ValueError:   # an empty cell
                pass
        names = set()
        _code_names(f.__code__, names, set())
        for n in names:
            self._visit(f.__globals__.get(n), depth + 1)

    def only_appended(self, name):
        seen = set()
        return all(_only_appended(c, name, seen) for c in self.codes)


def _only_appended(code, name, seen):
    if code in seen:
        return True
    seen.add(code)
    ins = list(dis.get_instructions(code))
    for i, x in enumerate(ins):
        # NOTE: a rebinding is not checked: one during the step is an effect the watch
        # sees; one between calls is what the replay follows
        if x.argval != name:
            continue
        if x.opname in _LOADS and not (i + 1 < len(ins) and ins[i + 1].opname in _METHOD
                                       and ins[i + 1].argval == "append"):
            return False
    return all(_only_appended(c, name, seen) for c in code.co_consts
               if isinstance(c, types.CodeType))


def collect(entry, appends, outs):
    """The appended values as outputs; ``entry.appends``: ``(place, [(kind, k)])``."""
    entry.appends = []
    for place, values in appends:
        spec = []
        for v in values:
            spec.append(("P" if type(v) is Scalar else "T", len(outs)))
            outs.append(v.arr if type(v) is Scalar else v._data)
        entry.appends.append((place, spec))


def note(cf, entry):
    """The lists ``entry`` appends to are no state of the step (``state._State.skip``)."""
    for place, _ in entry.appends:
        target = _target(place)
        cf._append_only[id(target)] = target


def _target(place):
    if place[0] == "cell":
        try:
            return place[1].cell_contents
        except ValueError:
            return None
    return place[1].get(place[2])


def ready(entry):
    """Whether every place still holds something to append to (else: trace again)."""
    return all(hasattr(_target(place), "append") for place, _ in entry.appends)


def replay(entry, res, got):
    """Append a run's values (``got``: the scalars read, by output position)."""
    for place, spec in entry.appends:
        target = _target(place)
        for kind, k in spec:
            target.append(got[k] if kind == "P" else Tensor._wrap(res[k]))
