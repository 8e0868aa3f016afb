"""Functional forms that PyTorch composes in Python from other ops (``lp_pool*``,
``local_response_norm``, ``gumbel_softmax``, ``*_with_indices``): composed the same way
here, so they record the same nodes."""
import math

from .. import _factory
from .._ops.nn import relu
from .._ops.nn_conv import (_ntuple, avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d,
                            max_pool2d, max_pool3d)
from .._ops.nn_pad_fold import pad
from .._tensor import Tensor
from .. import _errors

_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_MAX = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    if norm_type == math.inf:
        return _MAX[nd](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -_MAX[nd](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = _AVG[nd](input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    k = math.prod(_ntuple(kernel_size, nd))
    return (out.sign() * relu(out.abs())).mul(k).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """Power-average pooling: ``(sum over the window of x^p)^(1/p)``, ``p = norm_type``."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """2-D power-average pooling: ``(sum over the window of x^p)^(1/p)``."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """3-D power-average pooling: ``(sum over the window of x^p)^(1/p)``."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Normalizes each channel by the mean square of its ``size`` neighbouring channels:
    ``x / (k + alpha * mean(x^2))^beta``."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """Samples from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g ~ Gumbel(0, 1)``; ``hard=True`` returns the one-hot argmax, with the soft sample's
    gradient (straight-through). Noise from ``hookgrad.random``."""
    if eps != 1e-10:
        _errors.warn("`eps` parameter is deprecated and has no effect.")
    # -log(E) with E ~ Exponential(1) = -log(U), U uniform in (0, 1]
    u = 1 - _factory.rand_like(logits)
    gumbels = -(-u.log()).log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _factory.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` returning ``(output, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` returning ``(output, indices)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` returning ``(output, indices)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
