"""``torch.distributed.checkpoint.state_dict``: :class:`StateDictOptions` exists; the
sharded state-dict functions raise ``NotImplementedError`` when called."""
from dataclasses import dataclass

from ... import _missing

_NAMES = ["get_model_state_dict", "get_optimizer_state_dict", "get_state_dict",
          "set_model_state_dict", "set_optimizer_state_dict", "set_state_dict"]
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


__getattr__ = _missing.module_getattr(__name__)
