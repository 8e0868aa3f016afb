"""``torch.functional``: the module where PyTorch defines some of ``torch``'s functions
(``einsum``, ``split``, ``norm``, ...). Each is ``torch``'s own: the names hookgrad has are
taken from ``hookgrad``; the others say hookgrad lacks them."""
import hookgrad as _hookgrad

from . import _missing

# PyTorch 2.13's torch.functional.__all__
_NAMES = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes",
          "broadcast_tensors", "cartesian_prod", "block_diag", "cdist", "chain_matmul",
          "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split", "stft",
          "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]
__all__ = [n for n in _NAMES if hasattr(_hookgrad, n)]
globals().update({n: getattr(_hookgrad, n) for n in __all__})

__getattr__ = _missing.module_getattr(__name__)
