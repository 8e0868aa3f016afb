"""``state_dict`` / ``load_state_dict`` of ``Module`` (a mixin), with PyTorch's key names,
hooks and errors."""
import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._tensor import Tensor
from ..._autograd import grad_mode
from ..._handle import RemovableHandle
from ._global_hooks import _WrappedHook
from ... import _errors

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the ``missing_keys`` and ``unexpected_keys``."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _StateDictMixin:
    """state_dict / load_state_dict and their hooks; mixed into ``Module``."""

    # ---- hooks
    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """Register ``hook(module, state_dict, prefix, local_metadata) -> None``, run after
        this module's entries were added; it may modify ``state_dict`` in place."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook):
        """Register ``hook(module, prefix, keep_vars) -> None``, run before ``state_dict``
        collects this module's entries."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(hook,
                                                                  self if with_module else None)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """Register ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None``, run before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """Register ``hook(module, incompatible_keys) -> None``, run after
        ``load_state_dict`` loaded this module and its children. The hook may edit
        ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in place (which the
        ``strict`` check then sees); it must return None."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- saving
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not _StateDictMixin.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """The module's whole state: parameters and persistent buffers, keyed by their
        dotted names (``"0.weight"``, ``"encoder.layer.bias"``).

        ::

            state_dict(*, destination=None, prefix='', keep_vars=False) -> OrderedDict

        Entries are detached Tensors (``keep_vars=True`` keeps the Parameters themselves).
        Entries that are None are left out.

        Example::

            >>> list(hookgrad.nn.Linear(2, 3).state_dict())
            ['weight', 'bias']
        """
        if args:
            _errors.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                         "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                         "#torch.nn.Module.state_dict for details.", FutureWarning)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    # ---- loading
    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries (not its children's) from ``state_dict``,
        collecting missing/unexpected keys and error messages."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        from ..parameter import Parameter
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(input_param)}")
                continue
            # checkpoints of PyTorch < 0.4 stored scalars as 1-element vectors
            if len(param.shape) == 0 and len(input_param.shape) == 1 and \
                    input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            if param.is_meta and not input_param.is_meta and not assign:
                _errors.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to "
                             "a meta parameter in the current model, which is a no-op. (Did "
                             "you mean to pass `assign=True` to assign items in the state "
                             "dictionary to their corresponding key in the module instead of "
                             "copying them in place?)")
            try:
                with grad_mode.no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param,
                                                        requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:  # noqa: BLE001 - reported with the others, as PyTorch
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.size()} and whose dimensions in the "
                                  f"checkpoint are {input_param.size()}, an exception occurred : "
                                  f"{ex.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not _StateDictMixin.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:  # must be a child's entry
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module and its children.

        ::

            load_state_dict(state_dict, strict=True, assign=False) -> _IncompatibleKeys

        With ``strict=True`` the keys must match ``self.state_dict()`` exactly, else
        ``RuntimeError("Error(s) in loading state_dict for <Class>: ...")`` listing the
        missing and unexpected keys; shape mismatches are errors either way. Values are
        copied into the existing Parameters (``assign=True`` puts the given tensors in
        their place, keeping each Parameter's ``requires_grad``). Returns a named tuple
        ``(missing_keys, unexpected_keys)``.

        Example::

            >>> dst.load_state_dict(src.state_dict())
            <All keys matched successfully>
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items()
                                        if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- extra state
    def get_extra_state(self):
        """Override (with ``set_extra_state``) to store extra, picklable state under the
        ``<prefix>_extra_state`` key of the state dict."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        """Override (with ``get_extra_state``) to restore the extra state saved in the
        state dict."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")
