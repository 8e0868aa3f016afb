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
from operator import is_

from . import replay as _replay
from . import write_back as _write_back
from .replay import _ARR, _arguments, _same_options, _state_flat
from .state import _context_key, _snapshot
from .._random import GLOBAL as _KEY
from .._watch import EPOCH as _EPOCH, WRITES as _WRITES
from .._autograd import grad_mode
from .._autograd.saved import hook_state as _saved_state

__all__ = ["MISS", "rerun"]

_gm = grad_mode._state
MISS = object()   # what :func:`rerun` returns where the call needs ``replay.check``


def rerun(cf, r, args, kwargs):
    """Re-run ``r``'s program (a ``replay.Replay``) if nothing but the arguments has changed
    since it was written, and return the step's outputs; else :data:`MISS`, having changed
    nothing."""
    b = r.basis
    steady = b.steady
    if steady is None:
        steady = b.steady = _plain(b)
    if not steady or _EPOCH[0] != b.epoch or cf._found is not b.found:
        return MISS
    if cf._guards and cf._guards.values() != b.guarded:
        return MISS
    roots, found = cf._roots._read(), b.found
    if len(roots) != len(b.roots) or not all(map(is_, roots, b.roots)) or \
            found.unwatched and _snapshot(found.unwatched) != found.snap:
        return MISS
    del roots
    if _context_key(_gm.enabled, _saved_state) != b.ctx or _KEY.peek() is not r.rng:
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
    got = _arguments(b, args, kwargs)
    if got is None:
        return MISS
    arg_tensors, arg_data, raw = got
    # the record lets go of the inputs: a donated buffer must have no other holder
    flat, r.flat = r.flat + arg_data, None
    for hp, flat_state in zip(r.hp_leaves, r.states):
        flat += hp
        flat += flat_state.leaves
    flat += raw
    entry = b.entry
    exe = _write_back.executable(entry, entry.exe, entry.replay_get, flat, _write_back.HELD)
    res = exe(*flat)
    del flat
    tensors = b.tensors
    _write_back.state(entry, tensors + arg_tensors if arg_tensors else tensors, res)
    _write_back.optimizers(entry, b.optimizers, b.opt_trees, res, None)
    # the record, as ``replay.written`` would make it: the rest is unchanged
    arrs = list(map(_ARR, tensors))
    r.flat = _state_flat(arrs, r.grads) if b.grads else arrs
    r.states = [opt._flat_state() for opt in b.optimizers]
    r.writes = _WRITES[0]
    return _write_back.outputs(entry, res, None)


def _plain(b):
    """Whether ``b``'s program (a ``replay.Basis``'s) may re-run steadily."""
    e = b.entry
    return not (e.appends or e.key_in or e.key_out is not None or e.layout is not None or
                e.check_out is not None or e.path is not None or e.host_calls or
                e.grad_none or e.grad_new) and None not in e.opt_take
