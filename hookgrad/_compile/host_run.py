"""Hooks a compiled step runs on the host, on every call, as they run eagerly.

While ``hookgrad.compile`` traces a step, every user hook is called through :func:`run`
(``hookgrad._autograd.hooks.call``, the one place every hook kind is called from). Of the
hooks registered before the call, and of those the step registers that write only what
existed before the call (a Grad-CAM forward hook's tensor hook; one that writes what the
step made is the step's own Python):

- a hook whose call changes nothing the step's Python can see stays in the program, as
  any Tensor computation (one that returns a new output or gradient included);
- a hook that returns None and leaves a Python side effect (a counter, an appended value,
  a stored Tensor, a printed line, a log record), or that reads a traced value
  (``.item()``, ``print(t)``, a branch on a value), becomes a *host call*: its Tensor
  arguments become outputs of the program and, after each run of it, the hook is called
  with Tensors holding that run's values, in the order the trace met the hooks. What it
  stored stays while the step is traced (the step may read a kept activation) and is
  undone at the end of the trace (:func:`settle`); what printed or logged is dropped.

A value the hook reads of a Tensor made from its arguments (``.item()`` of
``g.norm()``) is computed by the program too: while traced, the read records the traced
value and gives a placeholder (what the hook then does is undone); on the host, reads are
served, in order, from one transfer of all such values of the run, as long as each is of
a Tensor of the same lineage (:class:`_Lineage`: the same ops on the same arguments).

Host calls run before the program's results are written back, and such a program donates
no buffers: a hook reads the parameters it would read eagerly, and a hook that raises
leaves the state as it was. A parameter passed to a hook (a post-accumulate-grad hook's
argument) is the parameter itself, holding its value and ``.grad`` of that point of the
step.

# NOTE: a hook that returned None while traced may return a replacement on a later call
# (``if n > 1: return g / n``). A host call cannot give it back to a program that has run,
# so that run's host calls are undone and the call, and the later ones, run eagerly.
# Functions whose every ``return`` is ``return None`` cannot, and skip that bookkeeping.
"""
import dis
import os

import jax
import numpy as np

from .. import _tensor
from .._autograd import grad_mode
from .._errors import traced_value_error
from .._ops import dispatch as _dispatch
from .._ops.stages import modes as _modes
from .._tensor import Tensor
from . import effects as _effects
from .host_hook import _ctx, _current_trace, _flatten_containers, _HostCall, is_host_hook

__all__ = ["run", "settle", "run_calls", "Replaced"]

_Tracer = jax.core.Tracer
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Replaced(Exception):
    """A host call's hook returned a value (``CompiledFunction`` runs the call eagerly)."""

    def __init__(self, hook):
        super().__init__(f"hook {_effects._name(hook)} returned a value when run on the "
                         "host, after the program")
        self.hook = hook


def run(hook, args):
    """``hook(*args)`` in a compiled step's trace, or a host call in its place."""
    ctx = _ctx.stack[-1] if _ctx.stack else None
    if ctx is None or _current_trace() is not ctx.trace or _own(hook) or \
            is_host_hook(hook) or _effects.is_trace_only(hook):
        return hook(*args)
    known = id(hook) in ctx.hooks
    leaves, rebuild = _flatten_containers((args, {}))
    others = [v for v in leaves if not isinstance(v, (Tensor, jax.Array, _Tracer))]
    watch = _effects.Watch.of_hooks([hook], others)
    lineage = _Lineage(leaves, probe=True)
    try:
        with watch, lineage:
            res = hook(*args)
    except _effects.BREAKS:   # it reads a value the host must read
        if not (known or watch.containers() <= ctx.before):
            raise
        watch.undo()
    else:
        if res is not None or not (lineage.reads or watch.effects() or watch.logged()) or \
                not (known or (watch.containers() if lineage.reads else watch.changed())
                     <= ctx.before):
            # pure; effects and a replacement; or a hook the step made writing what the
            # step made: the step's own Python (its watch judges it)
            if lineage.reads:
                raise traced_value_error(f"hook {_effects._name(hook)} reading a value")
            return res
        if lineage.reads:   # it read placeholders: what it did is not this call's
            watch.undo()
        else:   # what it stored stays while the step is traced (the step may read it)
            ctx.host_done.append((watch, watch.now()))
    ctx.host_calls.append(_AutoCall.make(hook, leaves, rebuild, ctx.state_ids, lineage.reads))
    ctx.host_reached |= watch.holders()
    return None


def settle(ctx):
    """At the end of a trace, undo what the hooks made host calls stored (newest first):
    their host calls store this call's values. A place the step changed after a hook
    stays changed: the step's own effect (``CompiledFunction`` runs it eagerly)."""
    for watch, after in reversed(ctx.host_done):
        if not watch.changed_since(after):
            watch.undo()
    ctx.host_done.clear()


def _own(hook):
    """Whether ``hook`` is hookgrad's (a backward-hook identity's, ``host_hook``'s
    wrapper): its user hooks are called through :func:`run` one by one."""
    f = getattr(hook, "__func__", hook)
    f = getattr(f, "func", f)   # functools.partial
    code = getattr(f, "__code__", None) or getattr(getattr(type(f), "__call__", None),
                                                   "__code__", None)
    return code is not None and code.co_filename.startswith(_PACKAGE)


def _returns_none(hook):
    """Whether every ``return`` of ``hook``'s code returns None (read from its bytecode)."""
    f = getattr(hook, "__func__", hook)
    code = getattr(f, "__code__", None)
    if code is None or code.co_flags & 0x3a0:   # generator, coroutine, async generator
        return False
    prev = None
    for ins in dis.get_instructions(code):
        if ins.opname == "RETURN_VALUE" and not (
                prev is not None and prev.opname == "LOAD_CONST" and prev.argval is None):
            return False
        if ins.opname == "RETURN_CONST" and ins.argval is not None:
            return False
        prev = ins
    return True


class _Lineage:
    """Where each Tensor of one hook call comes from: ``("a", i)`` for its ``i``-th
    argument, ``(op name, statics, the inputs' lineages), output`` for an op's output, None
    from anywhere else (a parameter, a Tensor the hook made from a number). Two calls whose
    Tensors have equal lineages compute equal values.

    While the step is traced (``probe``), reading a Tensor of known lineage records it and
    gives a placeholder; on the host, a read of the lineage recorded next is served the
    value the program computed for it, from one transfer for all host calls (else, and
    from then on in that call, the Tensor is read).
    """

    def __init__(self, leaves, probe=False, served=()):
        self.of, self.keep = {}, []   # lineages by id; the objects, held for the call
        self.probe, self.reads, self.next = probe, [] if probe else list(served), 0
        for i, v in enumerate(leaves):
            if isinstance(v, Tensor):
                self._set(v, ("a", i))

    def _set(self, t, lin):
        arr = t._arr   # a detached Tensor shares it
        self.of[id(t)] = self.of[id(arr)] = lin
        self.keep += (t, arr)

    def get(self, t):
        lin = self.of.get(id(t))
        return lin if lin is not None or id(t) in self.of else self.of.get(id(t._arr))

    def __enter__(self):
        self.prev, _modes.INTERCEPT[0] = _modes.INTERCEPT[0], self
        self.prev_reader, _tensor.READER[0] = _tensor.READER[0], self.read
        return self

    def __exit__(self, *exc):
        if _modes.INTERCEPT[0] is self:   # else set meanwhile (a first DTensor): kept
            _modes.INTERCEPT[0] = self.prev
        _tensor.READER[0] = self.prev_reader
        return False

    def __call__(self, op, args, statics, out):
        """``dispatch.apply`` of an op of the hook, noting its outputs' lineage."""
        slot = _modes.INTERCEPT
        slot[0] = self.prev
        try:
            res = _dispatch.apply(op, args, statics, out)
        finally:
            if slot[0] is not self.prev:   # set meanwhile (a first DTensor): run through it
                self.prev = slot[0]
            slot[0] = self
        ins = []
        for a in args:
            lin = self.get(a) if isinstance(a, Tensor) else \
                ("c", type(a), a) if type(a) in _CONSTANTS else None
            if lin is None:
                ins = None
                break
            ins.append(lin)
        key = tuple(statics.items()) if statics else ()
        try:
            hash(key)
        except TypeError:
            ins = None
        node = None if ins is None else (op.name, key, tuple(ins))
        for j, o in enumerate(res if type(res) is tuple else (res,)):
            if isinstance(o, Tensor):
                self._set(o, None if node is None else (node, j))
        return res

    def read(self, t, what):
        """The array a value read of ``t`` reads (``hookgrad._tensor.READER``)."""
        if self.probe:
            arr = t._data
            if not isinstance(arr, _Tracer):
                return arr
            lin = self.get(t)
            if lin is None:   # not made from the arguments alone: the host reads it
                raise traced_value_error(what)
            self.reads.append((lin, arr))
            return np.zeros(arr.shape, arr.dtype)
        k = self.next
        if k < len(self.reads):
            lin, value = self.reads[k]
            if self.get(t) == lin and value.shape == tuple(t.shape):
                self.next = k + 1
                return value
            self.next = len(self.reads)
        _tensor._check_concrete(t, what)
        return t._data


_CONSTANTS = (int, float, bool, complex, str, type(None))
_fetch = jax.device_get   # the one transfer of a run's read values (a test counts it)


class _AutoCall(_HostCall):
    """A hook hookgrad made a host call: a host hook's call, then the values its trace
    read; what it returns is checked (:class:`Replaced`)."""

    __slots__ = ("checked", "others", "read_lins")
    auto = True

    @classmethod
    def make(cls, hook, leaves, rebuild, state_ids, reads=()):
        call, arrays = super().make(hook, leaves, rebuild, state_ids)
        call.checked = not _returns_none(hook)
        call.others = [v for v in call.leaves if v is not None]
        call.read_lins = [lin for lin, _ in reads]
        return call, arrays + [arr for _, arr in reads]

    def __call__(self, *values, served=()):
        new, held = self._bind(values)
        try:
            args, kwargs = self.rebuild(new)
            with grad_mode.no_grad(), _Lineage(new, served=zip(self.read_lins, served)):
                res = self.fn(*args, **kwargs)
        finally:
            self._unbind(held)
        if res is not None:
            raise Replaced(self.fn)


def run_calls(calls, res):
    """Run a program's host calls (``(call, output positions)``) with its outputs ``res``,
    before its results are written back. A :class:`Replaced` leaves nothing they did."""
    checked = [c for c, _ in calls if getattr(c, "checked", False)]
    undo = None
    if checked:
        autos = [c for c, _ in calls if getattr(c, "auto", False)]
        undo = _effects.Watch.of_hooks([c.fn for c in autos],
                                       [v for c in autos for v in c.others])
    # the values the hooks' traces read, for all of them: one transfer
    n_reads = [len(c.read_lins) if getattr(c, "auto", False) else 0 for c, _ in calls]
    host = _fetch([res[k] for (_, idx), n in zip(calls, n_reads) if n
                           for k in idx[len(idx) - n:]])
    at = 0
    try:
        for (call, idx), n in zip(calls, n_reads):
            if n:
                call(*[res[k] for k in idx[:len(idx) - n]], served=host[at:at + n])
                at += n
            else:
                call(*[res[k] for k in idx])
    except Replaced:
        undo.undo()
        raise
