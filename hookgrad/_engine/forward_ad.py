"""``hookgrad.autograd.forward_ad``: forward-mode AD with dual Tensors, as
``torch.autograd.forward_ad``.

A dual Tensor is a hookgrad Tensor carrying a tangent for the current level. While a
level is open, every op of the op table whose inputs carry tangents also runs JAX's
``jax.jvp`` of its forward, and its outputs carry the resulting tangents. Outside the
level tangents are gone (``unpack_dual`` returns ``tangent=None``), as in PyTorch. A custom
``autograd.Function`` gives its outputs the tangents its ``jvp`` returns, checked as
PyTorch checks them (``function_jvp``).

::

    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = model(x)
        jvp = fwAD.unpack_dual(y).tangent
"""
import contextlib
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from .._ops import dispatch
from .._tensor import Tensor

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1
# NOTE: tangents are tagged with the token of the level that made them; a new token per
# level means tangents of an exited level read as absent without walking all Tensors.
_token = [None]
_ACTIVE = dispatch._dual  # read by dispatch.apply: one test when no level is open


def enter_dual_level():
    """enter_dual_level() -> int

    Open a forward-AD level (only one at a time, as in PyTorch) and return it.

    Example::

        >>> level = fwAD.enter_dual_level()
        >>> fwAD.exit_dual_level(level=level)
    """
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    _token[0] = object()
    _ACTIVE[0] = _dual_apply
    return _current_level


def exit_dual_level(*, level=None):
    """exit_dual_level(*, level=None) -> None

    Close the current forward-AD level: every tangent made in it is dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _current_level = level - 1
    _token[0] = None
    _ACTIVE[0] = None


def _tangent(t):
    fw = t.__dict__.get("_fw_grad")
    if fw is None or _ACTIVE[0] is None:  # none, or read while forward AD is off
        return None
    if fw[0] is not _token[0]:  # from a level that was exited
        del t._fw_grad
        return None
    return fw[1]


def _set_tangent(t, tangent):
    t._fw_grad = (_token[0], tangent)


def _size_error(tensor, tangent):
    return RuntimeError("Trying to set a forward gradient that has a different size than that "
                        "of the original Tensor, this is not supported. Tensor is of size "
                        f"{list(tensor.shape)} while the given forward gradient is of size "
                        f"{list(tangent.shape)}.")


@contextlib.contextmanager
def _fw_grad_off():
    """Ops run without forward AD (PyTorch's ``AutoFwGradMode(false)``): a custom
    Function's forward and jvp see dual Tensors' primals only."""
    prev = _ACTIVE[0]
    _ACTIVE[0] = None
    try:
        yield
    finally:
        _ACTIVE[0] = prev


def _alias(tensor):
    """A new Tensor with ``tensor``'s value, backward-differentiable to it."""
    if tensor.requires_grad:
        return tensor.view_as(tensor)
    return Tensor._wrap(tensor._data)


def _is_inexact(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def make_dual(tensor, tangent, *, level=None):
    """make_dual(tensor, tangent, *, level=None) -> Tensor

    A dual Tensor: ``tensor``'s value (a view of it, backward-differentiable) carrying
    ``tangent`` as its forward gradient at ``level`` (default: the current level).

    Example::

        >>> with fwAD.dual_level():
        ...     x = fwAD.make_dual(torch.ones(3), torch.ones(3))
        ...     fwAD.unpack_dual(x * 2).tangent
        tensor([2., 2., 2.])
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level != _current_level:
        raise RuntimeError(f"Invalid level {level}: only the current level {_current_level} "
                           "can be used.")
    if not _is_inexact(tensor):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not _is_inexact(tangent):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tangent.shape != tensor.shape:
        raise _size_error(tensor, tangent)
    if _tangent(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    out = _alias(tensor)
    _set_tangent(out, tangent)
    return out


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)``, as :func:`unpack_dual` returns it."""

    primal: Tensor
    tangent: Optional[Tensor]


def unpack_dual(tensor, *, level=None):
    """unpack_dual(tensor, *, level=None) -> UnpackedDualTensor

    ``(primal, tangent)`` of a dual Tensor: ``primal`` a view of its value without the
    tangent, ``tangent`` its forward gradient (``None`` if it has none at ``level``).

    Example::

        >>> with fwAD.dual_level():
        ...     y = fwAD.make_dual(x, v).sin()
        ...     primal, jvp = fwAD.unpack_dual(y)
    """
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = _tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(_alias(tensor), None)
    return UnpackedDualTensor(_alias(tensor), tangent)


class dual_level(contextlib.ContextDecorator):
    """Context manager (and decorator) for a forward-AD level: dual Tensors made in it
    carry tangents until it exits.

    Example::

        >>> with fwAD.dual_level():
        ...     y = fwAD.make_dual(x, v) ** 2
        ...     jvp = fwAD.unpack_dual(y).tangent
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()


# --------------------------------------------------------------------------- op hook


def _dual_apply(op, args, statics, out):
    """``dispatch.apply`` while a level is open: the op as usual, plus ``jax.jvp`` of its
    forward when an input carries a tangent."""
    tangents = {}
    if op.node is not None:
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and i not in op.nondiff:
                t = _tangent(a)
                if t is not None:
                    tangents[i] = t
    out_tangents = _jvp(op, args, statics, tangents) if tangents else None
    _ACTIVE[0] = None  # NOTE: the op itself runs as outside a level (no re-entry here)
    try:
        res = dispatch.apply(op, args, statics, out)
    finally:
        _ACTIVE[0] = _dual_apply if _current_level >= 0 else None
    if out_tangents is not None:
        outs = res if isinstance(res, tuple) else (res,)
        for o, tan in zip(outs, out_tangents):
            if _is_inexact(o) and tan is not None:
                _set_tangent(o, Tensor._wrap(tan))
    return res


def _jvp(op, args, statics, tangents):
    key = tuple(statics.items()) if statics else ()
    fn = op.forward_fn(key)
    arrs = [a._data if isinstance(a, Tensor) else a for a in args]
    pos = [i for i, a in enumerate(args) if isinstance(a, Tensor) and i not in op.nondiff
           and jnp.issubdtype(a._data.dtype, jnp.inexact)]

    def f(*ps):
        full = list(arrs)
        for i, p in zip(pos, ps):
            full[i] = p
        return fn(*full)
    primals = tuple(arrs[i] for i in pos)
    tans = tuple(tangents[i]._data.astype(arrs[i].dtype) if i in tangents
                 else jnp.zeros_like(arrs[i]) for i in pos)
    _, out_t = jax.jvp(f, primals, tans)
    out_t = out_t if isinstance(out_t, tuple) else (out_t,)
    return [None if t.dtype == jax.dtypes.float0 else t for t in out_t]


# --------------------------------------------------------------------------- custom Functions


def function_tangents(tensor_args):
    """The tangents of a custom Function's Tensor inputs (None each without one), or None
    when no level is open or no input carries one: then ``jvp`` is not called."""
    if _current_level < 0:
        return None
    tans = [_tangent(a) for a in tensor_args]
    return tans if any(t is not None for t in tans) else None


def _root(t):
    return t._base if t._is_view() else t


def function_jvp(ctx, args, tensor_args, tangents, raw, outs, dirty, nondiff):
    """Run a custom Function's ``jvp`` (its ``ctx.apply_jvp``) on the inputs' tangents and
    give its outputs their tangents, with PyTorch's checks on what ``jvp`` returned.

    ``raw`` are the outputs ``forward`` returned, ``outs`` the ones ``apply`` returns
    (an input returned as-is is a view of it there); ``dirty``/``nondiff`` what ``ctx``
    was told."""
    versions = [None if t is None else t._version for t in tangents]
    grads = _jvp_inputs(ctx, args, tensor_args, tangents)
    with _fw_grad_off():
        res = ctx.apply_jvp(*grads)
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(raw):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(raw)} but got {len(res)})")
    for i, g in enumerate(res):
        if g is not None and not isinstance(g, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(g).__name__}) for grad "
                               f"output {i}.")
    index = {id(a): k for k, a in enumerate(tensor_args)}
    dirty_ids = {id(t) for t in dirty}
    nondiff_ids = {id(t) for t in nondiff}
    for i, (r, o, g) in enumerate(zip(raw, outs, res)):
        if not isinstance(r, Tensor):
            continue
        if id(r) in nondiff_ids or not _is_inexact(r):
            if g is not None:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  "
                                   "the corresponding forward output is not a differentiable "
                                   "Tensor.You should return None at that position instead.")
            continue
        if id(r) in dirty_ids:
            _dirty_output_tangent(o, g, index.get(id(r)), tangents, versions)
        elif g is not None:
            _check_view_tangent(o, g, tensor_args, tangents)
            _set_output_tangent(o, g)


def _jvp_inputs(ctx, args, tensor_args, tangents):
    """``jvp``'s arguments: a tangent per Tensor input (zeros for a differentiable input
    without one, unless ``set_materialize_grads(False)``), None for the others."""
    grads, k = [], 0
    for a in args:
        if not isinstance(a, Tensor):
            grads.append(None)
            continue
        t = tangents[k]
        if t is None and ctx.materialize_grads and _is_inexact(a):
            t = Tensor._wrap(jnp.zeros_like(a._data))
        grads.append(t)
        k += 1
    return grads


def _dirty_output_tangent(out, g, k, tangents, versions):
    if k is None:
        raise RuntimeError("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor "
                           "is not an input, there is no need to pass it to mark_dirty().")
    if tangents[k] is None:
        if g is not None:
            _set_output_tangent(out, g)
        return
    if g is None or g._version == versions[k]:
        raise RuntimeError("An inplace custom Function is not modifying the forward mode "
                           "gradients inplace. If the forward is modifying an input inplace, "
                           "then the jvp function must modify the corresponding gradient "
                           "inplace.")
    if g is not tangents[k]:
        raise RuntimeError("An inplace custom Function is not returning the forward mode "
                           "gradients as-is. If the forward is modifying an input inplace, then "
                           "the jvp function must modify the gradient inplace and return it "
                           "as-is.")


def _check_view_tangent(out, g, tensor_args, tangents):
    """An output that is a view of an input with a tangent needs a tangent that is the
    same view of the input's tangent: its base must be that tangent (or, for an input
    that is itself a view, its base's tangent)."""
    if not out._is_view():
        return
    base = out._base
    k = next((k for k, a in enumerate(tensor_args) if _root(a) is base), None)
    if k is None or tangents[k] is None:
        return
    if not g._is_view():
        raise RuntimeError("A custom Function's forward is returning a view (or an input "
                           "as-is) but the jvp is not returning a view.")
    inp = tensor_args[k]
    base_tangent = _tangent(inp._base) if inp._is_view() else None
    # NOTE: a view op's tangent here is computed by jax.jvp, not made a view of its base's
    # tangent as PyTorch makes it, so a view of the input's own tangent is accepted too
    if g._base is _root(tangents[k]):
        return
    if base_tangent is None:
        raise RuntimeError("A custom Function is returning a view but the jvp is not returning "
                           "a view of the given grad input.")
    if g._base is not _root(base_tangent):
        raise RuntimeError("A custom Function is returning a view but the jvp is not returning "
                           "a view of the same base as the given grad input.")


def _set_output_tangent(out, g):
    if tuple(g.shape) != tuple(out.shape):
        raise _size_error(out, g)
    _set_tangent(out, g)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__, "torch.autograd.forward_ad")
