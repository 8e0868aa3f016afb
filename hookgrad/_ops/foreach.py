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
from .parser_errors import invalid_arguments
from .pointwise import _lerp
from .pointwise_math import _ADDCDIV, _ADDCMUL, check_addcdiv_operands
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


# --------------------------------------------------------------------------- addcmul, addcdiv, lerp
# Three operands per tensor: ``self``, two lists of Tensors, then a number (``Scalar``),
# a number per tensor (``ScalarList``: a list, or a 1-d Tensor of them, which PyTorch
# reads as numbers) or, for lerp, a Tensor per tensor (``List``). The numbers are operands,
# not statics: an optimizer's step sizes change every step and must not compile anew.
_ADDC_FORMS = ("(tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
               "tuple of Scalars scalars)",
               "(tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
               "Tensor scalars)",
               "(tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
               "Number value = 1)")
_LERP_FORMS = ("(tuple of Tensors self, tuple of Tensors tensors1, Number weight)",
               "(tuple of Tensors self, tuple of Tensors tensors1, tuple of Scalars weight)",
               "(tuple of Tensors self, tuple of Tensors tensors1, tuple of Tensors weights)")
_NUMBER = (int, float, bool, complex)


def _per_tensor_fwd(fn, lists, keyword=None):
    """``fn`` over ``lists`` lists of ``n`` arrays, then one operand (``Scalar``) or ``n``
    (``ScalarList``, ``List``), given to ``fn`` positionally or as ``keyword``."""
    def fwd(*a, n):
        last = a[lists * n:]
        out = []
        for i in range(n):
            w = last[i] if len(last) == n else last[0]
            xs = a[i:lists * n:n]
            out.append(fn(*xs, **{keyword: w}) if keyword else fn(*xs, w))
        return tuple(out)
    return fwd


def _scalars(fname, forms, args, n, other):
    """The last operand of a ternary foreach op as PyTorch reads it: a number, a list of
    ``n`` numbers, or a 1-d Tensor of ``n`` numbers (a 0-d Tensor weight of lerp: a number);
    None where it is a list of Tensors."""
    if isinstance(other, Tensor):
        if other.ndim != 1:
            raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got "
                               f"{other.ndim} instead.")
        if other.shape[0] != n:
            raise RuntimeError(f"Expected length of scalars to match input of length {n} but "
                               f"got {other.shape[0]} instead.")
        return other.tolist()
    if isinstance(other, _NUMBER):
        return other
    if isinstance(other, (list, tuple)) and all(isinstance(o, _NUMBER) for o in other):
        if len(other) != n:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    if isinstance(other, (list, tuple)) and other and all(isinstance(o, Tensor) for o in other):
        return None
    raise invalid_arguments(fname, forms, *args, other)


def _lists(fname, lists):
    """Each list checked as a list of Tensors (positions from 1), all of one length."""
    checked = [_check_list(t, fname, arg, pos)
               for pos, (arg, t) in enumerate(lists, start=1)]
    for t in checked[1:]:
        if len(t) != len(checked[0]):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got "
                               f"{len(checked[0])} and {len(t)}")
    return checked


_MISSING = object()


def _addc_arity(fname, self, tensor1, tensor2, args, kwargs):
    """PyTorch's TypeError for a call no form of ``_foreach_addc*`` takes: a list left out,
    two numbers, or another keyword."""
    if tensor2 is _MISSING or len(args) + len(kwargs) > 1 or \
            kwargs.keys() - {"value", "scalars"}:
        given = [a for a in (self, tensor1, tensor2) if a is not _MISSING]
        # (PyTorch's message lists the keywords sorted)
        raise invalid_arguments(fname, _ADDC_FORMS, *given, *args,
                                **dict(sorted(kwargs.items())))


def _outplace_addc(name, ops, check=None):
    fname = f"_foreach_{name}"
    scalar_op, scalars_op = ops

    def fn(self, tensor1=_MISSING, tensor2=_MISSING, *args, **kwargs) -> tuple[Tensor, ...]:
        _addc_arity(fname, self, tensor1, tensor2, args, kwargs)
        tensors, t1, t2 = _lists(fname, (("self", self), ("tensor1", tensor1),
                                         ("tensor2", tensor2)))
        if check is not None:
            for a, b in zip(t1, t2):
                check(a, b)
        n = len(tensors)
        given = args[0] if args else next(iter(kwargs.values()), 1)
        value = _scalars(fname, _ADDC_FORMS, (self, tensor1, tensor2), n, given)
        if value is None:  # a list of Tensors: no such form
            raise invalid_arguments(fname, _ADDC_FORMS, self, tensor1, tensor2, given)
        if isinstance(value, list):
            return apply(scalars_op, (*tensors, *t1, *t2, *value), {"n": n})
        return apply(scalar_op, (*tensors, *t1, *t2, value), {"n": n})
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"``{fname}(self, tensor1, tensor2, value=1)`` (or ``scalars``: a list or "
                  f"1-d Tensor of numbers): ``{name}`` of each triple, as a tuple, recorded "
                  "as one node.")
    return fn


def _inplace_addc(name):
    fname = f"_foreach_{name}_"

    def fn(self, tensor1=_MISSING, tensor2=_MISSING, *args, **kwargs) -> Sequence[Tensor]:
        _addc_arity(fname, self, tensor1, tensor2, args, kwargs)
        tensors, t1, t2 = _lists(fname, (("self", self), ("tensor1", tensor1),
                                         ("tensor2", tensor2)))
        given = args[0] if args else next(iter(kwargs.values()), 1)
        value = _scalars(fname, _ADDC_FORMS, (self, tensor1, tensor2), len(tensors), given)
        if value is None:
            raise invalid_arguments(fname, _ADDC_FORMS, self, tensor1, tensor2, given)
        values = value if isinstance(value, list) else [value] * len(tensors)
        for x, a, b, v in zip(tensors, t1, t2, values):
            getattr(x, f"{name}_")(a, b, value=v)
        return self
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"``{fname}(self, tensor1, tensor2, value=1)``: ``Tensor.{name}_`` on each "
                  "Tensor of ``self`` (one node per tensor, as PyTorch); returns ``self``.")
    return fn


def _lerp_args(fname, self, tensors1, args, kwargs):
    if len(args) + len(kwargs) != 1 or kwargs.keys() - {"weight", "weights"}:
        raise invalid_arguments(fname, _LERP_FORMS, self, tensors1, *args,
                                **dict(sorted(kwargs.items())))
    tensors, ends = _lists(fname, (("self", self), ("tensors1", tensors1)))
    weight = args[0] if args else next(iter(kwargs.values()))
    if isinstance(weight, Tensor) and weight.ndim == 0:  # PyTorch reads it as a number
        weight = weight.item()
    elif isinstance(weight, Tensor):
        raise invalid_arguments(fname, _LERP_FORMS, self, tensors1, weight)
    w = _scalars(fname, _LERP_FORMS, (self, tensors1), len(tensors), weight)
    if w is None:
        _lists(fname, (("self", self), ("weights", weight)))
        w = list(weight)
    return tensors, ends, w


def _outplace_lerp(scalar_op, scalars_op, list_op):
    def _foreach_lerp(self, tensors1, *args, **kwargs) -> tuple[Tensor, ...]:
        """``_foreach_lerp(self, tensors1, weight)``: ``lerp`` of each pair with ``weight``
        (a number, a list of numbers or a list of Tensors), as a tuple, recorded as one
        node."""
        tensors, ends, w = _lerp_args("_foreach_lerp", self, tensors1, args, kwargs)
        n = len(tensors)
        if not isinstance(w, list):
            return apply(scalar_op, (*tensors, *ends, w), {"n": n})
        return apply(list_op if isinstance(w[0], Tensor) else scalars_op,
                     (*tensors, *ends, *w), {"n": n})
    _foreach_lerp.__qualname__ = "_foreach_lerp"
    return _foreach_lerp


def _foreach_lerp_(self, tensors1, *args, **kwargs) -> Sequence[Tensor]:
    """``_foreach_lerp_(self, tensors1, weight)``: ``Tensor.lerp_`` on each Tensor of
    ``self`` (one node per tensor, as PyTorch); returns ``self``."""
    tensors, ends, w = _lerp_args("_foreach_lerp_", self, tensors1, args, kwargs)
    for i, (x, e) in enumerate(zip(tensors, ends)):
        x.lerp_(e, w[i] if isinstance(w, list) else w)
    return self


for _name, _nodes, _check in (
        ("addcmul", ("ForeachAddcmulBackward0Scalar", "ForeachAddcmulBackward0ScalarList"),
         None),
        ("addcdiv", ("ForeachAddcdivBackward0Scalar", "ForeachAddcdivBackward0ScalarList"),
         check_addcdiv_operands)):
    _fn = (_ADDCMUL if _name == "addcmul" else _ADDCDIV).fwd
    _ops = tuple(defop(f"foreach_{_name}.{form}", _per_tensor_fwd(_fn, 3, "value"), node)
                 for form, node in zip(("Scalar", "ScalarList"), _nodes))
    export(_outplace_addc(_name, _ops, _check), name=f"_foreach_{_name}", method=False)
    export(_inplace_addc(_name), name=f"_foreach_{_name}_", method=False)

export(_outplace_lerp(*(defop(f"foreach_lerp.{form}", _per_tensor_fwd(_lerp, 2), node)
                        for form, node in (("Scalar", "ForeachLerpBackward0Scalar"),
                                           ("ScalarList", "ForeachLerpBackward0ScalarList"),
                                           ("List", "ForeachLerpBackward1List")))),
       name="_foreach_lerp", method=False)
export(_foreach_lerp_, name="_foreach_lerp_", method=False)
