"""Re-running a compiled step on the state its last call left.

A training loop calls its compiled step again and again on what the last call wrote: the
same Parameters now holding the arrays the program returned, the same optimizer states, a
new batch of the same shape. Building the cache key for that (``CompiledFunction._plan``:
every Tensor's shape, flags and hooks, the optimizer state flattened, the key hashed) is
most of a call's Python, and on a CPU that Python runs while the device waits.

A :class:`Replay` holds what a call was keyed on (its :class:`Basis`) and what its
program wrote. The next call checks it with a few passes in C: one counter for every hook
dict, Module slot and optimizer params list (``hookgrad._watch.epoch``), one for every
write to a Tensor's attributes (``hookgrad._watch.writes``: where it moved, the flags of
each state Tensor and the ids of its array and ``.grad`` against those written), the
optimizers' flat states (the objects ``_load_flat_state`` installed) and option objects,
the arguments' shapes; then it runs the same program on the arrays it already knows (with
new hyper-parameter values, e.g. an LR schedule's, where they key the same program).
Where the first counter moved for a change elsewhere (an eager step's hooks,
``ModTracker``, another Module's attribute, the trace of the program itself), the walk's
watched dicts and the state Tensors' hook keys are compared instead. Anything else (a
hook added, a flag flipped, ``p.data`` replaced, an argument of a new shape) fails the
check and the call takes the full path, which makes a new Replay.

A Basis is made only where re-running is sound: the program's outputs have the shapes of
the inputs they replace (the next call has the same key), every hook dict in the key
counts its changes, the arguments are Tensors without grad or hooks, arrays or plain
scalars, and every optimizer holds its state flat (``_flat_state()``).
"""
import itertools
from operator import attrgetter, is_

import jax

from .. import _watch
from .._watch import EPOCH as _EPOCH, WRITES as _WRITES
from .._tensor import Host, Pending, Tensor
from .._random import GLOBAL as _KEY
from .state import (_KEY_HOOKS, _KEY_TENSORS, _PLAIN, _Plan, _Split, _arg_array_key,
                    _context_key, _module_cls, _opt_key, _opt_tree, PLAIN_HOOKS, _aval_of,
                    _snapshot, _tensor_key, _tensor_hooks)
from .._autograd import grad_mode
from .._autograd.hooks import NODE_KEYED, TENSOR_DICTS
from .._autograd.saved import hook_state as _saved_state

_gm = grad_mode._state
_Tracer = jax.core.Tracer

# what a state Tensor's key reads besides its arrays (compared as they were when keyed)
_FLAGS = attrgetter(*Tensor._COMPILE_KEY)
# a Tensor's array slot as it is (``Tensor._data`` computes a deferred one first): a
# Replay compares it by identity with the concrete array the last call left there
_ARR = attrgetter("_arr")
# ``_tensor_key``'s entries after the flag of a leaf without .grad, hooks or node
_PLAIN_KEY = (True, None, *PLAIN_HOOKS)
_PLAIN_FLAGS = (None, False, None, None, None)   # ``_FLAGS`` after the flag: the same
_GRAD = attrgetter("_grad")
# the flags ``_FLAGS`` reads: two slots, the rest attributes of the instance or defaults
# of the class (an instance's ``__dict__`` holds those set on it, and ``.grad``)
_META = attrgetter("_requires_grad", "grad_fn", "__dict__")


class Basis:
    """What a program was keyed on, as the next call compares it."""

    __slots__ = ("entry", "found", "roots", "epoch", "ctx", "tensors", "flags", "hooks",
                 "grads", "n_args", "kw_names", "args", "optimizers", "opt_keys", "opt_trees",
                 "rng_dtype", "guarded", "steady")


class Replay:
    """What a call's program wrote (and the Basis it was keyed on), for the next call."""

    __slots__ = ("basis", "flat", "grads", "meta", "states", "groups", "hp_leaves", "rng",
                 "writes")


def group_values(opt):
    """The optimizer's param-group options as compared by a Replay: plain values by value,
    anything else (the params list, a betas tuple, a Tensor) by identity."""
    return [[v if type(v) in _PLAIN else id(v) for v in g.values()]
            for g in opt.param_groups]


def group_record(opt):
    """``(group_values(opt), the option objects, whether one is a Tensor)``: a Replay
    compares the objects first (the same ones: nothing to compare further, unless a Tensor
    option, e.g. ``lr``, may have been written in place), then the values."""
    objs = [list(g.values()) for g in opt.param_groups]
    return group_values(opt), objs, any(isinstance(v, Tensor) for o in objs for v in o)


def _same_options(param_groups, objs):
    """Whether each group holds the option objects ``objs`` (``group_record``'s), compared
    by identity in C (no ``id()`` ints made, nor recorded ones read)."""
    if len(param_groups) != len(objs):
        return False
    if len(objs) == 1:   # one group, as most optimizers have: no loop (each re-run call)
        g, o = param_groups[0], objs[0]
        return len(g) == len(o) and all(map(is_, g.values(), o))
    for g, o in zip(param_groups, objs):
        if len(g) != len(o) or not all(map(is_, g.values(), o)):
            return False
    return True


def basis(plan, entry):
    """The Basis of a full-path call, or None where its program cannot be re-run so."""
    if plan.arg_objects:   # an object argument (a KV cache): walked on every call
        return None
    n = plan.n_walk
    tensors = plan.tensors[:n]
    for t in tensors:
        if not _watched_hooks(t):
            return None
    arg_specs = []
    k = 0
    for v, slot in zip(plan.arg_leaves, plan.arg_slots):
        if slot[0] == "t":
            if slot[1] != n + k or v._grad is not None:  # a state Tensor, aliased, or with .grad
                return None
            key = _tensor_key(v, ("arg", k))
            # a plain Tensor (a batch: a leaf, no .grad, hooks nor node): ``check``
            # compares its flags and aval, and its full key only where those differ
            flags = _FLAGS(v)
            plain = (flags, key[1]) if key[3:] == _PLAIN_KEY and \
                flags[1:] == _PLAIN_FLAGS and v._grad is None else None
            arg_specs.append(("T", type(v), key, plain))
            k += 1
        elif slot[0] == "a" and not isinstance(v, _Tracer):
            arg_specs.append(("A", type(v), _arg_array_key(v), None))
        elif slot[0] == "s" and type(v) in _PLAIN:
            arg_specs.append(("S", type(v), v, None))
        else:
            return None
    if len(plan.arg_leaves) != plan.n_args + len(plan.kw_names) or k != len(plan.tensors) - n:
        return None   # containers among the arguments
    fixed = entry.fixed_point
    if fixed is None:
        fixed = entry.fixed_point = _fixed_point(plan, entry)
    if not fixed:
        return None
    b = Basis()
    b.entry, b.found, b.epoch, b.ctx = entry, plan.found, plan.epoch, plan.ctx
    b.roots = plan.roots
    b.tensors, b.flags = tensors, plan.flags
    # the state Tensors' hook keys as keyed (``_tensor_key``'s hook entries), compared
    # where the counter of ``hookgrad._watch`` has moved
    b.hooks = [k[_KEY_HOOKS] for k in plan.key[_KEY_TENSORS:_KEY_TENSORS + n]]
    b.grads = bool(plan.grads_in)
    b.n_args, b.kw_names, b.args = plan.n_args, plan.kw_names, arg_specs
    b.optimizers, b.opt_keys, b.opt_trees = plan.optimizers, plan.opt_keys, plan.opt_trees
    plan.hp_leaves = [plan.flat[start:start + td[2]] for start, _, td, _ in plan.opt_trees]
    b.rng_dtype = plan.rng.dtype
    b.guarded = plan.key[-1]   # ``CompiledFunction._plan`` puts the guarded values last
    b.steady = None   # whether ``hookgrad._compile.steady`` may re-run it, found on first use
    return b


def _watched_hooks(t):
    # every hook dict the key reads must count its changes: the check reads one counter
    # (a flag, ``_retains_grad``, is a counted write of the Tensor)
    node = t._acc
    dicts = [getattr(t, a) for a in TENSOR_DICTS]
    dicts += [getattr(node, k.node_attr) for k in NODE_KEYED] if node is not None else []
    return all(d is None or type(d) in _watch.WATCHED for d in dicts)


def _fixed_point(plan, entry):
    """Whether every state array the program writes has the aval of the input it replaces
    (the next call, on what this one wrote, has the same key)."""
    ins, outs = entry.jaxpr.in_avals, entry.jaxpr.out_avals
    grads_in = set(plan.grads_in)
    pos, p = [], 0
    for i in range(len(plan.tensors)):
        pos.append((p, p + 1 if i in grads_in else None))
        p += 2 if i in grads_in else 1
    n = plan.n_walk
    if any(i < n for i in entry.grad_none):
        return False
    for i, k in entry.data_out:
        if i < n and outs[k] != ins[pos[i][0]]:
            return False
    for i, k in entry.grad_out:
        if i < n and outs[k] != ins[pos[i][1]]:
            return False
    for i, k, _ in entry.grad_new:
        if i < n and (pos[i][1] is None or outs[k] != ins[pos[i][1]]):
            return False
    for (start, _, td, _), (out_def, spec) in zip(plan.opt_trees, entry.opt_out):
        if type(td) is not _Split or out_def != td[1]:
            return False
        base = start + td[2]
        for j, (kind, k) in enumerate(spec):
            if kind == "out" and outs[k] != ins[base + j]:
                return False
    return True


def written(plan):
    """A Replay of what ``_run`` just wrote (taken before host hooks run: what they change
    fails the next check)."""
    r = Replay()
    b = r.basis = plan.basis
    tensors = b.tensors
    # what the next call compares by identity (held, so no new object can take an id):
    # each Tensor's ``.grad``, and the program's state inputs as the next call passes
    # them, each Tensor's array (computed: the plan or the last check read each) and its
    # ``.grad``'s
    arrs = list(map(_ARR, tensors))
    if Pending in map(type, arrs) or Host in map(type, arrs):
        arrs = [t._data for t in tensors]
    r.grads = list(map(_GRAD, tensors))
    r.flat = _state_flat(arrs, r.grads) if b.grads else arrs
    # and each Tensor's flags and attributes (``_META``): copied after a planned call
    # (equal to the flags the program was keyed on, or the next check fails), else the
    # last check's with the ``.grad``s the program made
    meta = plan.meta
    if meta is None:
        meta = [(rg, fn, dict(d)) for rg, fn, d in map(_META, tensors)]
        if list(map(_FLAGS, tensors)) != b.flags:
            meta = None
    else:   # the check's: the program changed no attribute but the ``.grad``s it made
        n = len(tensors)
        for i, _, _ in b.entry.grad_new:
            if i < n:
                meta[i][2]["_grad"] = tensors[i]._grad
    r.meta = meta
    r.states = [opt._flat_state() for opt in b.optimizers]
    r.groups, r.hp_leaves = plan.groups, plan.hp_leaves
    r.rng = _KEY.peek()
    # taken last: reading a deferred array above is not a write the next check must see
    # (None: flags unlike the key's, which no check passes)
    r.writes = None if meta is None else _WRITES[0]
    return r


def _state_flat(arrs, grads):
    """The program's state inputs: each Tensor's array, then its ``.grad``'s where it has one."""
    flat = []
    for d, g in zip(arrs, grads):
        flat.append(d)
        if g is not None:
            flat.append(g._data)
    return flat


def check(cf, r, args, kwargs):
    """The plan for this call if it may re-run ``r``'s program on what ``r`` recorded;
    else None."""
    b = r.basis
    found = b.found
    if cf._found is not found:
        return None
    # the plain Python values the program was traced with (``_compile.guards``)
    if cf._guards and cf._guards.values() != b.guarded:
        return None
    epoch = _EPOCH[0]
    moved = epoch != b.epoch
    # the walk holds (``_Walk.holds``): the same roots, the same unwatched snapshot; the
    # counter is the one it was planned at (the optimizers' ``layouts`` are read below,
    # with their groups). Else the full check (it follows new helpers, compares
    # attributes precisely, and where the counter moved, the watched dicts)
    roots = cf._roots._read()
    if moved or len(roots) != len(b.roots) or not all(map(is_, roots, b.roots)) or \
            found.unwatched and _snapshot(found.unwatched) != found.snap:
        cf._discover(_module_cls())
        if cf._found is not found:
            return None
        # a change elsewhere (an eager step's hooks, ``ModTracker``, another Module's
        # attribute, the trace of this program): the state Tensors' hooks as keyed?
        if moved:
            if list(map(_tensor_hooks, b.tensors)) != b.hooks:
                return None
            b.epoch = epoch
    del roots
    if _context_key(_gm.enabled, _saved_state) != b.ctx:
        return None
    tensors = b.tensors
    wrote = _WRITES[0] != r.writes
    if not wrote:   # no Tensor written since: the state as it was left
        flat = list(r.flat)
    else:
        flat = _state_as_left(tensors, r)
        if flat is None:
            return None
    got = _options(cf, r, wrote)
    if got is None:
        return None
    groups, hp_leaves = got
    rng = _KEY.peek()
    if rng is not r.rng and (rng is None or rng.dtype != b.rng_dtype):
        return None
    got = _arguments(b, args, kwargs)
    if got is None:
        return None
    arg_tensors, arg_data, raw = got
    flat.extend(arg_data)
    for hp, state in zip(hp_leaves, r.states):
        flat.extend(hp)
        flat.extend(state.leaves)
    flat.extend(raw)
    plan = _Plan()
    plan.flat = flat
    plan.tensors = tensors + arg_tensors if arg_tensors else tensors
    plan.optimizers = b.optimizers
    plan.opt_trees = b.opt_trees
    plan.rng = rng
    plan.basis = b
    plan.groups, plan.hp_leaves = groups, hp_leaves
    plan.meta = r.meta
    plan.replayed = True
    return plan


def _options(cf, r, wrote):
    """``(group records, hyper-parameter leaves)`` of the optimizers now, if each holds the
    state the last call left and its options key the same program; else None. ``wrote``:
    whether a Tensor was written since (a Tensor option, e.g. ``lr``, may have changed)."""
    b = r.basis
    groups, hp_leaves = r.groups, r.hp_leaves
    for i, opt in enumerate(b.optimizers):
        if opt._flat_state() is not r.states[i]:
            return None
        # the same option objects (its groups' ``"params"`` lists too, which count their
        # changes: the walk's ``layouts`` hold), none a Tensor written since?
        same = _same_options(opt.param_groups, groups[i][1])
        if same and not (wrote and groups[i][2]):
            continue
        if not same:
            # new options (an LR schedule's, a list of params rebound): does the walk hold?
            cf._discover(_module_cls())
            if cf._found is not b.found:
                return None
            rec = group_record(opt)
            if groups is r.groups:
                groups = list(groups)
            if rec[0] == groups[i][0] and not (wrote and rec[2]):
                groups[i] = rec
                continue   # equal values: the same hyper-parameter leaves
            groups[i] = rec
        # new values (e.g. an LR schedule's), or a Tensor option written: the same program?
        hp = _hparams_if_same_key(opt, b.opt_keys[i], b.opt_trees[i][2])
        if hp is None:
            return None
        hp_leaves = list(hp_leaves) if hp_leaves is r.hp_leaves else hp_leaves
        hp_leaves[i] = hp
    return groups, hp_leaves


def _arguments(b, args, kwargs):
    """``(Tensors, their arrays, array arguments)`` of this call if its arguments key
    ``b``'s program as the last call's did; else None."""
    if len(args) != b.n_args or (tuple(kwargs) != b.kw_names if kwargs else b.kw_names):
        return None
    arg_tensors, arg_data, raw = [], [], []
    for v, (kind, cls, key, plain) in zip(
            itertools.chain(args, kwargs.values()) if kwargs else args, b.args):
        if type(v) is not cls:
            return None
        if kind == "T":
            data = v._data
            if isinstance(data, _Tracer):
                return None
            if plain is None or _FLAGS(v) != plain[0] or v._grad is not None or \
                    _aval_of(data) != plain[1]:
                if _tensor_key(v, key[0]) != key:
                    return None
            arg_tensors.append(v)
            arg_data.append(data)
        elif kind == "A":
            if _arg_array_key(v) != key:
                return None
            raw.append(v)
        elif v != key:
            return None
    if arg_tensors:
        ids = set(map(id, arg_tensors))
        # one Tensor passed twice (keyed differently), or a state Tensor passed
        if len(ids) != len(arg_tensors) or not ids.isdisjoint(b.found.state.tensor_ids):
            return None
    return arg_tensors, arg_data, raw


def _state_as_left(tensors, r):
    """The state Tensors' arrays (and ``.grad``s') if each is the object the last call left
    and their flags and attributes are equal; else None."""
    if not all(map(is_, map(_GRAD, tensors), r.grads)):
        return None
    flat = list(map(_ARR, tensors))
    if r.basis.grads:
        flat = _state_flat(flat, r.grads)
    if not all(map(is_, flat, r.flat)):
        return None
    # then the flags, and the attributes holding the others (``.grad`` the same object:
    # compared by identity; an attribute no key reads that fails to compare fails it)
    try:
        if r.meta is None or list(map(_META, tensors)) != r.meta:
            return None
    except Exception:  # noqa: BLE001 - an attribute's ``==`` raised: not the same
        return None
    return flat


def _hparams_if_same_key(opt, opt_key, treedef):
    """The optimizer's hyper-parameter leaves now, if they key the same program."""
    tree, leaves, now = _opt_tree(opt)
    if now != treedef or _opt_key(opt, tree, leaves) != opt_key:
        return None
    return leaves[:now[2]]
