"""``torch.nn.modules.utils``: PyTorch's int-or-tuple helpers (``_pair``) and
:func:`consume_prefix_in_state_dict_if_present`."""
from ._utils import _ntuple, _pair, _single, _triple

__all__ = ["consume_prefix_in_state_dict_if_present"]

_quadruple = _ntuple(4)


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) that
    start with it, in place (a state dict saved from a wrapper, ``module.``)."""
    for key in sorted(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # keys name submodules: the wrapper's own ("module" for "module.") becomes the
            # root's, "", replacing the wrapper's root entry
            if key and (key == prefix.rstrip(".") or key.startswith(prefix)):
                metadata[key[len(prefix):]] = metadata.pop(key)


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
