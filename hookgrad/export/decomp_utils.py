"""``torch.export.decomp_utils``: the decomposition table of ``run_decompositions`` (empty
and unused in hookgrad, whose exported programs are StableHLO: docs/differences.md)."""
from .. import _missing
from .exported_program import CustomDecompTable

__all__ = ["CustomDecompTable"]

__getattr__ = _missing.module_getattr(__name__)
