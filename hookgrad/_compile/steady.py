"""The steady state of a training loop: a compiled step called again on what its last
call left, with a new batch.

``hookgrad._compile.replay`` re-runs a program on the state its last call wrote, after a
check that allows for changes since (a hook added elsewhere, new option values, another
model's step), and records each call anew. In a loop that does nothing between steps
but pass a new batch, the counters of ``hookgrad._watch`` say that nothing the program
depends on changed: no hook dict, Module slot or params list (``epoch``), and no Tensor
attribute (``writes``; where one was written, another model's, the state Tensors are
compared with what the last call left). A steady call checks that, the guarded Python
values, the roots, the context (grad mode, saved-tensor hooks, anomaly mode), the
optimizers' states and option objects, and the arguments; runs the program on the state
arrays the last call recorded; writes its outputs back and updates that record in place.
It is written once per program as one straight-line function (:func:`_write`, its check
terms from ``hookgrad._compile.steady_check``) over objects bound once: each check a
comparison, and where one finds a difference, the item-wise check here that decides
(``_same_fixed``, ``_as_left``, ``replay._arguments``). Any other call takes
``replay.check``'s path.

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
from .._tensor import Tensor, _set_arr, _set_fn, _set_nr, _set_rg, _set_version
from .._watch import EPOCH as _EPOCH, WRITES as _WRITES, Moving
from .._autograd import grad_mode
from .._autograd.anomaly_mode import _state as _anomaly
from .._autograd.saved import hook_state as _saved_state

__all__ = ["MISS", "rerun"]

_gm = grad_mode._state
_new = object.__new__
_set_out = Tensor.__dict__["_compiled_out"].__set__   # a compiled step's output's mark
MISS = object()   # what :func:`rerun` returns where the call needs ``replay.check``
_VERSION = attrgetter("_version")
_each = deque(maxlen=0).extend   # runs a ``map`` of setters in C, keeping nothing
_ABSENT = repeat(_EMPTY)   # ``Guards.values()``'s default for a key gone from its dict
_HELD = _write_back.HELD
# what a steady call calls where one of its checks finds a difference, or to make what
# it returns but a bare Tensor
_executable, _output, _outputs = (_write_back.executable, _write_back.output,
                                  _write_back.outputs)


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
    nothing. The first call of a program writes its steady call (``_Steady.go``), which
    ``replay.Basis.steady`` then holds: ``CompiledFunction.__call__`` calls that directly
    (False: the program does not re-run so, ``_plain``)."""
    b = r.basis
    go = b.steady
    if go is None:
        go = b.steady = _Steady(b, r, cf).go if _plain(b) else False
    return go(cf, r, args, kwargs) if go else MISS


class _Steady:
    """A program's steady call, worked out once: the function :func:`_write` writes (``go``)
    and what its fallbacks and write-back read (the guarded values, roots and context as
    planned; the state Tensors whose versions and ``.grad``s it moves)."""

    __slots__ = ("grads_written", "take_grads", "bumped", "deltas", "grads_bumped",
                 "grad_deltas", "count", "counted", "ctx", "guarded", "reader",
                 "cell_roots", "global_roots", "roots", "unwatched", "go")

    def __init__(self, b, r, cf):
        e, tensors = b.entry, b.tensors
        n = len(tensors)
        grads = [(i, k) for i, k in e.grad_out if i < n]
        self.grads_written = tuple(tensors[i] for i, _ in grads)
        self.take_grads = items_getter([k for _, k in grads]) if grads else None
        self.bumped = tuple(tensors[i] for i, dv, _ in e.versions if i < n and dv)
        self.deltas = tuple(dv for i, dv, _ in e.versions if i < n and dv)
        self.grads_bumped = tuple(tensors[i] for i, _, gv in e.versions if i < n and gv)
        self.grad_deltas = tuple(gv for i, _, gv in e.versions if i < n and gv)
        # the bumped Tensors' versions move with ``count`` while they hold the ``Moving``s
        # :meth:`move_versions` put there: while ``hookgrad._watch.WRITES`` is what the
        # last call left (``counted``), as every other version write counts one
        self.count, self.counted = [0], [None]
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
        self.go = _write(self, b, r, cf)

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


def _write(s, b, r, cf):
    """``b``'s steady call (``s``: its ``_Steady``; ``r``: the record it is first called
    on), written as one straight-line function of ``(cf, r, args, kwargs)``: the checks as
    terms (``steady_check``), each of which, false, hands the call to the item-wise check
    that decides; the program's inputs as one list display; the write-back and the output.
    Only names, indices and the code's shape depend on the program: every object it reads
    is bound once, as a default argument (a fast local)."""
    e = b.entry
    bound = {"_EPOCH": _EPOCH, "_WRITES": _WRITES, "_b": b,
             "_found": b.found, "_s": s, "_entry": e}
    lines = [_HEAD]
    # the guarded values, the roots, the context and the optimizers' states and option
    # objects (the random key is not compared: a steady program neither reads nor writes it)
    g = b.guarded
    terms = None if s.unwatched is not None else _steady_check.fixed(
        cf._guards, s.guarded if g else (), cf._roots, s.reader, s.cell_roots,
        s.global_roots, s.ctx, (_gm, _saved_state, _anomaly), b.optimizers)
    if terms is None:
        lines.append("    if not _same_fixed(cf, _b, _s, r):\n        return MISS\n")
    else:
        bound.update(terms[1])
        lines.append(_FIXED.format(terms=_AND.join(terms[0])))
    lines.append(_WRITTEN)
    general = _writes_args(b)
    _write_inputs(b, r, bound, lines, general)
    _write_back_state(s, b, bound, lines, general)
    for i, (_, spec) in enumerate(e.opt_out):   # each optimizer's new leaves (``_plain``)
        lines.append(f"    r.states[{i}].leaves = {_take([k for _, k in spec], bound)}\n")
    lines.append("    r.writes = _WRITES[0]\n    cf._replay = r\n")
    # the step returns one Tensor, bare (``return loss``): made here; anything else as
    # ``write_back`` makes it
    spec = e.user_spec
    if e.user_build is LEAF and spec[0][0] == "T" and spec[0][2] is Tensor:
        bound.update(_new=_new, _Tensor=Tensor, _set_arr=_set_arr, _set_fn=_set_fn,
                     _set_nr=_set_nr, _set_rg=_set_rg, _set_version=_set_version,
                     _set_out=_set_out)
        lines.append(_OUT.format(k=spec[0][1]))
    elif e.user_build is LEAF and spec[0][0] == "T":
        bound["_cls"] = spec[0][2]
        lines.append(f"    return _output(_cls, res[{spec[0][1]}])\n")
    else:
        lines.append("    return _outputs(_entry, res, None)\n")
    source = "".join(lines).replace("{params}", ", ".join(f"{k}={k}" for k in bound))
    return _steady_check.define(source, bound, "go", globals())


# what every steady call checks first: no hook dict, Module slot or params list changed
# since the program was planned (``b.epoch``: ``replay.check`` moves it), the same walk of
# the roots
_HEAD = """\
def go(cf, r, args, kwargs, {params}):
    if _EPOCH[0] != _b.epoch or cf._found is not _found:
        return MISS
"""
_AND = "\n            and "
_FIXED = """\
    try:
        same = ({terms})
    except (KeyError, ValueError):   # a key gone, an empty cell
        same = False
    if not same and not _same_fixed(cf, _b, _s, r):
        return MISS
"""
# a Tensor written since (another model's step): the state as left, and no option a
# Tensor (its value may have changed)?
_WRITTEN = """\
    if _WRITES[0] != r.writes and not _as_left(_b, r):
        return MISS
    rf = r.flat
"""
# ``write_back.output``'s Tensor, and ``_tensor._fresh``'s fill, without their calls
_OUT = """\
    t = _new(_Tensor)
    _set_arr(t, res[{k}])
    _set_fn(t, None)
    _set_nr(t, 0)
    _set_rg(t, False)
    _set_version(t, 0)
    _set_out(t, True)
    return t
"""


def _write_inputs(b, r, bound, lines, general):
    """The lines of the steady call that check the arguments and run the program: the
    donated buffers' holders counted (``write_back.executable``'s check; where the record
    holds them all, on the record itself), the program's inputs as one list display
    (``general``: the Tensors passed as ``ts`` too, for ``write_back.state``)."""
    e = b.entry
    held = e.replay_get
    if held is None:   # nothing donated
        lines.append("    exe = _entry.exe\n")
    elif list(held(list(range(len(e.jaxpr.in_avals))))) == list(range(len(r.flat))):
        # each held by its Tensor and the record
        bound.update(_refs=getrefcount, _H=_HELD_RECORD)
        lines.append("    exe = _entry.exe if max(map(_refs, rf)) <= _H else None\n")
    else:
        lines.append("    exe = None\n")
    opt = "".join(f", *r.hp_leaves[{i}], *r.states[{i}].leaves"
                  for i in range(len(b.optimizers)))
    specs = b.args
    # (``general`` names the Tensors ``ts`` for the write-back; else nothing reads them)
    fallback = "        ts, data, raw = got\n" \
               f"        flat = [*rf, *data{opt}, *raw]\n"
    if not b.kw_names and specs and all(k == "T" and p is not None for k, _, _, p in specs):
        # plain Tensors (``replay.basis``'s ``plain`` spec): ``_arguments``'s answer, each
        # one's flags and aval; the state arrays' type is concrete (``replay.written``)
        terms, more = _steady_check.batch(
            [(cls, p[0][0], p[1]) for _, cls, _, p in specs], b.found.state.tensor_ids,
            type(r.flat[0]) if r.flat else None)
        bound.update(more)
        xs = "".join(f", x{i}" for i in range(len(specs)))
        ts = f"        ts = [{', '.join(f'a{i}' for i in range(len(specs)))}]\n"
        lines.append(f"    if ({_AND.join(terms)}):\n"
                     f"        flat = [*rf{xs}{opt}]\n" + (ts if general else "") +
                     "    else:   # the item-wise check\n"
                     "        got = _arguments(_b, args, kwargs)\n"
                     "        if got is None:\n            return MISS\n" + fallback)
    else:
        lines.append("    got = _arguments(_b, args, kwargs)\n"
                     "    if got is None:\n        return MISS\n" +
                     fallback.replace("        ", "    "))
    # the record lets go of the inputs (a donated buffer must have no other holder), and
    # the step of the record until it is written again (a raise leaves none)
    lines.append("    cf._replay = r.flat = rf = None\n"
                 "    if exe is None:   # held elsewhere too (a user's alias): donating nothing\n"
                 "        exe = _executable(_entry, _entry.exe, _entry.replay_get, flat, _HELD)\n"
                 "    res = exe(*flat)\n    del flat\n")


def _writes_args(b):
    """Whether ``b``'s program writes no state array, or writes an argument's: its steady
    call writes back by ``write_back.state``, for all the Tensors."""
    e, n = b.entry, len(b.tensors)
    return not any(i < n for i, _ in e.data_out) or \
        any(i >= n for i, _ in e.data_out) or any(i >= n for i, _ in e.grad_out) or \
        any(i >= n for i, _, _ in e.versions)


def _write_back_state(s, b, bound, lines, general):
    """The lines of the steady call that write the program's outputs into the state
    Tensors: as C-level maps where it writes only state Tensors (``write_back.state`` for
    them alone), else (``general``) by ``write_back.state`` for all."""
    if general:
        lines.append("    _write_all(_b, r, ts, res)\n")
        return
    e, tensors = b.entry, b.tensors
    n = len(tensors)
    data = [(i, k) for i, k in e.data_out if i < n]
    bound.update(_written=tuple(tensors[i] for i, _ in data), _each=_each,
                 _set_arr=_set_arr, _count=s.count, _counted=s.counted)
    if s.bumped:
        lines.append("    moving = _counted[0] == _WRITES[0]\n")
    lines.append("    _WRITES[0] += 1\n"
                 f"    vals = {_take([k for _, k in data], bound)}\n"
                 "    _each(map(_set_arr, _written, vals))\n")
    if s.bumped:   # each version, from now on moving with ``count``
        lines.append("    if not moving:\n        _s.move_versions()\n"
                     "    _count[0] += 1\n")
    if s.take_grads is not None or s.grads_bumped:
        lines.append("    _s.write_grads(res)\n")
    if s.bumped:
        lines.append("    _counted[0] = _WRITES[0]\n")
    # the record: the arrays written, in order, where they are every state input (none
    # with a ``.grad`` among the program's inputs), else as ``replay.written`` makes it
    if not b.grads and [i for i, _ in data] == list(range(n)):
        lines.append("    r.flat = vals\n")
    else:
        lines.append("    r.flat = _record(_b, r)\n")


def _take(positions, bound):
    """An expression of the program's outputs ``res`` giving a list of its items at
    ``positions``: a slice (bound) where they run in order, as they mostly do."""
    a = positions[0]
    if positions == list(range(a, a + len(positions))):
        name = f"_S{len(bound)}"
        bound[name] = slice(a, a + len(positions))
        return f"res[{name}]"
    return f"[{', '.join(f'res[{k}]' for k in positions)}]"


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


def _as_left(b, r):
    """Whether the state Tensors are as the last call left them (``r``), though a Tensor was
    written since (another model's step), and no option is a Tensor (its value may have
    changed)."""
    return r.writes is not None and not any(g[2] for g in r.groups) and \
        _replay._state_as_left(b.tensors, r) is not None


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
