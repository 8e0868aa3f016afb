"""The gradients of a convolution with respect to its input and its weight, as functions
(``torch.nn.grad.conv1d_input``, ``conv2d_weight``, ...): each is JAX's vjp of the
convolution, one recorded op (``ConvolutionBackwardBackward0``), itself differentiable.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .nn_conv import _conv, _ntuple
from .registry import defop


def _input_grad(w, g, input_size, stride, padding, dilation, groups):
    x = jnp.zeros(input_size, g.dtype)
    _, vjp = jax.vjp(lambda x: _conv(x, w, None, stride, padding, dilation, groups), x)
    return vjp(g)[0]


def _weight_grad(x, g, weight_size, stride, padding, dilation, groups):
    w = jnp.zeros(weight_size, g.dtype)
    _, vjp = jax.vjp(lambda w: _conv(x, w, None, stride, padding, dilation, groups), w)
    return vjp(g)[0]


CONV_INPUT_GRAD = defop("convolution_backward_input", _input_grad,
                        "ConvolutionBackwardBackward0")
CONV_WEIGHT_GRAD = defop("convolution_backward_weight", _weight_grad,
                         "ConvolutionBackwardBackward0")


def _statics(nd, stride, padding, dilation, groups):
    return {"stride": _ntuple(stride, nd), "padding": tuple((p, p) for p in _ntuple(padding, nd)),
            "dilation": _ntuple(dilation, nd), "groups": int(groups)}


def _check(nd, size, grad_output, kind):
    if len(size) != nd + 2:
        raise RuntimeError(f"conv{nd}d_{kind}(): expected {kind}_size of {nd + 2} dims, got "
                           f"{list(size)}")
    if grad_output.ndim != nd + 2:
        raise RuntimeError(f"conv{nd}d_{kind}(): expected a {nd + 2}-D grad_output, got "
                           f"{grad_output.ndim}-D")


def conv_input_grad(nd: int, input_size, weight: Tensor, grad_output: Tensor, stride, padding,
                    dilation, groups) -> Tensor:
    """The gradient of an ``nd``-D convolution's input (of shape ``input_size``) given the
    gradient of its output."""
    statics = _statics(nd, stride, padding, dilation, groups)
    size = tuple(int(s) for s in input_size)
    _check(nd, size, grad_output, "input")
    return apply(CONV_INPUT_GRAD, (weight, grad_output), {"input_size": size, **statics})


def conv_weight_grad(nd: int, input: Tensor, weight_size, grad_output: Tensor, stride, padding,
                     dilation, groups) -> Tensor:
    """The gradient of an ``nd``-D convolution's weight (of shape ``weight_size``) given its
    input and the gradient of its output."""
    statics = _statics(nd, stride, padding, dilation, groups)
    size = tuple(int(s) for s in weight_size)
    _check(nd, size, grad_output, "weight")
    return apply(CONV_WEIGHT_GRAD, (input, grad_output), {"weight_size": size, **statics})
