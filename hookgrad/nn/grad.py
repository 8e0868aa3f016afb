"""``hookgrad.nn.grad``: the gradients of a convolution with respect to its input and its
weight, given the gradient of its output (each differentiable again)."""
from .._ops.nn_conv_grad import conv_input_grad, conv_weight_grad
from .._tensor import Tensor

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _named(fn, name, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _input_grad(n: int):
    """``conv{n}d_input``: one function per dimension count, as PyTorch names them."""
    def grad(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0, dilation=1,
             groups=1) -> Tensor:
        return conv_input_grad(n, input_size, weight, grad_output, stride, padding, dilation,
                               groups)
    return _named(grad, f"conv{n}d_input", f"The gradient of ``conv{n}d`` with respect to its "
                                           "input, of shape ``input_size``.")


def _weight_grad(n: int):
    """``conv{n}d_weight``: one function per dimension count, as PyTorch names them."""
    def grad(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0, dilation=1,
             groups=1) -> Tensor:
        return conv_weight_grad(n, input, weight_size, grad_output, stride, padding, dilation,
                                groups)
    return _named(grad, f"conv{n}d_weight", f"The gradient of ``conv{n}d`` with respect to its "
                                            "weight, of shape ``weight_size``.")


conv1d_input, conv1d_weight = _input_grad(1), _weight_grad(1)
conv2d_input, conv2d_weight = _input_grad(2), _weight_grad(2)
conv3d_input, conv3d_weight = _input_grad(3), _weight_grad(3)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
