"""The steady state of a training loop: a compiled step called again on what its last
call left, with a new batch.

``hookgrad._compile.replay`` re-runs a program on the state its last call wrote, after a
check that allows for changes since (a hook added elsewhere, new option values, another
model's step), and records each call anew. In a loop that does nothing between steps
but pass a new batch, the counters of ``hookgrad._watch`` say that nothing the program
depends on changed: no hook dict, Module slot or params list (``epoch``), and no Tensor
attribute (``writes``; where one was written, another model's, the state Tensors are
compared with what the last call left). :func:`rerun` checks that, the guarded Python
values, the roots, the grad mode, the random key, the optimizers' states and option
objects, and the arguments; runs the program on the state arrays the last call recorded;
and updates that record in place. Any other call takes ``replay.check``'s path.

Only a program whose write-back is the state Tensors, the optimizers and what the step
returns re-runs so (:func:`_plain`); one reading the random key, sharded, checking
indices, branching on values, appending to lists, calling host hooks, or creating or
dropping ``.grad``s does not.
"""
from collections import deque
from itertools import repeat
from operator import add, attrgetter, is_, methodcaller

from . import replay as _replay
from . import write_back as _write_back
from .replay import _ARR, _GRAD, _arguments, _same_options, _state_flat
from .host_hook import LEAF
from .state import _context_key, _snapshot
from .trace import items_getter
from .._random import GLOBAL as _KEY
from .._tensor import Host, Pending, _set_arr, _set_version
from .._watch import EPOCH as _EPOCH, WRITES as _WRITES, Moving
from .._autograd import grad_mode
from .._autograd.anomaly_mode import _state as _anomaly
from .._autograd.saved import hook_state as _saved_state

__all__ = ["MISS", "rerun"]

_gm = grad_mode._state
MISS = object()   # what :func:`rerun` returns where the call needs ``replay.check``
_VERSION = attrgetter("_version")
_FLAT_STATE = methodcaller("_flat_state")
_each = deque(maxlen=0).extend   # runs a ``map`` of setters in C, keeping nothing


def rerun(cf, r, args, kwargs):
    """Re-run ``r``'s program (a ``replay.Replay``) if nothing but the arguments has changed
    since it was written, and return the step's outputs; else :data:`MISS`, having changed
    nothing."""
    b = r.basis
    s = b.steady
    if s is None:
        s = b.steady = _Steady(b, r) if _plain(b) else False
    if s is False or _EPOCH[0] != b.epoch or cf._found is not b.found:
        return MISS
    if cf._guards.values() != b.guarded:
        return MISS
    roots, found = cf._roots._read(), b.found
    if len(roots) != len(b.roots) or not all(map(is_, roots, b.roots)) or \
            found.unwatched and _snapshot(found.unwatched) != found.snap:
        return MISS
    del roots
    ctx, sv = s.ctx, _saved_state
    if ctx is None:
        if _context_key(_gm.enabled, sv) != b.ctx:
            return MISS
    # no saved-tensor hooks, as when traced: the key's other parts, read as they are
    elif sv.stack or sv.mutation_ctx is not None or _gm.enabled is not ctx[0] or \
            sv.disabled_message is not ctx[1] or _anomaly.enabled is not ctx[2] or \
            _anomaly.check_nan is not ctx[3]:
        return MISS
    if _KEY.peek() is not r.rng:
        return MISS
    for opt, flat_state, group in zip(b.optimizers, r.states, r.groups):
        if opt._flat_state() is not flat_state or \
                not _same_options(opt.param_groups, group[1]):
            return MISS
    # a Tensor written since (another model's step): the state as left, and no option
    # a Tensor (its value may have changed)?
    if _WRITES[0] != r.writes and (r.writes is None or any(g[2] for g in r.groups) or
                                   _replay._state_as_left(b.tensors, r) is None):
        return MISS
    got = None if kwargs or s.arg_types is None else s.batch(b, args)
    if got is None:
        got = _arguments(b, args, kwargs)
        if got is None:
            return MISS
    arg_tensors, arg_data, raw = got
    # the record lets go of the inputs: a donated buffer must have no other holder
    states = r.states
    if len(states) == 1:   # one optimizer: the inputs as one list display
        flat = [*r.flat, *arg_data, *r.hp_leaves[0], *states[0].leaves, *raw]
    else:
        flat = r.flat + arg_data
        for hp, flat_state in zip(r.hp_leaves, states):
            flat += hp
            flat += flat_state.leaves
        flat += raw
    r.flat = None
    entry = b.entry
    exe = _write_back.executable(entry, entry.exe, entry.replay_get, flat, _write_back.HELD)
    res = exe(*flat)
    del flat
    tensors = b.tensors
    if s.written is None or arg_tensors and s.args_written:
        _write_back.state(entry, tensors + arg_tensors if arg_tensors else tensors, res)
        written = None
    else:
        written = s.write(res)
    if written is None:   # the record, as ``replay.written`` makes it
        written = list(map(_ARR, tensors))
        if b.grads:
            written = _state_flat(written, r.grads)
    r.flat = written
    # each state as the last one was placed (the params lists are the same: ``_EPOCH``)
    for opt, (treedef, _), take, last in zip(b.optimizers, entry.opt_out, entry.opt_take,
                                             r.states):
        opt._load_flat_state(treedef, take(res), last.layout)
    r.states = list(map(_FLAT_STATE, b.optimizers))
    r.writes = _WRITES[0]
    if s.out is not None:
        return _write_back.output(s.out_cls, res[s.out])
    return _write_back.outputs(entry, res, None)


class _Steady:
    """What a steady re-run of one program does beyond its checks, worked out once: the
    batch's check where every argument is a plain Tensor (``replay.basis``'s ``plain``
    spec), and the write-back as C-level maps where the program writes only state
    Tensors (``written``: the Tensors whose arrays it replaces, in output order), and
    the Tensor returned where the step returns one alone (``out``)."""

    __slots__ = ("arg_types", "arg_grad", "arg_avals", "arr_type", "written", "take",
                 "grads_written", "take_grads", "bumped", "deltas", "grads_bumped",
                 "grad_deltas", "record_all", "args_written", "count", "counted", "out",
                 "out_cls", "ctx")

    def __init__(self, b, r):
        specs = b.args
        plain = not b.kw_names and specs and all(k == "T" and p is not None
                                                 for k, _, _, p in specs)
        self.arg_types = tuple(cls for _, cls, _, _ in specs) if plain else None
        self.arg_grad = tuple(p[0][0] for _, _, _, p in specs) if plain else None
        self.arg_avals = tuple(p[1] for _, _, _, p in specs) if plain else None
        self.arr_type = type(r.flat[0]) if r.flat else None   # concrete: ``replay.written``
        e, tensors = b.entry, b.tensors
        n = len(tensors)
        self.args_written = any(i >= n for i, _ in e.data_out) or \
            any(i >= n for i, _ in e.grad_out) or any(i >= n for i, _, _ in e.versions)
        data = [(i, k) for i, k in e.data_out if i < n]
        grads = [(i, k) for i, k in e.grad_out if i < n]
        self.written = tuple(tensors[i] for i, _ in data) if data else None
        self.take = items_getter([k for _, k in data]) if data else None
        self.grads_written = tuple(tensors[i] for i, _ in grads)
        self.take_grads = items_getter([k for _, k in grads]) if grads else None
        self.bumped = tuple(tensors[i] for i, dv, _ in e.versions if i < n and dv)
        self.deltas = tuple(dv for i, dv, _ in e.versions if i < n and dv)
        self.grads_bumped = tuple(tensors[i] for i, _, gv in e.versions if i < n and gv)
        self.grad_deltas = tuple(gv for i, _, gv in e.versions if i < n and gv)
        # every state Tensor written, in order, none with a ``.grad`` in the program's
        # inputs: the next call's state inputs are the arrays written
        self.record_all = not b.grads and [i for i, _ in data] == list(range(n))
        # the bumped Tensors' versions move with ``count`` while they hold the ``Moving``s
        # :meth:`write` put there: while ``hookgrad._watch.WRITES`` is what that call left
        # (``counted``), as every other version write counts one
        self.count, self.counted = [0], None
        # the step returns one Tensor, bare (``return loss``): its output and class
        spec = e.user_spec
        bare = e.user_build is LEAF and spec[0][0] == "T"
        self.out, self.out_cls = (spec[0][1], spec[0][2]) if bare else (None, None)
        # ``state._context_key`` without saved-tensor hooks: grad mode, the message of
        # ``disable_saved_tensors_hooks`` and anomaly mode, compared part by part
        grad, hooks, message, mutation, anomaly, nan = b.ctx
        self.ctx = None if hooks or mutation is not None else (grad, message, anomaly, nan)

    def batch(self, b, args):
        """``replay._arguments``'s answer for plain Tensor arguments with the flags and
        avals the program was keyed on; None where it takes that function's full check."""
        if len(args) != len(self.arg_types):
            return None
        state_ids, arr_type = b.found.state.tensor_ids, self.arr_type
        data = []
        for v, cls, rg, aval in zip(args, self.arg_types, self.arg_grad, self.arg_avals):
            # a plain Tensor's other flags are its class's: nothing set on it but ``.grad``
            # (None); a state Tensor passed is keyed as one
            if type(v) is not cls or v._requires_grad is not rg or v.grad_fn is not None \
                    or id(v) in state_ids:
                return None
            attrs = v.__dict__   # (compared by identity: a Tensor's ``==`` is elementwise)
            if attrs and (len(attrs) != 1 or attrs.get("_grad", attrs) is not None):
                return None
            arr = v._arr
            # the type of the state's arrays (not a tracer, nor a NumPy-backed value)
            if arr.__class__ is not arr_type:
                if arr.__class__ is not Pending and arr.__class__ is not Host:
                    return None
                arr = v._data   # computed, or copied
                if arr.__class__ is not arr_type:
                    return None
            if arr.aval != aval:
                return None
            data.append(arr)
        n = len(args)   # one Tensor twice (two arguments: one comparison, not a set)
        if n > 1 and (args[0] is args[1] if n == 2 else len(set(map(id, args))) != n):
            return None
        return list(args), data, []

    def write(self, res):
        """``write_back.state`` for the state Tensors alone, in C; the program's next state
        inputs (``Replay.flat``) where they are the arrays written, else None."""
        moving = self.counted == _WRITES[0]
        _WRITES[0] += 1
        vals = self.take(res)
        _each(map(_set_arr, self.written, vals))
        if self.take_grads is not None:
            _each(map(_set_arr, map(_GRAD, self.grads_written), self.take_grads(res)))
        bumped = self.bumped
        if bumped and not moving:   # each version, from now on moving with ``count``
            _each(map(_set_version, bumped, map(Moving, repeat(self.count),
                                                 map(_VERSION, bumped), self.deltas)))
        self.count[0] += 1
        if self.grads_bumped:
            gs = list(map(_GRAD, self.grads_bumped))
            _each(map(_set_version, gs, map(add, map(_VERSION, gs), self.grad_deltas)))
        self.counted = _WRITES[0]
        return list(vals) if self.record_all else None


def _plain(b):
    """Whether ``b``'s program (a ``replay.Basis``'s) may re-run steadily."""
    e = b.entry
    return not (e.appends or e.key_in or e.key_out is not None or e.layout is not None or
                e.check_out is not None or e.path is not None or e.host_calls or
                e.grad_none or e.grad_new) and None not in e.opt_take
