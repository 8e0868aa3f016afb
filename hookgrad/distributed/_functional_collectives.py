"""``torch.distributed._functional_collectives``: collectives that return new Tensors.

The names exist so that importing code loads; the collectives raise ``NotImplementedError``
when called (hookgrad's collectives are ``hookgrad.distributed``'s, over JAX's sharding).
:func:`wait_tensor` is real: hookgrad has no asynchronous collective to wait for.
"""
from .. import _missing

_NAMES = ["all_reduce", "all_reduce_coalesced", "all_gather_tensor",
          "all_gather_tensor_autograd", "all_gather_into_tensor_coalesced",
          "reduce_scatter_tensor", "reduce_scatter_tensor_autograd",
          "reduce_scatter_tensor_coalesced", "all_to_all_single", "all_to_all_single_autograd",
          "broadcast", "permute_tensor", "all_reduce_inplace", "all_gather_inplace",
          "reduce_scatter_tensor_inplace", "all_to_all_inplace"]
globals().update({n: _missing.not_implemented(f"torch.distributed._functional_collectives.{n}")
                  for n in _NAMES})


def wait_tensor(tensor):
    """Wait for the collective that produced ``tensor``; returns it. hookgrad's collectives
    finish before they return, so there is nothing to wait for."""
    return tensor


# hookgrad's collectives are never asynchronous: no such Tensor is ever made
AsyncCollectiveTensor = _missing.not_implemented_class(
    "torch.distributed._functional_collectives.AsyncCollectiveTensor")


__getattr__ = _missing.module_getattr(__name__)
