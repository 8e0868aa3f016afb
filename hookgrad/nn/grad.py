"""``hookgrad.nn.grad``: the gradients of a convolution with respect to its input and its
weight, given the gradient of its output (each differentiable again)."""
from .._ops.nn_conv_grad import conv_input_grad, conv_weight_grad
from .._tensor import Tensor

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def conv1d_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                 dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv1d`` with respect to its input, of shape ``input_size``."""
    return conv_input_grad(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0,
                  dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv1d`` with respect to its weight, of shape ``weight_size``."""
    return conv_weight_grad(1, input, weight_size, grad_output, stride, padding, dilation,
                            groups)


def conv2d_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                 dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input, of shape ``input_size``."""
    return conv_input_grad(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0,
                  dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv2d`` with respect to its weight, of shape ``weight_size``."""
    return conv_weight_grad(2, input, weight_size, grad_output, stride, padding, dilation,
                            groups)


def conv3d_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                 dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv3d`` with respect to its input, of shape ``input_size``."""
    return conv_input_grad(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0,
                  dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv3d`` with respect to its weight, of shape ``weight_size``."""
    return conv_weight_grad(3, input, weight_size, grad_output, stride, padding, dilation,
                            groups)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
