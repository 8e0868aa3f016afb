"""Questions about dtypes and tensors: ``promote_types``, ``result_type``, ``can_cast``,
``is_floating_point``, ``is_signed``, ``is_nonzero``, ``is_same_size``, and the conjugate
and negative bits (never set: hookgrad has no lazy conjugation), with PyTorch's rules."""
from __future__ import annotations

import builtins

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from .registry import FUNCTIONS, export
from .layout import _cast
from .promotion import lift
from .shape import TENSOR_PROPERTIES

_BOOL, _INT, _FLOAT, _COMPLEX = range(4)
_UNSIGNED_WIDE = ("uint16", "uint32", "uint64")


def _category(d):
    if d.name == "bool":
        return _BOOL
    if d.is_complex:
        return _COMPLEX
    return _FLOAT if d.is_floating_point else _INT


def _dtype_arg(fn, pos, name, d):
    if not isinstance(d, _dtype.dtype):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be torch.dtype, not "
                        f"{type(d).__name__}")
    return d


@export(method=False)
def promote_types(type1, type2):
    """``promote_types(type1, type2)``: the smallest dtype both cast to without losing
    their kind (``int8`` and ``uint8`` give ``int16``; ``bfloat16`` and ``float16`` give
    ``float32``)."""
    a = _dtype_arg("promote_types", 1, "type1", type1)
    b = _dtype_arg("promote_types", 2, "type2", type2)
    if a is b:
        return a
    if a.name in _UNSIGNED_WIDE or b.name in _UNSIGNED_WIDE:
        other = b if a.name in _UNSIGNED_WIDE else a
        if other.name != "bool" and not (other.is_floating_point or other.is_complex):
            raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                               f"attempted to promote {_kind(a)} and {_kind(b)}")
    if a.np is None or b.np is None:  # hookgrad/_dtype_lowbit.py: no promotion rules
        what = "quantized numbers" if "qint" in a.name + b.name else "sub-byte and bit types"
        raise RuntimeError(f"promoteTypes with {what} is not handled yet; offending types: "
                           f"{_kind(a)} {_kind(b)}")
    if "float8" in a.name or "float8" in b.name:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to "
                           f"promote {_kind(a)} and {_kind(b)}")
    return _dtype.as_dtype(jnp.promote_types(a.np, b.np))


def _kind(d):
    return _dtype.TORCH_KINDS.get(d.name, d.name)


def _operand_dtype(x):
    """(priority, dtype) of a ``result_type`` operand: a dimensioned Tensor (2), a 0-d
    Tensor (1) or a Python number (0), which counts as the default dtype of its kind."""
    if isinstance(x, Tensor):
        return (2 if x.ndim else 1), x.dtype
    if isinstance(x, builtins.bool):
        return 0, _dtype.bool
    if isinstance(x, builtins.int):
        return 0, _dtype.int64
    if isinstance(x, builtins.float):
        return 0, _dtype.get_default_dtype()
    if isinstance(x, builtins.complex):
        return 0, _dtype.complex64 if _dtype.get_default_dtype() is not _dtype.float64 \
            else _dtype.complex128
    raise TypeError(f"result_type(): argument 'tensor' must be Tensor or Number, not "
                    f"{type(x).__name__}")


def _combine(higher, lower):
    """PyTorch's result of a higher-priority group's dtype with a lower one's (the ops'
    rule, ``promotion.lift``, on NumPy dtypes: every dtype a Tensor can have has one)."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    return _dtype.as_dtype(lift(higher.np, lower.np, _promoted))


def _promoted(a, b):
    # ``pair``'s dtype where both count, with ``promote_types``' refusals (float8)
    return promote_types(_dtype.as_dtype(a), _dtype.as_dtype(b)).np


@export(method=False)
def result_type(tensor, other):
    """``result_type(tensor, other)``: the dtype of an arithmetic op on ``tensor`` and
    ``other`` (Tensors or numbers), by PyTorch's promotion: dimensioned tensors decide
    within a kind, 0-d tensors and numbers only lift the kind."""
    groups = {}
    for x in (tensor, other):
        prio, d = _operand_dtype(x)
        groups[prio] = d if prio not in groups else promote_types(groups[prio], d)
    return _combine(groups.get(2), _combine(groups.get(1), groups.get(0)))


@export(method=False)
def can_cast(from_, to):
    """``can_cast(from_, to)``: whether PyTorch's casting rules allow ``from_`` into ``to``
    (not complex to real, floating to integral, or any non-bool to bool)."""
    a = _dtype_arg("can_cast", 1, "from_", from_)
    b = _dtype_arg("can_cast", 2, "to", to)
    return _category(a) <= _category(b) or (_category(a) == _INT and _category(b) == _INT)


@export
def is_signed(input) -> bool:
    """``is_signed(input)``: whether ``input``'s dtype is a signed one."""
    return input.dtype.is_signed


@export(method=False, name="is_floating_point")
def _is_floating_point(input) -> bool:
    """``is_floating_point(input)``: whether ``input``'s dtype is a floating one."""
    return input.dtype.is_floating_point


@export(method=False, name="is_complex")
def _is_complex(input) -> bool:
    """``is_complex(input)``: whether ``input``'s dtype is a complex one."""
    return input.dtype.is_complex


@export
def is_nonzero(input) -> bool:
    """``is_nonzero(input)``: whether a one-element ``input`` is not zero."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input.item())


@export
def is_same_size(input, other) -> bool:
    """``is_same_size(input, other)``: whether the two shapes are equal."""
    return tuple(input.shape) == tuple(other.shape)


# PyTorch's lazy bits, one row each: a view marked conjugated or negated, read by
# ``is_<bit>`` and materialised by ``resolve_<bit>``. hookgrad conjugates and negates at
# once, so a bit is never set: every query answers False, every resolve returns its input.
_LAZY_BITS = (("conj", "conjugate"), ("neg", "negative"))


def _never_set(bit, word):
    def is_set(input) -> bool:
        return False

    def resolve(input) -> Tensor:
        return input

    is_set.__doc__ = f"``is_{bit}(input)``: False (hookgrad never sets a lazy {word} bit)."
    resolve.__doc__ = (f"``resolve_{bit}(input)``: ``input`` itself (its {word} bit is "
                       "never set).")
    for fn, name in ((is_set, f"is_{bit}"), (resolve, f"resolve_{bit}")):
        fn.__name__ = fn.__qualname__ = name
        export(fn)


for _bit, _word in _LAZY_BITS:
    _never_set(_bit, _word)


@export
def argwhere(input) -> Tensor:
    """``argwhere(input)``: the indices of the non-zero elements, one row each (eager only:
    data-dependent shape)."""
    return FUNCTIONS["nonzero"](input)


@export(method=False, name="detach")
def _detach(input) -> Tensor:
    """``detach(input)``: ``input.detach()``."""
    return input.detach()


# every hookgrad tensor is dense (strided: ``layout.py``); none is nested or an MKL-DNN one
TENSOR_PROPERTIES.update({
    "is_sparse": lambda self: False,
    "is_sparse_csr": lambda self: False, "is_nested": lambda self: False,
    "is_mkldnn": lambda self: False,
})


@export(function=False)
def is_inference(self) -> bool:
    """``is_inference()``: False: hookgrad's ``inference_mode`` is ``no_grad`` and makes no
    inference tensors."""
    return False


# the cast methods PyTorch names by C type: x.char() is x.to(int8)
for _name, _d in (("char", _dtype.int8), ("cfloat", _dtype.complex64),
                  ("cdouble", _dtype.complex128)):
    export(_cast(_d), name=_name, function=False)
