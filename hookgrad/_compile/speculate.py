"""Values the step's own Python reads, compiled: a program per branch, guarded.

A step that branches on a value (``if loss.item() > limit:``, ``if torch.isnan(loss):``)
needs that value while it is traced, when there is none. As a CPU predicts a branch,
the trace takes the branch the values of the last eager run take, and the program
computes the values it read as extra outputs. Before anything of a run is written back
(such a program donates nothing, as one with host calls), each read value is checked on
the host, with the same Python comparison the step made: where all agree, the run is
what the eager run would have done, and it is written back; where one differs, the run
is dropped, and the call runs the program traced for that branch, or, the first time,
runs eagerly (recording its values for the trace of that branch).

While traced, a value read is a :class:`Scalar`: it can be compared, tested for truth
and returned from the step (then read on the host after the run, with the checks: one
transfer). Any other use (arithmetic, ``float()``, formatting, storing it) needs the
value itself: the step runs eagerly, as before, with the warning naming the read.

# NOTE: a guard checks the value, not the traced comparison: ``loss.item() > 0.1``
# compares a double on the host, where the program would compare in the Tensor's dtype.
"""
import operator
import sys

import jax
import numpy as np

from .. import _errors, _mode, _tensor
from .._errors import TracedValueError
from . import effects as _effects

__all__ = ["Reader", "Scalar", "Mispredicted", "NeedsValue", "LEARN", "collect", "fetch",
           "learn", "branch", "traced", "other_branches"]

_Tracer = jax.core.Tracer
_NUMBERS = (int, float, bool)
UNKNOWN = object()
LEARN = object()   # what a trace that needed a value returns: run eagerly, recording them
MISSES = 4         # calls in a row whose branch had no program before the step runs eagerly


class NeedsValue(TracedValueError):
    """The trace met a read it has no value to speculate on: the call runs eagerly and
    records one."""


class Mispredicted(Exception):
    """A guarded read took another branch than the program's (nothing was written back).
    ``prefix``: the branches actually taken, up to and including the first that differs."""

    def __init__(self, prefix):
        super().__init__("a value the step reads took another branch")
        self.prefix = prefix


def _site():
    frame = sys._getframe(2)
    while frame is not None and _errors._internal(frame.f_code.co_filename):
        frame = frame.f_back
    return "an unknown line" if frame is None else \
        f"{frame.f_code.co_filename}:{frame.f_lineno}"


class Reader:
    """``hookgrad._tensor.READER`` while the step's own Python is traced: ``.item()`` and
    ``bool(t)`` of a traced Tensor give :class:`Scalar` values, taking the branches that
    ``log`` (the values of the last eager run's reads, in order) takes."""

    def __init__(self, log):
        self.log, self.k = log or [], 0
        self.guards = []        # (traced arrays, predicate over their host values, outcome, site)
        self.misused = None     # the first use that needed the value itself
        self.needed = None      # the first branch on a value it had none for

    def read(self, t, what):
        arr = t._data
        if not isinstance(arr, _Tracer):
            return arr
        k, self.k = self.k, self.k + 1
        value = UNKNOWN
        if k < len(self.log) and self.log[k][0] == what and \
                self.log[k][1].shape == arr.shape:
            value = self.log[k][1].reshape(()).item()
        site = _site()
        if what == "bool(tensor)":
            return _Truth(Scalar(self, arr.reshape(()), value, site, what))
        if what == ".item()":
            return _Item(Scalar(self, arr.reshape(()), value, site, what))
        raise self.misuse(what, site)

    def misuse(self, what, site):
        if self.misused is None:
            self.misused = f"{what} at {site}"
        return TracedValueError(f"{what} inside a hookgrad.compile step needs the value "
                                f"itself (at {site})")

    def guard(self, arrays, pred, outcome, site):
        self.guards.append((arrays, pred, outcome, site))
        return outcome

    def done(self):
        """At the end of the trace: a use that needed a value fails it, even if the
        step's Python caught the error."""
        if self.misused is not None:
            raise TracedValueError(self.misused)
        if self.needed is not None:
            raise self.needed


class _Item:
    """What ``Tensor.item`` reads a traced Tensor's value from."""

    __slots__ = ("s",)

    def __init__(self, s):
        self.s = s

    def item(self):
        return self.s


class _Truth(_Item):
    """What ``Tensor.__bool__`` reads a traced Tensor's truth from."""

    __slots__ = ()

    def reshape(self, *shape):
        return self

    def __bool__(self):
        return bool(self.s)


def _py(v):
    return v.reshape(()).item() if isinstance(v, np.ndarray) else v


class Scalar:
    """A value a traced step read: compared or tested, it takes the branch the recorded
    value takes and guards it; returned, the program gives it; otherwise it needs the
    value itself, and the step runs eagerly."""

    __slots__ = ("reader", "arr", "value", "site", "what")

    def __init__(self, reader, arr, value, site, what):
        self.reader, self.arr, self.value, self.site, self.what = \
            reader, arr, value, site, what

    @property
    def __class__(self):   # ``isinstance(loss.item(), float)`` as eagerly
        return {"b": bool, "i": int, "u": int, "f": float, "c": complex}.get(
            np.dtype(self.arr.dtype).kind, float)

    def _need(self):
        if self.value is UNKNOWN:
            e = NeedsValue(f"{self.what} at {self.site}: a branch on a value")
            self.reader.needed = self.reader.needed or e
            raise e
        return self.value

    def __bool__(self):
        v = self._need()
        return self.reader.guard((self.arr,), lambda a: bool(_py(a)), bool(v), self.site)

    def _compare(self, op, other):
        if isinstance(other, Scalar):
            if other.reader is not self.reader:
                raise self.reader.misuse(f"comparing {self.what}", self.site)
            arrays, o = (self.arr, other.arr), other._need()
            pred = lambda a, b: bool(op(_py(a), _py(b)))   # noqa: E731
        elif type(other) in _NUMBERS:
            arrays, o = (self.arr,), other
            pred = lambda a: bool(op(_py(a), other))   # noqa: E731
        else:
            raise self.reader.misuse(f"comparing {self.what} with {type(other).__name__}",
                                     self.site)
        return self.reader.guard(arrays, pred, bool(op(self._need(), o)), self.site)

    def __getattr__(self, name):
        raise self.reader.misuse(f"{self.what}.{name}", self.site)


def _comparison(op):
    def compare(self, other):
        return self._compare(op, other)
    compare.__name__ = f"__{op.__name__}__"
    return compare


def _needs_value(name):
    def use(self, *args):
        raise self.reader.misuse(f"{name} of {self.what}", self.site)
    use.__name__ = name
    return use


# every other use of the number needs the number itself
for _name in ("__float__", "__int__", "__index__", "__complex__", "__round__", "__trunc__",
              "__floor__", "__ceil__", "__abs__", "__neg__", "__pos__", "__invert__",
              "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__divmod__", "__rdivmod__", "__and__",
              "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
              "__rshift__", "__format__", "__str__", "__repr__", "__hash__", "__len__",
              "__iter__", "__array__", "__jax_array__", "__reduce__", "__reduce_ex__",
              "__copy__", "__deepcopy__"):
    setattr(Scalar, _name, _needs_value(_name))
for _op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
    setattr(Scalar, f"__{_op.__name__}__", _comparison(_op))
del _name, _op


def collect(entry, reader, outs):
    """The guards' values as outputs of the program; ``entry.path`` the branches taken."""
    entry.spec = []
    returned = any(s[0] == "P" for s in entry.user_spec) or \
        any(s[0] == "P" for kind, _, spec in entry.appends if kind == "append" for s in spec)
    entry.path = () if returned or reader is not None and reader.guards else None
    if entry.path is None:   # nothing to read after a run
        return
    for arrays, pred, outcome, site in reader.guards:
        at = []
        for a in arrays:
            at.append(len(outs))
            outs.append(a)
        entry.spec.append((tuple(at), pred, outcome, site))
    entry.path = tuple(g[2] for g in entry.spec)


def fetch(entry, res):
    """The scalars of a run (``entry.user_spec``'s and ``entry.appends``' ``"P"`` items), read
    in one transfer with the guards' values; :class:`Mispredicted` where a guard differs."""
    scalars = [s[1] for s in entry.user_spec if s[0] == "P"] + \
        [k for kind, _, spec in entry.appends if kind == "append" for s, k in spec if s == "P"]
    guarded = [k for at, _, _, _ in entry.spec for k in at]
    host = jax.device_get([res[k] for k in guarded + scalars])
    got = dict(zip(guarded, host))
    taken = []
    for at, pred, outcome, _ in entry.spec:
        now = pred(*[got[k] for k in at])
        taken.append(now)
        if now != outcome:
            raise Mispredicted(tuple(taken))
    return dict(zip(scalars, (_py(v) for v in host[len(guarded):])))


def traced(cf, plan, entry):
    """A program traced for ``plan``: with guards, one of its key's branches (warned
    about once per read)."""
    if not entry.path or not entry.spec:
        return
    entry.siblings = cf._branches.pop(plan.key, None) or {}
    entry.siblings[entry.path] = entry
    for site in dict.fromkeys(g[3] for g in entry.spec):
        _effects.warn_once(
            cf, f"{_effects._name(cf._fn)} branches on a value it reads at {site}",
            "Each branch is compiled once, after a first call that takes it eagerly, and "
            "the branch a call takes is checked before anything is written back. Move the "
            "read into a hook to keep one program (fullgraph=True raises here instead).",
            head="hookgrad.compile: the step is split:")


def branch(cf, entry, plan, prefix):
    """The program of the branch a call took (``prefix``: its branches up to the first
    that ``entry``'s differ from), now its key's; None where there is none yet: its key
    is traced again, for that branch, by the next call (after too many in a row, the
    step runs eagerly)."""
    sibs = entry.siblings or {}
    keys = [k for k, v in cf._cache.items() if v is entry]
    for path, alt in sibs.items():
        if alt is not entry and path[:len(prefix)] == prefix:
            for k in keys:
                cf._cache[k] = alt
            return alt
    cf._misses += 1
    for k in keys:
        del cf._cache[k]
        cf._branches[k] = sibs
        if cf._misses >= MISSES:
            cf._cache[k] = _effects.Eager(
                f"which branch it takes at {entry.spec[len(prefix) - 1][3]} changed on "
                f"{MISSES} calls in a row")
            _effects.warn_once(cf, cf._cache[k].reason)
    return None


def other_branches(cf):
    """How many programs the branches not in ``cf``'s cache hold (the recompile limit)."""
    seen = {id(e.siblings): len(e.siblings) - 1 for e in cf._cache.values()
            if getattr(e, "siblings", None)}
    return sum(seen.values()) + sum(map(len, cf._branches.values()))


def learn(cf, args, kwargs):
    """Run the call eagerly, recording the values the step reads: the next trace takes
    the branches they take."""
    out, cf._spec_log = logged(cf._fn, args, kwargs)
    return out


class _Log:
    """``hookgrad._tensor.READER`` while a step runs eagerly to learn its values: the
    step's own reads, in order (a hook's reads are the hook's: not recorded)."""

    def __init__(self):
        self.values = []

    def read(self, t, what):
        _tensor._check_concrete(t, what)
        arr = t._data
        self.values.append((what, np.asarray(arr)))
        return arr

    def run_hook(self, hook, args):
        prev, _tensor.READER[0] = _tensor.READER[0], None
        try:
            return hook(*args)
        finally:
            _tensor.READER[0] = prev


def logged(fn, args, kwargs):
    """``fn(*args, **kwargs)`` run eagerly, with the values its own Python read."""
    log = _Log()
    prev, _tensor.READER[0] = _tensor.READER[0], log.read
    runner, _mode.state.hook_runner = _mode.state.hook_runner, log.run_hook
    try:
        out = fn(*args, **kwargs)
    finally:
        _mode.state.hook_runner = runner
        _tensor.READER[0] = prev
    return out, log.values
