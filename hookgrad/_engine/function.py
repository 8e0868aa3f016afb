"""``autograd.Function``: custom operations with a user-written backward.

Mirrors ``torch.autograd.function``. A subclass defines ``forward`` and ``backward``
static methods and is called through ``apply``. Eagerly (and in compiled mode, where the
same code runs on traced arrays) ``apply`` records one node, an instance of the
generated ``<Name>Backward`` class; that node is also the ``ctx`` the user's methods
receive, so attributes set on ``ctx`` in forward are visible on ``output.grad_fn``, as
in PyTorch. In functional mode (``hookgrad.func.functional_call``) ``apply`` becomes a
``jax.custom_vjp`` whose backward calls the user's ``backward`` (see ``_function_jax``).
"""
import functools
import inspect

import jax.numpy as jnp

from .. import _mode
from .._tensor import Tensor
from .._autograd import grad_mode
from .._autograd.saved import FREED_MESSAGE
from .._autograd.error_node import _DelayedError
from .._autograd.graph import _Node
from .function_apply import _eager_apply
from .. import _errors

__all__ = ["FunctionCtx", "BackwardCFunction", "FunctionMeta", "Function", "once_differentiable",
           "InplaceFunction", "NestedIOFunction"]

_gm = grad_mode._state


class FunctionCtx:
    """The ``ctx`` of a custom Function: what ``forward`` (or ``setup_context``) tells
    ``backward``. Each method should be called at most once per forward."""

    def save_for_backward(self, *tensors):
        """Save Tensors (or None) for ``backward``, where ``ctx.saved_tensors`` returns them.

        Saved tensors go through the active ``saved_tensors_hooks`` and are checked for
        in-place modification when unpacked. :class:`Function`'s example saves its output.
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save Tensors for ``jvp`` (forward-mode AD, which hookgrad leaves to ``jax.jvp``)."""
        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input Tensors that ``forward`` modified in place. They must be returned
        as outputs; their history is moved onto this Function's node and their version
        counter is bumped."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        _errors.warn("`mark_shared_storage` is deprecated. Tensors with shared storages are "
                     "automatically tracked. Note that calls to `set_()` are not tracked",
                     FutureWarning)

    def mark_non_differentiable(self, *args):
        """Mark outputs that do not require grad. ``backward`` still receives a gradient
        for each (zeros, unless ``set_materialize_grads(False)``)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Whether gradients of outputs that got none are given to ``backward`` as zeros
        (default True) or as None."""
        self.materialize_grads = value


class BackwardCFunction(_Node, FunctionCtx):
    """The node of a custom Function, and the ``ctx`` of its forward and backward.

    One subclass, ``<Name>Backward``, is generated per Function class.
    """

    _forward_cls = None
    # the engine skips nodes whose incoming gradients are all None; PyTorch still calls
    # a custom backward then (with zeros, or with None when materialize_grads is off)
    _apply_undefined = True
    materialize_grads = True
    to_save = None
    saved_for_forward = None
    dirty_tensors = None
    non_differentiable = None
    needs_input_grad = None
    _saved = None
    _freed = False
    _out_info = ()       # (shape, dtype) per forward output; None for non-Tensors
    _in_info = ()        # (shape, dtype) per Tensor input
    _is_tensor = ()      # per forward argument

    def __init__(self):
        _Node.__init__(self, ())

    def name(self):
        return type(self).__name__

    def _out_meta(self):
        return tuple(self._out_info)

    @property
    def saved_tensors(self):
        if self.saved_for_forward is not None:  # inside jvp
            return self.saved_for_forward
        saved = self._saved
        if saved is None:
            return ()
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if getattr(self._forward_cls, "clear_saved_tensors_on_access", False):
            if self._cleared:
                raise RuntimeError(
                    "saved_tensors can only be accessed once when "
                    "clear_saved_tensors_on_access=True is set on the autograd.Function. "
                    "Either access saved_tensors only once, or set "
                    "clear_saved_tensors_on_access=False.")
            self._cleared = True
            out = tuple(None if s is None else s.unpack(self, True) for s in saved)
            self._saved = tuple(None for _ in saved)
            return out
        return tuple(None if s is None else s.unpack(self, True) for s in saved)

    _saved_tensors = saved_tensors
    _cleared = False

    @property
    def _raw_saved_tensors(self):
        """The saved values as ``SavedTensor`` objects (``register_hooks``, ``data``)."""
        from .._ops.saved_names import function_saved
        return function_saved(self)

    @property
    def saved_variables(self):
        _errors.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning)
        return self.saved_tensors

    def _release(self):
        saved = self._saved
        if saved is not None:
            self._freed = True
            for s in saved:
                if s is not None:
                    s.release()

    def _get_user_fn(self):
        return _user_backward(self._forward_cls)

    def apply(self, *grads):
        """Call the user's backward directly (as ``grad_fn.apply(...)`` does in PyTorch)."""
        return self._get_user_fn()(self, *grads)

    def apply_jvp(self, *grads):
        """Call the user's ``jvp`` (forward-mode AD calls it with the inputs' tangents)."""
        return self._forward_cls.jvp(self, *grads)

    def _apply(self, grads, create_graph):
        info = self._out_info
        if self.materialize_grads:
            grads = [_zeros(info[i]) if g is None and info[i] is not None else g
                     for i, g in enumerate(grads)]
        res = self._get_user_fn()(self, *grads)
        res = _check_grad_count(self.name(), res, self._is_tensor)
        out = []
        k = 0
        for r, is_t in zip(res, self._is_tensor):
            if not is_t:
                continue
            if r is not None and self._next[k] is not None:
                shape, dtype = self._in_info[k]
                r = _reduce_grad(r, shape, dtype, self.name(), k)
            elif self._next[k] is None:
                r = None
            out.append(r)
            k += 1
        return out


def _zeros(info):
    shape, dtype = info
    return Tensor._wrap(jnp.zeros(shape, dtype))


def _user_backward(cls):
    bwd, vjp = cls.backward, cls.vjp
    if bwd is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed. You should only implement one of them.")
    return vjp if vjp is not Function.vjp else bwd


def _check_grad_count(name, res, is_tensor):
    """The user's backward result as a tuple with one entry per forward argument,
    checked as PyTorch checks it (extra trailing Nones are dropped)."""
    if not isinstance(res, tuple):
        res = (res,)
    n = len(is_tensor)
    if len(res) > n and all(r is None for r in res[n:]):
        res = res[:n]
    if len(res) != n:
        raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                           f"(expected {n}, got {len(res)})")
    for i, (r, is_t) in enumerate(zip(res, is_tensor)):
        if r is None:
            continue
        if is_t:
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
        else:
            raise RuntimeError(f"function {name} returned a gradient different than None at "
                               f"position {i + 1}, but the corresponding forward input was not "
                               "a Variable")
    return res


def _expandable(shape, target):
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _reduce_dims(shape, gshape):
    lead = len(gshape) - len(shape)
    return tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and gshape[lead + i] != 1)


def _shape_error(name, index, gshape, shape):
    return RuntimeError(f"Function {name} returned an invalid gradient at index {index} - got "
                        f"{list(gshape)} but expected shape compatible with {list(shape)}")


def _reduce_grad(g, shape, dtype, name, index):
    """A returned gradient made to fit its input, as PyTorch's engine does: summed down
    from a broadcast shape, cast to the input's dtype."""
    gshape = tuple(g._data.shape)
    if gshape != shape:
        if not _expandable(shape, gshape):
            raise _shape_error(name, index, gshape, shape)
        dims = _reduce_dims(shape, gshape)
        if dims:
            g = g.sum(dims, keepdim=True)
        g = g.reshape(shape)
    if g._data.dtype != dtype:
        from .._dtype import from_jax
        g = g.to(from_jax(dtype))
    return g


# --------------------------------------------------------------------------- Function


class FunctionMeta(type):
    """Generates ``<Name>Backward``, the node class of each Function subclass."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls.__qualname__ = name + "Backward"
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom autograd operations.

    Subclass it, implement the static methods ``forward`` and ``backward``, and call
    ``apply``::

        >>> class Exp(hookgrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, i):
        ...         result = i.exp()
        ...         ctx.save_for_backward(result)
        ...         return result
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         result, = ctx.saved_tensors
        ...         return grad_output * result
        >>> y = Exp.apply(x)

    ``forward`` runs with grad mode off. ``backward`` gets one gradient per output and
    returns one per input (None for inputs that are not Tensors or need no gradient);
    with ``create_graph=True`` it runs with grad mode on, so its operations are recorded
    and higher-order gradients work. Alternatively, ``forward(*args)`` without ``ctx``
    plus ``setup_context(ctx, inputs, output)``.
    """

    def __init__(self, *args, **kwargs):
        _errors.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                     "functions are all static, so you should invoke them on the class itself. "
                     "Instantiating an autograd function will raise an error in a future "
                     "version of PyTorch.", DeprecationWarning)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    generate_vmap_rule = False

    @staticmethod
    def forward(*args, **kwargs):
        """``forward(ctx, *args, **kwargs)`` (or ``forward(*args, **kwargs)`` together
        with ``setup_context``): compute the outputs."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """``setup_context(ctx, inputs, output)``: fill ``ctx`` after a ctx-less forward."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """``backward(ctx, *grad_outputs)``: one gradient per forward input."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """``jvp(ctx, *grad_inputs)``: forward-mode AD's rule, one tangent per forward
        input (None for non-Tensors) in, one per output out. Under
        ``forward_ad.dual_level`` it runs after ``forward`` when an input carries a tangent;
        ``ctx.saved_tensors`` there are what ``ctx.save_for_forward`` saved."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function on ``args``, recording its node when grad mode is on and a
        Tensor argument requires grad."""
        has_setup = cls.setup_context is not Function.setup_context
        if has_setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        elif kwargs:
            # keyword arguments that name positional parameters become inputs
            bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)
            args, kwargs = bound.args[1:], bound.kwargs
        backend = _mode.state.backend
        if backend is not None:  # hookgrad.func: a jax.custom_vjp
            return backend.function_apply(cls, args, kwargs, has_setup)
        return _eager_apply(cls, args, kwargs, has_setup)


class InplaceFunction(Function):
    """Kept for PyTorch compatibility; use :class:`Function`."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Kept for PyTorch compatibility (a legacy Function taking nested inputs through
    ``forward_extended``/``backward_extended``); use :class:`Function`. PyTorch's can no
    longer run one, and calling one here raises hookgrad's "does not implement" error."""

    def __call__(self, *args, **kwargs):
        from .. import _missing
        _missing.not_implemented("torch.autograd.function.NestedIOFunction")()

    def forward_extended(self, *input):
        """User-defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """User-defined backward."""
        raise NotImplementedError


# --------------------------------------------------------------------------- once_differentiable


def once_differentiable(fn):
    """Decorate ``backward`` to run it with grad mode off; differentiating its result
    again (double backward) raises ``RuntimeError``."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _gm.enabled
        _gm.enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _gm.enabled = prev
        if not _gm.enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        err = _DelayedError("trying to differentiate twice a function that was marked with "
                            "@once_differentiable",
                            tuple((tuple(v.shape), v._data.dtype) if isinstance(v, Tensor)
                                  else None for v in outs))
        # as PyTorch: the node's edges go to detached copies of the outputs made leaves
        err._next = tuple((_fake_leaf(v)._grad_accumulator(), 0) if isinstance(v, Tensor)
                          else None for v in outs)
        wrapped = tuple(Tensor._wrap(v._data, err, i) if isinstance(v, Tensor) else v
                        for i, v in enumerate(outs))
        return wrapped if isinstance(outputs, tuple) else wrapped[0]
    return wrapper


def _fake_leaf(t):
    leaf = Tensor._wrap(t._data)
    leaf._requires_grad = True
    return leaf


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__, "torch.autograd.function")
