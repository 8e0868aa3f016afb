"""Registration of a Module's Parameters, buffers and submodules (a mixin of ``Module``):
``register_*``/``add_module``, dotted-path access (``get_submodule``, ...) and the attribute
protocol that routes ``self.<name> = value`` into ``_parameters``/``_buffers``/``_modules``."""
from ... import _watch
from ..._tensor import Tensor, typename as _typename
from ..parameter import Buffer, Parameter
from ._global_hooks import (_global_buffer_registration_hooks,
                            _global_module_registration_hooks,
                            _global_parameter_registration_hooks)


def _registered(hooks, module, name, value):
    """``value`` as the global registration ``hooks`` leave it (a hook may replace it)."""
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _check_new_name(module, kind, slots, name):
    """PyTorch's checks, in its order, of the name of a new ``kind`` (parameter or buffer)
    going into ``module.<slots>``."""
    if slots not in module.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in module.__dict__[slots]:
        raise KeyError(f"attribute '{name}' already exists")


# the stores a name leaves when it becomes a parameter or a submodule ("__dict__": the
# module's plain attributes)
_NOT_PARAMETERS = ("__dict__", "_buffers", "_modules", "_non_persistent_buffers_set")
_NOT_MODULES = ("__dict__", "_parameters", "_buffers", "_non_persistent_buffers_set")


def _claim(module, name, store, what, others):
    """Before ``name`` is assigned as a ``what`` (``"parameters"``, ``"module"``): PyTorch's
    error when ``Module.__init__`` has not made that ``store`` yet; else ``name`` leaves the
    module's ``others`` stores."""
    if store is None:
        raise AttributeError(f"cannot assign {what} before Module.__init__() call")
    d = module.__dict__
    for other in others:
        held = d if other == "__dict__" else d[other]
        if name in held:
            if isinstance(held, dict):
                del held[name]
            else:
                held.discard(name)


class _RegistrationMixin:
    # NOTE: ``Module`` is the only class built on this mixin, so ``isinstance(x,
    # _RegistrationMixin)`` below is ``isinstance(x, Module)`` without importing module.py
    # (which imports this file).

    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer: module state that is not a parameter (a running mean, a mask).

        ::

            register_buffer(name, tensor, persistent=True)

        A non-persistent buffer is left out of ``state_dict``. A None buffer is ignored
        by ``to``/``state_dict``. Example::

            >>> self.register_buffer("running_mean", hookgrad.zeros(4))
        """
        _check_new_name(self, "buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (a ``Parameter`` or None), reachable as ``self.<name>``."""
        _check_new_name(self, "parameter", "_parameters", name)
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
        param = _registered(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module (or None), reachable as ``self.<name>``."""
        if not isinstance(module, _RegistrationMixin) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        module = _registered(_global_module_registration_hooks, self, name, module)
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
            if not isinstance(mod, _RegistrationMixin):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Set the submodule at the dotted path ``target`` (its parent must exist; with
        ``strict=True`` the submodule itself too)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, _RegistrationMixin):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]):
            if not isinstance(getattr(parent, atoms[-1]), _RegistrationMixin):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The Parameter at the dotted path ``target`` (``"fc1.weight"``)."""
        _, name, param = self._attribute_at(target)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path ``target`` (``"bn.running_mean"``)."""
        mod, name, buffer = self._attribute_at(target)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buffer

    def _attribute_at(self, target):
        """``(module, name, value)`` of the attribute at the dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name, getattr(mod, name)

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
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            _claim(self, name, params, "parameters", _NOT_PARAMETERS)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, _RegistrationMixin):
                _claim(self, name, modules, "module", _NOT_MODULES)
                value = _registered(_global_module_registration_hooks, self, name, value)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                value = _registered(_global_module_registration_hooks, self, name, value)
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
