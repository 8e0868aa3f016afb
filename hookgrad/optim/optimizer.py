"""``Optimizer``: the base class of hookgrad's optimizers (``torch.optim.Optimizer``).

The base class holds what every optimizer shares with PyTorch's: ``param_groups`` (a list
of dicts, each with its ``"params"`` and per-group options filled in from ``defaults``),
``add_param_group``, ``zero_grad``, ``state_dict`` / ``load_state_dict`` in PyTorch's
layout, and the optimizer hooks (step pre/post hooks, state-dict hooks, global step
hooks). A custom optimizer can subclass it exactly as in PyTorch: keep per-parameter
state in ``self.state[p]`` and update parameters in place under ``no_grad``.

The built-in optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``) derive
from ``hookgrad.optim._transform.TransformOptimizer``: their math is an optax
``GradientTransformation`` per parameter group, their state the optax state (JAX arrays)
per block of parameters that step together (``hookgrad.optim._blocks``: one ``count``
for all, as optax keeps it), and their ``state`` attribute a view that shows it, per
parameter, under PyTorch's names
(``step``, ``exp_avg``, ...). ``hookgrad.optim.from_optax`` wraps any optax
transformation.

Compiled-mode contract
----------------------
``hookgrad.compile`` traces a training step (``loss.backward(); opt.step()``) under
``jax.jit``. Everything ``step()`` reads or writes on the optimizer is reachable through
one pair of methods, so the compiled program can take it as input and return it::

    tree = opt._state_arrays()       # pytree of JAX arrays (Tensors are pytrees too)
    opt._load_state_arrays(tree)     # installs such a tree (concrete or traced)

``tree`` is ``{"state": ..., "hparams": ...}``:

- ``"state"``: the optimizer state, in an optimizer-specific but fixed layout (built-ins:
  ``[[_blocks.Placed(static, positions, optax state) per block] for group in
  param_groups]``).
  ``step()`` replaces it; read it back with ``_state_arrays()`` after tracing the step
  and return it from the compiled function. State is created lazily on a parameter's
  first step (as in PyTorch), so the tree's structure may change after the first call;
  ``jax.jit`` then retraces once.
- ``"hparams"``: the dynamic hyper-parameters of each group as 0-d arrays, under their
  group keys (built-ins: ``[{"lr": ..., "betas": (b1, b2), "eps": ...} for group in
  param_groups]``). It is an input only. Group options not in it (``maximize``,
  ``nesterov``, ``amsgrad``, and ``momentum`` / ``weight_decay``, whose being zero or not
  changes the transformation's structure) are read as Python values while tracing: a
  compiled program must be keyed on them. ``_load_state_arrays`` uses ``"hparams"`` only
  when its leaves are tracers: until the next ``_load_state_arrays`` with concrete
  arrays, ``step()`` then reads these tracers instead of the Python numbers in
  ``param_groups``, so changing ``group["lr"]`` between compiled calls (an LR scheduler)
  feeds a new value without recompiling. Concrete hparams are ignored: ``param_groups``
  stays the source of truth.

The protocol for one compiled call is therefore::

    def traced(state_tree, ...):        # under jax.jit
        opt._load_state_arrays(state_tree)
        ... user step: backward, opt.step() ...
        return opt._state_arrays()["state"], ...
    out = jitted(opt._state_arrays(), ...)
    opt._load_state_arrays({"state": out_state, "hparams": opt._state_arrays()["hparams"]})

The per-step math of the built-ins is one pure, jit-cached function
``new_params, new_states = f(params, grads, states, hparams)`` (cached per optimizer
class and per group's structural options: ``maximize``, ``nesterov``, ``amsgrad``, ...);
called inside a trace it inlines into the compiled program. ``step()`` writes the new
arrays into the Parameters (same Python objects, ``_version`` bumped). Call LR schedulers
outside the compiled function: they are Python arithmetic on ``param_groups``.
"""
from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from copy import deepcopy
from itertools import chain
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._watch import WatchedList
from .._tensor import Tensor, typename as _typename
from .._autograd import grad_mode
from .._handle import RemovableHandle
from .. import _errors

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Marks a default that every parameter group must specify."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a step pre-hook run before ``step()`` of every optimizer::

        hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)

    Global pre-hooks run before the optimizer's own. Returns a ``RemovableHandle``.
    """
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a step post-hook run after ``step()`` of every optimizer::

        hook(optimizer, args, kwargs) -> None

    Global post-hooks run after the optimizer's own. Returns a ``RemovableHandle``.
    """
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(step):
    """Wrap a subclass's ``step`` so that the step pre/post hooks run around it."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        if self._in_hooked_step:  # a subclass's step calling super().step(): hooks ran already
            return step(*args, **kwargs)
        for hook in list(chain(_global_optimizer_pre_hooks.values(),
                               self._optimizer_step_pre_hooks.values())):
            result = hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        self._in_hooked_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_hooked_step = False
        for hook in list(chain(self._optimizer_step_post_hooks.values(),
                               _global_optimizer_post_hooks.values())):
            hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


class Optimizer:
    r"""Base class for all optimizers.

    .. code-block:: python

        Optimizer(params, defaults)

    Args:
        params (iterable): an iterable of Tensors (or of ``(name, Tensor)`` pairs), or of
            dicts, each a parameter group with ``"params"`` and its own options.
        defaults (dict): the default value of each option, used by groups that do not
            set it.

    Example::

        >>> opt = hookgrad.optim.SGD([{"params": [w]}, {"params": [b], "lr": 1e-3}], lr=0.1)
        >>> opt.zero_grad(); loss_fn(w, b).backward(); opt.step()
    """

    _in_hooked_step = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.param_groups = []
        self.state = defaultdict(dict)
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ pickling, repr
    def __getstate__(self):
        return {"defaults": self.defaults, "state": dict(self.state),
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.defaults = state["defaults"]
        self.param_groups = state["param_groups"]
        for name in ("step_pre", "step_post", "state_dict_pre", "state_dict_post",
                     "load_state_dict_pre", "load_state_dict_post"):
            setattr(self, f"_optimizer_{name}_hooks", OrderedDict())
        self._setup_storage()
        self.state = defaultdict(dict, state["state"])

    def _setup_storage(self):
        """Create the attributes that hold state (called before ``state`` is assigned)."""

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group.keys()):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"

    # ------------------------------------------------------------------ param groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group to ``param_groups``.

        .. code-block:: python

            add_param_group(param_group: dict) -> None

        Options the group leaves out take the optimizer's ``defaults``. Useful to start
        training frozen layers part-way through.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        tensors, names = [], []
        for p in params:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (
                    p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
        with_names = bool(names)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in group) != with_names:
                txt = "with names" if with_names else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        if len({id(p) for p in tensors}) != len(tensors):
            _errors.warn("optimizer contains a parameter group with duplicate parameters; in "
                         "future, this will cause an error; see "
                         "github.com/pytorch/pytorch/issues/40967 for more information")
        # validated: now write (the caller's dict is the group, as in PyTorch)
        # NOTE: a list that counts its changes (``hookgrad._watch``): a compiled step's
        # re-run checks one counter, not each group's parameters, on every call
        param_group["params"] = WatchedList(tensors)
        if names:
            param_group["param_names"] = names
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized Tensors.

        .. code-block:: python

            zero_grad(set_to_none: bool = True) -> None

        With ``set_to_none`` (the default) ``.grad`` becomes ``None``, so the next
        ``step()`` skips parameters that get no gradient; otherwise it is zeroed in place.
        """
        prev = grad_mode._state.enabled
        grad_mode._state.enabled = False
        try:
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()
        finally:
            grad_mode._state.enabled = prev

    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step (update the parameters).

        .. code-block:: python

            step(closure: Callable[[], float] | None = None) -> float | None

        ``closure`` re-evaluates the model and returns the loss; it runs with grad mode on.
        """
        raise NotImplementedError

    def _step_with(self, closure, update):
        """``step``'s shared shape: the closure with grad mode on, then ``update()`` with it
        off; returns the closure's loss."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        prev = grad_mode._state.enabled
        grad_mode._state.enabled = False
        try:
            update()
        finally:
            grad_mode._state.enabled = prev
        return loss

    # ------------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register a hook run before ``step()``::

            hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)

        ``args`` includes the optimizer itself. Returns a ``RemovableHandle``.
        """
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register a hook run after ``step()``::

            hook(optimizer, args, kwargs) -> None
        """
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable[..., Any],
                                     prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer) -> None``, run before ``state_dict()`` builds the dict."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any],
                                      prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, run on the result
        of ``state_dict()``; a returned dict replaces it."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                          prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict) -> state_dict or None``, run before
        ``load_state_dict()`` loads; a returned dict is loaded instead."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any],
                                           prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer) -> None``, run after ``load_state_dict()``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------ state dict
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as a dict, in PyTorch's layout::

            {"state": {index: {name: Tensor, ...}, ...},
             "param_groups": [{option: value, ..., "params": [index, ...]}, ...]}

        Parameters are numbered in the order they appear across ``param_groups``.
        Example::

            >>> sd = opt.state_dict(); opt2.load_state_dict(sd)
        """
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        index = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state produced by ``state_dict()`` (of this optimizer class, possibly
        PyTorch's own: torch Tensors are converted).

        .. code-block:: python

            load_state_dict(state_dict: dict) -> None

        Groups' options are replaced by the saved ones; the parameters stay this
        optimizer's. Floating-point state is cast to its parameter's dtype (``step`` is
        kept as saved).
        """
        state_dict = state_dict.copy()
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast_state(param, v)
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self._install(state, new_groups, state_dict)
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    def _install(self, state, param_groups, state_dict):
        """Replace ``param_groups`` and the state (all-or-nothing; subclasses validate the
        state against the new groups before anything is assigned)."""
        self.param_groups = param_groups
        self.state = state

    def _state_storage(self):
        """What holds the state, to put back with ``_restore_storage`` (the live objects,
        not a copy: ``swap_in_optimizer_params_and_state`` installs other state meanwhile)."""
        return self.state

    def _restore_storage(self, storage) -> None:
        self.state = storage

    # ------------------------------------------------------------------ compiled mode
    def _state_arrays(self):
        """Everything ``step()`` reads or writes on the optimizer, as a pytree (see the
        module docstring). Generic optimizers: the per-parameter state dicts."""
        return {"state": [[dict(self.state[p]) if p in self.state else None
                           for p in g["params"]] for g in self.param_groups],
                "hparams": []}

    def _load_state_arrays(self, tree):
        """Install a tree returned by ``_state_arrays()`` (concrete or traced)."""
        for group, states in zip(self.param_groups, tree["state"]):
            for p, s in zip(group["params"], states):
                if s is None:
                    self.state.pop(p, None)
                else:
                    self.state[p] = dict(s)


def _to_tensor(value):
    """A foreign array (torch Tensor, NumPy, JAX) as a hookgrad Tensor."""
    if isinstance(value, Tensor):
        return Tensor._wrap(value._data)
    if isinstance(value, jax.Array):
        return Tensor._wrap(value)
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # torch.Tensor
        value = value.detach().cpu().numpy()
    return Tensor._wrap(jnp.asarray(np.asarray(value)))


def _is_tensor_like(value):
    return isinstance(value, (Tensor, jax.Array, np.ndarray)) or (
        hasattr(value, "detach") and hasattr(value, "numpy") and hasattr(value, "dtype"))


def _cast_state(param, value, key=None):
    """Copy loaded state, casting floating-point arrays to ``param``'s dtype (not ``step``)."""
    if _is_tensor_like(value):
        t = _to_tensor(value)
        if key != "step" and jnp.issubdtype(t._data.dtype, jnp.floating):
            t = Tensor._wrap(t._data.astype(param._data.dtype))
        return t
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
