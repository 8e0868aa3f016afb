"""``Flatten`` and ``Unflatten``."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` into one.

    Example::

        >>> nn.Flatten()(hookgrad.randn(32, 1, 5, 5)).shape
        hookgrad.Size([32, 25])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into ``unflattened_size``.

    Example::

        >>> nn.Unflatten(1, (2, 5, 5))(hookgrad.randn(2, 50)).shape
        hookgrad.Size([2, 2, 5, 5])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        elif isinstance(dim, str):
            raise NotImplementedError("named tensors are not supported")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input_size):
        if isinstance(input_size, (tuple, list)):
            for idx, elem in enumerate(input_size):
                if not isinstance(elem, int):
                    raise TypeError(f"unflattened_size must be tuple of ints, but found element "
                                    f"of type {type(elem).__name__} at pos {idx}")
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                        f"{type(input_size).__name__}")

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
