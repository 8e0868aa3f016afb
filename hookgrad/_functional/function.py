"""``Function.apply`` in functional mode: a ``jax.custom_vjp``.

Inside ``hookgrad.func.functional_call`` there is no tape: JAX's own AD differentiates the
arrays. A custom Function then becomes a ``jax.custom_vjp`` built for this call:

- primal: the user's forward on Tensors wrapping the input arrays;
- fwd rule: the same, keeping what ``ctx`` saved (``save_for_backward`` and Tensors
  set as ``ctx`` attributes) as residuals; other ``ctx`` attributes are Python values
  kept by the rule's closure;
- bwd rule: the user's backward on Tensors wrapping the cotangents, its result checked
  and fitted to the inputs as in eager mode.

So ``jax.grad``/``jax.vjp``/``jax.jit``/``jax.vmap`` use the user's backward. Saved-tensor
hooks do not apply here (residuals are JAX's), and non-Tensor arguments are constants.
"""
import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero

from .. import _mode
from .._tensor import Tensor
from .._engine import function as _f
from .._engine import function_apply as _apply


class _FunctionalCtx(_f.FunctionCtx):
    """The ``ctx`` of a Function in functional mode (no graph node behind it)."""

    materialize_grads = True
    to_save = None
    dirty_tensors = None
    non_differentiable = None
    needs_input_grad = None
    _saved = ()

    @property
    def saved_tensors(self):
        return self._saved


_CTX_INTERNAL = frozenset({"to_save", "_saved", "dirty_tensors", "non_differentiable"})


def functional_apply(cls, args, kwargs, has_setup):
    tpos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    if not tpos:
        return _apply._run_forward(cls, _FunctionalCtx(), args, kwargs, has_setup)
    name = cls._backward_cls.__name__
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    in_info = tuple((tuple(args[i]._data.shape), args[i]._data.dtype) for i in tpos)
    box = {}

    def run(arrays, needs):
        targs = list(args)
        for i, arr in zip(tpos, arrays):
            t = Tensor._wrap(arr)
            t._requires_grad = args[i]._requires_grad
            targs[i] = t
        ctx = _FunctionalCtx()
        ctx.needs_input_grad = needs
        with _mode.functional_mode():
            out = _apply._run_forward(cls, ctx, tuple(targs), kwargs, has_setup)
        _apply._check_ctx_lists(ctx)
        box["struct"] = _structure(out, ctx, targs, tpos)
        return ctx, tuple(o._data for o in _tensor_outputs(out))

    def primal(*arrays):
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        return run(arrays, needs)[1]

    def fwd(*primals):
        perturbed = dict(zip(tpos, (p.perturbed for p in primals)))
        needs = tuple(perturbed.get(i, False) for i in range(len(args)))
        ctx, flat = run(tuple(p.value for p in primals), needs)
        saved = ctx.to_save or ()
        attrs = {k: v for k, v in vars(ctx).items()
                 if isinstance(v, Tensor) and k not in _CTX_INTERNAL}
        box["saved_none"] = tuple(s is None for s in saved)
        box["attr_names"] = tuple(attrs)
        box["state"] = {k: v for k, v in vars(ctx).items()
                        if k not in attrs and k not in _CTX_INTERNAL}
        res = (tuple(s._data for s in saved if s is not None),
               tuple(v._data for v in attrs.values()))
        return flat, res

    def bwd(res, cts):
        saved_arrs, attr_arrs = res
        ctx = _FunctionalCtx()
        ctx.__dict__.update(box["state"])
        for k, arr in zip(box["attr_names"], attr_arrs):
            setattr(ctx, k, Tensor._wrap(arr))
        it = iter(saved_arrs)
        ctx._saved = tuple(None if none else Tensor._wrap(next(it)) for none in box["saved_none"])
        grads = _grad_outputs(box["struct"][1], cts, ctx.materialize_grads)
        with _mode.functional_mode():
            got = _f._user_backward(cls)(ctx, *grads)
        got = _f._check_grad_count(name, got, is_tensor)
        out = []
        for k, i in enumerate(tpos):
            g = got[i]
            shape, dtype = in_info[k]
            if g is None or not jnp.issubdtype(dtype, jnp.inexact):
                out.append(None)
            else:
                out.append(_f._reduce_grad(g, shape, dtype, name, k)._data)
        return tuple(out)

    fn = jax.custom_vjp(primal)
    fn.defvjp(fwd, bwd, symbolic_zeros=True)
    flat = fn(*(args[i]._data for i in tpos))
    return _outputs(flat, box["struct"], args)


def _grad_outputs(slots, cts, materialize):
    """The user backward's gradient arguments: one per output, from JAX's cotangents
    (zeros, or None without ``materialize_grads``, where none flows)."""
    grads = []
    cit = iter(cts)
    for slot in slots:
        if not isinstance(slot, tuple):  # a non-Tensor output
            grads.append(None)
            continue
        ct = next(cit)
        shape, dtype, diff = slot[0], slot[1], slot[2]
        if not diff or isinstance(ct, SymbolicZero) or ct.dtype == jax.dtypes.float0:
            grads.append(Tensor._wrap(jnp.zeros(shape, dtype)) if materialize else None)
        else:
            grads.append(Tensor._wrap(ct))
    return grads


def _outputs(flat, struct, args):
    """What ``apply`` returns: the forward's outputs, with the custom_vjp's arrays."""
    multi, slots = struct
    fit = iter(flat)
    outs = []
    for slot in slots:
        if slot is None or isinstance(slot, _Const):
            outs.append(slot.value if slot is not None else None)
            continue
        t = Tensor._wrap(next(fit))
        dirty_pos = slot[3]
        if dirty_pos is not None:  # an in-place Function: the caller's Tensor sees the write
            orig = args[dirty_pos]
            orig._data = t._data
            _apply._bump_version(orig)
            t = orig
        outs.append(t)
    return tuple(outs) if multi else outs[0]


class _Const:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _tensor_outputs(out):
    raw = out if isinstance(out, tuple) else (out,)
    return [o for o in raw if isinstance(o, Tensor)]


def _structure(out, ctx, targs, tpos):
    """(multi, slots): per output, ``(shape, dtype, differentiable, dirty_input_pos)``
    for a Tensor, else ``_Const(value)``."""
    multi = isinstance(out, tuple)
    raw = out if multi else (out,)
    nondiff = {id(t) for t in ctx.non_differentiable or ()}
    dirty = {id(t) for t in ctx.dirty_tensors or ()}
    pos_of = {id(targs[i]): i for i in tpos}
    slots = []
    for o in raw:
        if not isinstance(o, Tensor):
            slots.append(_Const(o) if o is not None else None)
            continue
        diff = id(o) not in nondiff and jnp.issubdtype(o._data.dtype, jnp.inexact)
        dpos = pos_of.get(id(o)) if id(o) in dirty else None
        slots.append((tuple(o._data.shape), o._data.dtype, diff, dpos))
    return multi, slots
