"""Hooks in functional mode: where JAX's AD runs the backward, hooks are ``custom_vjp``s.

Inside ``hookgrad.func.functional_call`` no tape is kept and no engine runs: the program
is differentiated by ``jax.grad``/``jax.vjp`` (and batched by ``jax.vmap``, staged by
``jax.jit``). Each hook becomes a ``jax.custom_vjp`` boundary placed where PyTorch would
call it:

- a tensor hook (``t.register_hook``) replaces ``t``'s array by an identity whose
  backward calls the hooks on the cotangent (a returned Tensor replaces it); all the
  hooks of one tensor share one identity, called in registration order;
- ops still get a ``grad_fn`` (a :class:`FunctionalNode`, holding no saved values): its
  ``register_prehook`` wraps the node's outputs in an identity that calls the pre-hooks
  with ``grad_outputs``; ``register_hook`` recomputes the op inside a ``custom_vjp``
  whose backward calls the hooks with ``(grad_inputs, grad_outputs)``;
- with ``saved_tensors_hooks`` active, an op runs as a ``custom_vjp`` whose forward
  packs what PyTorch saves and whose backward unpacks it and runs the op's vjp
  (``hookgrad._functional.saved``);
- ``register_multi_grad_hook`` wraps its tensors in one identity whose backward calls
  the hook once with all their cotangents;
- a Module with full backward hooks gets ``BackwardHook``'s identity ops around its
  inputs and outputs as ``custom_vjp`` identities (``hookgrad._functional.module``).

What each hook receives and may return, and the checks of its result, are the eager
engine's: both call ``hookgrad._autograd.hooks``.

A hook registered on a tensor covers the uses of that tensor after the registration
(eagerly it sees the gradient from every use): register hooks where the tensor is made.
"""
import threading
import weakref
from collections import OrderedDict

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from .. import _mode
from .._tensor import Tensor
from .._engine import engine
from .._autograd import grad_mode
from .._autograd import hooks as _rules
from .._autograd.graph import MultiGradHandle, _Node, call_multi_grad_hook
from .._handle import RemovableHandle
from .._ops.op_node import _conj

_gm = grad_mode._state


def _inexact(dt):
    return jnp.issubdtype(dt, jnp.inexact)


def _wrap(arr):
    return Tensor._wrap(arr)


class _Open(threading.local):
    def __init__(self):
        self.scopes = []  # graph tasks of functional backwards begun and not yet ended


open_tasks = _Open()


class _HookEnv:
    """Hooks run as in eager backward: grad mode off, functional mode on, in a graph task.

    A hook in a backward whose start no identity saw (the outer level of
    jax.grad(jax.grad(...)): the outputs' cotangent is 0, or a backward outside
    ``functional_call``) gets a graph task of its own, closed when it returns."""

    def __enter__(self):
        self.prev = (_gm.enabled, _mode.state.backend)
        _gm.enabled = False
        _mode.state.backend = _mode.get("functional")
        _mode.count_open(1)
        self.scope = None
        if engine.running_task() is None:
            self.scope = engine.graph_task(keep_graph=True)
            self.scope.open()

    def __exit__(self, exc_type, *exc):
        _gm.enabled, _mode.state.backend = self.prev
        _mode.count_open(-1)
        if self.scope is not None:
            self.scope.close(exc_type is None)


# hook boundaries made so far (tensor / Node pre-hooks, multi-grad hooks: ``_identity``;
# Node post-hooks: ``_wrap_post``): the compiled model form reads it around a trace
boundaries = [0]


def _identity(arrays, on_grads, always=False):
    """``arrays`` through a custom_vjp identity whose backward is
    ``on_grads(list of cotangents, None for symbolic zeros) -> list`` (not called when no
    cotangent arrives, unless ``always``)."""
    live = [i for i, x in enumerate(arrays) if isinstance(x, jax.core.Tracer)]
    if len(live) < len(arrays):
        # NOTE: a concrete array is no input of the differentiated function: no gradient
        # reaches it, as PyTorch's engine never reaches what the inputs do not lead to
        # (through a custom_vjp it would become a traced value JAX's backward passes)
        if not live:
            return tuple(arrays)
        n = len(arrays)

        def on_live(gs):
            full = [None] * n
            for i, g in zip(live, gs):
                full[i] = g
            out = on_grads(full)
            return [out[i] for i in live]
        new = dict(zip(live, _identity(tuple(arrays[i] for i in live), on_live, always)))
        return tuple(new.get(i, x) for i, x in enumerate(arrays))
    boundaries[0] += 1

    @jax.custom_vjp
    def ident(*xs):
        return xs

    def fwd(*xs):
        # NOTE: the forward goes through ``ident`` again, so that an outer AD level
        # (jax.grad of jax.grad) meets this boundary too and runs the hooks in its own
        # backward, as PyTorch's double backward runs them
        return ident(*(x.value for x in xs)), None

    def bwd(_, gs):
        # NOTE: hooks see PyTorch's gradients, the conjugates of JAX's complex cotangents
        gl = [None if isinstance(g, SymbolicZero) else _conj(g) for g in gs]
        if not always and all(g is None for g in gl):
            return tuple(None for _ in gs)
        with _HookEnv():
            new = on_grads(gl)
        return tuple(None if g is None else _conj(g) for g in new)

    ident.defvjp(fwd, bwd, symbolic_zeros=True)
    return ident(*arrays)


# --------------------------------------------------------------------------- tensor hooks


class _TensorHooks:
    """The functional hooks of one array of one tensor: callbacks in registration order."""

    __slots__ = ("data", "callbacks")

    def __init__(self):
        self.data = None
        self.callbacks = []

    def run(self, grads):
        g = grads[0]
        if g is None:
            return [None]
        gt = _wrap(g)
        for cb in tuple(self.callbacks):
            gt = cb(gt)
        return [gt._data]


def _tensor_hooks(t):
    """The hook list of ``t``'s current array, wrapping the array on first use (a leaf,
    or a tensor whose node's outputs cannot be wrapped together)."""
    entry = t.__dict__.get("_fhooks")
    if entry is None or entry.data is not t._data:
        entry = _TensorHooks()
        (new,) = _identity((t._data,), entry.run)
        t._data = new
        entry.data = new
        t._fhooks = entry
    return entry


def _add_tensor_hook(t, hook):
    """Run ``hook(grad) -> Tensor | None`` on ``t``'s gradient, after its earlier hooks:
    in its node's tensor hooks, before the node's pre-hooks, when ``t`` is an op output
    (as the engine orders them), else in an identity of its own. Returns its handle."""
    node = t.grad_fn
    hooks = node._output_hooks(t) if isinstance(node, FunctionalNode) else None
    if hooks is None:
        hooks = OrderedDict()
        _tensor_hooks(t).callbacks.append(_dict_callback(hooks))
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _dict_callback(hooks):
    """A callback running every hook of an eager-style hooks dict (live) in order."""
    return lambda g: _rules.run_tensor_hooks(hooks, g)


def register_tensor_hook(t, hook):
    """``Tensor.register_hook`` in functional mode."""
    return _add_tensor_hook(t, hook)


def attach_eager_hooks(t, hooks):
    """Route ``t``'s gradient through the eagerly registered ``hooks`` dict (a Parameter's
    hooks when ``functional_call`` substitutes its value)."""
    _tensor_hooks(t).callbacks.append(_dict_callback(hooks))


# --------------------------------------------------------------------------- multi-grad hooks


def register_multi_grad_hook(tensors, fn, mode):
    """``register_multi_grad_hook`` in functional mode: one identity over the tensors."""
    tensors = tuple(tensors)
    idx = [i for i, t in enumerate(tensors) if t.requires_grad]
    handle = MultiGradHandle()
    if not idx:
        return handle
    if len(idx) == 1 or len({id(tensors[i]) for i in idx}) == 1:
        # one tensor: the hook joins its tensor's hooks, in registration order
        t = tensors[idx[0]]

        def cb(g):
            if not handle.removed:
                grads = [None] * len(tensors)
                for i in idx:
                    grads[i] = g
                call_multi_grad_hook(fn, mode, grads)
            return g
        _add_tensor_hook(t, cb)
        return handle
    uniq = []
    for i in idx:
        if all(tensors[i] is not tensors[j] for j in uniq):
            uniq.append(i)

    def on_grads(gs):
        if not handle.removed:
            by_id = {id(tensors[i]): g for i, g in zip(uniq, gs)}
            grads = [None if id(t) not in by_id or by_id[id(t)] is None else _wrap(by_id[id(t)])
                     if t.requires_grad else None for t in tensors]
            call_multi_grad_hook(fn, mode, grads)
        return gs

    new = _identity(tuple(tensors[i]._data for i in uniq), on_grads)
    for i, arr in zip(uniq, new):
        tensors[i]._data = arr
    return handle


# --------------------------------------------------------------------------- nodes


class FunctionalNode(_Node):
    """The ``grad_fn`` of an op's outputs in functional mode.

    It keeps no saved tensors and is never run by hookgrad's engine (JAX differentiates);
    its hooks are placed as ``custom_vjp`` boundaries when registered.
    """

    __slots__ = ("_op", "_key", "_args", "_in", "_outs", "_out_data", "_wrapped")

    def __init__(self, op, key, args, arrays, name=None):
        _Node.__init__(self, ())
        self._op = op
        self._key = key
        nondiff = getattr(op, "nondiff", ())  # indices, masks: no edge, as eagerly
        self._args = tuple(_EdgeOf(a, i not in nondiff) if isinstance(a, Tensor) else a
                           for i, a in enumerate(args))
        self._in = tuple(arrays)
        self._outs = ()
        self._out_data = ()
        self._wrapped = False  # whether the identity running the BEFORE hooks is placed
        if name is not None:
            self._op = _Named(name)

    def name(self):
        return self._op.node

    @property
    def next_functions(self):
        return tuple(a.edge() for a in self._args if isinstance(a, _EdgeOf) and a.diff)

    def _outputs(self):
        return [r() for r in self._outs]

    def _out_meta(self):
        return tuple((a.shape, a.dtype) for a in self._out_arrays())

    def _out_arrays(self):
        return [t._data if t is not None else None for t in self._outputs()]

    def _apply(self, grads, create_graph):
        raise RuntimeError("hookgrad's engine cannot run a backward recorded in functional mode "
                           "(inside hookgrad.func.functional_call): differentiate with jax.grad "
                           "or jax.vjp instead")

    def _set_retain_grad(self, tensor):
        # functional mode has no .grad to fill: JAX returns gradients as values
        return None

    def _wrap_outputs(self):
        """Place, once, the identity over this node's outputs whose backward runs the
        hooks that fire before a node (``hooks.FIRES_BEFORE``: its outputs' tensor hooks,
        then its pre-hooks); False if an output was replaced since."""
        if self._wrapped:
            return True
        outs = self._outputs()
        if len(outs) != len(self._out_data) or any(
                t is None or t._data is not a for t, a in zip(outs, self._out_data)):
            return False
        pos = [i for i, t in enumerate(outs) if _inexact(t._data.dtype)]
        self._wrapped = True
        n = len(outs)

        def on_grads(gs):
            full = [None] * n
            for i, g in zip(pos, gs):
                full[i] = None if g is None else _wrap(g)
            full = _rules.run_before(self, full)
            return [None if full[i] is None else full[i]._data for i in pos]

        new = _identity(tuple(outs[i]._data for i in pos), on_grads)
        data = list(self._out_data)
        for i, arr in zip(pos, new):
            outs[i]._data = arr
            data[i] = arr
        self._out_data = tuple(data)
        return True

    def _output_hooks(self, t):
        """The tensor hooks of this node's output ``t``, where the hook table says a node
        holds them (``_tensor_pre_hooks``); None if ``t``'s array is no longer the
        node's output."""
        nr = t._output_nr
        if nr >= len(self._out_data) or self._out_data[nr] is not t._data or \
                not self._wrap_outputs():
            return None
        held = self._tensor_pre_hooks
        hooks = None if held is None else held.get(nr)
        if hooks is None:
            hooks = OrderedDict()
            self._add_tensor_pre_hooks(nr, hooks)
        return hooks

    def register_prehook(self, fn):
        if not self._wrap_outputs():
            raise RuntimeError(f"cannot register a pre-hook on {self.name()} in functional "
                               "mode after its outputs were replaced")
        return _Node.register_prehook(self, fn)

    def register_hook(self, fn):
        if self._post_hooks is None:  # the first: the op becomes the boundary running them
            self._wrap_post()
        return _Node.register_hook(self, fn)

    def _wrap_post(self):
        boundaries[0] += 1
        op = self._op
        if not hasattr(op, "forward_fn"):
            raise NotImplementedError(f"{self.name()}.register_hook is not supported in "
                                      "functional mode")
        fn = op.forward_fn(self._key)
        args = self._args
        tpos = [i for i, a in enumerate(args) if isinstance(a, _EdgeOf)]
        outs = self._outputs()
        opos = [i for i, t in enumerate(outs) if t is not None and _inexact(t._data.dtype)]

        def full_args(xs):
            full = list(args)
            for i, x in zip(tpos, xs):
                full[i] = x
            return full

        def f(*xs):
            r = fn(*full_args(xs))
            return r if isinstance(r, tuple) else (r,)

        @jax.custom_vjp
        def call(*xs):
            return f(*xs)

        def fwd(*xs):
            return call(*xs), xs   # through ``call``: see _identity's fwd

        def bwd(xs, gs):
            outs_now, pull = jax.vjp(f, *xs)
            gs = list(gs)
            with _HookEnv():  # hooks see PyTorch's gradients (conjugates of JAX's)
                go = [None] * len(outs_now)
                for i in opos:
                    go[i] = _wrap(_conj(gs[i]))
                cts = pull(tuple(g if j in opos else np.zeros(o.shape, jax.dtypes.float0)
                                 for j, (g, o) in enumerate(zip(gs, outs_now))))
                gi = [_wrap(_conj(c)) if args[i].requires_grad and _inexact(jnp.result_type(c))
                      else None for i, c in zip(tpos, cts)]
                edges = [j for j, i in enumerate(tpos) if args[i].diff]  # the node's inputs
                for j, g in zip(edges, _rules.run_after(self, [gi[j] for j in edges], go)):
                    gi[j] = g
            return tuple(c if g is None else _conj(g._data) for c, g in zip(cts, gi))

        call.defvjp(fwd, bwd)
        new = call(*[self._in[i] for i in tpos])
        data = list(self._out_data)
        for i in opos:
            outs[i]._data = new[i]
            data[i] = new[i]
        wrapped, self._wrapped, self._out_data = self._wrapped, False, tuple(data)
        if wrapped:  # tensor hooks and pre-hooks stay before the post-hooks
            self._wrap_outputs()


class _Named:
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node


class _EdgeOf:
    """Where an input's gradient would flow (its grad_fn, or its AccumulateGrad)."""

    __slots__ = ("ref", "node", "nr", "requires_grad", "diff")

    def __init__(self, t, diff=True):
        self.diff = diff  # False: an index or mask argument, no input of the node
        self.ref = weakref.ref(t)
        self.node = t.grad_fn
        self.nr = t._output_nr
        self.requires_grad = t._requires_grad

    def edge(self):
        if self.node is not None:
            return (self.node, self.nr)
        t = self.ref()
        if t is None or not self.requires_grad:
            return (None, 0)
        return (t._grad_accumulator(), 0)
