"""Index checks in a compiled step: PyTorch's error for an out-of-range index, raised by
the call after its program ran and before anything is written back.

An op taking indices checks them with ``hookgrad._ops.gather.check_index``. Eagerly the
check raises at once; in a ``hookgrad.compile`` trace the index is a tracer, and the check
hands the trace's :class:`~hookgrad._ops.gather.Collector` a flag and the first bad entry,
both traced. The traced step gets one more output, ``err`` (``[k, bad]``: ``k`` the
number of the first failed check, 1 up, or 0; ``bad`` its first bad entry: :func:`collect`),
and is compiled into up to two programs:

- the one of calls whose checks are proved before the run (:func:`proved`): each checked
  index is an input of the program (a batch of targets or token ids), or that input
  reshaped, sliced or broadcast, whose values lie within the bounds the host recorded
  where it was made (``hookgrad._device.host_bounds``). It is compiled without the checks
  (:func:`unchecked`) and donates as a step without checks does; nothing is read back and
  nothing waits: a training loop fed from host data runs as before;
- the checked one, jitted when a call first needs it (:func:`checked_program`). The call
  reads ``err`` (waiting for the program: one small transfer), and a set flag raises
  ``error(bad)`` before any write-back or host hook (:func:`verify`). Its donated inputs
  are guarded: a buffer is donated only to the output replacing it (a parameter's or
  buffer's, a ``.grad``'s), and that output is ``where(ok, new, old)`` (:func:`guard`),
  so a failed run returns the old value of every buffer it consumed, which the call puts
  back. The optimizer's state is not donated there: its new values feed the parameters'
  update, and guarding them makes XLA recompute them in the parameters' kernels and copy
  the old state first.

A compiled Module's forward (``hookgrad.nn._optimized_module``) collects its checks alike,
into one program that donates nothing, and reads ``err`` unless the checks are proved.
"""
import jax
import jax.extend.core as _jex
import jax.numpy as jnp
import numpy as np

from .. import _jax_trace
from .._device import host_bounds
from .._ops import gather as _gather
from .._ops.gather import TRACED  # noqa: F401 - the collectors' stack (trace pushes on it)
from . import tune as _tune

_Literal = _jex.Literal


# --------------------------------------------------------------------------- tracing


def current_trace():
    """The JAX trace running now (the one a check made now belongs to)."""
    return _jax_trace.current()


def collector(trace):
    """A collector for the trace ``trace``, pushed while the step is traced."""
    return _gather.Collector(trace)


def collect(entry, col, outs):
    """Append the program's ``err`` output for the checks ``col`` collected (if any); the
    entry learns where it is and how each check raises."""
    checks = col.checks
    entry.checks = [c[2] for c in checks]
    if not checks:
        entry.check_out = None
        return
    dt = _gather.check_dtype()
    flags = jnp.stack([c[0] for c in checks])
    first = jnp.argmax(flags)
    code = jnp.where(flags.any(), first + 1, 0).astype(dt)
    bad = jnp.stack([c[1] for c in checks])[first]
    entry.check_out = len(outs)
    outs.append(jnp.stack([code, bad.astype(dt)]))


def sources(entry, jaxpr):
    """For each check, ``(input position, low, high)`` where its index is an input of the
    program as it is, reshaped, sliced, broadcast or widened; None if any check's is not
    (its flag is then always read)."""
    if entry.check_out is None:
        return None
    eqns = [e for e in jaxpr.jaxpr.eqns
            if e.primitive.name in _CALLS and e.params.get("name") == _gather.CHECK_NAME]
    if len(eqns) != len(entry.checks):
        return None
    out = []
    for e, (_, low, high, _) in zip(eqns, entry.checks):
        p = _source(jaxpr.jaxpr, e.invars[0])
        if p is None:
            return None
        out.append((p, low, high))
    return out


_CALLS = ("pjit", "jit", "closed_call", "core_call")
# primitives whose output holds only values of their first operand
_PASS = frozenset(("reshape", "squeeze", "expand_dims", "broadcast_in_dim", "transpose",
                   "slice", "dynamic_slice", "rev", "copy", "copy_p"))


def _source(jaxpr, var):
    """The position of the input of ``jaxpr`` whose values ``var`` takes, or None."""
    inputs = {v: i for i, v in enumerate(jaxpr.invars)}
    made = None
    while True:
        if isinstance(var, _Literal):
            return None
        if var in inputs:
            return inputs[var]
        if made is None:
            made = {v: e for e in jaxpr.eqns for v in e.outvars}
        e = made.get(var)
        if e is None:
            return None
        name = e.primitive.name
        inner = e.params.get("jaxpr")
        if name in _CALLS and isinstance(inner, _jex.ClosedJaxpr):
            i = _source(inner.jaxpr, inner.jaxpr.outvars[e.outvars.index(var)])
            if i is None:
                return None
            var = e.invars[i]
        elif name in _PASS or name == "convert_element_type" and _widens(e):
            var = e.invars[0]
        else:
            return None


def _widens(e):
    a, b = np.dtype(e.invars[0].aval.dtype), np.dtype(e.outvars[0].aval.dtype)
    return a.kind in "iu" and b.kind in "iu" and np.can_cast(a, b, "safe")


# --------------------------------------------------------------------------- donating


def guarded_donations(entry, plan, traced):
    """What the checked program donates (in ``entry.guard``): a state Tensor's array or
    ``.grad``, each to the output replacing it with the same shape and dtype, as ``(input,
    output, ("d" | "g", tensor index))``."""
    ins, outs = traced.jaxpr.in_avals, traced.jaxpr.out_avals
    data_out, grad_out = dict(entry.data_out), dict(entry.grad_out)
    grads_in = set(plan.grads_in)
    pairs = []
    pos = 0
    for i in range(len(plan.state.tensors)):
        if i in data_out:
            pairs.append((pos, data_out[i], ("d", i)))
        pos += 1
        if i in grads_in:
            if i in grad_out:
                pairs.append((pos, grad_out[i], ("g", i)))
            pos += 1
    entry.guard = [g for g in pairs if ins[g[0]] == outs[g[1]]]
    entry.exe_checked = None


def unchecked(fn, entry):
    """``fn`` without ``err`` (its last output; zeros in a sharded step, whose outputs'
    shardings are laid out): the program of calls whose checks are proved, which XLA
    compiles without them."""
    err, dt = entry.check_out, _gather.check_dtype()
    assert err == entry.n_out - 1

    def run(*xs):
        outs = list(fn(*xs))
        if entry.layout is None:
            return outs[:err]
        outs[err] = jnp.zeros(2, dt)
        return outs
    return run


def checked_program(entry):
    """The program run where the checks are not proved before the run, and what it donates:
    the guarded one (:func:`guard`), jitted when first needed."""
    donated = tuple(sorted(p for p, _, _ in entry.guard))
    if entry.exe_checked is None:
        fn = guard(entry.fn, entry) if donated else entry.fn
        entry.exe_checked = _tune.jit(fn, donated, entry.options, entry.layout)
    return entry.exe_checked, donated


def guard(fn, entry):
    """``fn`` whose guarded outputs are their inputs' values where a check failed."""
    pairs = [(p, k) for p, k, _ in entry.guard]
    err = entry.check_out

    def guarded(*xs):
        outs = list(fn(*xs))
        ok = outs[err][0] == 0
        for p, k in pairs:
            outs[k] = jnp.where(ok, outs[k], xs[p])
        return outs
    return guarded


# --------------------------------------------------------------------------- the call


def proved(entry, flat):
    """Whether every check of the program holds on the inputs ``flat``, by their host
    bounds alone (then nothing is read back and no check can fail)."""
    proof = entry.check_src
    if proof is None:
        return False
    for p, low, high in proof:
        b = host_bounds(flat[p]) if p < len(flat) else None
        if b is None or not _gather.within(b, low, high):
            return False
    return True


def verify(entry, plan, flat, res):
    """Raise the first failed check's error, the state as it was before the call (``flat``:
    the program's inputs, ``res``: its outputs; ``plan``: the step's, None for a compiled
    Module's forward, which donates nothing)."""
    err = _read(res[entry.check_out])
    if not err[0]:
        return
    if plan is not None:
        _restore(entry, plan, flat, res)
    raise entry.checks[int(err[0]) - 1][0](int(err[1]))


def _read(arr):
    # waits for the program
    return np.asarray(arr)


def _restore(entry, plan, flat, res):
    """Put back the state whose buffers the run consumed: the guarded outputs hold it."""
    tensors = plan.tensors
    for p, k, (kind, i) in entry.guard:
        old = flat[p]
        if not old.is_deleted():
            continue   # not donated (an alias was held): the state still holds it
        if kind == "d":
            if tensors[i]._data is old:
                tensors[i]._data = res[k]
        else:
            g = tensors[i]._grad
            if g is not None and g._data is old:   # not a .grad this call created
                g._data = res[k]
