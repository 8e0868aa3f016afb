"""The node an op records, and its backward.

An op's backward is JAX's vjp of its forward, jit-cached per op, static arguments and the
layout of what was saved; with ``create_graph`` the backward is itself run as an op
(``vjp_op``), so its derivative is again JAX's vjp. What an op saves is named here too
(``ALL``, ``OUT``, ``_CONST``), read by the node and by the record stage
(``stages/record.py``).
"""
import enum
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Literal as _Literal

from .._host_value import Host
from .._tensor import Pending, Tensor
from .._watch import Moving as _Moving
from . import lazy as _lazy
from .lazy_layout import LEFT as _LEFT
from .._autograd.saved import FREED_MESSAGE, SavedTensor, unpack_output, unpack_plain
from .._autograd.graph import _Node

KEEP = 2  # ``_unpack``'s ``host`` for a fused region that may run the pending forward too


class _Save(enum.Enum):
    """A named way of saving (compared by identity: ``op.save is ALL``)."""
    ALL = "ALL"
    OUT = "OUT"

    def __repr__(self):
        return self.value


# the node of an overload PyTorch has no derivative formula for: backward reaching it
# raises (``derivative for aten::<op> is not implemented``; ``_NotImplementedNode``)
NOT_IMPLEMENTED = "torch::autograd::NotImplemented"
ALL = _Save.ALL  # save every Tensor argument (default)
OUT = _Save.OUT  # save the output (as PyTorch does for exp, tanh, ...), backward from ``bwd``
INEXACT = frozenset(np.dtype(d) for d in (np.float16, jnp.bfloat16, np.float32, np.float64,
                                          np.complex64, np.complex128))
# ``dispatch.apply``, which runs a backward as an op under ``create_graph`` (dispatch fills it)
APPLY = [None]
# the entered dispatch modes, innermost last (``stages/modes.py``): while any is, a node's
# backward runs as the ATen ops PyTorch's does (``derivatives.run``, which fills the slot)
DISPATCH_MODES = []
DERIVATIVES = [None]
_value, _force = _lazy.value, _lazy.force
_ITER = type(iter([]))  # a node's constants as ``_unpack`` reads them (a list's iterator)


class _SavedNames:
    """What ``saved_names`` lends the nodes (it sits above this module: it reads the op
    table's constants): filled when it is imported, with the op table. ``of_op(op)``: the
    ``_saved_*`` and ``_raw_saved_*`` attribute names of ``op``'s nodes."""

    attribute = listing = pack_order = of_op = None


SAVED_NAMES = _SavedNames()


def expose_saved(op):
    """Give the class of ``op``'s nodes the ``_saved_<name>`` and ``_raw_saved_<name>``
    attributes ``op`` names (PyTorch's node classes have them as properties too), each
    read for the node's own op (``saved_names.saved_attribute``): a class several ops
    share has the attributes of each, and a node whose op lacks one raises
    AttributeError. Nothing until ``saved_names`` has filled ``SAVED_NAMES``; then it
    exposes every op made so far, and each op exposes its own when made.

    NOTE: properties, not a ``__getattr__``: with one, CPython reads no attribute of a node
    through its specialized fast path (the engine reads a few dozen per node)."""
    cls = op._node_cls
    if cls is None or SAVED_NAMES.of_op is None:
        return
    try:
        names = SAVED_NAMES.of_op(op)
    except Exception:  # noqa: BLE001 - names it cannot parse: read as absent
        return
    for attr in names:
        if not any(attr in k.__dict__ for k in cls.__mro__):  # a name of its own stays
            setattr(cls, attr, property(functools.partial(_saved_attribute, attr=attr),
                                        doc=f"PyTorch's ``grad_fn.{attr}``."))


def _saved_attribute(node, attr):
    return SAVED_NAMES.attribute(node, attr)


def _pack_order(op, n):
    """The positions (``"result"``, extras) ``op`` packs in PyTorch's order, of ``n``
    arguments."""
    return SAVED_NAMES.pack_order(op) if op.pack_order is None else op.pack_order(n)


_CONST = object()  # in ``OpNode._stored``: a non-Tensor argument (the value is in _consts)


def _unpack_hooked(node, as_tensors):
    """The values saved-tensor hooks packed, unpacked in PyTorch's order (the pack order:
    ``other`` before ``self`` for mm, atan2, ...): ``{argument position: value}``. Packed
    extras (``Op.extras``) and a packed result are unpacked in their place too, though the
    vjp reads neither (a result changed in place fails here, as PyTorch's)."""
    stored, extra, result = node._stored, node._extra, node._out_saved
    order = [w for w in _pack_order(node._site.op, len(stored))
             if w.__class__ is int or extra is not None and w.__class__ is tuple
             or w == "result" and result.__class__ is SavedTensor]
    order += [i for i in range(len(stored)) if i not in order]
    vals = {}
    for i in order:
        if i.__class__ is tuple:  # ("extra", k): output k of the kernel
            extra[i[1] - 1].unpack(node, False)
        elif i.__class__ is str:
            result.unpack(node, False)
        elif i < len(stored) and stored[i].__class__ is SavedTensor:
            vals[i] = stored[i].unpack(node, as_tensors)
    return vals


class NodeSite:
    """What every node recorded at one op site (``lazy.Site``: one op on one signature)
    with the same ``want`` shares, kept once, which its nodes point to (``OpNode._site``)
    instead of holding each field: ``op``; ``key``, its statics; ``want``, the argument
    positions with an edge; ``vkey``, the vjp's cache key (``vjp_key``); ``meta``, the
    output's aval (a tuple of them for an op of several outputs); ``fusable``, whether a
    fused region may take its nodes (a jittable op of one output: ``_engine/fusion.py``).
    For the record stage's memo (``stages/record.py``) also: ``needed``, the positions
    the dict saving rule needs; ``keep``, the positions kept; ``saves``, whether the
    node saves its result; ``plan``, per argument what the site's nodes do with it
    (``stages/record.py``'s ``_PLAN_*``: an edge or none, kept or its aval, a
    constant), which ``record_at_site`` follows. A node recorded off a site (the deferred
    forward off, an op on host-held values) has one of its own, without the memo's four.

    NOTE: one object per site, not per node: a node is made with one store for these, and
    the backward's plans test one identity per node (``fusion._replay``)."""

    __slots__ = ("op", "key", "want", "vkey", "meta", "fusable", "needed", "keep", "saves",
                 "plan")


def vjp_key(op, key, stored, consts, want):
    """The vjp's cache key of a node of ``op`` (``NodeSite.vkey``): its statics ``key``,
    what it saved (its ``stored``, ``consts``) as a layout, and ``want``: per argument "S"
    (saved), "C" (a constant) or the (shape, dtype) of an unsaved one; an op saving only
    its output has no layout (its vjp reads the output only)."""
    if op.save is OUT:
        return key, want
    if op.save is ALL and consts is None:  # every argument a saved Tensor
        return key, ("S",) * len(stored), want
    layout = ()  # (a loop, no generator: without a site, the record stage runs this per op)
    for s in stored:
        layout += ("S" if s.__class__ is tuple or s.__class__ is SavedTensor else "C"
                   if s is _CONST else (s.shape, s.dtype)),
    return key, layout, want


_NODE_CLASSES = {}


def node_class(name):
    """The class of the nodes named ``name`` (``type(y.grad_fn).__name__ == "MulBackward0"``,
    as code that draws graphs reads it): one ``OpNode`` subclass per name, shared by ops
    that record the same name. PyTorch's ``torch::autograd::CopySlices`` is class
    ``CopySlices``."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        short = name.rpartition("::")[2]
        base = _NotImplementedNode if name == NOT_IMPLEMENTED else OpNode
        cls = _NODE_CLASSES[name] = type(short, (base,), {"__slots__": (),
                                                         "__module__": "hookgrad.autograd"})
    return cls


class OpNode(_Node):
    """The node an op records: rebuilds the op's arguments from what was saved and runs
    the op's vjp."""

    # ``_site``: the fixed fields this node shares with its op site's (``NodeSite``)
    __slots__ = ("_site", "_stored", "_consts", "_out_saved", "_has_saved", "_freed",
                 "_extra")

    def name(self):
        return self._site.op.node

    def __dir__(self):
        # the class has the saved attributes of every op recording it: this node's own
        own = set(SAVED_NAMES.listing(self))
        return sorted(own.union(a for a in object.__dir__(self)
                                if not a.startswith(("_saved_", "_raw_saved_"))))

    def _out_meta(self):
        m = self._site.meta  # an aval, or a tuple of them for a multi-output op
        return m if m.__class__ is tuple else (m,)

    def _release(self):
        # dropping the saved values frees them (and whatever pack hooks returned); the
        # node remembers it was freed, so a second backward raises PyTorch's error
        if self._has_saved:
            self._freed = True
            self._stored = self._out_saved = self._extra = None

    def _keys(self):
        """``(want, vjp key)`` worked out again from the node's edges and saved values:
        the record stage works them out as it classifies the arguments (and keeps them on
        the node's ``NodeSite``); tests compare the two."""
        site = self._site
        op = site.op
        stored = self._stored
        want = []
        edges = self._next
        if len(edges) == len(stored) and not op.nondiff:  # an edge per argument
            for i, e in enumerate(edges):
                if e is not None:
                    want.append(i)
        else:  # edges skip constants (unless scalar_edges) and non-differentiable inputs
            k = 0
            for i, s in enumerate(stored):
                if s is _CONST:
                    if i in op.scalar_edges:
                        k += 1
                elif i not in op.nondiff:
                    if edges[k] is not None:
                        want.append(i)
                    k += 1
        want = tuple(want)
        return want, vjp_key(op, site.key, stored, self._consts, want)

    def _unpack(self, as_tensors, host=False):
        """The vjp's leading arguments: saved values (version-checked) and constants.
        ``host``: a saved value the first tier kept in NumPy is given as it is (a
        ``Host``: the caller's first tier reads it, ``_engine/fusion.py``), else put;
        and a saved layout value left out of its segment's program is given pending;
        ``KEEP`` (a fused region's): so is any value still pending (its forward may run
        in the region's program)."""
        if self._site.op.save is OUT:
            s = self._out_saved
            v = unpack_output(s, self, as_tensors) if s.__class__ is tuple \
                else s.unpack(self, as_tensors)
            if v.__class__ is Pending:  # (``lazy.value``, inlined: once per such node)
                x = v.value
                v = x if x is not None and (host or x.__class__ is not Host) else \
                    v if x is None and host == KEEP else _force(v)
            if self._extra is None:
                return [v]
            # the later outputs PyTorch's node saves (linalg_eig's eigenvectors): its
            # backward is a formula of them too (``Op.bwd``)
            return [v, *[_value(unpack_output(e, self, as_tensors)) if e.__class__ is tuple
                         else e.unpack(self, as_tensors) for e in self._extra]]
        vals = []
        consts = self._consts  # (iterated once a constant is met: most nodes have none)
        hooked = None
        stored = self._stored
        # NOTE: where its site's memo says which arguments are kept (``NodeSite.keep``) and
        # no constant or saved-tensor hook is in the way, only those are looked at (the
        # rest are avals, which give no value)
        keep = self._site.keep
        for i in keep if consts is None and keep is not None and self._has_saved != 2 \
                else range(len(stored)):
            s = stored[i]
            if s.__class__ is tuple:
                t = s[1]
                ver = t._ver  # NOTE: ``t._version``, inlined (a ``_watch.Moving`` is read now)
                if ver.__class__ is _Moving:
                    ver = ver.value()
                if as_tensors or ver != s[2] or not t._requires_grad and s[3]:
                    # rebuild a Tensor, or raise (modified, or a non-leaf detached in place)
                    vals.append(_value(unpack_plain(s, self, as_tensors)))
                else:
                    v = s[0]
                    if v.__class__ is Pending:  # (``host``: one left out of its segment
                        # stays pending, for the fused program to rebuild: ``lazy_layout``)
                        v = v.value if v.value is not None and (
                            host or v.value.__class__ is not Host) else v if host and \
                            v.value is None and (host == KEEP or v.saved == _LEFT) \
                            else _force(v)
                    vals.append(v)
            elif s is _CONST:
                if consts.__class__ is not _ITER:
                    consts = iter(consts)
                vals.append(next(consts))
            elif s.__class__ is SavedTensor:
                if hooked is None:
                    hooked = _unpack_hooked(self, as_tensors)
                vals.append(hooked[i])
        s = self._out_saved
        if s.__class__ is tuple:  # the results PyTorch saves: changed in place, they fail
            unpack_output(s, self, False)
            for s in self._extra or ():
                unpack_output(s, self, False)
        return vals

    def _apply(self, grads, create_graph):
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        site = self._site
        want = site.want
        if not want:
            return [None] * len(self._next)
        meta = site.meta
        if meta.__class__ is not tuple:
            g = grads[0]
            if g is None:
                g = Tensor._wrap(jnp.zeros(meta.shape, meta.dtype))
            gs = (g,)
        else:  # multi-output: zeros for missing grads of differentiable outputs
            gs = []
            for i, m in enumerate(meta):
                if m.dtype in INEXACT:
                    g = grads[i]
                    gs.append(g if g is not None else Tensor._wrap(jnp.zeros(m.shape, m.dtype)))
        try:  # (no call once the vjp is made: nearly always)
            vop = site.op._vjp_cache[site.vkey]
        except KeyError:
            vop = vjp_op(self)
        vals = self._unpack(create_graph)
        if create_graph:
            args = (*vals, *gs)
            res = list(APPLY[0](vop, args))
            for k in _constant_outputs(vop, args):
                # NOTE: a gradient that does not depend on any input that requires grad
                # (JAX's zero cotangent: copy_'s self, zero_, floor) is PyTorch's
                # zeros_like(grad): a tensor outside the graph, so a second backward
                # does not reach back through it
                res[k] = Tensor._wrap(res[k]._data)
        elif DISPATCH_MODES:
            res = DERIVATIVES[0](self, vals, gs, vop)
        else:
            fn = vop._fwd_cache.get(()) or vop.forward_fn(())
            res = fn(*vals, *[g._data for g in gs])
            res = [Tensor._wrap(r) for r in res]
        if len(want) == len(self._next):
            return list(res)
        out = [None] * len(self._next)
        it = iter(res)
        for k, e in enumerate(self._next):
            if e is not None:
                out[k] = next(it)
        return out


class _NotImplementedNode(OpNode):
    """The node of an overload with no derivative formula (fused chains skip it: its class
    is not a direct ``OpNode`` subclass)."""

    __slots__ = ()

    @property
    def next_functions(self):
        # NOTE: PyTorch records these nodes through its autograd fallback, which links only
        # the inputs that require grad (in order, a repeated one each time); an input that
        # does not, or an argument hookgrad passes as a Tensor (a PRNG key), has no edge
        return tuple((e[0], e[1]) for e in self._next if e is not None)

    def _apply(self, grads, create_graph):
        raise RuntimeError(f"derivative for aten::{self._site.op.name.split('.')[0]} is not "
                           "implemented")


def _constant_outputs(vop, args):
    """Positions of ``vop``'s results that no argument requiring grad flows into."""
    sources = tuple(a.__class__ is Tensor and a._requires_grad for a in args)
    if not any(sources):
        return ()
    vals = [a._data if a.__class__ is Tensor else a for a in args]
    specs = [jax.ShapeDtypeStruct(v.shape, v.dtype) if hasattr(v, "shape") else v
             for v in vals]
    key = (sources, tuple((a.shape, a.dtype) if hasattr(a, "shape") else (type(a), a)
                          for a in specs))
    found = vop._constant_cache.get(key)
    if found is None:
        closed = jax.make_jaxpr(vop.fwd)(*specs)
        # one source flag per traced leaf (a None argument has none)
        leaves = [src for a, src in zip(specs, sources) for _ in jax.tree_util.tree_leaves(a)]
        flows = {v for v, src in zip(closed.jaxpr.invars, leaves) if src}
        for eqn in closed.jaxpr.eqns:  # a sub-program's results follow all its inputs
            if any(v.__class__ is not _Literal and v in flows for v in eqn.invars):
                flows.update(eqn.outvars)
        found = vop._constant_cache[key] = tuple(
            k for k, v in enumerate(closed.jaxpr.outvars)
            if v.__class__ is _Literal or v not in flows)
    return found


def vjp_op(node):
    """The Op computing ``node``'s gradients (for the argument positions its site's
    ``want``)."""
    site = node._site
    op = site.op
    ck = site.vkey
    vop = op._vjp_cache.get(ck)
    if vop is None:
        statics = dict(site.key)
        want = site.want
        if op.save is OUT:

            # (the later outputs it saves, linalg_eig's eigenvectors, are the op's own: a
            # pack order of n arguments adds argument positions only, and a fused region
            # asks after the node released what it stored)
            n = 1 + sum(1 for w in _pack_order(op, 0) if w.__class__ is tuple)

            def fwd(*vals):
                y, gs = (vals[0] if n == 1 else vals[:n]), vals[n:]
                g = op.bwd(y, *[_conj(g) for g in gs], **statics)
                # an op of several inputs gives a gradient per argument (polar's two)
                return tuple(_conj(g[i]) for i in want) if g.__class__ is tuple \
                    else (_conj(g),)
        else:
            fwd = _make_vjp(op.fwd, statics, ck[1], want,
                            [m.dtype for m in node._out_meta()])
        # NOTE: ``type(op)``: Op's module imports this one
        vop = op._vjp_cache[ck] = type(op)(op.name + "_backward", fwd,
                                           _backward_node_name(op.node), jit=op.jit,
                                           promotes=False)
        vop.grad_of = (op, ck)
    return vop


# The node PyTorch records for a backward that is one op on the incoming gradient (what a
# backward under ``create_graph=True`` shows); other backwards record ``<node>Backward``.
_BACKWARD_NODES = {
    "SumBackward0": "ExpandBackward0", "NegBackward0": "NegBackward0",
    "TBackward0": "TBackward0", "TransposeBackward0": "TransposeBackward0",
    "PermuteBackward0": "PermuteBackward0", "ViewBackward0": "ViewBackward0",
    "ReshapeAliasBackward0": "ViewBackward0",
    "UnsqueezeBackward0": "SqueezeBackward1", "SqueezeBackward1": "UnsqueezeBackward0",
    "SelectBackward0": "SelectBackwardBackward0",
    "SliceBackward0": "SliceBackwardBackward0",
}


def _backward_node_name(node):
    return _BACKWARD_NODES.get(node) or node.rpartition("::")[2] + "Backward"


def _make_vjp(f, statics, layout, want, out_dtypes):
    f = functools.partial(f, **statics) if statics else f
    n_present = sum(1 for s in layout if not isinstance(s, tuple))
    diff_out = [dt in INEXACT for dt in out_dtypes]

    def fwd(*vals):
        present, gs = vals[:n_present], vals[n_present:]
        it = iter(present)
        full = [jnp.zeros(s[0], s[1]) if isinstance(s, tuple) else next(it) for s in layout]

        def g(*wanted):
            args = list(full)
            for i, w in zip(want, wanted):
                args[i] = w
            return f(*args)

        primals = [full[i] for i in want]
        out, pullback = jax.vjp(g, *primals)
        git = iter(gs)
        if isinstance(out, tuple):
            cot = tuple(next(git) if d else np.zeros(o.shape, jax.dtypes.float0)
                        for o, d in zip(out, diff_out))
        else:
            cot = next(git)
        res = pullback(jax.tree_util.tree_map(_conj, cot))
        # gradients w.r.t. Python-number operands are dropped by the caller; keep dtypes
        return tuple(_conj(r).astype(p.dtype) if hasattr(p, "dtype") and r.dtype != p.dtype
                     else _conj(r) for r, p in zip(res, primals))
    return fwd


def _conj(g):
    """PyTorch's gradient of a complex value is the conjugate of JAX's cotangent (its
    "Autograd for Complex Numbers" note: ``.grad`` is the conjugate Wirtinger derivative
    of a real loss, ``jax.grad`` its conjugate); conjugating a node's cotangents before
    JAX's vjp and its results after keeps every gradient between nodes, and so every
    hook and ``.grad``, PyTorch's (a no-op for real values)."""
    return jnp.conj(g) if jnp.iscomplexobj(g) else g
