"""``torch.distributed.checkpoint.state_dict``: a model's state dict whether or not
``fully_shard`` split it over processes.

``get_model_state_dict`` gives each process's shards (``full_state_dict=False``) or the
full tensors gathered from every process (``full_state_dict=True``); ``set_model_state_dict``
loads either into the model, keeping each process's rows of a full tensor. The optimizer
functions raise ``NotImplementedError`` when called.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax

from ... import _missing
from .._fsdp_processes import full_value, mark, shard_of

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict"]

_NAMES = ["get_optimizer_state_dict", "get_state_dict", "set_optimizer_state_dict",
          "set_state_dict"]
globals().update({n: _missing.not_implemented(f"torch.distributed.checkpoint.state_dict.{n}")
                  for n in _NAMES})


@dataclass
class StateDictOptions:
    """How the state-dict functions gather and load state (PyTorch's fields)."""
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _options(options):
    options = StateDictOptions() if options is None else options
    if options.broadcast_from_rank0:
        raise NotImplementedError(
            "hookgrad does not implement torch.distributed.checkpoint.state_dict with "
            "StateDictOptions(broadcast_from_rank0=True) yet: give every process the full "
            "state dict")
    return options


def get_model_state_dict(model: Any, *, submodules: Any = None,
                         options: StateDictOptions | None = None) -> dict[str, Any]:
    """``model``'s state dict: for a parameter ``fully_shard`` split over processes, this
    process's shard, or with ``options.full_state_dict`` the full tensor gathered from every
    process (every process calls it; with ``cpu_offload`` too, only rank 0 gets the
    entries, the others an empty dict).

    ::

        get_model_state_dict(model, *, submodules=None, options=None) -> dict
    """
    if submodules is not None:
        raise NotImplementedError("hookgrad does not implement get_model_state_dict("
                                  "submodules=...) yet (PyTorch deprecates it)")
    options = _options(options)
    params = dict(model.named_parameters(remove_duplicate=False))
    state = model.state_dict()
    for key in list(state):
        p = params.get(key)
        if options.ignore_frozen_params and p is not None and not p.requires_grad:
            del state[key]
        elif p is not None and shard_of(p) is not None:
            state[key] = full_value(p) if options.full_state_dict else \
                mark(state[key], shard_of(p))
    if options.full_state_dict and options.cpu_offload and jax.process_index() != 0:
        return {}
    return state


def set_model_state_dict(model: Any, model_state_dict: dict[str, Any], *,
                         options: StateDictOptions | None = None) -> Any:
    """Load ``model_state_dict`` (shards, or full tensors of which each process keeps its
    rows) into ``model``. Returns ``load_state_dict``'s ``(missing_keys,
    unexpected_keys)``.

    ::

        set_model_state_dict(model, model_state_dict, *, options=None) -> _IncompatibleKeys
    """
    options = _options(options)
    params = dict(model.named_parameters(remove_duplicate=False))
    state = dict(model_state_dict)
    for key, value in state.items():
        rows = shard_of(params[key]) if key in params else None
        if rows is not None and tuple(value.shape) == rows.full_shape:
            state[key] = value[rows.start:rows.stop]
    return model.load_state_dict(state, strict=options.strict)


__getattr__ = _missing.module_getattr(__name__)
