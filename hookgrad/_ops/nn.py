"""Neural-network ops behind ``hookgrad.nn.functional``: linear, layer_norm, activations,
normalize and distances (losses: ``nn_loss``; layers: ``nn_conv``, ``nn_layers``).

One row per op, math from jax.nn; the backward is JAX's vjp of the forward. Where PyTorch
builds a function from several ops, the fused row carries the name of PyTorch's last node
(``softsign`` -> ``DivBackward0``).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .._autograd import grad_mode
from .. import _dtype, _errors
from .._tensor import Tensor
from .dispatch import _dual, _fm, _lazy_state, apply, pack_before_error
from .linear_rows import PLAIN as _PLAIN, rows as _linear_rows, \
    rows_addmm as _linear_addmm_rows
from .linalg import ADDMM, check_linear, linear_folds, matmul_graph, squeezed_in_place
from .linalg_norms import torch_norm
from .nn_layers import affine_shape_error
from .reduction import (LOG_SOFTMAX, SOFTMAX, implicit_softmax_dim, log_softmax as _log_softmax,
                        softmax as _softmax)
from .parser_errors import not_a, number
from .promotion import floats_only
from .registry import defop, export, shape_broadcast_error
from .shape import T, VIEW, wrap_dim
from .views import COPY_TWIN, view_apply
from .stages import modes as _modes
from .stages.modes import INTERCEPT as _intercept, SUBCLASS_STAGE as _subclasses

_gm = grad_mode._state


def _linear(x, w, b=None):
    y = jnp.matmul(x, w.T)
    return y if b is None else y + b


def _layer_norm(x, w, b, shape, eps):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), axis=axes, keepdims=True)
    y = (x - mu) * jax.lax.rsqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


# NOTE: fused, used when nothing records; it still names a node because forward AD
# differentiates exactly the ops that name one
LINEAR = defop("linear", _linear, "AddmmBackward0")
def _layer_norm_stats(x, w, b, shape, eps):
    # what PyTorch's kernel returns beside the result and saves: mean and rstd
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), axis=axes, keepdims=True)
    return mu, jax.lax.rsqrt(var + eps)


LAYER_NORM = defop("layer_norm", _layer_norm, "NativeLayerNormBackward0",
                   scalar_edges=(1, 2),  # no weight or bias: a None edge, as PyTorch
                   names="input weight bias -> bias input weight normalized_shape=shape "
                         "result1 result2", extras=_layer_norm_stats)


@export(method=False)
def linear(input, weight, bias=None) -> Tensor:
    """``y = x W^T + b``.

    ::

        linear(input, weight, bias=None) -> Tensor
    """
    check_linear(input, weight, bias)
    if _gm.enabled and (input._requires_grad or weight._requires_grad
                        or bias is not None and bias._requires_grad):
        if input.__class__ in _PLAIN and weight.__class__ in _PLAIN and \
                len(si := input._arr.shape) >= 3 and len(sw := weight._arr.shape) == 2 and \
                not (_modes.MODES or _intercept[0] and _intercept[0] is not _subclasses[0]
                     or _dual[0] or COPY_TWIN[0]) and \
                _lazy_state["enabled"] and _fm.backend is None and \
                (input._view is None or input.is_contiguous()) and (out := (
                    _linear_rows(input, weight, si, sw) if bias is None else
                    _linear_addmm_rows(input, weight, bias, si, sw)
                    if bias.__class__ in _PLAIN and len(bias._arr.shape) == 1 else None)) \
                is not None:
            return out  # a model's projection, as its four ops in one pass
        return _linear_graph(input, weight, bias)
    if bias is None:  # PyTorch's matmul, with its in-place squeeze of a vector's product
        out = apply(LINEAR, (input, weight))
        return squeezed_in_place(out) if len(input._arr.shape) == 1 else out
    return apply(LINEAR, (input, weight, bias))


def _linear_graph(input, weight, bias):
    """``linear`` recorded as PyTorch records it: ``addmm(bias, input, weight.t())`` on
    rows (the input viewed as a matrix and the result viewed back when it is not one),
    ``matmul(input, weight.t())`` without a bias."""
    # NOTE: the nodes are made in PyTorch's order: their sequence numbers order the backward
    if bias is None:
        return matmul_graph(input, _transposed(weight))
    si = tuple(input._arr.shape)  # (read once: a Tensor's ``shape`` costs frames)
    if len(si) == 2:
        return apply(ADDMM, (bias, input, _transposed(weight)), _ONES)
    if linear_folds(input, bias):  # the rows of a view, and the result a view of addmm's
        rows = view_apply(VIEW, input, {"shape": (math.prod(si[:-1]), si[-1])})
        out = apply(ADDMM, (bias, rows, _transposed(weight)), _ONES)
        return view_apply(VIEW, out, {"shape": si[:-1] + (weight._arr.shape[0],)})
    # NOTE: PyTorch adds the bias in place to matmul's result (out of place for a Tensor a
    # dispatch mode sees, which it treats as a subclass)
    out = matmul_graph(input, _transposed(weight))
    return out + bias if _modes.MODES else out.add_(bias)


_ONES = {"beta": 1, "alpha": 1}


def _transposed(weight):
    """``weight.t()``; a view of ``weight`` while a dispatch mode is entered, where the
    backward's ops follow its column-major layout (``derivatives.py``), as PyTorch's."""
    return view_apply(T, weight) if _modes.MODES else apply(T, (weight,))


@export(method=False)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Normalizes over the trailing ``normalized_shape`` dims (biased variance).

    ::

        layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05) -> Tensor
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    si = input._arr.shape  # (read once: a Tensor's shape and ndim cost frames)
    # PyTorch's kernel checks the affine shapes (JAX would broadcast one of size 1), then the
    # input's, after its node packed what it saves
    if weight is not None and weight._arr.shape != shape or \
            bias is not None and bias._arr.shape != shape or \
            tuple(si[len(si) - len(shape):]) != shape:
        error = affine_shape_error(shape, weight, bias) or RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
        pack_before_error(LAYER_NORM, (input, weight, bias))
        raise error
    if si and input._arr.dtype.kind in "biu":  # no integer kernel
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for "
                                  f"'{_dtype.torch_kind(input._arr.dtype)}'")
    return apply(LAYER_NORM, (input, weight, bias),
                 {"shape": shape, "eps": eps if eps.__class__ is float else
                  number("layer_norm", "eps", eps, 5, "float")})



# --------------------------------------------------------------------------- activations


def _hardswish(x):
    # the bounds take the outer branches' gradients (0 and 1), as PyTorch
    return jnp.where(x <= -3, jnp.zeros_like(x), jnp.where(x >= 3, x, x * (x + 3) / 6))


def _hardsigmoid(x):
    return jnp.where(x <= -3, jnp.zeros_like(x), jnp.where(x >= 3, jnp.ones_like(x), x / 6 + 0.5))


def _glu(x, dim):
    a, b = jnp.split(x, 2, axis=dim)
    return a * jax.nn.sigmoid(b)


def _prelu(x, w):
    if x.ndim >= 2 and w.size > 1:
        w = w.reshape((1, -1) + (1,) * (x.ndim - 2))
    elif x.ndim == 1 and w.size > 1:
        w = w.reshape(-1)
    else:
        w = w.reshape(())
    return jnp.where(x > 0, x, w * x)


_ACT = {
    # name: (forward, node)
    "gelu": (lambda x, approximate: jax.nn.gelu(x, approximate=approximate == "tanh"),
             "GeluBackward0"),
    "silu": (jax.nn.silu, "SiluBackward0"),
    "softplus": (lambda x, beta, threshold: jnp.where(
        x * beta > threshold, x, jax.nn.softplus(x * beta) / beta), "SoftplusBackward0"),
    "elu": (lambda x, alpha: jax.nn.elu(x, alpha), "EluBackward0"),
    "selu": (jax.nn.selu, "EluBackward0"),
    "celu": (lambda x, alpha: jax.nn.celu(x, alpha), "CeluBackward0"),
    "leaky_relu": (lambda x, slope: jnp.where(x > 0, x, x * slope), "LeakyReluBackward0"),
    # lax.clamp: zero gradient at the bounds, as PyTorch
    "hardtanh": (lambda x, lo, hi: jax.lax.clamp(jnp.asarray(lo, x.dtype), x,
                                                 jnp.asarray(hi, x.dtype)), "HardtanhBackward0"),
    "mish": (lambda x: x * jnp.tanh(jax.nn.softplus(x)), "MishBackward0"),
    "logsigmoid": (jax.nn.log_sigmoid, "LogSigmoidBackward0"),
    "hardswish": (_hardswish, "HardswishBackward0"),
    "hardsigmoid": (_hardsigmoid, "HardsigmoidBackward0"),
    "softshrink": (lambda x, lambd: jnp.where(x > lambd, x - lambd, jnp.where(
        x < -lambd, x + lambd, jnp.zeros_like(x))), "SoftshrinkBackward0"),
    "hardshrink": (lambda x, lambd: jnp.where((x > lambd) | (x < -lambd), x, jnp.zeros_like(x)),
                   "HardshrinkBackward0"),
    "threshold": (lambda x, threshold, value: jnp.where(x > threshold, x,
                                                        jnp.asarray(value, x.dtype)),
                  "ThresholdBackward0"),
    "tanhshrink": (lambda x: x - jnp.tanh(x), "SubBackward0"),
    "softsign": (lambda x: x / (1 + jnp.abs(x)), "DivBackward0"),
    "glu": (_glu, "GluBackward0"),
    "prelu": (_prelu, "PreluKernelBackward0"),
}
# the CPU kernels that refuse integer, bool (and, but for silu's, complex) input
_KERNELS = {"gelu": "GeluKernelImpl", "silu": "silu_cpu", "mish": "mish_cpu",
            "logsigmoid": "log_sigmoid_cpu", "hardswish": "hardswish_cpu",
            "hardsigmoid": "hardsigmoid_cpu", "elu": "elu_cpu", "selu": "elu_cpu",
            "celu": "elu_cpu", "softplus": "softplus_cpu", "hardshrink": "hardshrink_cpu",
            "softshrink": "softshrink_check", "leaky_relu": "leaky_relu_cpu", "glu": "glu_cpu"}
_ACT = {k: (floats_only(_KERNELS[k], f, k == "silu") if k in _KERNELS else f, node)
        for k, (f, node) in _ACT.items()}
ACT = {k: defop(k, f, node) for k, (f, node) in _ACT.items()}
# PyTorch's in-place kernels of these record a node of their own (it saves the result)
ACT_INPLACE = {k: defop(k + "_", _ACT[k][0], node) for k, node in (
    ("elu", "EluBackward1"), ("selu", "EluBackward1"), ("celu", "CeluBackward1"),
    ("leaky_relu", "LeakyReluBackward1"), ("threshold", "ThresholdBackward1"))}


def _act(name, input, inplace=False, **statics):
    if inplace:
        return apply(ACT_INPLACE.get(name, ACT[name]), (input,), statics or None, out=input)
    return apply(ACT[name], (input,), statics or None)


def relu(input, inplace=False) -> Tensor:
    """``max(0, x)`` elementwise."""
    if not isinstance(input, Tensor):
        raise not_a("relu", "input", input, "Tensor")
    return input.relu_() if inplace else input.relu()


@export(method=False)
def gelu(input, approximate="none") -> Tensor:
    """Gaussian error linear unit; ``approximate='tanh'`` uses the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _act("gelu", input, approximate=approximate)


@export(method=False)
def silu(input, inplace=False) -> Tensor:
    """``x * sigmoid(x)``."""
    return _act("silu", input, inplace)


def softplus(input, beta=1.0, threshold=20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``."""
    return _act("softplus", input, beta=number("softplus", "beta", beta, 2),
                threshold=number("softplus", "threshold", threshold, 3))


def elu(input, alpha=1.0, inplace=False) -> Tensor:
    return _act("elu", input, inplace, alpha=number("elu", "alpha", alpha, 2))


@export(method=False)
def selu(input, inplace=False) -> Tensor:
    return _act("selu", input, inplace)


@export(method=False)
def celu(input, alpha=1.0, inplace=False) -> Tensor:
    alpha = number("celu", "alpha", alpha, 2)
    if alpha == 0:  # PyTorch's kernel raises Python's error's name inside its RuntimeError
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _act("celu", input, inplace, alpha=alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False) -> Tensor:
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    if negative_slope.__class__ is str:
        raise not_a("leaky_relu", "negative_slope", negative_slope, "Number", 2)
    return _act("leaky_relu", input, inplace, slope=float(negative_slope))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False) -> Tensor:
    """Clamps to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _act("hardtanh", input, inplace, lo=float(min_val), hi=float(max_val))


def relu6(input, inplace=False) -> Tensor:
    """``min(max(0, x), 6)`` (PyTorch's node: ``HardtanhBackward0``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def mish(input, inplace=False) -> Tensor:
    return _act("mish", input, inplace)


def logsigmoid(input) -> Tensor:
    return _act("logsigmoid", input)


def hardswish(input, inplace=False) -> Tensor:
    return _act("hardswish", input, inplace)


def hardsigmoid(input, inplace=False) -> Tensor:
    return _act("hardsigmoid", input, inplace)


def softshrink(input, lambd=0.5) -> Tensor:
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _act("softshrink", input, lambd=float(lambd))


@export
def hardshrink(input, lambd=0.5) -> Tensor:
    return _act("hardshrink", input, lambd=number("hardshrink", "lambd", lambd, 2))


@export(method=False)
def threshold(input, threshold, value, inplace=False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``."""
    return _act("threshold", input, inplace,
                threshold=number("threshold", "threshold", threshold, 2),
                value=number("threshold", "value", value, 3))


def _python_form(input, method):
    """PyTorch writes tanhshrink and softsign in Python, so a non-Tensor input fails at its
    first method call: that AttributeError, not JAX's message about abstract arrays."""
    if not isinstance(input, Tensor):
        raise AttributeError(f"'{type(input).__name__}' object has no attribute '{method}'")


def tanhshrink(input) -> Tensor:
    _python_form(input, "tanh")
    return _act("tanhshrink", input)


def softsign(input) -> Tensor:
    _python_form(input, "abs")
    return _act("softsign", input)


def glu(input, dim=-1) -> Tensor:
    """Gated linear unit: ``a * sigmoid(b)`` with ``input`` halved into ``a, b`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim, "glu", position=2)  # F.glu: no method form
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    return _act("glu", input, dim=d)


@export
def prelu(input, weight) -> Tensor:
    """``max(0, x) + weight * min(0, x)``, ``weight`` per channel (dim 1) or shared."""
    if weight.numel() != 1 and (input.ndim == 0 or weight.numel() !=
                                input.shape[1 if input.ndim >= 2 else 0]):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{input.shape[1] if input.ndim >= 2 else input.shape[0]}.")
    return apply(ACT["prelu"], (input, weight))


def softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    # NOTE: ``_stacklevel`` counts as PyTorch's does, from a helper one frame below
    if dim is None:
        _errors.warn("Implicit dimension choice for softmax has been deprecated. Change the "
                     "call to include dim=X as an argument.")
        dim = implicit_softmax_dim(input.ndim)
    return _softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    """``softmax(-input)``."""
    if dim is None:
        _errors.warn("Implicit dimension choice for softmin has been deprecated. Change the "
                     "call to include dim=X as an argument.")
        dim = implicit_softmax_dim(input.ndim)
    return _softmax(-input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    if dim is None:
        _errors.warn("Implicit dimension choice for log_softmax has been deprecated. Change "
                     "the call to include dim=X as an argument.")
        dim = implicit_softmax_dim(input.ndim)
    return _log_softmax(input, dim, dtype)


def tanh(input) -> Tensor:
    return input.tanh()


def sigmoid(input) -> Tensor:
    return input.sigmoid()


# --------------------------------------------------------------------------- distances


def _safe_norm(x, p, axis, keepdims):
    # zero vectors get a zero (sub)gradient, as PyTorch's norm backward
    if p == 2:
        sq = jnp.sum(jnp.square(x), axis=axis, keepdims=keepdims)
        pos = sq > 0
        return jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1.0)), 0.0)
    if p == float("inf"):
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims)
    if p == 1:  # sign(0) = 0: the subgradient PyTorch uses
        return jnp.sum(jnp.sign(x) * x, axis=axis, keepdims=keepdims)
    s = jnp.sum(jnp.abs(x) ** p, axis=axis, keepdims=keepdims)
    pos = s > 0
    return jnp.where(pos, jnp.where(pos, s, 1.0) ** (1.0 / p), 0.0)


def _normalize(x, p, dim, eps):
    # PyTorch's F.normalize takes linalg.vector_norm's norm, which refuses integer and bool
    # input (checked where the program is traced: no cost on a call)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_dtype.torch_kind(x.dtype)}")
    return x / jnp.maximum(_safe_norm(x, p, dim, True), eps)


def _cosine_similarity(x1, x2, dim, eps):
    # PyTorch clamps the norms from below without recording the clamp
    n1 = _safe_norm(x1, 2, dim, True)
    n2 = _safe_norm(x2, 2, dim, True)
    n1 = n1 + jax.lax.stop_gradient(jnp.maximum(n1, eps) - n1)
    n2 = n2 + jax.lax.stop_gradient(jnp.maximum(n2, eps) - n2)
    return jnp.sum((x1 / n1) * (x2 / n2), axis=dim)


NORMALIZE = defop("normalize", _normalize, "DivBackward0")
COSINE_SIMILARITY = defop("cosine_similarity", _cosine_similarity, "SumBackward1")
PAIRWISE_DISTANCE = defop("pairwise_distance", lambda x1, x2, p, eps, keepdim: _safe_norm(
    x1 - x2 + eps, p, -1, keepdim), "NormBackward1")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    if isinstance(p, str):  # PyTorch's is ``input.norm(p, ...)``: a matrix order there
        return input / torch_norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    res = apply(NORMALIZE, (input,), {"p": float(p), "dim": int(dim), "eps": float(eps)})
    if out is not None:
        return out.copy_(res)
    return res


@export(method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor:
    """Cosine similarity of ``x1`` and ``x2`` (broadcast) along ``dim``."""
    if (err := shape_broadcast_error(tuple(x1.shape), tuple(x2.shape))) is not None:
        raise err
    shape = jnp.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if x1.shape != shape:
        x1 = x1.expand(shape)
    if x2.shape != shape:
        x2 = x2.expand(shape)
    return apply(COSINE_SIMILARITY, (x1, x2), {"dim": int(dim), "eps": float(eps)})


@export(method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim."""
    return apply(PAIRWISE_DISTANCE, (x1, x2), {"p": float(p), "eps": float(eps),
                                               "keepdim": bool(keepdim)})


