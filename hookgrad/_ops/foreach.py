"""``_foreach_*`` ops: an op over lists of Tensors, as PyTorch's multi-tensor kernels.

Out of place, one op-table row per op and overload records one node for the whole list
(``ForeachExpBackward0``) with an output and a ``next_functions`` edge per tensor, as
PyTorch does. In place (``_foreach_exp_``), each tensor gets the ordinary in-place op
(``ExpBackward0`` per tensor), as in PyTorch, and the list itself is returned.
"""
from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import ALL, apply
from .promotion import tensor_operands
from .registry import METHODS, defop, export

_UNARY = {
    # name: (jnp function, PyTorch's node name)
    "exp": (jnp.exp, "ForeachExpBackward0"),
    "sqrt": (jnp.sqrt, "ForeachSqrtBackward0"),
    "neg": (jnp.negative, "ForeachNegBackward0"),
    "abs": (jnp.abs, "ForeachAbsBackward0"),
    "sin": (jnp.sin, "ForeachSinBackward0"),
    "cos": (jnp.cos, "ForeachCosBackward0"),
    "log": (jnp.log, "ForeachLogBackward0"),
    "log1p": (jnp.log1p, "ForeachLog1PBackward0"),
    "expm1": (jnp.expm1, "ForeachExpm1Backward0"),
    "sigmoid": (jax.nn.sigmoid, "ForeachSigmoidBackward0"),
    "tanh": (jnp.tanh, "ForeachTanhBackward0"),
    "reciprocal": (jnp.reciprocal, "ForeachReciprocalBackward0"),
}
_LINEAR = {"neg"}  # backward needs shapes only: nothing saved

_BINARY = {
    # name: (jnp function, node for (Scalar, Tensor list, Scalar list) operands)
    "add": (jnp.add, ("ForeachAddBackward1Scalar", "ForeachAddBackward0List",
                      "ForeachAddBackward1ScalarList")),
    "sub": (jnp.subtract, ("ForeachSubBackward1Scalar", "ForeachSubBackward0List",
                           "ForeachSubBackward1ScalarList")),
    "mul": (jnp.multiply, ("ForeachMulBackward1Scalar", "ForeachMulBackward0List",
                           "ForeachMulBackward1ScalarList")),
    "div": (jnp.true_divide, ("ForeachDivBackward1Scalar", "ForeachDivBackward0",
                              "ForeachDivBackward1ScalarList")),
    "maximum": (jnp.maximum, ("ForeachMaximumBackward0", "ForeachMaximumBackward0List",
                              "ForeachMaximumBackward1")),
    "minimum": (jnp.minimum, ("ForeachMinimumBackward0", "ForeachMinimumBackward0List",
                              "ForeachMinimumBackward1")),
    "pow": (jnp.power, ("ForeachPowBackward0Scalar", "ForeachPowBackward0",
                        "ForeachPowBackward1")),
}


def _unary_fwd(fn):
    return lambda *xs: tuple(fn(x) for x in xs)


def _scalar_fwd(fn):
    # the scalar comes last: a constant, with no edge
    return lambda *a: tuple(fn(x, a[-1]) for x in a[:-1])


def _lists_fwd(fn):
    def fwd(*a, n, alpha=1):
        return tuple(fn(x, y if alpha == 1 else alpha * y) for x, y in zip(a[:n], a[n:]))
    return fwd


def _scalars_fwd(fn):
    return lambda *a, n: tuple(fn(x, s) for x, s in zip(a[:n], a[n:]))


def _check_list(tensors, fname, arg="self", pos=1):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be tuple of "
                        f"Tensors, not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {pos - 1}, but got "
                            f"{type(t).__name__}")
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(tensors)


def _outplace_unary(name, op):
    fname = f"_foreach_{name}"

    def fn(self) -> tuple[Tensor, ...]:
        return apply(op, tuple(_check_list(self, fname)))
    fn.__name__ = fname
    fn.__doc__ = (f"``{fname}(self)``: ``{name}`` of each Tensor of the list ``self``, as a "
                  f"tuple, recorded as one node.\n\nExample::\n\n"
                  f"    >>> ys = hookgrad.{fname}([a, b])")
    return fn


def _inplace(name):
    fname = f"_foreach_{name}_"

    def fn(self, *args, **kwargs) -> Sequence[Tensor]:
        tensors = _check_list(self, fname)
        n, others = len(tensors), _per_tensor(args, len(tensors), fname)
        for i in range(n):
            getattr(tensors[i], name + "_")(*(o[i] for o in others), **kwargs)
        return self
    fn.__name__ = fname
    fn.__doc__ = (f"``{fname}(self, ...)``: ``Tensor.{name}_`` on each Tensor of ``self`` "
                  "(one node per tensor, as PyTorch); returns ``self``.")
    return fn


def _per_tensor(args, n, fname):
    """Each extra argument as one value per tensor (a list is matched element-wise)."""
    out = []
    for k, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            if len(a) != n:
                if a and isinstance(a[0], Tensor):
                    raise RuntimeError("Tensor lists must have the same number of tensors, "
                                       f"got {n} and {len(a)}")
                raise RuntimeError("Tensor list must have same number of elements as scalar "
                                   "list.")
            out.append(list(a))
        else:
            out.append([a] * n)
    return out


def _outplace_binary(name, ops):
    fname = f"_foreach_{name}"
    scalar_op, lists_op, scalars_op = ops

    def fn(self, other, **kwargs) -> tuple[Tensor, ...]:
        tensors = _check_list(self, fname)
        n = len(tensors)
        alpha = kwargs.pop("alpha", 1)
        if isinstance(alpha, Tensor):  # PyTorch reads a 0-d one as a number
            alpha = alpha.item()
        if kwargs:
            raise TypeError(f"{fname}() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if isinstance(other, Tensor) or not isinstance(other, (list, tuple)):
            if alpha != 1:
                other = other * alpha
            return apply(scalar_op, (*tensors, other))
        if other and all(isinstance(o, Tensor) for o in other):
            _per_tensor((other,), n, fname)
            return apply(lists_op, (*tensors, *other), {"n": n, "alpha": alpha}
                         if alpha != 1 else {"n": n})
        if not all(isinstance(o, (int, float, bool)) for o in other):  # mixed: as torch
            i, o = next((i, o) for i, o in enumerate(other) if not isinstance(o, Tensor))
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(o).__name__}")
        if alpha != 1:
            raise TypeError(f"{fname}() got an unexpected keyword argument 'alpha' for a "
                            "list of scalars")
        _per_tensor((other,), n, fname)
        return apply(scalars_op, (*tensors, *other), {"n": n})
    fn.__name__ = fname
    fn.__doc__ = (f"``{fname}(self, other)``: ``{name}`` of each Tensor of ``self`` with "
                  "``other`` (a number, a list of Tensors or a list of numbers), as a tuple, "
                  "recorded as one node.")
    return fn


for _name, (_fn, _node) in _UNARY.items():
    _op = defop(f"foreach_{_name}", _unary_fwd(_fn), _node, () if _name in _LINEAR else ALL)
    export(_outplace_unary(_name, _op), name=f"_foreach_{_name}", method=False)
    if _name + "_" in METHODS:
        export(_inplace(_name), name=f"_foreach_{_name}_", method=False)

def _others_first(n):
    # PyTorch's ops on two lists save every ``other`` before every ``self`` (NOTE: its
    # pow also packs the results, after them: not here)
    return list(range(n // 2, n)) + list(range(n // 2))


for _name, (_fn, _nodes) in _BINARY.items():
    _fn = tensor_operands(_fn)  # each pair promotes as the op's own: a 0-d one only lifts
    _ops = (defop(f"foreach_{_name}.Scalar", _scalar_fwd(_fn), _nodes[0]),
            defop(f"foreach_{_name}.List", _lists_fwd(_fn), _nodes[1],
                  pack_order=_others_first),
            defop(f"foreach_{_name}.ScalarList", _scalars_fwd(_fn), _nodes[2]))
    export(_outplace_binary(_name, _ops), name=f"_foreach_{_name}", method=False)
    if _name + "_" in METHODS:
        export(_inplace(_name), name=f"_foreach_{_name}_", method=False)
