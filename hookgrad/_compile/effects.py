"""Python side effects of a step's trace: found, undone, and the step run eagerly instead.

A ``hookgrad.compile`` program replays only Tensor computations: the Python a step and its
hooks run (a counter, ``list.append``, a dict store, ``print``, logging, a ``.item()``
read) runs while the program is traced, once. A step is compiled only if that tracing
left no such trace behind; otherwise its Python must run on every call, so the call runs
eagerly (a warning, once per site, says why; ``fullgraph=True`` raises instead).

:class:`Watch` decides, around a trace:

1. **before**, it records what the step's Python can reach: the cells, globals and
   default values of the step, of its helpers, of every hook that can run (Module hooks,
   global Module hooks, Tensor and ``AccumulateGrad`` hooks, saved-tensor hooks) and of
   the methods of the user's Module classes; the containers and objects those hold (three
   levels deep), and the attributes of the step's Modules;
2. **during**, ``sys.stdout``/``sys.stderr`` writes and log records are held back;
3. **after**, anything rebound, added, removed or replaced in what it recorded, any
   output or log record, is an effect. :meth:`Watch.undo` puts every recorded container
   back as it was (the tracer-holding Tensors a hook kept leave with it).

# NOTE: only the net change counts. A hook that pushes and pops (``ModTracker``'s parent
# set) leaves nothing behind and nothing observed it, so replaying without it is the same.
"""
import collections
import functools
import logging
import os
import sys
import types

import jax
import numpy as np

from .._errors import TracedValueError, Unsupported
from .._autograd.hooks import user_hook_dicts
from .._autograd.saved import hook_state
from .._tensor import Tensor
from .host_hook import _user_frames, is_host_hook
from .reads import Reads as _Reads
from .state import (_Roots, _global_hook_dicts, _is_optimizer, _module_hook_attrs,
                    _user_function)
from .. import _errors

__all__ = ["Watch", "Eager", "run_eagerly", "trace_only", "is_trace_only"]

_DEPTH = 3          # containers inside containers recorded
_MAX_OBJECTS = 20000
_MAX_ITEMS = 4096   # a longer container is recorded, its items not followed
_EMPTY = object()   # an empty cell, an unbound global
_OWN_LOGGERS = frozenset(("jax", "jaxlib", "hookgrad", "absl"))   # not the step's

_SKIP = (Tensor, types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
         types.MethodType, types.CodeType, jax.Array, np.ndarray, np.generic, str, bytes,
         int, float, complex, bool, type(None), range, slice, frozenset, tuple,
         logging.Logger)


class _Held:
    """A stream standing in for ``sys.stdout``/``sys.stderr`` while a step is traced."""

    def __init__(self, real):
        self.real, self.text = real, []

    def write(self, s):
        # a warning is shown once per place however often the step runs: not an effect
        if sys._getframe(1).f_globals.get("__name__") == "warnings":
            return self.real.write(s)
        self.text.append(s)
        return len(s)

    def flush(self):
        pass

    def __getattr__(self, name):
        return getattr(self.real, name)


class Watch:
    """Record what the step of ``cf`` (planned as ``plan``) can reach; ``with watch:``
    holds back output while it is traced; :meth:`effects` says what the trace changed."""

    def __init__(self, cf, plan, logs_are_effects=False):
        self._empty(logs_are_effects)
        modules = list(plan.state.modules)
        functions = _functions(cf, plan)
        # the hooks there are before the trace: a hook the step makes is its Python
        self.hooks = frozenset(id(f) for f, _ in functions)
        self._functions(functions)
        for m in modules:
            if id(m) not in self._seen:
                self._seen.add(id(m))
                self._object(m, 0, f"Module {type(m).__name__}")
        # the objects the call passes (a KV cache the step fills): changed, an effect
        for v in plan.arg_leaves or ():
            if not isinstance(v, (Tensor, jax.Array, np.ndarray, np.generic) + _VALUES):
                self._value(v, f"argument {type(v).__name__}")

    def _functions(self, functions):
        # trace-only functions, then host hooks, first, wherever they sit (a pack hook
        # calling one): what they reach is theirs (not an effect; not a guard)
        self._host = "trace_only"
        for f, where in functions:
            for h in _marked(f, is_trace_only):
                self._function(h, f"trace-only {_name(h)}")
        self._host = True
        for f, where in functions:
            for h in _marked(f, is_host_hook):
                self._function(h, f"host hook {_name(h)}")
        self._host = False
        for f, where in functions:
            self._function(f, where)

    def _empty(self, logs_are_effects):
        self._records = []      # (kind, holder, key or None, saved, where)
        self._unguarded = set()
        self._exempt = set()
        self._host = False
        self.reads = None       # the Module attributes the trace read (``_compile.reads``)
        self._seen = set()
        self._logged = []
        self._out = []
        # NOTE: a first trace's log records are not effects by themselves: libraries log
        # once (``logger.warning_once``); a second trace logging again shows a log on
        # every call, an effect. Held back either way: shown if the program stands
        self._logs_are_effects = logs_are_effects

    @classmethod
    def of_hooks(cls, hooks, args=()):
        """A watch of what ``hooks`` can reach, and of the objects ``args`` (a hook's
        Module): a log record is an effect (``hookgrad._compile.host_run``)."""
        watch = cls.__new__(cls)
        watch._empty(True)
        watch._functions([(h, f"hook {_name(h)}") for h in hooks])
        for v in args:
            watch._value(v, "a hook's argument")
        return watch

    def holders(self):
        """The ids of the recorded places' holders (a dict, a cell, an object)."""
        return {id(r[1]) for r in self._records}

    def changed(self):
        """The ids of the holders of the recorded places that changed."""
        return {id(holder) for kind, holder, key, saved, _ in self._records
                if _changed(kind, holder, key, saved)}

    def containers(self):
        """The ids of the recorded containers and objects (not cells, not globals)."""
        return {id(r[1]) for r in self._records if r[0] not in ("cell", "global")}

    def now(self):
        """The recorded places as they are now (for :meth:`changed_since`)."""
        return [_current(kind, holder, key) for kind, holder, key, _, _ in self._records]

    def changed_since(self, now):
        """Whether a recorded place changed since :meth:`now` gave ``now``."""
        return any(_changed(kind, holder, key, saved)
                   for (kind, holder, key, _, _), saved in zip(self._records, now))

    # ---- 1. before
    def _function(self, f, where):
        if id(f) in self._seen:
            return
        self._seen.add(id(f))
        roots = _Roots(f)
        for cell, _ in roots.cells:
            self._record("cell", cell, None, _cell(cell), where)
            self._value(_cell(cell), where)
        for g, name, _ in roots.globals:
            v = g.get(name, _EMPTY)
            self._record("global", g, name, v, f"{where} (global {name!r})")
            self._value(v, f"global {name!r}")
        for v in roots.objects:
            self._value(v, where)

    def _value(self, v, where, depth=0):
        if isinstance(v, types.BuiltinMethodType) and \
                not isinstance(v.__self__, (types.ModuleType, type(None))):
            v = v.__self__   # ``fired.append`` held as a function: the list it appends to
        if isinstance(v, _SKIP) or depth > _DEPTH or \
                id(v) in self._seen or len(self._records) > _MAX_OBJECTS:
            return
        self._seen.add(id(v))
        if _is_optimizer(v):
            # its state is the program's; its options are inputs, not guards (an LR
            # schedule feeds the same program), but a scheduler stepped in the step
            # changes them
            for g in v.param_groups:
                self._record("map", g, None, dict(g), where)
                self._unguarded.add(len(self._records) - 1)
            return
        if getattr(type(v), "_is_compiled_function", False):
            return
        self._object(v, depth, where)

    def _object(self, v, depth, where):
        items = None
        # NOTE: read as the builtin types store them: a subclass's ``__getitem__`` or
        # ``__iter__`` may compute (transformers' ``ACT2FN`` makes a Module per lookup)
        kind = None
        if isinstance(v, (list, collections.deque)):
            kind = "seq"
        elif isinstance(v, dict):
            kind = "map"
        elif isinstance(v, set):
            kind = "set"
        elif type(getattr(v, "__dict__", None)) is dict:
            # an object of hookgrad's (a Module, ModTracker): its ``_private``
            # attributes are its bookkeeping (a hook handle made on each entry)
            kind = "attrs" if _user_function(type(v)) else "public attrs"
        if kind is not None:
            saved = _current(kind, v, None)
            self._record(kind, v, None, saved, where)
            items = None if kind == "set" else saved if kind == "seq" else \
                dict.values(v) if kind == "map" else v.__dict__.values()
        if items is not None and len(items) <= _MAX_ITEMS:
            for item in list(items):
                self._value(item, where, depth + 1)

    def _record(self, kind, holder, key, saved, where):
        self._records.append((kind, holder, key, saved, where))
        if self._host:   # what a host hook reaches: it writes there on every call
            self._unguarded.add(len(self._records) - 1)
        if self._host == "trace_only":   # written while tracing, by request
            self._exempt.add(len(self._records) - 1)

    # ---- 2. during
    def __enter__(self):
        self._streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Held(sys.stdout), _Held(sys.stderr)
        self._handlers = logging.Logger.callHandlers
        logged = self._logged

        handlers = self._handlers

        def call_handlers(logger, record):
            if record.name.split(".")[0] in _OWN_LOGGERS:
                return handlers(logger, record)
            logged.append((logger, record))
        logging.Logger.callHandlers = call_handlers
        self.reads = _Reads().__enter__()
        return self

    def __exit__(self, *exc):
        self._out = [s for s in (sys.stdout, sys.stderr) if isinstance(s, _Held) and s.text]
        sys.stdout, sys.stderr = self._streams
        logging.Logger.callHandlers = self._handlers
        self.reads.__exit__()
        return False

    # ---- 3. after
    def effects(self):
        """What the trace did that only running the step's Python again does: a list of
        descriptions (empty: the program is all of it)."""
        found = []
        if self._out:
            text = "".join(t for s in self._out for t in s.text).strip().splitlines()
            found.append(f"printed {text[0][:60]!r}" if text else "wrote to the console")
        if self._logged and self._logs_are_effects:
            r = self._logged[0][1]
            found.append(f"logged {r.getMessage()[:60]!r} ({r.name})")
        for i, (kind, holder, key, saved, where) in enumerate(self._records):
            if i not in self._exempt and _changed(kind, holder, key, saved):
                found.append(f"changed {_what(kind, holder, key, saved)} of {where}")
        return found

    def guardable(self):
        """The records outside what host hooks reach (``hookgrad._compile.guards``)."""
        return [r for i, r in enumerate(self._records) if i not in self._unguarded]

    def quiet(self):
        """Whether nothing was printed (at most values changed, and logs shown)."""
        return not self._out

    def logged(self):
        return bool(self._logged)

    def show_logs(self):
        """Hand the log records held back to their handlers (the program stands)."""
        for logger, record in self._logged:
            logger.callHandlers(record)

    def kept_tracers(self):
        """Descriptions of the recorded places holding a Tensor with a tracer: what a
        trace left there would leak into the next call."""
        found = []
        for kind, holder, key, saved, where in self._records:
            values = (saved,) if kind in ("cell", "global") else \
                saved.values() if isinstance(saved, dict) else saved
            if any(isinstance(v, Tensor) and isinstance(v._data, jax.core.Tracer)
                   for v in values):
                found.append(f"kept a traced Tensor in {_what(kind, holder, key, saved)} of "
                             f"{where}")
        return found

    def undo(self):
        """Put every recorded container, cell, global and attribute back as it was."""
        for kind, holder, key, saved, _ in reversed(self._records):
            if _changed(kind, holder, key, saved):
                _put_back(kind, holder, key, saved)


def _functions(cf, plan):
    """``(function, where)`` of the step and of everything its Python can run: the hooks
    of its Modules, Tensors and ``AccumulateGrad`` nodes, the global Module hooks, the
    saved-tensor hooks in force, the methods of the user's Module classes."""
    functions = [(cf._fn, _name(cf._fn))]
    for m in plan.state.modules:
        for a in _module_hook_attrs(m):
            for h in (m.__dict__.get(a) or {}).values():
                functions.append((h, f"{a[1:].rstrip('s')} {_name(h)}"))
        for klass in type(m).__mro__:
            if _user_function(klass):
                functions.extend((f, f"{klass.__name__}.{f.__name__}")
                                 for f in map(_plain, vars(klass).values())
                                 if isinstance(f, types.FunctionType))
    for d in _global_hook_dicts():
        functions.extend((h, f"global module hook {_name(h)}") for h in d.values())
    for t in plan.state.tensors:
        for d in user_hook_dicts(t):
            if d:
                functions.extend((h, f"tensor hook {_name(h)}") for h in d.values())
    for pair in hook_state.stack:
        functions.extend((h, f"saved-tensor hook {_name(h)}") for h in pair)
    return functions


def _plain(f):
    return getattr(f, "__func__", f)   # a staticmethod's or classmethod's function


def _marked(f, marked):
    """The functions among ``f`` and what its roots hold that ``marked`` says are host
    hooks, or trace-only."""
    roots = _Roots(f)
    values = [f, *roots.objects, *map(_cell, (c for c, _ in roots.cells)),
              *(g.get(n) for g, n, _ in roots.globals)]
    return [v for v in values if marked(v)]


def trace_only(fn):
    """Mark a function whose Python side effects are meant to happen while a compiled
    step is traced, and only then (inspecting what the trace sees, counting traces)::

        seen = []
        note = hookgrad.compile.trace_only(lambda t: seen.append(type(t._data)))

        @hookgrad.compile
        def step(x):
            note(x)           # once per trace: no "runs eagerly"
            ...

    What it changes is not an effect of the step, what it prints is printed, and eagerly
    it is an ordinary call.
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        streams = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = (getattr(s, "real", s) for s in streams)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.stdout, sys.stderr = streams
    wrapper.__hookgrad_trace_only__ = True
    return wrapper


def is_trace_only(fn):
    """Whether ``fn`` was marked with :func:`trace_only`."""
    return bool(getattr(fn, "__hookgrad_trace_only__", False))


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _EMPTY


_VALUES = (int, float, complex, str, bytes, bool, type(None))


def _same(a, b):
    """Whether ``b`` stands where ``a`` stood with nothing observable changed: the same
    object, or an equal number, string, or tuple or set of them (``self.parents =
    {"Global"}`` rebinds to an equal set)."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t in _VALUES:
        return a == b
    if t is tuple:
        return _same_items(a, b)
    if t in (set, frozenset):
        return all(type(v) in _VALUES for v in a) and a == b
    return False


def _same_items(a, b):
    return len(a) == len(b) and all(map(_same, a, b))


def _current(kind, holder, key):
    """A place's state as :class:`Watch` records it."""
    if kind == "cell":
        return _cell(holder)
    if kind == "global":
        return holder.get(key, _EMPTY)
    if kind == "seq":
        return list.copy(holder) if isinstance(holder, list) else list(holder)
    if kind == "set":
        return set(holder)
    if kind == "map":
        return dict(dict.items(holder))
    return dict(holder.__dict__) if kind == "attrs" else _public(holder.__dict__)


def _changed(kind, holder, key, saved):
    now = _current(kind, holder, key)
    if kind in ("cell", "global"):
        return not _same(saved, now)
    if kind == "seq":
        return not _same_items(now, saved)
    if kind == "set":
        return now != saved
    return not _same_items(list(now), list(saved)) or \
        not _same_items(now.values(), saved.values())


def _public(d):
    return {k: v for k, v in d.items() if not (type(k) is str and k.startswith("_"))}


def _put_back(kind, holder, key, saved):
    if kind == "cell":
        if saved is _EMPTY:
            del holder.cell_contents
        else:
            holder.cell_contents = saved
    elif kind == "global":
        if saved is _EMPTY:
            holder.pop(key, None)
        else:
            holder[key] = saved
    elif kind == "seq":
        holder.clear()
        holder.extend(saved)
    elif kind == "set":
        holder.clear()
        holder.update(saved)
    elif kind == "public attrs":
        d = holder.__dict__
        for k in [k for k in _public(d) if k not in saved]:
            del d[k]
        d.update(saved)
    else:
        d = holder if kind == "map" else holder.__dict__
        d.clear()
        d.update(saved)


def _what(kind, holder, key, saved=None):
    if kind == "cell":
        return "a closure variable"
    if kind == "global":
        return f"the global {key!r}"
    if kind in ("attrs", "public attrs", "map") and saved is not None:
        now = dict(dict.items(holder)) if kind == "map" else holder.__dict__
        keys = [k for k in {**saved, **now}
                if k not in saved or k not in now or not _same(saved[k], now[k])]
        names = ", ".join(repr(k) for k in keys[:3]) + (", ..." if len(keys) > 3 else "")
        return (f"item {names} of a {type(holder).__name__}" if kind == "map" else
                f"attribute {names} of a {type(holder).__name__}")
    return f"a {type(holder).__name__}"


def _name(f):
    f = getattr(f, "func", f)
    return getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)


class Eager:
    """What ``CompiledFunction``'s cache holds for a key whose step runs eagerly."""

    __slots__ = ("reason",)

    def __init__(self, reason):
        self.reason = reason


# errors that say a traced value was needed on the host: the eager run has it
BREAKS = (TracedValueError, jax.errors.JAXTypeError)


def run_eagerly(cf, plan, failed, found):
    """Decide about a step whose trace raised ``failed`` or left the effects ``found``
    (undone by now): under ``fullgraph=True``, the exception to raise; otherwise let the
    calls with ``plan``'s key run eagerly (for an effect or a value read) and return what
    to call once this call has run eagerly: the warning, once per site."""
    if failed is not None and not isinstance(failed, BREAKS):
        # the user's error, or one only tracing meets: the eager run tells which; an error
        # of the compiled mode itself (a sharding that does not fit) is the user's to see
        if cf._fullgraph or _raised_in(failed, _COMPILE):
            return failed
        reason = f"tracing it raised {type(failed).__name__}: {_first_line(failed)}"
    elif failed is not None:
        if cf._fullgraph:
            return _user_frames(_as_traced_value_error(failed))
        what = _first_line(failed).split(" inside ")[0]
        if not isinstance(failed, TracedValueError):
            what = f"{type(failed).__name__} ({what[:80]})"
        reason = f"{what} at {_user_site(failed)}"
        cf._cache[plan.key] = Eager(reason)
    else:
        reason = found[0] + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
        if cf._fullgraph:
            return Unsupported(
                f"hookgrad.compile(fullgraph=True): {_name(cf._fn)} {reason} while it was "
                "traced. Python side effects run once, while tracing, so one compiled "
                "program cannot repeat them; mark a hook that only observes Tensors "
                "@hookgrad.compile.host_hook, or drop fullgraph=True to run such a step "
                "eagerly.")
        cf._cache[plan.key] = Eager(reason)
    return lambda: warn_once(cf, reason)


_WHY = ("Its Python must run on every call, as eagerly, which one compiled program cannot "
        "do (move a value read or a side effect into a hook, or into a function marked "
        "@hookgrad.compile.host_hook; fullgraph=True raises here instead).")


def warn_once(cf, reason, why=_WHY, head=None):
    """The warning that ``cf``'s step runs eagerly for ``reason``: once per step and reason,
    at the user's line that called it."""
    # NOTE: kept on the step, not by its id: a later step may get a collected one's id
    said = cf.__dict__.setdefault("_warned", set())
    if reason not in said:
        said.add(reason)
        head = head or f"hookgrad.compile: {_name(cf._fn)} runs eagerly:"
        _errors.warn(f"{head} {reason}. {why}")


_COMPILE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _as_traced_value_error(e):
    """hookgrad's error for JAX's tracer errors (a concrete value needed while tracing)."""
    if isinstance(e, TracedValueError):
        return e
    err = TracedValueError(
        f"{type(e).__name__} inside a hookgrad.compile(fullgraph=True) step at "
        f"{_user_site(e)}: a Tensor's value was needed on the host while the step was "
        "traced. Mark the hook that reads it @hookgrad.compile.host_hook, move the read "
        f"out of the step, or drop fullgraph=True to run such a step eagerly.\n"
        f"JAX said: {_first_line(e)}")
    return err.with_traceback(e.__traceback__)


def _raised_in(e, folder):
    tb = e.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.startswith(folder)


def _first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _user_site(e):
    """``file:line`` of the innermost frame of ``e``'s traceback outside hookgrad and JAX."""
    tb = _user_frames(e).__traceback__
    site = "an unknown line"
    while tb is not None:
        site = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return site
