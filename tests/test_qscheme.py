"""``torch.qscheme`` and its constants behave as PyTorch's: named singletons of one type
that cannot be made anew, pickled by name."""
import pickle

import pytest

from tests.differential import raises_as_torch, same_as_torch

NAMES = ["per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
         "per_channel_symmetric", "per_channel_affine_float_qparams"]


@pytest.mark.parametrize("name", NAMES)
def test_constant_as_torch(name):
    def run(L):
        q = getattr(L, name)
        return {"repr": repr(q).split(".", 1)[1], "str": str(q).split(".", 1)[1],
                "type": type(q) is L.qscheme, "type_name": type(q).__name__,
                "pickled": pickle.loads(pickle.dumps(q)) is q,
                "equal": [q == getattr(L, n) for n in NAMES], "hash": hash(q) == hash(q)}
    assert same_as_torch(run)["type"]


def test_qscheme_cannot_be_made():
    raises_as_torch(lambda L: L.qscheme(), TypeError, "cannot create 'torch.qscheme' instances")
