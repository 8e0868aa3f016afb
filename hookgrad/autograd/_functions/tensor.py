"""``Resize``: the legacy autograd Function that reshapes a tensor keeping its elements."""
import math

from ..._engine.function import Function


class Resize(Function):
    """``Resize.apply(tensor, sizes)``: ``tensor`` in the shape ``sizes`` (same number of
    elements); its backward reshapes the gradient back (node ``ResizeBackward``).

    Example::

        >>> y = hookgrad.autograd._functions.Resize.apply(x, (2, 3))
    """

    @staticmethod
    def forward(ctx, tensor, sizes):
        n = math.prod(sizes)
        if tensor.numel() != n:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), "
                f"but the given tensor has a size of {'x'.join(map(str, tensor.size()))} "
                f"({tensor.numel()} elements). autograd's resize can only change the shape "
                "of a given tensor, while preserving the number of elements. ")
        ctx.input_sizes = tensor.size()
        return tensor.reshape(*sizes).clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.reshape(ctx.input_sizes), None
