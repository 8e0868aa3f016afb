"""``torch.distributed.tensor._utils``: helpers over DTensor placements. Importing code
loads; the local-shard arithmetic of a rank raises ``NotImplementedError`` (a hookgrad
Tensor's array is global: JAX places its shards)."""
from ... import _missing

compute_local_shape_and_global_offset = _missing.not_implemented(
    "torch.distributed.tensor._utils.compute_local_shape_and_global_offset")

__getattr__ = _missing.module_getattr(__name__)
