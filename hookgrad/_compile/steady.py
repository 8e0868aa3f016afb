"""The steady state of a training loop: a compiled step called again on what its last
call left, with a new batch.

``hookgrad._compile.replay`` re-runs a program on the state its last call wrote, after a
check that allows for changes since (a hook added elsewhere, new option values, another
model's step), and records each call anew. In a loop that does nothing between steps
but pass a new batch, the counters of ``hookgrad._watch`` say that nothing the program
depends on changed: no hook dict, Module slot or params list (``epoch``), and no Tensor
attribute (``writes``; where one was written, another model's, the state Tensors are
compared with what the last call left). :func:`rerun` checks that, the guarded Python
values, the roots, the context (grad mode, saved-tensor hooks, anomaly mode), the
optimizers' states and option objects, and the arguments (most of them as straight-line
code written once per program: ``hookgrad._compile.steady_check``); runs the program on
the state arrays the last call recorded; and updates that record in place. Any other
call takes ``replay.check``'s path.

Only a program whose write-back is the state Tensors, the optimizers and what the step
returns re-runs so (:func:`_plain`); one reading the random key, sharded, checking
indices, branching on values, appending to lists, calling host hooks, or creating or
dropping ``.grad``s does not.
"""
from collections import deque
from sys import getrefcount
from itertools import repeat
from operator import add, attrgetter, is_

from . import replay as _replay
from . import steady_check as _steady_check
from . import write_back as _write_back
from .replay import _ARR, _GRAD, _arguments, _same_options, _state_flat
from .effects import _EMPTY
from .host_hook import LEAF
from .state import _CONTENTS, _context_key, _snapshot
from .trace import items_getter
from .._tensor import Tensor, _fresh, _set_arr, _set_version
from .._watch import EPOCH as _EPOCH, WRITES as _WRITES, Moving
from .._autograd import grad_mode
from .._autograd.anomaly_mode import _state as _anomaly
from .._autograd.saved import hook_state as _saved_state

__all__ = ["MISS", "rerun"]

_gm = grad_mode._state
_setattr, _new = object.__setattr__, object.__new__
MISS = object()   # what :func:`rerun` returns where the call needs ``replay.check``
_VERSION = attrgetter("_version")
_each = deque(maxlen=0).extend   # runs a ``map`` of setters in C, keeping nothing
_ABSENT = repeat(_EMPTY)   # ``Guards.values()``'s default for a key gone from its dict
_refs, _HELD = getrefcount, _write_back.HELD
_RECORD = object()   # ``_Steady.held`` where the donated buffers counted are the record's


def _held_record():
    # the count ``getrefcount`` gives an item of a list held by its holder and that list
    # alone, read by a ``map`` over the list (as ``write_back._calibrate``)
    flat = [object(), object()]
    holders = list(flat)
    held = max(map(getrefcount, flat))
    del holders
    return held


_HELD_RECORD = _held_record()


def rerun(cf, r, args, kwargs):
    """Re-run ``r``'s program (a ``replay.Replay``) if nothing but the arguments has changed
    since it was written, and return the step's outputs; else :data:`MISS`, having changed
    nothing."""
    # NOTE: one function, each check a comparison, a C-level map or straight-line code
    # (``steady_check``) over what ``_Steady`` bound once: a training loop pays this per
    # step beside jax.jit's own dispatch, where each Python call (~0.1 us) and attribute
    # read counts
    b = r.basis
    s = b.steady
    if s is None:
        s = b.steady = _Steady(b, r, cf) if _plain(b) else False
    if s is False or _EPOCH[0] != b.epoch or cf._found is not b.found:
        return MISS
    # the guarded values, the roots, the context and the optimizers' states and option
    # objects: unrolled (``steady_check``), or item by item where that finds a difference
    # or does not apply (the random key is not compared: a steady program neither reads
    # nor writes it)
    fixed = s.fixed
    if (fixed is None or not fixed(r)) and not _same_fixed(cf, b, s, r):
        return MISS
    states, opt = r.states, s.opt
    # a Tensor written since (another model's step): the state as left, and no option
    # a Tensor (its value may have changed)?
    if _WRITES[0] != r.writes and (r.writes is None or any(g[2] for g in r.groups) or
                                   _replay._state_as_left(b.tensors, r) is None):
        return MISS
    batch, got = s.batch, None
    if batch is not None and not kwargs and len(args) == s.n_args:
        # plain Tensors (``replay.basis``'s ``plain`` spec): ``_arguments``'s answer
        arg_data = batch(args)
        if arg_data is not None:
            got = args, arg_data, ()
    if got is None:   # the full check
        got = _arguments(b, args, kwargs)
        if got is None:
            return MISS
    arg_tensors, arg_data, raw = got
    # the donated buffers' holders, counted in C (``write_back.executable``'s check), here
    # in the record itself where it holds them all: each held by its Tensor and the record
    entry = b.entry
    exe, held = entry.exe, s.held
    if held is not None and (held is not _RECORD or max(map(_refs, r.flat)) > _HELD_RECORD):
        exe = None
    if opt is not None:   # one optimizer: the inputs as one list display
        flat = [*r.flat, *arg_data, *r.hp_leaves[0], *states[0].leaves, *raw]
    else:
        flat = r.flat + arg_data
        for hp, flat_state in zip(r.hp_leaves, states):
            flat += hp
            flat += flat_state.leaves
        flat += raw
    # the record lets go of the inputs: a donated buffer must have no other holder
    r.flat = None
    if exe is None:   # held elsewhere too (a user's alias): the program donating nothing
        exe = _write_back.executable(entry, entry.exe, entry.replay_get, flat, _HELD)
    res = exe(*flat)
    del flat
    written = s.written
    if written is None or arg_tensors and s.args_written:
        _write_all(b, r, arg_tensors, res)
    else:   # ``write_back.state`` for the state Tensors alone, as C-level maps
        moving = s.counted == _WRITES[0]
        _WRITES[0] += 1
        vals = s.take(res)
        _each(map(_set_arr, written, vals))
        if s.bumped and not moving:   # each version, from now on moving with ``count``
            s.move_versions()
        s.count[0] += 1
        if s.take_grads is not None or s.grads_bumped:
            s.write_grads(res)
        s.counted = _WRITES[0]
        # the record: the arrays written, in order (a slice: a list already), or as
        # ``replay.written`` makes it
        r.flat = (vals if type(vals) is list else list(vals)) if s.record_all else \
            _record(b, r)
    # each optimizer's state: the flat state the check found, now holding the new leaves
    # (anything reading it since would have ended it; its parameters are the same:
    # ``_EPOCH``)
    if opt is None:
        _write_states(states, s.opt_take, res)
    else:   # one optimizer: no loop
        leaves = s.opt_take[0](res)
        states[0].leaves = leaves if type(leaves) is list else list(leaves)
    r.writes = _WRITES[0]
    out = s.out
    if out is None:
        return _write_back.outputs(entry, res, None)
    if s.out_cls is not Tensor:
        return _write_back.output(s.out_cls, res[out])
    t = _new(Tensor)   # ``write_back.output``'s, without its call
    _fresh(t, res[out], None, 0, False)
    _setattr(t, "_compiled_out", True)
    return t


class _Steady:
    """What a steady re-run of one program does beyond its checks, worked out once: the
    guarded values', roots', context's and optimizer's checks as one unrolled function
    (``fixed``), the batch's where every argument is a plain Tensor (``replay.basis``'s
    ``plain`` spec; ``batch``), the write-back as C-level maps where the program writes
    only state Tensors (``written``: the Tensors whose arrays it replaces, in output
    order), and the Tensor returned where the step returns one alone (``out``)."""

    __slots__ = ("n_args", "batch", "written", "take", "grads_written",
                 "take_grads", "bumped", "deltas", "grads_bumped", "grad_deltas",
                 "record_all", "args_written", "count", "counted", "out", "out_cls", "ctx",
                 "guarded", "reader", "cell_roots", "global_roots", "roots",
                 "unwatched", "opt", "held", "opt_take", "fixed")

    def __init__(self, b, r, cf):
        specs = b.args
        plain = not b.kw_names and specs and all(k == "T" and p is not None
                                                 for k, _, _, p in specs)
        # each argument's class, flag and aval (``plain``: its flags and aval)
        plain = tuple((cls, p[0][0], p[1]) for _, cls, _, p in specs) if plain else None
        self.n_args = len(specs)
        # its check, unrolled (``steady_check``): the state arrays' type is concrete
        # (``replay.written``); a state Tensor passed is keyed as one
        self.batch = None if plain is None else _steady_check.build_batch(
            plain, b.found.state.tensor_ids, type(r.flat[0]) if r.flat else None)
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
        # the guarded values in dicts alone (``Guards.values()``'s first part), or None
        g = b.guarded
        self.guarded = g[0] if g and not g[1] else None
        # the roots (``_Roots._read``) as its reader reads them: the fixed objects, then
        # the cells' and the globals' values, compared in those two parts
        roots = cf._roots
        reader = roots._reader
        n_obj = len(roots.objects)
        ok = reader is not None and len(b.roots) == n_obj + reader[0]
        self.reader = reader if ok else None   # else each call reads them all
        self.roots = b.roots
        self.unwatched = b.found.unwatched or None
        self.cell_roots = b.roots[n_obj:n_obj + len(reader[1])] if ok else None
        self.global_roots = b.roots[n_obj + len(reader[1]):] if ok else None
        self.opt = b.optimizers[0] if len(b.optimizers) == 1 else None
        # those checks unrolled (``steady_check``): the dict guards alone (or none)
        in_dicts = self.guarded if g else ()
        self.fixed = None if self.unwatched is not None else _steady_check.build(
            cf._guards, in_dicts, roots, self.reader, self.cell_roots, self.global_roots,
            self.ctx, (_gm, _saved_state, _anomaly), b.optimizers)
        # the donated inputs whose holders are counted (``write_back.executable``), all
        # in the record (``r.flat``): all of it (``_RECORD``) or some
        held = e.replay_get
        if held is not None and list(held(list(range(len(e.jaxpr.in_avals))))) == \
                list(range(len(r.flat))):
            held = _RECORD
        self.held = held
        # each optimizer's new leaves (``_plain``: all outputs), as a list
        self.opt_take = [items_getter([k for _, k in spec]) for _, spec in e.opt_out]

    def same_read(self, roots):
        """Whether the roots (a ``state._Roots``), read whole, are the values the program
        was planned with, compared by identity."""
        now = roots._read()
        return len(now) == len(self.roots) and all(map(is_, now, self.roots))

    def write_grads(self, res):
        """The ``.grad``s' arrays and versions the program writes."""
        if self.take_grads is not None:
            _each(map(_set_arr, map(_GRAD, self.grads_written), self.take_grads(res)))
        if self.grads_bumped:
            gs = list(map(_GRAD, self.grads_bumped))
            _each(map(_set_version, gs, map(add, map(_VERSION, gs), self.grad_deltas)))

    def move_versions(self):
        """Each bumped Tensor's version as a ``Moving`` with ``count``: from now on its
        version moves with the count, not written per call."""
        bumped = self.bumped
        _each(map(_set_version, bumped, map(Moving, repeat(self.count),
                                             map(_VERSION, bumped), self.deltas)))


def _same_fixed(cf, b, s, r):
    """Whether the guarded values, the roots, the context and the optimizers are those
    ``b``'s program was planned with and ``r`` recorded (``s``: its ``_Steady``), read
    item by item."""
    guards = cf._guards
    if s.guarded is None or guards.cells:
        if guards.values() != b.guarded:
            return False
    elif tuple(map(dict.get, guards.dicts, guards.keys, _ABSENT)) != s.guarded:
        return False
    # the roots by identity: the cells' and the globals' values (``_Roots._read``'s fixed
    # objects grow only with a new walk, which ``cf._found`` tells)
    roots = cf._roots
    reader = roots._reader
    try:
        same = reader is s.reader and \
            all(map(is_, map(_CONTENTS, reader[1]), s.cell_roots)) and \
            all(map(is_, map(dict.get, reader[2], reader[3]), s.global_roots))
    except ValueError:   # an empty cell (a name bound later): ``_read`` reads it as None
        same = False
    if not same and not s.same_read(roots) or s.unwatched is not None and \
            _snapshot(s.unwatched) != b.found.snap:
        return False
    ctx, sv = s.ctx, _saved_state
    if ctx is None:
        if _context_key(_gm.enabled, sv) != b.ctx:
            return False
    # no saved-tensor hooks, as when traced: the key's other parts, read as they are
    elif sv.stack or sv.mutation_ctx is not None or _gm.enabled is not ctx[0] or \
            sv.disabled_message is not ctx[1] or _anomaly.enabled is not ctx[2] or \
            _anomaly.check_nan is not ctx[3]:
        return False
    return _same_optimizers(b, r)


def _same_optimizers(b, r):
    """Whether each optimizer holds the flat state and option objects ``r`` recorded."""
    for opt, flat_state, group in zip(b.optimizers, r.states, r.groups):
        if opt._flat_state() is not flat_state or \
                not _same_options(opt.param_groups, group[1]):
            return False
    return True


def _write_states(states, takes, res):
    """Each optimizer's flat state holding its new leaves (``takes``: each one's getter of
    them from the program's outputs ``res``)."""
    for flat_state, take in zip(states, takes):
        leaves = take(res)
        flat_state.leaves = leaves if type(leaves) is list else list(leaves)


def _record(b, r):
    """``Replay.flat`` as ``replay.written`` makes it: the state Tensors' arrays, each
    followed by its ``.grad``'s where the program reads one."""
    written = list(map(_ARR, b.tensors))
    return _state_flat(written, r.grads) if b.grads else written


def _write_all(b, r, arg_tensors, res):
    """``write_back.state`` for every Tensor the program writes (arguments included), and
    the record."""
    tensors = b.tensors
    _write_back.state(b.entry, tensors + list(arg_tensors) if arg_tensors else tensors, res)
    r.flat = _record(b, r)


def _plain(b):
    """Whether ``b``'s program (a ``replay.Basis``'s) may re-run steadily."""
    e = b.entry
    return not (e.appends or e.key_in or e.key_out is not None or e.layout is not None or
                e.check_out is not None or e.path is not None or e.host_calls or
                e.grad_none or e.grad_new) and None not in e.opt_take
