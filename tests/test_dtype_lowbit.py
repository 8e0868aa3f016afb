"""The dtypes hookgrad names without tensors (sub-byte, bit, packed float4, quantized):
their fields against PyTorch's, and making a tensor of one raises hookgrad's error."""
import pickle

import pytest

import hookgrad
from tests.differential import raises, same_as_torch

NAMES = ["int1", "int2", "int3", "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3",
         "uint4", "uint5", "uint6", "uint7", "bits1x8", "bits2x4", "bits4x2", "bits8",
         "bits16", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2", "quint2x4"]


def test_fields_are_pytorchs():
    def run(L):
        out = []
        for n in NAMES:
            d = getattr(L, n)
            out.append([n, repr(d).split(".")[1], d.itemsize, d.is_floating_point,
                        d.is_complex, raises(lambda: d.is_signed) if n.startswith(("bits", "q"))
                        else d.is_signed, isinstance(d, L.dtype), d == getattr(L, n),
                        d != L.int8])
        return out
    got = same_as_torch(run)
    assert got[NAMES.index("bits16")][2] == 2 and got[NAMES.index("qint32")][2] == 4
    assert got[NAMES.index("uint3")][5] is False


def test_they_pickle_and_refuse_promotion_and_limits():
    for n in NAMES:
        d = getattr(hookgrad, n)
        assert pickle.loads(pickle.dumps(d)) is d
    same_as_torch(lambda L: [raises(L.promote_types, L.int4, L.float32),
                             raises(L.promote_types, L.qint8, L.float32),
                             raises(L.iinfo, L.int4), L.can_cast(L.int4, L.float32)])
    # PyTorch's finfo of the packed pair is an object whose every field raises
    with pytest.raises(TypeError):
        hookgrad.finfo(hookgrad.float4_e2m1fn_x2)


@pytest.mark.parametrize("name", NAMES)
def test_making_a_tensor_raises_not_implemented(name):
    d = getattr(hookgrad, name)
    match = f"hookgrad does not implement tensors of dtype torch.{name} yet"
    for make in (lambda: hookgrad.zeros(2, dtype=d), lambda: hookgrad.tensor([1], dtype=d),
                 lambda: hookgrad.ones(2).to(d), lambda: hookgrad.empty(2, dtype=d)):
        with pytest.raises(NotImplementedError, match=match):
            make()
