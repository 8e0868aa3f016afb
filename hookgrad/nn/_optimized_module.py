"""``hookgrad.compile(model)`` and ``Module.compile()``: a Module's forward as one XLA program.

Unlike ``hookgrad.compile(step)``, which traces a whole training step, this compiles only
the forward, so an eager training loop stays as it is::

    cmodel = hookgrad.compile(model)          # an OptimizedModule
    loss = crit(cmodel(x), y)                 # one compiled forward, one node
    loss.backward()                           # one compiled backward for that node
    opt.step()

Per call signature (shapes, dtypes and ``requires_grad`` of the Tensor arguments and of
the parameters and buffers, the other arguments, grad mode, every submodule's
``training`` flag) the forward is traced once in functional mode under ``jax.vjp`` and
jitted: the program returns the outputs, the buffers the forward wrote, the advanced PRNG
key and the vjp's residuals. The outputs get one node, ``CompiledFunctionBackward`` (the
name PyTorch gives AOTAutograd's node), whose edges lead to the parameters'
``AccumulateGrad`` and to the inputs' graph; its backward is one jitted call of the vjp.
New parameter values (an optimizer step) are new inputs of the same program.

Graph breaks: while a module forward/backward hook (of the model, a submodule or global,
``ModTracker`` included) or a saved-tensor hook is active, the call runs eagerly, so every
hook fires exactly as without compile. A forward that reads a traced value on the host
(``float(t)``, ``.item()``, Python control flow on a Tensor), writes into a Tensor
argument in place or registers a gradient hook on a Tensor or node it makes runs eagerly
for that signature (``fullgraph=True`` raises instead).
"""

import jax
import jax.numpy as jnp

from .._compile import checks as _checks
from .._compile import tune as _tune
from .. import _mode
from .._functional import hooks as _functional
from .._random import GLOBAL as _KEY
from .._compile.host_hook import TracedValueError, _flatten_containers
from .._compile.state import MODULE_COMPILE
from .._ops.dispatch import INEXACT
from .._tensor import Tensor
from .._autograd import grad_mode
from .._autograd.saved import FREED_MESSAGE, hook_state
from .._autograd.graph import _Node
from .._tensor import wrap_as as _wrap_as
from .modules.module import Module
from .. import _errors

__all__ = ["OptimizedModule", "CompiledFunctionBackward"]

_gm = grad_mode._state
_Tracer = jax.core.Tracer
_HOOK_ATTRS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks",
               "_backward_pre_hooks")
# reading a traced value on the host: that signature runs eagerly (a graph break)
_BREAK_ERRORS = (TracedValueError, jax.errors.ConcretizationTypeError,
                 jax.errors.TracerArrayConversionError)
_EAGER = object()  # cache value of a signature that graph-broke while tracing


class _InputWritten(Exception):
    """The forward wrote into one of its Tensor arguments in place (a graph break)."""


class _HookInForward(Exception):
    """The forward registered a gradient hook on a Tensor or node it made (a graph break:
    traced into the backward program, the hook's Python would run once, not per call)."""


class CompiledFunctionBackward(_Node):
    """The node of a compiled forward's outputs: its backward is one jitted vjp call."""

    __slots__ = ("_entry", "_vjp", "_freed")

    def __init__(self, edges, entry, vjp):
        super().__init__(tuple(edges))
        self._entry, self._vjp, self._freed = entry, vjp, False

    def name(self):
        return "CompiledFunctionBackward"

    def _out_meta(self):
        return self._entry.diff_meta

    def _release(self):
        self._vjp, self._freed = None, True

    def _apply(self, grads, create_graph):
        if create_graph:
            raise RuntimeError("torch.compile with aot_autograd does not currently support "
                               "double backward")
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        cts = [g._data if g is not None else jnp.zeros(s, d)
               for g, (s, d) in zip(grads, self._entry.diff_meta)]
        res = self._entry.bwd(self._vjp, cts)
        out = []
        for e, g in zip(self._next, res):
            out.append(Tensor._wrap(g) if e is not None else None)
        return out


class _Entry:
    """One traced signature: the jitted forward and backward and how to read their outputs."""

    __slots__ = ("fwd", "bwd", "res_tree", "diff_meta", "out_spec", "build", "writes",
                 "key_out", "jaxpr", "checks", "check_out", "check_src")


def _state_slots(mod):
    """Every parameter and buffer of ``mod`` once (tied ones with all their slots):
    a list of ``(tensor, [(owner dict, attr), ...], is_buffer)``."""
    seen = {}
    out = []
    for m in mod.modules(remove_duplicate=True):
        for kind in ("_parameters", "_buffers"):
            d = m.__dict__[kind]
            for attr, t in d.items():
                if t is None:
                    continue
                k = id(t)
                if k not in seen:
                    seen[k] = len(out)
                    out.append((t, [], kind == "_buffers"))
                out[seen[k]][1].append((d, attr))
    return out


def _hooked(mod):
    from .modules._global_hooks import _has_any_global_hook
    if hook_state.stack or hook_state.mutation_ctx is not None or _has_any_global_hook():
        return True
    for m in mod.modules():
        d = m.__dict__
        for a in _HOOK_ATTRS:
            if d.get(a):
                return True
    return False


def _raise_fullgraph(e):
    """A graph break under ``fullgraph=True``: the error, with what to change."""
    if isinstance(e, _InputWritten):
        what = "writes into a Tensor argument in place; return a new Tensor"
    elif isinstance(e, _HookInForward):
        what = ("registers a gradient hook on a Tensor or node it makes; register it outside "
                "the forward (on the output or a parameter)")
    else:
        raise e
    raise RuntimeError(f"hookgrad.compile(model, fullgraph=True): the forward {what} "
                       "instead, or compile without fullgraph") from None


def _substitute(slots, arrs):
    """Put a Tensor holding the traced array in every slot of every parameter and buffer."""
    subs = []
    for (t, where, _), arr in zip(slots, arrs):
        s = _traced_like(t, arr)
        s.__dict__.update({a: t.__dict__[a] for a in ("persistent", "_is_buffer")
                           if a in t.__dict__})
        subs.append(s)
        for d, attr in where:
            d[attr] = s
    return subs


def _traced_like(v, arr):
    """``arr`` as an argument in ``v``'s place: a Tensor of ``v``'s type and requires_grad."""
    if not isinstance(v, Tensor):
        return arr
    t = type(v)._wrap(arr)
    t._requires_grad = v._requires_grad
    return t


def _written(slots, subs, arrs):
    """``(slot index, new array, version bumps)`` of each parameter or buffer the forward
    wrote in place or rebound."""
    out = []
    for k, ((_, where, _), sub, arr) in enumerate(zip(slots, subs, arrs)):
        now = where[0][0].get(where[0][1])
        if isinstance(now, Tensor) and (now is not sub or now._data is not arr):
            out.append((k, now._data, max(now._version, 1)))
    return out


def _split_outputs(result, entry, differentiable):
    """The forward's result as (arrays of the outputs that require grad, other arrays);
    ``entry.out_spec``/``entry.build`` rebuild it."""
    res, entry.build = _flatten_containers(result)
    d_out, other, spec = [], [], []
    for v in res:
        if isinstance(v, Tensor):
            if differentiable and v._requires_grad and v._data.dtype in INEXACT:
                spec.append(("D", len(d_out), type(v)))
                d_out.append(v._data)
            else:
                spec.append(("O", len(other), type(v)))
                other.append(v._data)
        elif isinstance(v, (jax.Array, _Tracer)):
            spec.append(("A", len(other)))
            other.append(v)
        else:
            spec.append(("S", v))
    entry.out_spec = spec
    return d_out, other


class _CompiledForward:
    """Calls ``call`` (the Module's eager call) through cached XLA programs; ``mod`` owns
    the parameters and buffers that become the programs' inputs."""

    def __init__(self, mod, call, *, fullgraph=False, options=None):
        self._mod = mod
        self._call = call
        self._fullgraph = fullgraph
        self._options = options or {}
        self._cache = {}
        self._key_data = None   # (typed key, its raw data): unwrapping a key costs ~1 ms
        self.trace_count = 0

    def __call__(self, *args, **kwargs):
        mod = self._mod
        if _mode.state.compiling or _mode.state.backend is not None or _hooked(mod):
            return self._call(*args, **kwargs)   # inlined into the outer trace, or hooks
        leaves, rebuild = _flatten_containers((args, kwargs))
        slots = _state_slots(mod)
        flat, dyn, key = [], [], [_gm.enabled]
        for t, _, is_buf in slots:
            flat.append(t._data)
            key.append((t._data.shape, t._data.dtype, t._requires_grad, is_buf))
        for i, v in enumerate(leaves):
            if isinstance(v, Tensor):
                dyn.append(i)
                flat.append(v._data)
                key.append(("T", type(v), v._data.shape, v._data.dtype, v._requires_grad))
            elif isinstance(v, (jax.Array, jax.core.Tracer)):
                dyn.append(i)
                flat.append(v)
                key.append(("A", v.shape, v.dtype))
            else:
                try:
                    hash(v)
                    key.append(("S", type(v), v))
                except TypeError:
                    key.append(("id", id(v)))
        if any(isinstance(a, _Tracer) for a in flat):
            return self._call(*args, **kwargs)   # under an outer JAX transformation
        key.append(tuple(m.training for m in mod.modules()))
        rng = _KEY.get()
        key.append(rng.dtype)
        key = tuple(key)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(key, mod, slots, leaves, dyn, rebuild, flat, rng)
        if entry is _EAGER:
            return self._call(*args, **kwargs)
        return self._run(entry, slots, leaves, dyn, flat, rng)

    # ---- tracing
    def _trace(self, key, mod, slots, leaves, dyn, rebuild, flat, rng):
        # NOTE: one trace in one place: snapshot, bind, run under jax.vjp, collect, restore.
        entry = _Entry()
        n_state = len(slots)
        grad_on = _gm.enabled
        inputs = [t for t, _, _ in slots] + [leaves[i] for i in dyn]
        diff = [k for k, t in enumerate(inputs) if grad_on and isinstance(t, Tensor)
                and t._requires_grad and t._data.dtype in INEXACT]
        impl = jax.random.key_impl(rng)
        call = self._call

        def run(arrs, key_data):
            """The forward on traced arrays: (differentiable outputs, everything else)."""
            subs = _substitute(slots, arrs)
            new_leaves = list(leaves)
            for j, i in enumerate(dyn):
                new_leaves[i] = _traced_like(leaves[i], arrs[n_state + j])
            prev_key = _KEY.peek()
            key_in = jax.random.wrap_key_data(key_data, impl=impl)
            _KEY.set(key_in)
            try:
                a, k = rebuild(new_leaves)
                # NOTE: hook boundaries made while tracing (a global count: one made by
                # another thread meanwhile costs a needless graph break, not a wrong result)
                hooks_before = _functional.boundaries[0]
                col = _checks.collector(_checks.current_trace())
                _checks.TRACED.stack.append(col)
                try:
                    with _mode.functional_mode():
                        result = call(*a, **k)
                finally:
                    _checks.TRACED.stack.pop()
                if _functional.boundaries[0] != hooks_before:
                    raise _HookInForward
                if any(isinstance(new_leaves[i], Tensor) and
                       new_leaves[i]._data is not arrs[n_state + j] for j, i in enumerate(dyn)):
                    raise _InputWritten
                writes = _written(slots, subs, arrs)
                key_now = _KEY.peek()
            finally:
                _KEY.set(prev_key)
                for (t, where, _) in slots:
                    for d, attr in where:
                        d[attr] = t
            d_out, other = _split_outputs(result, entry, grad_on and bool(diff))
            entry.writes = [(k_, ver) for k_, _, ver in writes]
            other.extend(arr for _, arr, _ in writes)
            entry.key_out = key_now is not key_in
            if entry.key_out:
                other.append(jax.random.key_data(key_now))
            _checks.collect(entry, col, other)   # index checks: last (hookgrad._compile.checks)
            return d_out, other

        def fwd(arrs, key_data):
            if not diff:
                d_out, other = run(arrs, key_data)
                return d_out, other, None

            def f(*d):
                full = list(arrs)
                for k, v in zip(diff, d):
                    full[k] = v
                return run(full, key_data)
            d_out, vjp, other = jax.vjp(f, *[arrs[k] for k in diff], has_aux=True)
            # the residuals as a flat list: a pytree of plain arrays keeps both calls on
            # jit's C++ fast path
            res, entry.res_tree = jax.tree_util.tree_flatten(vjp)
            return d_out, other, res

        jitted = _tune.jit(fwd, (), self._options) if self._options else jax.jit(fwd)
        try:
            traced = jitted.trace(flat, jax.random.key_data(rng))
        except (_InputWritten, _HookInForward, *_BREAK_ERRORS) as e:
            if self._fullgraph:
                _raise_fullgraph(e)
            self._cache[key] = _EAGER
            return _EAGER
        self.trace_count += 1
        return self._keep(key, entry, jitted, traced, diff)

    def _keep(self, key, entry, jitted, traced, diff):
        """``entry`` filled from the program ``jitted`` traced (and its backward, where
        something is differentiable), cached under ``key``."""
        entry.jaxpr = traced.jaxpr
        entry.check_src = _checks.sources(entry, traced.jaxpr)
        entry.fwd = jitted
        entry.diff_meta = tuple((v.aval.shape, v.aval.dtype)
                                for v in traced.jaxpr.jaxpr.outvars[:sum(
                                    1 for s in entry.out_spec if s[0] == "D")])
        if diff:
            tree = entry.res_tree
            entry.bwd = jax.jit(lambda res, cts: jax.tree_util.tree_unflatten(tree, res)(cts))
        self._cache[key] = entry
        return entry

    # ---- running
    def _run(self, entry, slots, leaves, dyn, flat, rng):
        cached = self._key_data
        if cached is not None and cached[0] is rng:
            data = cached[1]
        else:
            data = jax.random.key_data(rng)
            self._key_data = (rng, data)
        d_out, other, vjp = entry.fwd(flat, data)
        if entry.check_out is not None:   # an index out of range raises before any write
            if not _checks.proved(entry, flat):
                _checks.verify(entry, None, flat, other)
            other = other[:-1]
        if entry.key_out:
            new_key = jax.random.wrap_key_data(other[-1], impl=jax.random.key_impl(rng))
            _KEY.set(new_key)
            self._key_data = (new_key, other[-1])
        n_o = len(other) - len(entry.writes) - (1 if entry.key_out else 0)
        for (k, ver), arr in zip(entry.writes, other[n_o:]):
            t = slots[k][0]
            t._data = arr    # the value the forward wrote into the buffer, as eagerly
            t._version += ver
        node = None
        if d_out:
            inputs = [t for t, _, _ in slots] + [leaves[i] for i in dyn]
            edges = []
            for t in inputs:
                if isinstance(t, Tensor) and t._requires_grad and t._data.dtype in INEXACT:
                    edges.append(t._edge())
            node = CompiledFunctionBackward(edges, entry, vjp)
        out = []
        for s in entry.out_spec:
            if s[0] == "D":
                t = _wrap_as(s[2], d_out[s[1]])
                t.grad_fn, t._output_nr, t._requires_grad = node, s[1], True
                out.append(t)
            elif s[0] == "O":
                out.append(_wrap_as(s[2], other[s[1]]))
            elif s[0] == "A":
                out.append(other[s[1]])
            else:
                out.append(s[1])
        return entry.build(out)


class OptimizedModule(Module):
    """What ``hookgrad.compile(model)`` returns: ``model`` with a compiled forward.

    ``_orig_mod`` is the original Module (registered as a submodule, so ``state_dict()``
    and ``named_parameters()`` names start with ``_orig_mod.``, as in PyTorch); other
    attributes are read from and written to it, and ``train()``/``eval()`` set its flag.
    Calling it runs the original's forward as one XLA program whose outputs carry one
    ``CompiledFunctionBackward`` node (``trace_count`` tells how many signatures were
    traced). Hooks registered on the OptimizedModule itself run around that node.

    Example::

        >>> cmodel = hookgrad.compile(model)
        >>> loss = F.cross_entropy(cmodel(x), y)
        >>> loss.backward()
        >>> opt.step()
    """

    _opt_mod_attributes = frozenset({"_orig_mod", "_compiled_forward", "forward",
                                     "_super_module_initialized"})

    def __init__(self, mod, *, fullgraph=False, options=None):
        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod
        self._compiled_forward = _CompiledForward(mod, mod.__call__, fullgraph=fullgraph,
                                                  options=options)
        self.forward = self._compiled_forward

    def __call__(self, *args, **kwargs):
        from .modules._global_hooks import _has_any_global_hook
        if _has_any_global_hook():
            _errors.warn(
                "Using `torch.compile(module)` when there are global hooks on modules (e.g., "
                "from `register_module_forward_hook`); this will cause the hooks to fire an "
                "extra time for the `OptimizedModule` created by `torch.compile(module)`. If "
                "this causes undesired behavior, please try using `module.compile()`, or use "
                "the per-module hooks instead")
        return super().__call__(*args, **kwargs)

    def __reduce__(self):
        # a copy compiles the copied module (the compiled programs are not copied)
        f = self._compiled_forward
        return (_rebuild, (self._orig_mod, f._fullgraph, f._options))

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        # Module.__init__ sets the default: the flag is the original's
        if self.__dict__.get("_super_module_initialized"):
            self._orig_mod.training = value

    @property
    def trace_count(self):
        """How many call signatures were traced and compiled."""
        return self._compiled_forward.trace_count

    def __len__(self):
        try:
            return len(self._orig_mod)
        except TypeError:
            raise TypeError(f"{type(self._orig_mod).__name__} does not support len()") from None

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __dir__(self):
        own = self._orig_mod.__dir__()
        return own + [a for a in super().__dir__() if a not in own]


def _rebuild(mod, fullgraph, options):
    return OptimizedModule(mod, fullgraph=fullgraph, options=options)


def compile_module(mod, *, fullgraph=False, options=None):
    """``hookgrad.compile(model)``: an :class:`OptimizedModule`."""
    return OptimizedModule(mod, fullgraph=fullgraph, options=options)


def compile_in_place(mod, *, fullgraph=False, options=None):
    """``model.compile()``: the module's own calls go through the compiled forward."""
    return _CompiledForward(mod, mod._call_impl, fullgraph=fullgraph, options=options)


# how hookgrad.compile(model) and Module.compile() reach this module (they sit below it)
MODULE_COMPILE.update(new=compile_module, in_place=compile_in_place)
