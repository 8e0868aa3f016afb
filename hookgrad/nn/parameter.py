"""``Parameter`` (a leaf Tensor a Module registers) and ``Buffer``."""
import jax

from .._tensor import Tensor, _flatten, _unflatten


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute.

    ``requires_grad=True`` by default; always a leaf.
    """

    def __init__(self, data=None, requires_grad=True):
        import jax.numpy as jnp
        if data is None:
            data = Tensor._wrap(jnp.zeros((0,), jnp.float32))
        Tensor.__init__(self, data if isinstance(data, Tensor) else Tensor(data))
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)


class Buffer(Tensor):
    """Marks a Tensor to be registered as a buffer when assigned to a Module attribute."""

    def __init__(self, data=None, *, persistent=True):
        import jax.numpy as jnp
        if data is None:
            data = Tensor._wrap(jnp.zeros((0,), jnp.float32))
        Tensor.__init__(self, data if isinstance(data, Tensor) else Tensor(data))
        self.persistent = persistent


jax.tree_util.register_pytree_node(Parameter, _flatten, _unflatten)
