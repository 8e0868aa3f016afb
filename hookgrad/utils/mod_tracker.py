"""``ModTracker``: which modules are running, in forward and in backward.

The same tool as ``torch.distributed._tools.mod_tracker.ModTracker``, built the same way:
global module forward pre-/post-hooks push and pop a module's fully-qualified name; in
backward, a multi-grad hook (``mode="any"``) on the module's outputs pushes it and one on
its inputs (``mode="all"``) pops it; an engine callback resets ``parents`` when the
backward ends.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._tensor import Tensor
from .._engine.engine import current_graph_task_id, queue_callback
from .._autograd.graph import register_multi_grad_hook
from .. import _errors

if TYPE_CHECKING:
    from ..nn.modules.module import Module

__all__ = ["ModTracker"]


def _tensor_leaves(tree):
    """The Tensors in nested lists/tuples/dicts (PyTorch's ``tree_flatten`` leaves)."""
    out = []
    stack = [tree]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
    return out


class ModTracker:
    """Tracks the module hierarchy during execution: inside a ``with ModTracker() as mt``
    block, ``mt.parents`` is the set of fully-qualified names of the modules whose forward
    (or backward) is running, always with ``"Global"``; ``mt.is_bw`` says whether a
    backward is running.

    Names are the class name of the outermost module called, then dotted child names
    (``"Net.encoder.0"``). ``is_bw`` stays True only while the engine runs.

    Example::

        >>> mod = nn.Linear(2, 2)
        >>> with ModTracker() as tracker:
        ...     mod.register_forward_hook(lambda m, a, o: print(tracker.parents))
        ...     mod(hookgrad.ones(1, 2))
        {'Global', 'Linear'}
    """

    def __init__(self):
        self.parents = {"Global"}
        self._active_module_cnt = {}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._has_callback = False
        self._post_bw_callbacks_to_enqueue = []
        self._user_pre_fw_hook = None
        self._user_post_fw_hook = None
        self._user_pre_bw_hook = None
        self._user_post_bw_hook = None

    def _maybe_set_engine_callback(self):
        # assumes no concurrent backward passes
        if self._has_callback:
            return
        for post_bw_callback in reversed(self._post_bw_callbacks_to_enqueue):
            queue_callback(post_bw_callback)
        self._post_bw_callbacks_to_enqueue.clear()

        def callback():
            self.parents = {"Global"}
            self._has_callback = False

        queue_callback(callback)
        self._has_callback = True

    @property
    def is_bw(self) -> bool:
        """Whether a backward pass is running now."""
        return current_graph_task_id() != -1

    def get_known_fqn(self, mod: Module) -> str | None:
        """The fully-qualified name of ``mod`` if the tracker has seen it, else None."""
        return self._known_modules.get(mod, None)

    def register_user_hooks(self, pre_fw_hook: Callable[..., Any] | None = None,
                            post_fw_hook: Callable[..., Any] | None = None,
                            pre_bw_hook: Callable[..., Any] | None = None,
                            post_bw_hook: Callable[..., Any] | None = None) -> None:
        """Register hooks called around each tracked module's forward and backward::

            pre_fw_hook(module, input) -> None
            post_fw_hook(module, input, output) -> None
            pre_bw_hook(module, grad_output) -> None    # when the first output grad arrives
            post_bw_hook(module, grad_input) -> None    # when all input grads are ready

        Any may be None. The module's name is in ``parents`` while they run; a module
        gone by backward time is passed as None. Registering a kind that is already set
        raises ``AssertionError`` (call ``clear_user_hooks`` first).
        """
        def set_hook(hook, user_hook, hook_name):
            if hook is not None and user_hook is not None:
                raise AssertionError(
                    f"Only one {hook_name} can be registered at a time"
                    " Clear the existing hook by calling ``clear_user_hooks`` before "
                    "registering a new one")
            return hook

        self._user_pre_fw_hook = set_hook(pre_fw_hook, self._user_pre_fw_hook, "pre_fw_hook")
        self._user_post_fw_hook = set_hook(post_fw_hook, self._user_post_fw_hook,
                                           "post_fw_hook")
        self._user_pre_bw_hook = set_hook(pre_bw_hook, self._user_pre_bw_hook, "pre_bw_hook")
        self._user_post_bw_hook = set_hook(post_bw_hook, self._user_post_bw_hook,
                                           "post_bw_hook")

    def clear_user_hooks(self) -> None:
        """Remove the hooks given to ``register_user_hooks``."""
        self._user_pre_fw_hook = None
        self._user_post_fw_hook = None
        self._user_pre_bw_hook = None
        self._user_post_bw_hook = None

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        mod_name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for name, submod in mod.named_children():
                self._known_modules[submod] = f"{mod_name}.{name}"
                self._get_mod_name(submod)
            self._seen_modules.add(mod)
        return mod_name

    def _get_append_fn(self, w_mod, name, is_bw):
        def fn(*args):
            if is_bw:
                self._maybe_set_engine_callback()
            if name in self.parents and not self.is_bw:
                _errors.warn("The module hierarchy tracking maybe be messed up. Please file a "
                             "bug to PyTorch, if it is the case.")
            if name not in self.parents:
                self._active_module_cnt[name] = 1
                self.parents.add(name)
            else:
                self._active_module_cnt[name] += 1
            if self._user_pre_bw_hook is not None and is_bw:
                self._user_pre_bw_hook(w_mod(), args)

        return fn

    def _get_pop_fn(self, w_mod, name, is_bw):
        def fn(*args):
            if self._user_post_bw_hook is not None and is_bw:
                self._user_post_bw_hook(w_mod(), args)
            if name in self.parents:
                self._active_module_cnt[name] -= 1
                if self._active_module_cnt[name] == 0:
                    self.parents.remove(name)
            elif not self.is_bw:
                # in backward, inputs/outputs that do not require grad break the nesting
                raise RuntimeError("The Module hierarchy tracking is wrong. Report a bug to "
                                   "PyTorch")

        return fn

    def _fw_pre_hook(self, mod, input):
        name = self._get_mod_name(mod)
        w_mod = weakref.ref(mod)
        self._get_append_fn(w_mod, name, False)()
        if self._user_pre_fw_hook is not None:
            self._user_pre_fw_hook(mod, input)
        tensors = [a for a in _tensor_leaves(input) if a.requires_grad]
        if not self.is_bw:
            if tensors:
                register_multi_grad_hook(tensors, self._get_pop_fn(w_mod, name, True))
            else:
                self._post_bw_callbacks_to_enqueue.append(self._get_pop_fn(w_mod, name, True))

    def _fw_post_hook(self, mod, input, output):
        name = self._get_mod_name(mod)
        w_mod = weakref.ref(mod)
        if self._user_post_fw_hook is not None:
            self._user_post_fw_hook(mod, input, output)
        self._get_pop_fn(w_mod, name, False)()
        tensors = [a for a in _tensor_leaves(output) if a.requires_grad]
        if not self.is_bw and tensors:
            register_multi_grad_hook(tensors, self._get_append_fn(w_mod, name, True),
                                     mode="any")

    def __enter__(self):
        from ..nn.modules.module import (register_module_forward_hook,
                                         register_module_forward_pre_hook)
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook, always_call=True)
        return self

    def __exit__(self, *args):
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
