"""The typing helpers and docstring notes ``nn.functional`` exports beside its functions,
as PyTorch's: what they are and how library code uses them."""
import typing

import hookgrad.nn.functional as F

from ..differential import same_as_torch


def _names(L):
    f = L.nn.functional
    return [f.BroadcastingList1[int], f.BroadcastingList2[float], f.BroadcastingList3[int],
            f.DType.__name__, f.Optional is typing.Optional, f.TYPE_CHECKING,
            sorted(f.reproducibility_notes), sorted(f.sparse_support_notes), sorted(f.tf32_notes)]


def test_names_match_torch():
    got = same_as_torch(_names)
    assert got[:3] == [None, None, None] and got[3] == "int"


def test_notes_fill_docstrings_by_key():
    doc = "Note:\n    {forward_reproducibility_note}\n{tf32_note}{sparse_beta_warning}".format(
        **F.reproducibility_notes, **F.tf32_notes, **F.sparse_support_notes)
    assert "nondeterministically" in doc and "TensorFloat32" in doc and "sparse" in doc
