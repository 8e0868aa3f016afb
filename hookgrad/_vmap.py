"""``torch.vmap``: map a function over a batch dimension of its Tensor arguments.

The function sees Tensors of one example each (JAX traces it once, with ``jax.vmap``) and
the result is made of Tensors again, batched along ``out_dims``. ``hookgrad.func.vmap`` is
the array-level transform for ``jax`` composition; this one is for Tensor code.
"""
import jax

from ._autograd import grad_mode
from ._compile.host_hook import _flatten_containers
from ._tensor import Tensor

__all__ = ["vmap"]


def _swap(tree, to_tensor):
    """``tree`` with its Tensors as arrays (or its arrays as Tensors)."""
    leaves, rebuild = _flatten_containers(tree)
    if to_tensor:
        return rebuild([Tensor._wrap(v) if isinstance(v, (jax.Array, jax.core.Tracer))
                        else v for v in leaves])
    return rebuild([v._data if isinstance(v, Tensor) else v for v in leaves])


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Return ``func`` mapped over dimension ``in_dims`` of its positional arguments.

    ::

        vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None)

    ``in_dims``: an int or None for every argument, or one per positional argument
    (nested like it; None: not mapped). Keyword arguments are not mapped. ``out_dims``:
    where the mapped dimension goes in each output. ``chunk_size`` is accepted (JAX maps
    the whole batch at once); random ops inside ``func`` are not supported
    (``randomness="error"``). Gradients do not flow through the result yet: an argument
    that requires grad raises.

    Example::

        >>> batched_dot = hookgrad.vmap(hookgrad.dot)
        >>> batched_dot(hookgrad.ones(5, 3), hookgrad.ones(5, 3))
        tensor([3., 3., 3., 3., 3.])
    """
    def wrapped(*args, **kwargs):
        if randomness not in ("error", "different", "same"):
            raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        leaves = _flatten_containers(args)[0]
        if grad_mode.is_grad_enabled() and any(
                isinstance(t, Tensor) and t.requires_grad for t in leaves):
            raise NotImplementedError("hookgrad does not implement torch.vmap of Tensors "
                                      "that require grad yet (use hookgrad.func.vmap inside "
                                      "jax.grad, or call it under torch.no_grad())")
        dims = in_dims if isinstance(in_dims, (int, type(None))) else tuple(in_dims)
        if isinstance(dims, tuple) and len(dims) != len(args):
            raise ValueError(f"vmap({getattr(func, '__name__', func)}, in_dims={in_dims}, ...)"
                             f"(<inputs>): in_dims is not "
                             f"compatible with the structure of `inputs`. in_dims has "
                             f"structure with {len(dims)} entries but inputs has "
                             f"{len(args)} positional arguments")

        def on_arrays(*arrs):
            with grad_mode.no_grad():
                return _swap(func(*_swap(arrs, True), **kwargs), False)
        out = jax.vmap(on_arrays, in_axes=dims, out_axes=out_dims)(*_swap(args, False))
        return _swap(out, True)
    return wrapped
