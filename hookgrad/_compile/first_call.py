"""A training step's first call, run by the program of the calls after it.

The first call of a training step creates state: ``backward()`` makes each parameter's
``.grad`` and ``opt.step()`` the optimizer's state. The next call reads that state, so its
program has more inputs than the first call's: two programs, each compiled by XLA, for
one loop. Tracing is cheap and compiling is not, so a call whose traced program (P1)
creates state the next call reads does this instead:

1. the created state is made as zeros of the shapes P1 returns it in, and put in place;
2. the step is traced again on it (P2, the program of the calls after this one), and the
   state is put back as it was (no ``.grad``, no optimizer state);
3. P2's equations are matched, in order, to P1's: same primitive and parameters, inputs
   that correspond. Where P2 reads created state, the match says which value of P1 it
   reads there (the optimizer's initial state, computed inside P1); the equations of P1
   left unmatched are those computing it. Created state P2 never reads (a ``.grad`` that
   ``zero_grad()`` drops) can hold anything: the zeros;
4. those values are computed (folded in NumPy where they are constants, as zeros and
   step counts are), and P2 runs this call on them. Its outputs are P1's.

Only P2 is compiled. Where the match fails (the step reads a ``.grad`` before
``zero_grad()``, accumulates into it, an optimizer computes its state from the
parameters), the call runs P1 as before; P2 is cached for the next call either way.
Trace-time effects (plain Python hooks) run in both traces, as they did over the first
two calls before.
"""
import jax
import jax.extend.core as _jex
import numpy as np

from . import trace as _trace
from .._tensor import Tensor
from .state import _opt_install, _Split

try:
    from jax._src.interpreters.partial_eval import dce_jaxpr as _dce
except ImportError:  # noqa: BLE001 - other JAX versions: no folding, no steady first call
    _dce = None

_Literal, _Var = _jex.Literal, _jex.Var


def first_call(cf, plan, entry, args, kwargs):
    """``(plan, entry)`` to run this call with: P2 and inputs that make it compute what
    ``entry`` (P1, traced for ``plan``, not compiled) would; None to run P1."""
    if _dce is None or entry.layout is not None or cf._autotune or cf._sharding:
        return None
    made = _created(plan, entry)
    if made is None:
        return None
    grads, opts = made
    try:
        try:
            _install(plan, grads, opts)
            plan2 = cf._plan(args, kwargs)
            if plan2 is None:
                return None
            entry2 = cf._cache.get(plan2.key)
            traced = entry2 is None
            if traced:
                entry2 = _trace.trace(cf, plan2)
        finally:
            _restore(plan, grads, opts)
    except Exception:  # noqa: BLE001 - P1 is the call's program: its errors are the user's
        return None
    flat = _inputs(plan, entry, plan2, entry2, grads, opts)
    if flat is None:   # P1 runs this call
        if not opts and traced:   # the next call may have P1's key too: P2 traced if not
            del cf._cache[plan2.key]
            cf.trace_count -= 1
        return None
    # NOTE: ``trace_count`` counts the programs kept: P1, never compiled, is dropped (a
    # call with its key, e.g. after the optimizer's state is cleared, comes here again)
    del cf._cache[plan.key]
    cf.trace_count -= 1
    plan2.flat = flat
    return plan2, entry2


# --------------------------------------------------------------------------- 1. created


def _created(plan, entry):
    """The state P1 creates that the next call reads: ``[(tensor index, aval,
    requires_grad)]`` of new ``.grad``s and ``{optimizer index: (state treedef, leaf
    avals)}`` of optimizers whose state it creates from none; None if neither, or if
    it changes state some other way."""
    outs = entry.jaxpr.out_avals
    had = set(plan.grads_in)
    grads = [(i, outs[k], rg) for i, k, rg in entry.grad_new
             if i < plan.n_walk and i not in had]
    opts = {}
    for j, ((start, n, td, _), (out_def, spec)) in enumerate(zip(plan.opt_trees,
                                                                  entry.opt_out)):
        if type(td) is not _Split or out_def == td[1]:
            continue
        if n != td[2] or any(kind != "out" for kind, _ in spec):
            return None  # state grown from some: not a first step
        opts[j] = (out_def, [outs[k] for _, k in spec])
    # NOTE: only in a step holding an optimizer. Without one, a step creating ``.grad``
    # is often one whose caller drops them between calls (``zero_grad()`` outside): its
    # next call has P1's key again, and tracing P2 would only run trace-time hooks twice
    return (grads, opts) if opts or grads and plan.optimizers else None


def _zeros(aval):
    # NOTE: device_put of a NumPy array compiles nothing; jnp.zeros would
    return jax.device_put(np.zeros(aval.shape, aval.dtype))


def _install(plan, grads, opts):
    for i, aval, rg in grads:
        g = Tensor._wrap(_zeros(aval))
        g._requires_grad = rg
        plan.tensors[i]._grad = g
    for j, (treedef, avals) in opts.items():
        plan.optimizers[j]._load_flat_state(treedef, [_zeros(a) for a in avals])


def _restore(plan, grads, opts):
    for i, _, _ in grads:
        plan.tensors[i]._grad = None
    for j in opts:
        start, n, td, _ = plan.opt_trees[j]
        _opt_install(plan.optimizers[j], td, plan.flat[start:start + n])


# --------------------------------------------------------------------------- 2. inputs


def _positions(plan):
    """What each program input is: ("d", i) a Tensor's array, ("g", i) its ``.grad``,
    ("o", j, m) leaf m of optimizer j's leaves, ("a", m) the m-th array argument."""
    grads_in = set(plan.grads_in)
    pos = []
    for i in range(len(plan.tensors)):
        pos.append(("d", i))
        if i in grads_in:
            pos.append(("g", i))
    for j, (_, n, _, _) in enumerate(plan.opt_trees):
        pos.extend(("o", j, m) for m in range(n))
    pos.extend(("a", m) for m in range(len(plan.flat) - len(pos)))
    pos.append(("k",))
    return pos


def _inputs(plan, entry, plan2, entry2, grads, opts):
    """P2's inputs for this call (``plan2.flat`` with the created state's values), or None
    where P2 does not compute P1's outputs from any."""
    if not _same_outputs(plan, entry, plan2, entry2, grads):
        return None
    pos1, pos2 = _positions(plan), _positions(plan2)
    if len(pos1) != len(entry.jaxpr.jaxpr.invars) or \
            len(pos2) != len(entry2.jaxpr.jaxpr.invars):
        return None
    at1 = dict(zip(pos1, entry.jaxpr.jaxpr.invars))
    made = {("g", i) for i, _, _ in grads}
    for j, (_, avals) in opts.items():
        n_hp = plan2.opt_trees[j][2][2]
        made.update(("o", j, n_hp + m) for m in range(len(avals)))
    env, free = {}, {}
    for p, v in zip(pos2, entry2.jaxpr.jaxpr.invars):
        if p in made:
            free[v] = p
        elif p in at1:
            env[v] = at1[p]
        else:
            return None
    bound = _align(entry.jaxpr, entry2.jaxpr, env, free)
    if bound is None:
        return None
    inputs1 = set(entry.jaxpr.jaxpr.invars)
    if any(isinstance(a, _Var) and a in inputs1 for a in bound.values()):
        return None  # state made from an input as it is: the buffers would alias
    values = _evaluate(entry.jaxpr, plan, list(bound.values()))
    flat = list(plan2.flat)
    where = {p: k for k, p in enumerate(pos2)}
    for v, val in zip(bound, values):
        flat[where[free[v]]] = val
    return flat


def _same_outputs(plan, entry, plan2, entry2, grads):
    """Whether P2 writes back what P1 does: the created ``.grad``s as new Tensors, the
    same Tensors written and versions bumped, the same outputs, static results and host
    hooks."""
    new2 = {i for i, _, _ in entry2.grad_new} | set(entry2.grad_none)
    if entry.n_out != entry2.n_out or len(entry.host_calls) != len(entry2.host_calls) or \
            (entry.key_out is None) != (entry2.key_out is None) or \
            len(entry.user_spec) != len(entry2.user_spec) or entry.path != entry2.path or \
            [a[:2] for a in entry.appends] != [a[:2] for a in entry2.appends]:
        return False
    if any(i not in new2 for i, _, _ in grads) or \
            [i for i, _ in entry.data_out] != [i for i, _ in entry2.data_out] or \
            [v[:2] for v in entry.versions] != [v[:2] for v in entry2.versions]:
        return False
    for s1, s2 in zip(entry.user_spec, entry2.user_spec):
        if s1[0] != s2[0] or (s1[0] == "S" and not _same_value(s1[1], s2[1])) or \
                (s1[0] == "T" and s1[2] is not s2[2]):
            return False
    return True


# --------------------------------------------------------------------------- 3. match


def _align(j1, j2, env, free):
    """Match P2's equations to P1's in order (P1 may have more: those computing the state
    P2 takes as input). ``env`` maps P2's variables to P1's; ``free`` holds P2's inputs of
    created state. Returns ``{free input P2 reads: the P1 atom it reads there}`` if every
    P2 output is the P1 output in its place, else None."""
    if len(j1.consts) != len(j2.consts) or \
            any(c1 is not c2 for c1, c2 in zip(j1.consts, j2.consts)):
        return None
    env.update(zip(j2.jaxpr.constvars, j1.jaxpr.constvars))
    bound = {}
    eqns1 = j1.jaxpr.eqns
    k = 0
    for e2 in j2.jaxpr.eqns:
        while True:
            if k == len(eqns1):
                return None
            e1 = eqns1[k]
            k += 1
            if _match(e1, e2, env, free, bound):
                break
            if e1.effects:
                return None  # P1 would do something P2 does not
    if any(e1.effects for e1 in eqns1[k:]):
        return None
    if len(j1.jaxpr.outvars) != len(j2.jaxpr.outvars):
        return None
    new = {}
    for o1, o2 in zip(j1.jaxpr.outvars, j2.jaxpr.outvars):
        if not _same_atom(o1, o2, env, free, bound, new):
            return None
    bound.update(new)
    return bound


def _match(e1, e2, env, free, bound):
    if e1.primitive is not e2.primitive or len(e1.invars) != len(e2.invars) or \
            len(e1.outvars) != len(e2.outvars):
        return False
    if any(a.aval != b.aval for a, b in zip(e1.outvars, e2.outvars)):
        return False
    if not _same_params(e1.params, e2.params):
        return False
    new = {}
    for a1, a2 in zip(e1.invars, e2.invars):
        if not _same_atom(a1, a2, env, free, bound, new):
            return False
    bound.update(new)
    for a1, a2 in zip(e1.outvars, e2.outvars):
        env[a2] = a1
    return True


def _same_atom(a1, a2, env, free, bound, new):
    if isinstance(a2, _Literal):
        return isinstance(a1, _Literal) and a1.aval == a2.aval and _same_value(a1.val, a2.val)
    if a2 in env:
        return env[a2] is a1
    if a2 in free:
        was = bound.get(a2, new.get(a2))
        if was is not None:
            return was is a1
        if a1.aval != a2.aval:
            return False
        new[a2] = a1
        return True
    return False


def _same_params(p1, p2):
    if p1 is p2:
        return True
    if p1.keys() != p2.keys():
        return False
    return all(_same_value(p1[k], p2[k]) for k in p1)


def _same_value(v1, v2):
    if v1 is v2:
        return True
    if type(v1) is not type(v2):
        return False
    if isinstance(v1, (_jex.ClosedJaxpr, _jex.Jaxpr)):
        return str(v1) == str(v2)   # printed with canonical variable names
    if isinstance(v1, (tuple, list)):
        return len(v1) == len(v2) and all(map(_same_value, v1, v2))
    if isinstance(v1, (np.ndarray, np.generic, jax.Array)):
        return v1.shape == v2.shape and v1.dtype == v2.dtype and bool(np.all(v1 == v2))
    try:
        same = v1 == v2
    except Exception:  # noqa: BLE001 - uncomparable: not the same
        return False
    return same is True or (type(same) in (bool, np.bool_) and bool(same))


# --------------------------------------------------------------------------- 4. values


def _evaluate(closed, plan, targets):
    """The values of P1's atoms ``targets`` on this call's inputs: folded in NumPy where
    they are constants, else by running the part of P1 computing them."""
    out = [None] * len(targets)
    need = []
    for n, a in enumerate(targets):
        if isinstance(a, _Literal):
            out[n] = np.asarray(a.val, a.aval.dtype)
        else:
            need.append(n)
    if need:
        jaxpr = closed.jaxpr.replace(outvars=[targets[n] for n in need])
        jaxpr, used = _dce(jaxpr, [True] * len(need), instantiate=True)
        vals = _fold(jaxpr, closed.consts, [None] * len(jaxpr.invars))
        if any(v is None for v in vals):
            inputs = list(plan.flat) + [jax.random.key_data(plan.rng)]
            fn = _jex.jaxpr_as_fun(_jex.ClosedJaxpr(jaxpr, closed.consts))
            vals = jax.jit(fn)(*[x for x, u in zip(inputs, used) if u])
        for n, v in zip(need, vals):
            out[n] = v
    # one buffer each (P2 may donate them), even where two inputs read one value
    seen, vals = set(), []
    for v, a in zip(out, targets):
        if not isinstance(v, np.ndarray) and id(v) in seen:
            v = np.asarray(v)
        seen.add(id(v))
        vals.append(jax.device_put(np.asarray(v, a.aval.dtype)) if isinstance(v, np.ndarray)
                    else v)
    return vals


_CALLS = ("pjit", "jit", "closed_call", "core_call")


def _fold(jaxpr, consts, invals):
    """``jaxpr``'s outputs computed in NumPy from literals alone (None where one needs an
    input or a primitive not folded here): an optimizer's initial state is zeros and
    counts, broadcast and converted."""
    env = dict(zip(jaxpr.invars, invals))
    env.update(zip(jaxpr.constvars, [None] * len(jaxpr.constvars)))

    def read(a):
        return np.asarray(a.val, a.aval.dtype) if isinstance(a, _Literal) else env.get(a)

    for e in jaxpr.eqns:
        ins = [read(a) for a in e.invars]
        outs = [None] * len(e.outvars)
        name = e.primitive.name
        if name in _CALLS and isinstance(e.params.get("jaxpr"), _jex.ClosedJaxpr):
            inner = e.params["jaxpr"]
            outs = _fold(inner.jaxpr, inner.consts, ins)
        elif ins and ins[0] is not None:
            if name == "broadcast_in_dim":
                shape, dims = e.params["shape"], e.params["broadcast_dimensions"]
                src = [1] * len(shape)
                for d, size in zip(dims, ins[0].shape):
                    src[d] = size
                outs = [np.broadcast_to(ins[0].reshape(src), shape)]
            elif name == "convert_element_type":
                outs = [ins[0].astype(e.params["new_dtype"])]
        for v, val in zip(e.outvars, outs):
            env[v] = val
    return [read(a) for a in jaxpr.outvars]
