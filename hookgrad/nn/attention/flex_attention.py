"""``torch.nn.attention.flex_attention``: the names, so code that imports them loads. The
mask combinators work; building a block mask and ``flex_attention`` itself are not
implemented and raise when called."""
from typing import NamedTuple, Optional, TypedDict

from ... import _dtype, _missing

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention`` should return."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """``flex_attention``'s auxiliary outputs."""
    lse: Optional[object] = None
    max_scores: Optional[object] = None


class FlexKernelOptions(TypedDict, total=False):
    """Options of the flex-attention kernel."""


# exists for isinstance checks and annotations; hookgrad cannot build one yet
BlockMask = _missing.not_implemented_class("torch.nn.attention.flex_attention.BlockMask")


flex_attention = _missing.not_implemented("torch.nn.attention.flex_attention.flex_attention")
create_block_mask = _missing.not_implemented(
    "torch.nn.attention.flex_attention.create_block_mask")
create_mask = _missing.not_implemented("torch.nn.attention.flex_attention.create_mask")


def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that keeps every position: a 0-d ``True``."""
    return batch.new_ones((), dtype=_dtype.bool)


def _combine(mask_mods, how, name):
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def combined(b, h, q_idx, kv_idx):
        make = b.new_zeros if how == "or" else b.new_ones
        result = make((), dtype=_dtype.bool)
        for mod in mask_mods:
            m = mod(b, h, q_idx, kv_idx)
            result = (result | m) if how == "or" else (result & m)
        return result
    combined.__name__ = name
    return combined


def or_masks(*mask_mods):
    """A mask_mod keeping a position that any of ``mask_mods`` keeps."""
    return _combine(mask_mods, "or", "or_mask")


def and_masks(*mask_mods):
    """A mask_mod keeping a position that all of ``mask_mods`` keep."""
    return _combine(mask_mods, "and", "and_mask")


__getattr__ = _missing.module_getattr(__name__)
