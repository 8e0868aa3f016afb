"""``Module``: the base class of layers and models, with PyTorch's hooks and call path.

A module owns Parameters, buffers and submodules (registered by attribute assignment),
and calling it runs, as ``torch.nn.Module._call_impl`` does::

    global forward pre-hooks -> forward pre-hooks -> (backward-hook set-up on inputs)
    -> forward -> global forward hooks -> forward hooks -> (backward-hook set-up on outputs)

Full backward hooks go through ``hookgrad.utils.hooks.BackwardHook`` in every mode (in
functional mode its identity ops are ``jax.custom_vjp``s).
With no hook registered the call is just ``forward``.

Modules are JAX pytrees: the leaves are the Parameters then the buffers, in
``named_parameters()`` / ``named_buffers()`` order (shared ones once); the aux data is the
module's structure (its original object and where each leaf sits). Unflattening builds a
shallow copy of the module tree holding the new leaves (other attributes shared, hook
dicts copied), so a model passes through ``jax.jit``, ``jax.grad`` and optax as a tree of
its parameters::

    >>> grads = jax.grad(lambda m: loss(m(x)).sum()._data)(model)   # a Module of gradients
    >>> grads.weight
"""

import jax

from ..._tensor import Tensor
from ..._autograd.hooks import call as _call
from ..._watch import WatchedDict, WatchedOrderedDict
from ._global_hooks import (  # noqa: F401 - re-exported at PyTorch's import paths
    _WrappedHook, _global_backward_hooks, _global_backward_pre_hooks,
    _global_buffer_registration_hooks, _global_forward_hooks,
    _global_forward_hooks_always_called, _global_forward_hooks_with_kwargs,
    _global_forward_pre_hooks, _global_module_registration_hooks,
    _global_parameter_registration_hooks, _has_any_global_hook,
    register_module_backward_hook, register_module_buffer_registration_hook,
    register_module_forward_hook, register_module_forward_pre_hook,
    register_module_full_backward_hook, register_module_full_backward_pre_hook,
    register_module_module_registration_hook, register_module_parameter_registration_hook)
from ._conversion import _ConversionMixin
from ._hooks import _HooksMixin
from ._iteration import _IterationMixin
from ._legacy_backward_hooks import _maybe_warn_non_full_backward_hook
from ._pytree import HOOK_DICTS as _HOOK_DICTS
from ._pytree import _module_flatten, _module_unflatten
from ._registration import _RegistrationMixin
from ._state_dict import (  # noqa: F401 - re-exported
    _EXTRA_STATE_KEY_SUFFIX, _IncompatibleKeys, _StateDictMixin)
from ... import _errors

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _forward_unimplemented(self, *input):
    """Define the computation of the module; subclasses override it. Call the module
    (``m(x)``), not ``forward``, so that hooks run."""
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')



def _silenced_always_called(module, hooks, always, with_kwargs, called, args, kwargs, result,
                            kind):
    """After ``forward`` raised: the ``always_call`` forward hooks not yet called, their own
    errors turned into warnings so that forward's exception is the one raised."""
    for hook_id, hook in hooks.items():
        if hook_id not in always or hook_id in called:
            continue
        try:
            res = (_call(hook, module, args, kwargs, result) if hook_id in with_kwargs
                   else _call(hook, module, args, result))
            if res is not None:
                result = res
        except Exception as e:  # noqa: BLE001
            _errors.warn(f"{kind} forward hook with ``always_call=True`` raised an exception "
                         f"that was silenced as another error was raised in forward: {e}")
    return result

class Module(_RegistrationMixin, _IterationMixin, _HooksMixin, _ConversionMixin,
             _StateDictMixin):
    """Base class for all neural network modules.

    Subclass it, assign Parameters and submodules as attributes in ``__init__`` and
    define ``forward``::

        class Model(hookgrad.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = hookgrad.nn.Linear(4, 8)
                self.fc2 = hookgrad.nn.Linear(8, 1)

            def forward(self, x):
                return self.fc2(self.fc1(x).relu())

    ``super().__init__()`` must run before any assignment.
    """

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False
    _compiled_call_impl = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        jax.tree_util.register_pytree_node(cls, _module_flatten, _module_unflatten)

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # the __setattr__ past Module's own (object's, or a co-base's): Module.__setattr__
        # (the mixin's) would look for these very dicts
        setattr_ = super(_RegistrationMixin, self).__setattr__
        setattr_("training", True)
        # dicts that count their changes: hookgrad.compile checks one counter per call
        setattr_("_parameters", WatchedDict())
        setattr_("_buffers", WatchedDict())
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_is_full_backward_hook", None)
        setattr_("_modules", WatchedDict())
        for name in _HOOK_DICTS:
            setattr_(name, WatchedOrderedDict())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        state.pop("_pytree_origin", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                self.__dict__[name] = WatchedOrderedDict()
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ------------------------------------------------------------------ the call
    def _wrapped_call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        # NOTE: ``_call_impl``'s hookless case, inline: a frame (and the repacking of the
        # arguments) fewer per module call, and a model calls a module every few ops; a
        # subclass's own ``_call_impl`` is still the one run
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                or self._forward_pre_hooks or _global_backward_pre_hooks
                or _global_backward_hooks or _global_forward_hooks
                or _global_forward_pre_hooks) and type(self)._call_impl is _CALL_IMPL:
            return self.forward(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        # NOTE: long on purpose: one function reads as PyTorch's documented call order (forward
        # pre-hooks, backward-hook setup, forward, forward hooks, backward-hook wiring).
        forward_call = self.forward
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                or self._forward_pre_hooks or _global_backward_pre_hooks
                or _global_backward_hooks or _global_forward_hooks
                or _global_forward_pre_hooks):
            return forward_call(*args, **kwargs)

        result = None
        called_always_called_hooks = set()

        def inner():
            nonlocal result, args, kwargs
            full_backward_hooks, non_full_backward_hooks = [], []
            backward_pre_hooks = []
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                backward_pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or _global_backward_hooks:
                full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()

            if _global_forward_pre_hooks or self._forward_pre_hooks:
                for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                      *self._forward_pre_hooks.items()):
                    if hook_id in self._forward_pre_hooks_with_kwargs:
                        args_kwargs_result = _call(hook, self, args, kwargs)
                        if args_kwargs_result is not None:
                            if isinstance(args_kwargs_result, tuple) and \
                                    len(args_kwargs_result) == 2:
                                args, kwargs = args_kwargs_result
                            else:
                                raise RuntimeError(
                                    "forward pre-hook must return None or a tuple of "
                                    f"(new_args, new_kwargs), but got {args_kwargs_result}.")
                    else:
                        args_result = _call(hook, self, args)
                        if args_result is not None:
                            if not isinstance(args_result, tuple):
                                args_result = (args_result,)
                            args = args_result

            bw_hook = None
            if full_backward_hooks or backward_pre_hooks:
                from ..._autograd.backward_hook import BackwardHook
                bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)

            def run_forward_hooks(args, kwargs, result):
                for hook_id, hook in (*_global_forward_hooks.items(),
                                      *self._forward_hooks.items()):
                    if hook_id in self._forward_hooks_always_called or \
                            hook_id in _global_forward_hooks_always_called:
                        called_always_called_hooks.add(hook_id)
                    if hook_id in self._forward_hooks_with_kwargs or \
                            hook_id in _global_forward_hooks_with_kwargs:
                        hook_result = _call(hook, self, args, kwargs, result)
                    else:
                        hook_result = _call(hook, self, args, result)
                    if hook_result is not None:
                        result = hook_result
                return result

            result = forward_call(*args, **kwargs)
            if _global_forward_hooks or self._forward_hooks:
                result = run_forward_hooks(args, kwargs, result)

            if bw_hook:
                if not isinstance(result, (Tensor, tuple)):
                    _errors.warn("For backward hooks to be called, module output should be a "
                                 f"Tensor or a tuple of Tensors but received {type(result)}")  # the caller of the module
                result = bw_hook.setup_output_hook(result)

            if non_full_backward_hooks:
                self._register_non_full_backward_hooks(non_full_backward_hooks, args, result)
            return result

        try:
            return inner()
        except Exception:
            # the always_call forward hooks that did not run yet run now; their own errors
            # become warnings so that the original exception is the one raised
            result = _silenced_always_called(
                self, _global_forward_hooks, _global_forward_hooks_always_called, (),
                called_always_called_hooks, args, kwargs, result, "global module")
            _silenced_always_called(
                self, self._forward_hooks, self._forward_hooks_always_called,
                self._forward_hooks_with_kwargs, called_always_called_hooks, args, kwargs,
                result, "module")
            raise

    __call__ = _wrapped_call_impl

    def _register_non_full_backward_hooks(self, hooks, args, result):
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in hooks:
                grad_fn.register_hook(_WrappedHook(hook, self))
            _maybe_warn_non_full_backward_hook(args, result, grad_fn)

    def compile(self, *args, **kwargs):
        """Compile this Module's forward with :func:`hookgrad.compile`, in place: later
        calls of the module run it as one XLA program (arguments as ``hookgrad.compile``'s).

        Example::

            >>> model.compile()
            >>> model(x).sum().backward()   # one compiled forward, one compiled backward
        """
        from ...compile import _module_compile_options
        from ..._compile.state import MODULE_COMPILE
        opts = _module_compile_options(*args, **kwargs)
        self._compiled_call_impl = None if opts is None else \
            MODULE_COMPILE["in_place"](self, **opts)

    # ------------------------------------------------------------------ repr
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The module's own line in ``repr`` (``in_features=2, ...``); override it."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


jax.tree_util.register_pytree_node(Module, _module_flatten, _module_unflatten)
_CALL_IMPL = Module._call_impl  # the hookless call's inline fast path runs only under it


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
