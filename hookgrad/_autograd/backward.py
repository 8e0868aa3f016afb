"""``backward()`` and ``grad()``: check the roots and their gradients, then run the engine.

Public at ``hookgrad.autograd``. The Tensor and anomaly mode sit below the engine, so this
module, imported with it, fills their slots: ``_tensor.BACKWARD`` (``Tensor.backward``) and
``anomaly_mode.CURRENT_NODE`` (the node whose backward runs).
"""
import warnings

import jax.numpy as jnp

from .. import _tensor
from .._tensor import Tensor
from . import anomaly_mode
from .engine import current_autograd_node, run_backward
from .graph import GradientEdge

__all__ = ["backward", "grad"]


def _tensors(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads):
    """Gradients for the roots: given ones are checked, missing ones implied for scalars."""
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, GradientEdge):
            if g is None:
                raise RuntimeError("grad_outputs must be given for GradientEdge outputs")
            result.append(g)
            continue
        if g is None:
            if out.requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point and not out.dtype.is_complex:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {out.dtype}")
            result.append(Tensor._wrap(jnp.ones(out._data.shape, out._data.dtype)))
            continue
        if not isinstance(g, Tensor):
            g = Tensor._wrap(jnp.asarray(g, out._data.dtype))
        if g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                               f"output[{i}] has a shape of {out.shape}.")
        result.append(g)
    return result


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` w.r.t. graph leaves into their ``.grad``.

    ``inputs`` restricts accumulation (and execution) to those tensors.
    """
    tensors = _tensors(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _tensors(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    if inputs is not None:
        inputs = _tensors(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grads)
    if create_graph:
        warnings.warn(_CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` w.r.t. ``inputs`` (Tensors or GradientEdges), returned
    rather than accumulated into ``.grad``."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True: use hookgrad.func.vmap over grad")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _tensors(outputs)
    inputs = _tensors(inputs)
    grads = _tensors(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grads)} tensors but outputs has {len(outputs)}")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grads)
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                       accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        res = tuple(g if g is not None else Tensor._wrap(jnp.zeros_like(i._data))
                    for g, i in zip(res, inputs))
    return res



# the slots of the layers below, filled now that the engine exists
_tensor.BACKWARD[0] = backward
anomaly_mode.CURRENT_NODE[0] = current_autograd_node
