"""Saved-tensor hooks in functional mode: an op as a ``custom_vjp`` that packs what
PyTorch saves and unpacks it in its backward.

A pack hook may keep the very tensor it is given (``pack_hook=lambda t: t``). PyTorch's
saved value then shares the tensor's storage: an in-place write to it after the op
reaches what the unpack hook gets (and what the backward computes with), without the
"modified by an inplace operation" error, as hooks replace the version check. JAX keeps a
``custom_vjp``'s residuals as the values of its forward, so such a packed value is
*watched*: at the end of the ``functional_call`` whose forward recorded it, a tensor
written since hands its value to the op's backward through an identity over the call's
outputs (``hand_on``), whose backward runs before any op's.
"""
import threading

import jax
import numpy as np

from .._tensor import Tensor
from .._autograd.saved import call_unpack_hook
from .._jax_trace import usable
from .._ops import op_node
from .._ops.stages import record as recording
from .hooks import _HookEnv, _gm, _inexact


class _Watched(threading.local):
    def __init__(self):
        self.scopes = []  # per open functional_call: [(tensor, version, box, leaf index)]


watched = _Watched()


def _pack_items(op, res, f, args, saved_pos, result, statics):
    """``(array, requires_grad, source)`` of what an op's node saves, in eager's pack order
    (``record._pack``): the op's pack order (its result, kept inputs, later outputs or the
    kernel's extras), then the other kept inputs. ``source`` is ``"result"``, an argument
    position, or ``("extra", k)``; ``result``: whether the result is packed (an ``OUT``
    op's, or one PyTorch saves though the vjp recomputes it, docs/differences.md: packed
    and unpacked, unused)."""
    outs = res if isinstance(res, tuple) else (res,)
    if op.extras is not None:
        extras = op.extras(*f, **statics)
    else:  # a later output the node saves (adaptive_max_pool2d's indices)
        extras = outs[1:] if len(outs) > 1 else None
    items = []
    for w in op_node._pack_order(op, len(args)):
        if w == "result":
            if result:
                items.append((outs[0], True, w))
        elif isinstance(w, tuple):
            if extras is not None and w[1] <= len(extras):
                items.append((extras[w[1] - 1], False, w))
        elif w in saved_pos:
            items.append((f[w], args[w]._requires_grad, w))
    done = {s for _, _, s in items}
    items += [(f[i], args[i]._requires_grad, i) for i in saved_pos if i not in done]
    if op.save is op_node.OUT and "result" not in done:
        items.append((outs[0], True, "result"))
    return items


def with_saved_hooks(op, key, fn, args, arrs, hooks):
    """Run ``op`` as a custom_vjp whose forward packs what PyTorch saves for backward
    (with the active pack hook) and whose backward unpacks it and runs the op's vjp.
    Returns ``(result, box)``; ``watch(box, args, outputs, out)`` once the outputs exist."""
    pack, unpack = hooks
    save = op.save
    tpos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    want = tuple(i for i in tpos if args[i]._requires_grad and _inexact(arrs[i].dtype))
    needed = recording.needed_inputs(save, args)
    saved_pos = [] if save is op_node.OUT else [
        i for i in tpos if recording.keeps(save, i, needed, arrs[i].dtype)]
    layout = tuple("S" if i in saved_pos else ("C" if i not in tpos
                                               else (arrs[i].shape, arrs[i].dtype))
                   for i in range(len(args)))
    statics = dict(key)
    result = save is op_node.OUT or "result" in op_node._pack_order(op, len(args))
    box = {"aliases": (), "late": {}}

    def full(xs):
        f = list(arrs)
        for i, x in zip(tpos, xs):
            f[i] = x
        return f

    @jax.custom_vjp
    def call(*xs):
        return fn(*full(xs))

    def fwd(*xs):
        f = full(xs)
        res = fn(*f)
        packed, given = [], []
        for arr, rg, src in _pack_items(op, res, f, args, saved_pos, result, statics):
            t = Tensor._wrap(arr)
            t._requires_grad = rg and _inexact(arr.dtype)
            packed.append(pack(t))
            given.append((t._data, src))
        leaves, tree = jax.tree_util.tree_flatten(packed)
        is_arr = [isinstance(v, (jax.Array, jax.core.Tracer, np.ndarray)) for v in leaves]
        box["tree"], box["is_arr"] = tree, is_arr
        box["static"] = [v for v, a in zip(leaves, is_arr) if not a]
        box["srcs"] = [src for _, src in given]
        # a packed tensor that is the one given (or shares its array): PyTorch's saved
        # value shares the tensor's storage, so later in-place writes reach it
        box["aliases"] = tuple((k, src) for k, v in enumerate(leaves)
                               for arr, src in given if v is arr and not (
                                   isinstance(src, tuple) and op.extras is not None))
        meta = res if isinstance(res, tuple) else (res,)
        box["meta"] = tuple((o.shape, o.dtype) for o in meta)
        return res, tuple(v for v, a in zip(leaves, is_arr) if a)

    def bwd(resid, g):
        vals = _unpack_all(box, resid, unpack)
        gs = g if isinstance(g, tuple) else (g,)
        gs = [gg for gg, (_, dt) in zip(gs, box["meta"]) if dt in op_node.INEXACT]
        cts = {}
        if want and save is op_node.OUT:  # ``op.bwd`` takes and gives JAX's cotangents
            later = [vals[w] for w in op_node._pack_order(op, len(args))
                     if isinstance(w, tuple) and w in vals]  # linalg_eig's eigenvectors
            y = (vals["result"], *later) if later else vals["result"]
            got = op.bwd(y, *gs, **statics)  # per argument, or the one
            cts = {i: got[i] for i in want} if isinstance(got, tuple) else {want[0]: got}
        elif want:
            present = [vals[i] if s == "S" else arrs[i] for i, s in enumerate(layout)
                       if not isinstance(s, tuple)]
            vjp = _jitted_vjp(op, key, layout, want, tuple(dt for _, dt in box["meta"]))
            grads = vjp(*present, *map(op_node._conj, gs))
            cts = {i: op_node._conj(c) for i, c in zip(want, grads)}
        return tuple(cts.get(i) for i in tpos)

    call.defvjp(fwd, bwd)
    return call(*[arrs[i] for i in tpos]), box


def _jitted_vjp(op, key, layout, want, out_dtypes):
    """The op's vjp for these statics, argument layout, wanted positions and output
    dtypes, jitted once: a new function each backward would be traced and lowered again
    on every call. Kept in ``op._vjp_cache`` (cleared when the default dtype changes)."""
    ck = ("functional", key, layout, want, out_dtypes)
    vjp = op._vjp_cache.get(ck)
    if vjp is None:
        # NOTE: jitted, as the eager vjp op runs: a number argument (``x * 2.0``) then
        # reaches the op's forward as an array, as its forward saw it; the vjp takes and
        # gives PyTorch's gradients (conjugates of JAX's cotangents)
        vjp = op._vjp_cache[ck] = jax.jit(op_node._make_vjp(op.fwd, dict(key), layout, want,
                                                             out_dtypes))
    return vjp


def _unpack_all(box, resid, unpack):
    """``{source: array}``: the unpack hook on each packed value, which is the residual
    or, for a watched tensor written since, its value handed on (``hand_on``)."""
    it_a, it_s = iter(resid), iter(box["static"])
    leaves = [next(it_a) if a else next(it_s) for a in box["is_arr"]]
    for k, v in box["late"].items():
        if usable(v):  # else (from an ended trace, or jax.vmap's sibling one) as packed
            leaves[k] = v
    packed = jax.tree_util.tree_unflatten(box["tree"], leaves)
    vals = {}
    with _HookEnv():
        # NOTE: grad mode on, as in a create_graph=True backward: under jax.grad of
        # jax.grad the outer level differentiates through unpack, and an op in grad mode
        # off would stop its gradient (the residuals require grad)
        _gm.enabled = True
        for p, src in zip(packed, box["srcs"]):
            vals[src] = call_unpack_hook(unpack, p)._data
    return vals


def watch(box, args, outs, out):
    """Watch the packed values that alias a tensor of the op (``box["aliases"]``), if a
    ``functional_call`` is open to hand on their writes. ``out``: the tensor an in-place
    op wrote, whose value before the write PyTorch saves as a copy (not watched)."""
    if not box["aliases"] or not watched.scopes:
        return
    scope = watched.scopes[-1]
    for k, src in box["aliases"]:
        if src == "result":
            t = outs[0]
        elif isinstance(src, tuple):
            t = outs[src[1]] if src[1] < len(outs) else None  # an extra: not a tensor's
        else:
            t = args[src]
            if t is out:
                continue
        if t is not None:
            scope.append((t, t._version, box, k))


def open_scope():
    watched.scopes.append([])


def close_scope():
    """End the innermost scope: ``(box, leaf index, array)`` for each watched tensor
    written in place since its op packed it, the array being its value now."""
    scope = watched.scopes.pop()
    return [(box, k, t._data) for t, version, box, k in scope if t._version != version]


def hand_on(tensors, late):
    """Put ``tensors`` (the outputs of a ``functional_call``) through an identity whose
    backward, the first to run, hands each ``(box, leaf index, array)`` of ``late``
    (``close_scope``) to the op backward that unpacks it."""
    traced = []
    for box, k, v in late:
        if isinstance(v, jax.core.Tracer):
            traced.append((box, k, v))
        else:  # a concrete value: the same in every backward
            box["late"][k] = v
    tensors = [t for t in tensors if _inexact(t._data.dtype)]
    if not traced or not tensors:
        return

    @jax.custom_vjp
    def ident(xs, vs):
        return xs

    def fwd(xs, vs):
        return xs, vs

    def bwd(vs, gs):
        for (box, k, _), v in zip(traced, vs):
            box["late"][k] = v
        return gs, tuple(None for _ in vs)

    ident.defvjp(fwd, bwd)
    # NOTE: the values as constants of the backward: as inputs JAX would differentiate
    # through them, and run the backward of ops off the outputs' path (their unpacks)
    new = ident(tuple(t._data for t in tensors),
                tuple(jax.lax.stop_gradient(v) for _, _, v in traced))
    for t, arr in zip(tensors, new):
        t._data = arr
