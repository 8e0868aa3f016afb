"""``Module``: the base class of layers and models, with PyTorch's hooks and call path.

A module owns Parameters, buffers and submodules (registered by attribute assignment),
and calling it runs, as ``torch.nn.Module._call_impl`` does::

    global forward pre-hooks -> forward pre-hooks -> (backward-hook set-up on inputs)
    -> forward -> global forward hooks -> forward hooks -> (backward-hook set-up on outputs)

Full backward hooks go through ``hookgrad.utils.hooks.BackwardHook``; in functional mode
(``hookgrad.func``) they go through ``hookgrad.func._call_with_backward_hooks`` instead.
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
import warnings

import jax

from ... import _mode
from ..._tensor import Tensor, typename as _typename
from ..._handle import RemovableHandle
from ..parameter import Buffer, Parameter
from . import _global_hooks as _gh
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
from ._legacy_backward_hooks import _maybe_warn_non_full_backward_hook
from ... import _watch
from ..._watch import WatchedDict, WatchedOrderedDict
from ._pytree import HOOK_DICTS as _HOOK_DICTS
from ._pytree import _module_flatten, _module_unflatten
from ._state_dict import (  # noqa: F401 - re-exported
    _EXTRA_STATE_KEY_SUFFIX, _IncompatibleKeys, _StateDictMixin)

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


class Module(_ConversionMixin, _StateDictMixin):
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
        # object.__setattr__: Module.__setattr__ would look for these very dicts
        setattr_ = super().__setattr__
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

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer: module state that is not a parameter (a running mean, a mask).

        ::

            register_buffer(name, tensor, persistent=True)

        A non-persistent buffer is left out of ``state_dict``. A None buffer is ignored
        by ``to``/``state_dict``. Example::

            >>> self.register_buffer("running_mean", hookgrad.zeros(4))
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (a ``Parameter`` or None), reachable as ``self.<name>``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        for hook in _global_parameter_registration_hooks.values():
            output = hook(self, name, param)
            if output is not None:
                param = output
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module (or None), reachable as ``self.<name>``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            output = hook(self, name, module)
            if output is not None:
                module = output
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` (``""`` is ``self``).

        Raises ``AttributeError`` if a step does not exist or is not a Module::

            >>> model.get_submodule("encoder.layers.0")
        """
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Set the submodule at the dotted path ``target`` (its parent must exist; with
        ``strict=True`` the submodule itself too)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            if not isinstance(getattr(parent, atoms[-1]), Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The Parameter at the dotted path ``target`` (``"fc1.weight"``)."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path ``target`` (``"bn.running_mean"``)."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    # ------------------------------------------------------------------ attributes
    def __getattr__(self, name):
        # only reached when normal lookup fails: parameters, buffers, submodules
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        _watch.bump()

        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                for hook in _global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                for hook in _global_module_registration_hooks.values():
                    output = hook(self, name, value)
                    if output is not None:
                        value = output
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer "
                                        f"'{name}' (torch.nn.Buffer, torch.Tensor or None "
                                        "expected)")
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name):
        _watch.bump()
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

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

    # ------------------------------------------------------------------ iteration
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """An iterator over the module's Parameters (and its submodules' if ``recurse``).

        Example::

            >>> opt = hookgrad.optim.SGD(model.parameters(), lr=0.1)
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(name, Parameter)``, names dotted as in ``state_dict``; a
        Parameter shared by several modules comes once unless ``remove_duplicate=False``.
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """An iterator over the module's buffers (and its submodules' if ``recurse``)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(name, buffer)``, names dotted as in ``state_dict``."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        """An iterator over the immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """An iterator over ``(name, child)`` of the immediate child modules."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        """An iterator over all modules of the tree, ``self`` first (pre-order)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """An iterator over ``(dotted name, module)`` of the tree, ``("", self)`` first.

        Example::

            >>> [n for n, _ in nn.Sequential(nn.Linear(2, 2), nn.ReLU()).named_modules()]
            ['', '0', '1']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ------------------------------------------------------------------ hooks
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Register a hook run before ``forward``::

            hook(module, args) -> None or modified input
            hook(module, args, kwargs) -> None or (new_args, new_kwargs)  # with_kwargs=True

        ``args`` are the positional arguments; a returned non-tuple is wrapped in a tuple.
        ``prepend=True`` runs it before this module's other forward pre-hooks (global ones
        still run first). Returns a handle whose ``remove()`` removes the hook.

        Example::

            >>> m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        """
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Register a hook run after ``forward`` computed an output::

            hook(module, args, output) -> None or modified output
            hook(module, args, kwargs, output) -> None or modified output  # with_kwargs

        ``always_call=True``: the hook also runs when ``forward`` (or an earlier hook)
        raises; ``prepend=True`` runs it before this module's other forward hooks.

        Example::

            >>> acts = {}
            >>> m.register_forward_hook(lambda mod, args, out: acts.update(fc=out))
        """
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=[self._forward_hooks_with_kwargs,
                                             self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Register a hook run when the gradients w.r.t. the module's outputs are ready::

            hook(module, grad_output) -> tuple[Tensor or None] or None

        ``grad_output`` has an entry per output (None for non-Tensor outputs and outputs
        that got no gradient). A returned tuple of the same length replaces it.
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Register a hook run when the gradients w.r.t. the module's inputs are computed::

            hook(module, grad_input, grad_output) -> tuple[Tensor or None] or None

        ``grad_input`` has an entry per positional argument: None for non-Tensors, zeros
        for a Tensor that does not require grad (when another one does). A returned tuple
        of the same length replaces it. If no input requires grad, the hook fires when
        ``grad_output`` is ready, with ``grad_input`` all None, and must return None.
        The module's forward receives (and its caller gets back) new Tensors carrying the
        hooks; a graph runs the hooks registered when its forward ran.

        Example::

            >>> m.register_full_backward_hook(lambda mod, gi, go: print(go[0].norm()))
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Register an old-style backward hook (deprecated: use
        :meth:`register_full_backward_hook`).

        As in PyTorch, it is a post-hook of the ``grad_fn`` of the module's (first)
        output, so it sees that node's gradients only; ``FutureWarning`` s say when those
        are not the module's.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _get_backward_hooks(self):
        full, non_full = [], []
        if _gh._global_flags["is_full_backward_hook"] is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _gh._global_flags["is_full_backward_hook"] is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # ------------------------------------------------------------------ the call
    def _wrapped_call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
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
                        args_kwargs_result = hook(self, args, kwargs)
                        if args_kwargs_result is not None:
                            if isinstance(args_kwargs_result, tuple) and \
                                    len(args_kwargs_result) == 2:
                                args, kwargs = args_kwargs_result
                            else:
                                raise RuntimeError(
                                    "forward pre-hook must return None or a tuple of "
                                    f"(new_args, new_kwargs), but got {args_kwargs_result}.")
                    else:
                        args_result = hook(self, args)
                        if args_result is not None:
                            if not isinstance(args_result, tuple):
                                args_result = (args_result,)
                            args = args_result

            bw_hook = None
            functional_bw = None
            if full_backward_hooks or backward_pre_hooks:
                if _mode.state.functional:
                    # JAX's AD runs the backward: hooks go in a custom_vjp (hookgrad.func)
                    functional_bw = (backward_pre_hooks, full_backward_hooks)
                else:
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
                        hook_result = hook(self, args, kwargs, result)
                    else:
                        hook_result = hook(self, args, result)
                    if hook_result is not None:
                        result = hook_result
                return result

            has_forward_hooks = bool(_global_forward_hooks or self._forward_hooks)
            if functional_bw is not None:
                # forward hooks run inside the backward-hook boundary, as eagerly they see
                # the output before BackwardHook wraps it
                def forward_and_hooks(*a, **k):
                    out = forward_call(*a, **k)
                    return run_forward_hooks(a, k, out) if has_forward_hooks else out
                result = _functional_call(self, forward_and_hooks, args, kwargs,
                                          *functional_bw)
            else:
                result = forward_call(*args, **kwargs)
                if has_forward_hooks:
                    result = run_forward_hooks(args, kwargs, result)

            if bw_hook:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}",
                                  stacklevel=4)  # the caller of the module
                result = bw_hook.setup_output_hook(result)

            if non_full_backward_hooks:
                self._register_non_full_backward_hooks(non_full_backward_hooks, args, result)
            return result

        try:
            return inner()
        except Exception:
            # the always_call forward hooks that did not run yet run now; their own errors
            # become warnings so that the original exception is the one raised
            for hook_id, hook in _global_forward_hooks.items():
                if hook_id in _global_forward_hooks_always_called and \
                        hook_id not in called_always_called_hooks:
                    try:
                        hook_result = hook(self, args, result)
                        if hook_result is not None:
                            result = hook_result
                    except Exception as e:  # noqa: BLE001
                        warnings.warn("global module forward hook with ``always_call=True`` "
                                      "raised an exception that was silenced as another error "
                                      f"was raised in forward: {str(e)}", stacklevel=2)
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called and \
                        hook_id not in called_always_called_hooks:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook_result = hook(self, args, kwargs, result)
                        else:
                            hook_result = hook(self, args, result)
                        if hook_result is not None:
                            result = hook_result
                    except Exception as e:  # noqa: BLE001
                        warnings.warn("module forward hook with ``always_call=True`` raised an "
                                      "exception that was silenced as another error was raised "
                                      f"in forward: {str(e)}", stacklevel=2)
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


def _functional_call(module, forward_call, args, kwargs, bw_pre_hooks, bw_hooks):
    from ... import func
    impl = getattr(func, "_call_with_backward_hooks", None)
    if impl is None:
        raise NotImplementedError("module backward hooks in functional mode need "
                                  "hookgrad.func._call_with_backward_hooks")
    return impl(module, forward_call, args, kwargs, bw_pre_hooks, bw_hooks)


jax.tree_util.register_pytree_node(Module, _module_flatten, _module_unflatten)
