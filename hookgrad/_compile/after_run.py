"""The step's own effects a program can do again after each run: appends and counters.

``losses.append(loss.detach())``, ``history.append(loss.item())`` and ``calls += 1`` in a
step are its own Python, which would run the step eagerly. They are done again after
each run instead, when the trace shows they are only that:

- the list or the number is held by one closure variable or one global, the name the
  step uses, and the code that runs during the step does nothing with that name but
  ``name.append(...)``, or ``name += k``/``name -= k`` with a constant ``k`` (read from
  the bytecode of the step, the helpers it names, its hooks, its Modules' and
  optimizers' hooks and methods, and the functions the objects it reaches hold): the
  step does not otherwise read it, so the program cannot depend on it;
- what was appended is values of the program: detached Tensors it computed (not aliases
  of its state Tensors: those change with them on later calls), or values it read
  (``speculate.Scalar``); no host call writes the place.

The trace's appends and increments are taken back at its end; the program gives the
appended values as extra outputs; after each run they are appended, in order, to the
list the name holds then (as the step's ``losses.append`` finds it), and each counter is
moved by what the trace moved it. Such a counter is no guard (``Guards``): its new value
each call does not trace a new program. A name holding nothing to append to, or no
``int``, traces the step again.

# NOTE: code the step runs without naming it or holding it (a callback a library keeps
# elsewhere) is not read: one that reads the place sees it without this call's effects.
"""
import dis
import functools
import types

import jax

from .._tensor import Tensor
from . import arg_objects as _arg_objects
from . import effects as _effects
from .speculate import Scalar
from .state import _code_names, _user_function

__all__ = ["found", "collect", "ready", "replay", "note", "unguarded", "outputs", "Stale"]

_Tracer = jax.core.Tracer
_LOADS = frozenset(("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_NAME",
                    "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS"))
_STORES = frozenset(("STORE_GLOBAL", "STORE_DEREF", "STORE_NAME"))
_METHOD = frozenset(("LOAD_METHOD", "LOAD_ATTR"))


_INCREMENTS = frozenset(("+=", "-="))
_OPS = frozenset(("BINARY_OP", "INPLACE_ADD", "INPLACE_SUBTRACT"))


class Stale(Exception):
    """A place holds nothing to append to, or to count with, any more: the program is
    traced again."""


def found(cf, plan, watch, reader, reached):
    """The appends and increments the step's trace made that can be done again after a
    run, taken back: ``("append", place, values)`` and ``("add", place, delta)``, where a
    place is ``("cell", cell, None)`` or ``("global", dict, name)``."""
    # the attributes set on argument objects (a KV cache's layers)
    out = _arg_objects.found(plan)
    if watch is None:
        return out
    records = watch._records
    scan = []
    # a detached state Tensor aliases it across calls, eagerly: not a value of one run
    state = {id(t) for t in plan.state.tensors} | \
        {id(t._grad) for t in plan.state.tensors if t._grad is not None}

    def only(place, ok):
        if not scan:
            scan.append(_Scan(cf, plan, records))
        name = place[2] if place[0] == "global" else scan[0].cell_names.get(id(place[1]))
        return name is not None and scan[0].only(name, ok)

    for kind, holder, key, saved, _ in records:
        if id(holder) in reached:
            continue
        if kind == "seq" and type(holder) is list:
            new = _appended(holder, saved)
            if not new or not all(_program_value(v, reader, state) for v in new):
                continue
            parents = [r[:3] for r in records if _holds(r, holder)]
            if len(parents) == 1 and parents[0][0] in ("cell", "global") and \
                    only(parents[0], _appends):
                del holder[len(saved):]
                out.append(("append", parents[0], new))
        elif kind in ("cell", "global") and type(saved) is int:
            now = _effects._current(kind, holder, key)
            if type(now) is int and now != saved and only((kind, holder, key), _counts):
                _effects._put_back(kind, holder, key, saved)
                out.append(("add", (kind, holder, key), now - saved))
    return out


def _appended(holder, saved):
    now = list.copy(holder)
    if len(now) <= len(saved) or not _effects._same_items(now[:len(saved)], saved):
        return None
    return now[len(saved):]


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

    def only(self, name, ok):
        """Whether every use of ``name`` in the code is one ``ok`` accepts."""
        seen = set()
        return all(_uses(c, name, ok, seen) for c in self.codes)


def _uses(code, name, ok, seen):
    if code in seen:
        return True
    seen.add(code)
    ins = list(dis.get_instructions(code))
    for i, x in enumerate(ins):
        if x.argval == name and (x.opname in _LOADS or x.opname in _STORES) and \
                not ok(ins, i):
            return False
    return all(_uses(c, name, ok, seen) for c in code.co_consts
               if isinstance(c, types.CodeType))


def _appends(ins, i):
    # NOTE: a rebinding is fine: one during the step is an effect the watch sees; one
    # between calls is what the replay follows
    return ins[i].opname in _STORES or \
        (i + 1 < len(ins) and ins[i + 1].opname in _METHOD and ins[i + 1].argval == "append")


def _counts(ins, i):
    """``name += k`` / ``name -= k`` (k a constant int), seen from its load or its store."""
    start = i if ins[i].opname in _LOADS else i - 3
    if start < 0 or start + 3 >= len(ins):
        return False
    load, const, op, store = ins[start:start + 4]
    return load.opname in _LOADS and store.opname in _STORES and \
        load.argval == store.argval and const.opname == "LOAD_CONST" and \
        type(const.argval) is int and op.opname in _OPS and \
        (op.opname != "BINARY_OP" or op.argrepr in _INCREMENTS)


def collect(entry, effects, outs):
    """The appended values as outputs; ``entry.appends``: ``(kind, place, spec)``, where an
    append's spec is ``[(kind, output position)]`` and an increment's its delta."""
    entry.appends = []
    for kind, place, what in effects:
        if kind == "add":
            entry.appends.append((kind, place, what))
            continue
        if kind == "set":   # (name, Tensor or plain value) -> (name, kind, position/value)
            spec = []
            for name, v in what:
                if isinstance(v, Tensor):
                    # the step returns it too: one output, one Tensor (``replay``)
                    k = next((k for k, o in enumerate(outs) if o is v._data), len(outs))
                    spec.append((name, "T", k))
                    if k == len(outs):
                        outs.append(v._data)
                else:
                    spec.append((name, "C", v))
            entry.appends.append((kind, place, spec))
            continue
        spec = []
        for v in what:
            spec.append(("P" if type(v) is Scalar else "T", len(outs)))
            outs.append(v.arr if type(v) is Scalar else v._data)
        entry.appends.append((kind, place, spec))


def outputs(entry):
    """``(kind, output position)`` of each appended value and each Tensor set on an
    argument object."""
    return [s for kind, _, spec in entry.appends if kind == "append" for s in spec] + \
        [s[1:] for kind, _, spec in entry.appends if kind == "set" for s in spec
         if s[1] == "T"]


def unguarded(entry):
    """The counters' places, for ``Guards.add`` to leave out (a cell, a global's key)."""
    return {id(p[1]) if p[0] == "cell" else (id(p[1]), p[2])
            for kind, p, _ in entry.appends if kind == "add"}


def note(cf, entry):
    """The lists ``entry`` appends to are no state of the step (``state._State.skip``)."""
    for kind, place, _ in entry.appends:
        if kind == "append":
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
    """Whether every place still holds what the run's effects apply to (else: trace
    again)."""
    # an argument object's path: its structure is in the key, so the path leads there
    return all(hasattr(_target(place), "append") if kind == "append" else
               type(_target(place)) is int for kind, place, _ in entry.appends
               if kind != "set")


def replay(entry, res, got, leaves):
    """A run's appends (``got``: the scalars read, by output position), increments and
    attributes set on the objects the call passed (``leaves``: its argument leaves).
    Returns the Tensors set, by output position: the step's result holds the same ones,
    as eagerly."""
    made = {}
    for kind, place, spec in entry.appends:
        if kind == "set":
            obj = _arg_objects.at(leaves[place[0]], place[1])
            for name, k_kind, v in spec:
                if k_kind == "T":
                    if v not in made:
                        made[v] = Tensor._wrap(res[v])
                    v = made[v]
                _arg_objects.put(obj, name, v)
            continue
        target = _target(place)
        if kind == "add":
            _effects._put_back(place[0], place[1], place[2], target + spec)
            continue
        for k_kind, k in spec:
            target.append(got[k] if k_kind == "P" else Tensor._wrap(res[k]))
    return made
