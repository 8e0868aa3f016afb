"""The sparse and quantized accessors of a Tensor, on hookgrad's Tensors, which are all
dense (strided) and unquantized: each answers as PyTorch's does for such a Tensor.

``to_dense`` and ``dequantize`` return the Tensor (cast where PyTorch casts),
``sparse_dim``/``dense_dim`` give 0 and ``ndim``, and the accessors that need a sparse or
quantized Tensor (``values``, ``indices``, ``q_scale``, ...) raise PyTorch's error for a
strided one. Making sparse or quantized Tensors (``to_sparse``, ``quantize_per_tensor``) is
not implemented.
"""
from __future__ import annotations

import inspect

from .. import _dtype
from .._autograd.grad_mode import is_grad_enabled
from .._tensor import Tensor
from .linalg import mm
from .registry import export

_ANY, _COO = "sparse tensor", "sparse coordinate tensor"
_CSR, _CSC = "sparse row compressed tensor", "sparse column compressed tensor"


def _layout_error(name, layout):
    return RuntimeError(f"{name} expected {layout} layout but got Strided")


def _no_kernel(op, tensor):
    """PyTorch's dispatcher error: no kernel of ``op`` for a dense Tensor's backend."""
    backend = tensor.device.type.upper() if isinstance(tensor, Tensor) else "CPU"
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the '{backend}' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). hookgrad's Tensors are "
        f"dense and unquantized, and aten::{op} needs a sparse or quantized one.")


# PyTorch's parameters after ``input`` (keyword-only after "*")
_PARAMS = {"hspmm": ("mat2", "*", "out"), "hsmm": ("mat2",), "smm": ("mat2",),
           "sspaddmm": ("mat1", "mat2", "*", "beta", "alpha", "out"),
           "saddmm": ("mat1", "mat2", "*", "beta", "alpha", "out"),
           "sparse_mask": ("mask",), "resize_as_sparse_": ("the_template",)}
_DEFAULTS = {"out": None, "beta": 1, "alpha": 1}


def _signature(name):
    params, kind = [inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD)], None
    names = _PARAMS.get(name, ("*", "out") if name.endswith("_copy") else ())
    for p in names:
        if p == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        params.append(inspect.Parameter(p, kind or inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=_DEFAULTS.get(p, inspect.Parameter.empty)))
    return inspect.Signature(params, return_annotation="Tensor")


def _argument_error(name, sig, args, kwargs, error):
    """PyTorch's argument-parser wording for missing arguments; Python's otherwise."""
    missing = [p.name for p in list(sig.parameters.values())[len(args):]
               if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
               and p.name not in kwargs]
    if len(missing) == 1:
        return TypeError(f'{name}() missing 1 required positional arguments: "{missing[0]}"')
    return TypeError(f"{name}(): {error}")


def _raising(name, make_error, doc):
    """A public accessor with PyTorch's signature that raises ``make_error(input)`` for
    every (dense) Tensor."""
    sig = _signature(name)

    def accessor(*args, **kwargs) -> Tensor:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise _argument_error(name, sig, args, kwargs, e) from None
        raise make_error(bound.arguments["input"])
    accessor.__name__ = accessor.__qualname__ = name
    accessor.__doc__ = doc
    accessor.__signature__ = sig
    return accessor


for _name, _layout in (("values", _ANY), ("indices", _COO), ("crow_indices", _CSR),
                       ("col_indices", _CSR), ("ccol_indices", _CSC), ("row_indices", _CSC),
                       ("coalesce", _COO), ("is_coalesced", _COO)):
    def _error(input, _name=_name, _layout=_layout):
        return _layout_error(_name, _layout)
    export(_raising(_name, _error, f"``{_name}()`` of a {_layout}; hookgrad's Tensors are "
                    "strided, so it raises PyTorch's layout error."), function=False)
    if _name not in ("coalesce", "is_coalesced"):
        export(_raising(f"{_name}_copy", _error, f"A copy of ``input.{_name}()``; hookgrad's "
                        "Tensors are strided, so it raises PyTorch's layout error."),
               method=False)

for _name, _where in (("int_repr", "both"), ("q_scale", "both"), ("q_zero_point", "both"),
                      ("q_per_channel_scales", "both"), ("q_per_channel_zero_points", "both"),
                      ("q_per_channel_axis", "both"), ("qscheme", "method"),
                      ("sparse_mask", "method"), ("resize_as_sparse_", "both"),
                      ("hspmm", "function"), ("hsmm", "function")):
    def _error(input, _op="hspmm" if _name == "hsmm" else _name):
        return _no_kernel(_op, input)
    export(_raising(_name, _error, f"``{_name}`` needs a sparse or quantized Tensor; hookgrad's "
                    "are dense and unquantized, so it raises PyTorch's error for those."),
           method=_where != "function", function=_where != "method")


def _sspaddmm_error(input):
    return RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


for _name, _method in (("smm", True), ("sspaddmm", True), ("saddmm", False)):
    export(_raising(_name, _sspaddmm_error, f"``{_name}`` of a sparse matrix; hookgrad's "
                    "Tensors are strided, so it raises PyTorch's error."), method=_method)


@export(method=False, aliases=("spmm",))
def dsmm(input, mat2) -> Tensor:
    """``dsmm(input, mat2)`` (and ``spmm``): the product of a sparse matrix and a dense one;
    with hookgrad's dense Tensors, ``mm(input, mat2)`` (``MmBackward0``), as PyTorch's for
    dense ones."""
    return mm(input, mat2)


@export(function=False)
def sparse_dim(self) -> int:
    """``sparse_dim()``: the number of sparse dimensions, 0 for a strided Tensor."""
    return 0


@export(function=False)
def dense_dim(self) -> int:
    """``dense_dim()``: the number of dense dimensions, all of a strided Tensor's."""
    return self.ndim


@export(function=False)
def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
    """``to_dense(dtype=None)``: a strided Tensor is already dense: ``self`` (cast to
    ``dtype`` when another is given)."""
    return self if dtype is None else self.to(dtype)


def _no_derivative_node():
    # PyTorch's node for an op without a derivative formula ("NotImplemented")
    from .._autograd.error_node import Error
    return type("NotImplemented", (Error,), {
        "__slots__": (), "name": lambda self: "torch::autograd::NotImplemented"})


@export
def dequantize(input) -> Tensor:
    """``dequantize(input)``: a quantized Tensor's values as float32; hookgrad's Tensors are
    unquantized, so ``input`` cast to float32 (itself when it already is).

    As in PyTorch, dequantize has no derivative: on a float32 Tensor that requires grad it
    returns the Tensor with a node that raises when backward reaches it."""
    if not isinstance(input, Tensor):
        raise _no_kernel("dequantize.tensors", None)
    out = input.to(_dtype.float32)
    if out is input and input.requires_grad and is_grad_enabled():
        node = _NO_DERIVATIVE[0]("derivative for dequantize is not implemented",
                                 ((tuple(input.shape), input._data.dtype),))
        node._next = (input._edge(),)
        input.grad_fn, input._output_nr = node, 0
    return out


_NO_DERIVATIVE = [_no_derivative_node()]
