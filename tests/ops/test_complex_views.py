"""``view_as_real`` and ``view_as_complex`` of inputs in any layout: PyTorch's strides and
storage offset (the input's, counted in the new dtype's elements), its refusals, values
and gradients; against torch where it is installed. Writes through them:
tests/ops/test_complex_view_writes.py."""
import pytest

from tests.differential import py, raises_as_torch, same_as_torch


def _complex(L):
    return L.complex(L.arange(12.0).reshape(3, 4), L.arange(12.0).reshape(3, 4) * -0.5)


_REAL_INPUTS = {
    "transposed": lambda L: _complex(L).t(),
    "strided": lambda L: _complex(L)[:, ::2],
    "offset": lambda L: _complex(L)[1:],
    "offset and transposed": lambda L: _complex(L)[1:, 1:].mT,
    "selected": lambda L: _complex(L)[:, 2],
    "expanded": lambda L: _complex(L)[:1].expand(2, 4),
    "contiguous": _complex,
}


@pytest.mark.parametrize("make", _REAL_INPUTS.values(), ids=_REAL_INPUTS.keys())
def test_view_as_real_keeps_the_inputs_strides_and_offset(make):
    def scenario(L):
        z = make(L)
        r = L.view_as_real(z)
        back = L.view_as_complex(r)
        return [list(r.shape), list(r.stride()), r.storage_offset(), r.is_contiguous(),
                py(r), list(back.stride()), back.storage_offset(), py(L.view_as_real(back))]
    got = same_as_torch(scenario, tol=0)
    assert got[1][-1] == 1 and got[5] == [s // 2 for s in got[1][:-1]]


_COMPLEX_INPUTS = {
    "transposed pairs": lambda L: L.arange(16.0).reshape(4, 2, 2).transpose(0, 1),
    "strided rows": lambda L: L.arange(24.0).reshape(6, 2, 2)[::3],
    "offset rows": lambda L: L.arange(12.0).reshape(3, 4)[1:, 2:],
    "one pair per row": lambda L: L.arange(12.0).reshape(2, 6)[:, :2].reshape(2, 1, 2),
    "expanded": lambda L: L.arange(2.0).expand(3, 2),
}


@pytest.mark.parametrize("make", _COMPLEX_INPUTS.values(), ids=_COMPLEX_INPUTS.keys())
def test_view_as_complex_keeps_the_pairs_strides_and_offset(make):
    def scenario(L):
        c = L.view_as_complex(make(L))
        return [list(c.shape), list(c.stride()), c.storage_offset(), c.is_contiguous(),
                py(L.view_as_real(c))]
    same_as_torch(scenario, tol=0)


@pytest.mark.parametrize("make, match", [
    (lambda L: L.arange(12.0).reshape(3, 4)[:, 1:3], "a storage_offset divisible by 2"),
    (lambda L: L.arange(6.0)[1:5].reshape(2, 2), "a storage_offset divisible by 2"),
    (lambda L: L.arange(12.0).reshape(4, 3)[:, :2],
     "a stride divisible by 2 for all but last dimension"),
    (lambda L: L.arange(16.0).reshape(4, 2, 2).transpose(1, 2),
     "a last dimension with stride 1"),
    (lambda L: L.arange(6.0).reshape(2, 3), "a last dimension of size 2")])
def test_view_as_complex_refuses_pairs_it_cannot_read_as_pytorchs(make, match):
    raises_as_torch(lambda L: L.view_as_complex(make(L)), RuntimeError,
                    f"^Tensor must have {match}$")


def test_a_strided_view_as_real_differentiates_and_a_clone_keeps_its_own_values():
    """The gradient through a non-dense view_as_real is PyTorch's; a write into a clone of
    the result keeps its other elements."""
    def scenario(L):
        x = L.arange(12.0).reshape(3, 4).requires_grad_()
        z = L.complex(x, x * 0.5)[:, ::2].t()
        r = L.view_as_real(z)
        (r * L.arange(12.0).reshape(2, 3, 2)).sum().backward()
        w = L.view_as_real(z.detach()).clone()
        w[0, 1, 1] = -1.0
        return [py(x.grad), list(r.stride()), py(w)]
    same_as_torch(scenario, tol=0)
