"""The control-flow operators ``torch.cond`` and ``torch.while_loop``.

Eagerly the predicate is a concrete value: the chosen branch (the loop's body) runs as
ordinary code, recorded node by node, so gradients reach the operands and any tensor the
functions close over. Inside ``hookgrad.compile`` (or a JAX trace) a predicate computed
from traced values has no value: ``cond`` then runs both branches and selects the result
(the unselected branch's gradient is zero), and ``while_loop`` becomes ``jax.lax.while_loop``,
which JAX cannot differentiate in reverse mode (docs/differences.md).
"""
from __future__ import annotations

from typing import Any, Callable

import jax

from ._autograd.grad_mode import no_grad
from ._factory import tensor as _tensor
from ._ops.registry import FUNCTIONS
from ._tensor import Tensor


def _traced(t) -> bool:
    return isinstance(t, Tensor) and isinstance(t._data, jax.core.Tracer)


def _check_pred(pred):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
    elif not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")


def _select(pred, a, b):
    """``a`` where ``pred`` else ``b``, leaf by leaf over matching structures."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
        return type(a)(_select(pred, x, y) for x, y in zip(a, b))
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or a.shape != b.shape or \
            a.dtype != b.dtype:
        raise RuntimeError("cond: the branches must return the same structure of tensors of "
                           f"the same shapes and dtypes; got {_describe(a)} and {_describe(b)}")
    return FUNCTIONS["where"](pred.reshape(()).bool(), a, b)


def _describe(x):
    if isinstance(x, Tensor):
        return f"Tensor{list(x.shape)} of {x.dtype}"
    if isinstance(x, (tuple, list)):
        return f"{type(x).__name__}({', '.join(_describe(v) for v in x)})"
    return type(x).__name__


def cond(pred, true_fn: Callable, false_fn: Callable, operands=()) -> Any:
    """``cond(pred, true_fn, false_fn, operands=())``: ``true_fn(*operands)`` if ``pred``
    (a bool or a one-element tensor) holds, else ``false_fn(*operands)``; differentiable.
    Both functions must return the same structure of tensors."""
    _check_pred(pred)
    if _traced(pred):
        return _select(pred, true_fn(*operands), false_fn(*operands))
    return (true_fn if bool(pred) else false_fn)(*operands)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs) -> Any:
    """``while_loop(cond_fn, body_fn, carried_inputs)``: while ``cond_fn(*carried)`` holds,
    ``carried = body_fn(*carried)``; returns the last ``carried``. ``body_fn`` returns
    values of the same structure as ``carried_inputs``."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried, out = tuple(carried_inputs), carried_inputs
    pred = cond_fn(*carried)
    if _traced(pred):
        return _lax_while(cond_fn, body_fn, carried)
    while bool(pred):
        out = body_fn(*carried)
        carried = _as_tuple(out)
        pred = cond_fn(*carried)
    return out


def _lax_while(cond_fn, body_fn, carried):
    ts = tuple(c if isinstance(c, Tensor) else _tensor(c) for c in carried)
    if any(t.requires_grad for t in ts):
        raise NotImplementedError("hookgrad does not implement torch.while_loop with inputs that "
                                  "require grad inside hookgrad.compile yet: JAX's while_loop "
                                  "has no reverse-mode derivative")

    def wrap(arrays):
        return tuple(Tensor._wrap(a) for a in arrays)

    def test(arrays):
        with no_grad():
            return cond_fn(*wrap(arrays))._data.reshape(()).astype(bool)

    def body(arrays):
        with no_grad():
            new = _as_tuple(body_fn(*wrap(arrays)))
        if len(new) != len(arrays):
            raise RuntimeError(f"while_loop: body_fn returned {len(new)} values for "
                               f"{len(arrays)} carried inputs")
        return tuple((n if isinstance(n, Tensor) else _tensor(n))._data.astype(a.dtype)
                     .reshape(a.shape) for n, a in zip(new, arrays))

    return wrap(jax.lax.while_loop(test, body, tuple(t._data for t in ts)))
