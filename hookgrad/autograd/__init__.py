"""Automatic differentiation: ``backward``, ``grad``, grad modes, the graph and Functions."""
from . import anomaly_mode, grad_mode, graph  # public paths: aliases of hookgrad._autograd's
from .._autograd.grad_mode import (_force_original_view_tracking,
                                   _unsafe_preserve_version_counter, enable_grad,
                                   inference_mode, is_grad_enabled, is_inference_mode_enabled,
                                   no_grad, set_grad_enabled, set_multithreading_enabled)
from .._autograd.anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,
                                      is_anomaly_enabled, set_detect_anomaly)

__all__ = ["backward", "grad", "Variable", "Function", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "graph", "grad_mode"]
__all__ += ["detect_anomaly", "set_detect_anomaly", "set_multithreading_enabled"]


def _tensors(x):
    if x is None:
        return None
    from .._tensor import Tensor
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads):
    """Gradients for the roots: given ones are checked, missing ones implied for scalars."""
    import jax.numpy as jnp

    from .._tensor import Tensor
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, graph.GradientEdge):
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
    from .._autograd.engine import run_backward
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
        import warnings
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
    import jax.numpy as jnp

    from .._tensor import Tensor
    from .._autograd.engine import run_backward
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


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from .._tensor import Tensor
        return isinstance(other, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=None):
        # the legacy constructor: a new leaf Tensor sharing ``data`` (as ``detach()``)
        from .._tensor import Tensor
        if volatile is not None:
            import warnings
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            return Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: PyTorch's legacy constructor, giving a new
    leaf Tensor that shares ``data``; ``isinstance(t, Variable)`` holds for every Tensor.

    Example::

        >>> v = Variable(hookgrad.ones(2), requires_grad=True)
        >>> v.is_leaf, v.requires_grad
        (True, True)
    """

    from .._autograd.engine import execution_engine as _execution_engine  # noqa: E402


def __getattr__(name):
    if name in ("Function", "function", "once_differentiable", "FunctionCtx"):
        import importlib  # not `from . import function`: that re-enters this __getattr__
        function = importlib.import_module(__name__ + ".function")
        return function if name == "function" else getattr(function, name)
    if name in ("gradcheck", "gradgradcheck"):  # the functions, as torch.autograd has them
        import importlib
        mod = importlib.import_module(__name__ + ".gradcheck")
        globals()[name] = fn = getattr(mod, name)
        return fn
    if name in ("functional", "forward_ad"):  # submodules, importable as torch.autograd's
        import importlib
        globals()[name] = mod = importlib.import_module(__name__ + "." + name)
        return mod
    if name in ("set_backward_fusion", "is_backward_fusion_enabled"):  # hookgrad's own
        from .._ops import fusion
        return getattr(fusion, name)
    from .. import _missing
    raise _missing.missing("module 'hookgrad.autograd'", "torch.autograd", name)
