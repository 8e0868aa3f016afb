"""``backward()`` and ``grad()``: check the roots and their gradients, then run the engine.

Public at ``hookgrad.autograd``. The Tensor and anomaly mode sit below the engine, so this
module, imported with it, fills their slots: ``_tensor.BACKWARD`` (``Tensor.backward``) and
``anomaly_mode.CURRENT_NODE`` (the node whose backward runs).
"""
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _factory, _host_transfer, _jax_trace, _tensor
from .._ops.op_node import DISPATCH_MODES
from .._tensor import Tensor
from .._autograd import anomaly_mode
from .engine import current_autograd_node, run_backward
from .._autograd.graph import GradientEdge
from .. import _errors

__all__ = ["backward", "grad"]


def _tensors(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _inputs(inputs, fn):
    """``inputs`` of ``backward``/``grad`` as a tuple: a Tensor or GradientEdge, a sequence
    of them, or a dict (its values)."""
    if isinstance(inputs, (Tensor, GradientEdge)):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{fn}()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    inputs = tuple(inputs)
    if not inputs:
        raise RuntimeError(f"`inputs` argument to `{fn}()` cannot be empty.")
    return inputs


def _root_meta(out):
    """(shape, dtype) of the gradient a root takes: a Tensor's own, or what the node of a
    GradientEdge expects (its ``_input_metadata``)."""
    if isinstance(out, GradientEdge):
        meta = out.node._input_metadata[out.output_nr]
        return meta.shape, meta.dtype
    return out.shape, out.dtype


_SEEDS = {}  # (shape, dtype) -> the implied root gradient, ones: JAX arrays never change


def _seed(shape, dtype):
    """Ones of ``shape`` and ``dtype``, the gradient implied for a root of one element. Made
    on the host (``jnp.ones`` compiles a program at its first call) once per shape and
    dtype: ``jax.device_put`` costs 40-90 microseconds of Python a call, a backward of a
    small graph's whole engine time. Where the plain transfer does not apply (inside a JAX
    trace, a default device configured), made by ``jax.device_put`` each time."""
    key = (shape, dtype)
    arr = _SEEDS.get(key)
    if arr is None or not _jax_trace.no_trace() or jax.config.jax_default_device is not None:
        ones = np.ones(shape, dtype)
        arr = _host_transfer.put_plain(ones)
        if arr is None:
            return jax.device_put(ones)
        if len(_SEEDS) < 64:  # a root has one element: few shapes ever occur
            _SEEDS[key] = arr
    return arr


def _make_grads(outputs, grads):
    """Gradients for the roots: given ones are checked, missing ones implied for outputs of
    one element. As PyTorch's, extra gradients are ignored (``zip``)."""
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        edge = isinstance(out, GradientEdge)
        if (not edge and out.is_meta) or (isinstance(g, Tensor) and g.is_meta):
            raise NotImplementedError(
                "hookgrad does not implement backward through meta Tensors yet (PyTorch gives "
                "meta gradients): give the module real parameters first (to_empty, "
                "load_state_dict(assign=True))")
        if isinstance(g, Tensor):
            shape, dtype = _root_meta(out)
            if g.shape != shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {shape}.")
            if dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have "
                    f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{g.dtype} and output[{i}] has a dtype of {dtype}.")
            # NOTE: PyTorch's engine casts a root's gradient to the root's dtype, as it does
            # every gradient it passes along an edge (validate_outputs)
            result.append(g if g.dtype == dtype else g.to(dtype))
        elif g is None:
            if not edge and not out.requires_grad:
                result.append(None)  # the engine names the root that cannot backward
                continue
            shape, dtype = _root_meta(out)
            if not all(n == 1 for n in shape):
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not dtype.is_floating_point:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {dtype}")
            if DISPATCH_MODES and not edge:  # the seed is an op the modes see
                result.append(_factory.ones_like(out))
                continue
            result.append(Tensor._wrap(_seed(tuple(shape), _dtype.to_jax(dtype))))
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
    if len(result) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(result)} gradients")
    return result


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate the gradients of ``tensors`` w.r.t. graph leaves into their ``.grad``.

    ``tensors`` (Tensors or GradientEdges) need ``grad_tensors`` unless they have one
    element. ``inputs`` (Tensors, GradientEdges or a dict of Tensors) restricts what is run
    and accumulated; a non-leaf Tensor among them retains its gradient (``retain_grad()``).

    Example::

        >>> x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
        >>> hookgrad.autograd.backward((x * x).sum())
        >>> x.grad
        tensor([2., 4.])
    """
    if grad_variables is not None:
        _errors.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                     FutureWarning)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _inputs(inputs, "backward")
    tensors = _tensors(tensors)
    grads = _tensors(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        _warn_cycle()
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")
_warn_state = {"always": False, "cycle_warned": False}


def set_warn_always(b):
    """When True, warnings PyTorch gives once per process (the create_graph cycle warning
    of ``backward``) are given every time.

    Example::

        >>> hookgrad.set_warn_always(True)
    """
    _warn_state["always"] = bool(b)


def is_warn_always_enabled():
    """Whether ``set_warn_always(True)`` is in effect."""
    return _warn_state["always"]


def _warn_cycle():
    # NOTE: once per process unless set_warn_always(True), as PyTorch's TORCH_WARN_ONCE
    if _warn_state["always"] or not _warn_state["cycle_warned"]:
        _warn_state["cycle_warned"] = True
        _errors.warn(_CREATE_GRAPH_WARNING, UserWarning)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` w.r.t. ``inputs`` (Tensors, GradientEdges, or a dict of
    Tensors: then a dict is returned), returned rather than accumulated into ``.grad``.

    Example::

        >>> x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
        >>> hookgrad.autograd.grad((x * x).sum(), x)
        (tensor([2., 4.]),)
    """
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True: use hookgrad.func.vmap over grad")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _tensors(outputs)
    inputs_tuple = _inputs(inputs, "grad")
    if not only_inputs:
        _errors.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                     "To accumulate gradient for other parts of the graph, please use "
                     "torch.autograd.backward.", FutureWarning)
    grads = _tensors(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    grads = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs_tuple,
                       accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        if any(g is None and isinstance(i, GradientEdge) for g, i in zip(res, inputs_tuple)):
            raise RuntimeError("materialize_grads cannot be used when the given input is a "
                               "GradientEdge")
        res = tuple(g if g is not None else Tensor._wrap(jnp.zeros_like(i._data))
                    .requires_grad_(create_graph) for g, i in zip(res, inputs_tuple))
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), res))
    return res


# the slots of the layers below, filled now that the engine exists
_tensor.BACKWARD[0] = backward
anomaly_mode.CURRENT_NODE[0] = current_autograd_node
