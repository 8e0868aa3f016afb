"""``Function.apply`` on the tape: ``forward`` runs with grad mode (and forward AD) off,
then its outputs are joined to one ``<Name>Backward`` node (dirty inputs rebased onto it,
non-differentiable outputs left out, views and aliases as PyTorch makes them). The
functional backend runs ``forward`` through ``_run_forward`` as well.
"""
from .. import _views
from .._autograd import grad_mode
from .._autograd.saved import SavedTensor
from .._ops import views as _ops_views
from .._tensor import Tensor, typename as _typename
from .. import _errors
from . import forward_ad

_gm = grad_mode._state
_dual = forward_ad._ACTIVE  # dispatch's forward-AD slot: None turns forward AD off


def _is_inexact(arr):
    from .._ops.dispatch import INEXACT  # the op table's notion of differentiable dtypes
    return arr.dtype in INEXACT


def _run_forward(cls, ctx, args, kwargs, has_setup):
    prev, prev_dual = _gm.enabled, _dual[0]
    _gm.enabled = False
    _dual[0] = None  # forward AD off: forward sees primals, its outputs get jvp's tangents
    try:
        if has_setup:
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args, **kwargs)
    finally:
        _gm.enabled, _dual[0] = prev, prev_dual
    return out


def _check_ctx_lists(ctx):
    """The Tensors named by ``mark_dirty``, ``mark_non_differentiable`` and
    ``save_for_backward``, checked before anything is changed."""
    dirty = ctx.dirty_tensors or ()
    for i, t in enumerate(dirty):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"mark_dirty can only accept variables, but argument {i} is of "
                               f"type {_typename(t)}")
    nondiff = ctx.non_differentiable or ()
    for t in nondiff:
        if not isinstance(t, Tensor):
            raise RuntimeError("mark_non_differentiable only accepts variable arguments, but got "
                               f"{_typename(t)}")
    to_save = ctx.to_save
    if to_save is not None:
        for i, t in enumerate(to_save):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {_typename(t)}")
    return dirty, nondiff, to_save


def _alias(t):
    """A new Tensor object on the same data (PyTorch returns a view of an input that a
    Function returns as-is)."""
    return Tensor._wrap(t._data)


def _view_as_self(t):
    """``t.view_as(t)`` without history or tangent: what PyTorch returns for an input a
    Function returns as-is when nothing is differentiable (forward AD checks its tangent
    like any view's)."""
    prev, prev_dual = _gm.enabled, _dual[0]
    _gm.enabled = False
    _dual[0] = None
    try:
        return t.view_as(t)
    finally:
        _gm.enabled, _dual[0] = prev, prev_dual


def _eager_apply(cls, args, kwargs, has_setup):
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    needs = tuple(a._requires_grad if t else False for a, t in zip(args, is_tensor))
    executable = _gm.enabled and any(needs)
    ctx = cls._backward_cls()
    ctx.needs_input_grad = needs
    tensor_args = [a for a, t in zip(args, is_tensor) if t]
    if executable:
        # edges first: a dirty input's old history is what its gradient flows into
        ctx._next = tuple(a._edge() for a in tensor_args)
        ctx._in_info = tuple((tuple(a._data.shape), a._data.dtype) for a in tensor_args)
        ctx._is_tensor = is_tensor

    out = _run_forward(cls, ctx, args, kwargs, has_setup)
    dirty, nondiff, to_save = _check_ctx_lists(ctx)

    multi = isinstance(out, tuple)
    raw = out if multi else (out,)
    for t in dirty:
        _bump_version(t)
    plan = _output_plan(raw, tensor_args, dirty, nondiff, executable)
    outs = []
    for i, (o, p) in enumerate(zip(raw, plan)):  # a loop: the warning's stacklevel counts
        outs.append(o if p is None else _attach_output(ctx, o, i, *p))
    tangents = forward_ad.function_tangents(tensor_args)
    if tangents is not None:  # PyTorch: after the outputs' history, before saving
        forward_ad.function_jvp(ctx, args, tensor_args, tangents, raw, outs, dirty, nondiff)
    if ctx.saved_for_forward is not None:
        ctx.saved_for_forward = None
    if executable:
        ctx._out_info = tuple((tuple(o._data.shape), o._data.dtype) if isinstance(o, Tensor)
                              else None for o in outs)
        if to_save is not None:
            ctx._saved = tuple(None if t is None else SavedTensor(t, t.grad_fn is ctx)
                               for t in to_save)
    ctx.to_save = None
    if dirty:  # as PyTorch, ctx keeps no reference to them (a view's graph would cycle)
        ctx.dirty_tensors = None
    return tuple(outs) if multi else outs[0]


def _output_plan(raw, tensor_args, dirty, nondiff, executable):
    """Every output's fate, ``(is_input, modified, differentiable)`` (None for a
    non-Tensor), decided and checked before any Tensor is changed."""
    input_ids = {id(a) for a in tensor_args}
    dirty_ids = {id(t) for t in dirty}
    nondiff_ids = {id(t) for t in nondiff}
    plan = []
    n_dirty_out = 0
    for o in raw:
        if not isinstance(o, Tensor):
            plan.append(None)
            continue
        oid = id(o)
        is_input = oid in input_ids
        modified = oid in dirty_ids
        n_dirty_out += modified
        diff = executable and oid not in nondiff_ids and _is_inexact(o._data)
        if diff and modified and o.grad_fn is None and o._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")
        if diff and modified and o._is_view():
            _check_dirty_view(o, is_input, len(raw))
        plan.append((is_input, modified, diff))
    if n_dirty_out != len(dirty_ids):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all be "
                           "outputs of the Function.")
    if len(raw) > 1 and any(p is not None and p[1] and p[2] and o._is_view()
                            for o, p in zip(raw, plan)):
        raise RuntimeError(_DIRTY_VIEW_MESSAGE)  # rebasing a view's base needs one output
    return plan


_DIRTY_VIEW_MESSAGE = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change.")


def _attach_output(ctx, o, i, is_input, modified, diff):
    """Output ``i`` as ``apply`` returns it: detached, aliased, or with ``ctx`` as its
    grad_fn (an input modified in place is rebased onto it)."""
    if not diff:
        if o._requires_grad:
            if is_input:
                return o.detach()
            o.detach_()
        elif is_input and not modified:
            return _view_as_self(o)
        return o
    if modified:
        if not is_input:
            _errors.warn("Only input Tensors should be given to ctx.mark_dirty(). If a "
                         "Tensor is not an input, there is no need to pass it to "
                         "mark_dirty().", UserWarning)
        _rebase(o, ctx, i)
        if o._is_view():  # the base's history becomes CopySlices, as for built-in ops
            _ops_views.rebase_base(o._view, ctx)
            _ops_views.regenerate(o._view.grad_base)
        return o
    if is_input:  # returned as-is: a view of the input, as in PyTorch
        src, o = o, _alias(o)
        _ops_views.make_view(o, src, _ops_views.GEOMETRY["alias"])
    if o._is_view():  # in-place changes of it would bypass the Function's backward
        o._view.creation, o._view.fn_name = _views.CUSTOM, (ctx._forward_cls.__name__, i)
    o.grad_fn = ctx
    o._output_nr = i
    o._requires_grad = True
    return o


def _bump_version(t):
    t._version += 1
    if t._view is not None or t._views is not None:
        _views.share_version(t)


def _check_dirty_view(o, is_input, n_outputs):
    if not is_input:
        raise RuntimeError("ctx.mark_dirty() received a tensor that was not an input. Only "
                           "input Tensors that have been mutated should be passed to "
                           "ctx.mark_dirty().")
    _ops_views.check_view_inplace(o, o._view, True)
    if n_outputs > 1:  # the base's CopySlices can wrap a node of one output only
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your "
            "Function cannot return more than one Tensor. This is not supported by the current "
            "autograd engine. You should either make sure the input is not a view (using "
            ".clone() for example) or make your Function only return one Tensor (potentially "
            "splitting it into two Functions: one doing the inplace that returns a single "
            "Tensor and a second one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change.")


def _rebase(t, node, nr):
    """Move ``t``'s history onto ``node`` (an in-place Function), as built-in in-place ops
    do."""
    _ops_views.move_history(t, node, nr)
