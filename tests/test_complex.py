"""Complex numbers as PyTorch has them: making and taking apart complex tensors, the
``real``/``imag`` setters, conjugation, ``complex32``, and gradients in PyTorch's
convention (the conjugate Wirtinger derivative of a real loss: JAX's ``jax.grad`` gives
its conjugate). The op rows (tests/ops/_op_table.py, "branch complex") check each op's
values, gradients and nodes through real inputs and outputs; here complex leaves and
complex gradients are compared with PyTorch."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from tests.differential import py, raises, raises_as_torch, same_as_torch

RE = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
IM = [[1.0, 0.5, -2.0], [-0.5, 1.25, 0.75]]


def _dt(d):
    return str(d).rpartition(".")[2]


def leaf(L):
    return L.complex(L.tensor(RE), L.tensor(IM)).requires_grad_()


LOSSES = {
    "view_as_real pow": lambda L, z: L.view_as_real(z).pow(2).sum(),
    "abs": lambda L, z: z.abs().sum(),
    "abs of square": lambda L, z: (z * z).abs().sum(),
    "real of exp times w": lambda L, z: (z.exp() * L.complex(L.tensor(IM),
                                                              L.tensor(RE))).real.sum(),
    "imag of reciprocal": lambda L, z: z.reciprocal().imag.sum(),
    "angle": lambda L, z: z.angle().sum(),
    "sgn": lambda L, z: L.view_as_real(z.sgn()).sum(),
    "conj times z": lambda L, z: (z.conj() * z * L.tensor(RE)).real.sum(),
    "conj_physical": lambda L, z: L.view_as_real(z.conj_physical() * (2 + 1j)).sum(),
    "fft": lambda L, z: (L.fft.fft(z, dim=0).abs() ** 2).sum(),
    "ifft2 pairs": lambda L, z: L.view_as_real(L.fft.ifft2(z)).sin().sum(),
    "hfft": lambda L, z: L.fft.hfft(z, n=5).pow(2).sum(),
    "irfft": lambda L, z: (L.fft.irfft(z) * L.arange(4.0)).sum(),
}


@pytest.mark.parametrize("loss", LOSSES.values(), ids=list(LOSSES))
def test_complex_leaf_grad_is_pytorchs(loss):
    def f(L):
        z = leaf(L)
        out = loss(L, z)
        out.backward()
        return [py(out), _pairs(L, z.grad)]
    same_as_torch(f, tol=1e-4)


def _pairs(L, t):
    return py(L.view_as_real(t.resolve_conj()))


def test_hooks_and_autograd_grad_see_pytorchs_complex_gradients():
    def f(L):
        z = leaf(L)
        seen = []
        w = z * (1 - 2j)
        w.register_hook(lambda g: seen.append(_pairs(L, g)))
        y = w.exp()
        gy = L.complex(L.tensor(IM), L.tensor(RE))  # a complex grad_outputs
        (gz,) = L.autograd.grad(y, z, gy)
        return [seen, _pairs(L, gz)]
    same_as_torch(f, tol=1e-4)


def test_jax_grad_is_the_conjugate_of_the_grad():
    """The convention, said once against JAX itself: ``z.grad`` of ``|z|^2`` is ``2z``,
    and ``jax.grad`` of the same loss is ``2 conj(z)``."""
    z = leaf(hg)
    (z.abs() ** 2).sum().backward()
    zv = np.asarray(z.detach()._data)
    np.testing.assert_allclose(np.asarray(z.grad._data), 2 * zv, rtol=1e-6)
    jg = jax.grad(lambda v: jnp.sum(jnp.abs(v) ** 2))(jnp.asarray(zv))
    np.testing.assert_allclose(np.asarray(jg), np.conj(2 * zv), rtol=1e-6)


def test_second_order_gradients_of_complex_ops():
    def f(L):
        x = L.tensor(RE, requires_grad=True)
        z = L.polar(x.exp(), x)
        (g,) = L.autograd.grad((z * z).real.sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        return [py(g), py(gg)]
    same_as_torch(f, tol=1e-4)


def test_making_and_taking_apart():
    def f(L):
        a, b = L.tensor(RE), L.tensor(IM)
        z = L.complex(a, b)
        zz = L.view_as_complex(L.stack([a, b], -1))
        return {"complex": [_dt(z.dtype), _pairs(L, z)], "view_as_complex": _pairs(L, zz),
                "polar": _pairs(L, L.polar(a.abs(), b)), "broadcast": list(
                    L.complex(a[:1], b[:, :1]).shape),
                "real": py(z.real), "imag": py(L.imag(z)), "real of real is itself":
                    a.real is a and L.real(a) is a, "conj of real": a.conj() is a,
                "conj_physical of real": py(L.conj_physical(a)),
                "double": _dt(L.complex(a.double(), b.double()).dtype),
                "view_as_real_copy": py(L.view_as_real_copy(z)),
                "view_as_complex_copy": _pairs(L, L.view_as_complex_copy(
                    L.stack([a, b], -1))), "is_complex": z.is_complex()}
    got = same_as_torch(f)
    assert got["real"] == RE and got["imag"] == IM


def test_node_names():
    def f(L):
        a = L.tensor(RE, requires_grad=True)
        b = L.tensor(IM, requires_grad=True)
        z = L.complex(a, b)
        return [t.grad_fn.name() for t in (
            z, L.view_as_real(z), L.view_as_complex(L.stack([a, b], -1)), z.conj(),
            z.conj_physical(), z.real, z.imag, L.polar(a, b), L.view_as_real_copy(z),
            z.abs(), z.angle(), z.sgn(), L.fft.fft(z), L.fft.rfft(a), L.fft.irfft(z),
            L.fft.fft(a), L.fft.hfft(z), L.fft.fftshift(a))]
    same_as_torch(f, names=False)


def test_the_real_and_imag_setters_write_into_the_tensor():
    def f(L):
        a = L.tensor(RE, requires_grad=True)
        v = L.tensor([3.0, 4.0, 5.0], requires_grad=True)
        z = L.complex(a, a * 2)
        z.real = v  # broadcast, into a non-leaf
        name = z.grad_fn.name()
        edges = [n.name() for n, _ in z.grad_fn.next_functions]
        z.imag = 7  # a Python number
        L.view_as_real(z).pow(2).sum().backward()
        w = L.zeros(2, dtype=L.complex64)
        w.real = L.tensor([1.0, 2.0])
        r = L.tensor([1.0, 2.0])
        r.real = L.tensor([5.0, 6.0])  # a real tensor's real part is itself
        return [name, edges, _pairs(L, z), py(a.grad), py(v.grad), _pairs(L, w), py(r),
                raises(lambda: setattr(r, "imag", L.tensor([1.0, 1.0]))),
                raises(lambda: setattr(leaf(L), "real", L.tensor(RE))),
                raises(lambda: setattr(L.complex(a, a), "real", L.ones(3, 4)))]
    got = same_as_torch(f, names=False)
    assert got[0].endswith("CopySlices")


def test_conj_physical_in_place():
    def f(L):
        z = L.complex(L.tensor(RE), L.tensor(IM))
        v = z._version
        r = z.conj_physical_()
        x = L.tensor(RE)
        return [r is z, z._version - v, _pairs(L, z), py(L.conj_physical_(x)),
                py(L.conj_physical(z, out=L.empty(2, 3, dtype=L.complex64)).real)]
    same_as_torch(f)


@pytest.mark.parametrize("call, exc, match", [
    (lambda L: L.complex(L.ones(2), L.ones(2).double()), RuntimeError,
     "Expected object of scalar type Float but got scalar type Double for second argument"),
    (lambda L: L.complex(L.ones(2).long(), L.ones(2).long()), RuntimeError,
     "Expected both inputs to be Half, Float or Double tensors but got Long and Long"),
    (lambda L: L.polar(L.ones(2).int(), L.ones(2).int()), RuntimeError,
     "Expected both inputs to be Half, Float or Double tensors but got Int and Int"),
    (lambda L: L.complex(L.ones(2), L.ones(3)), RuntimeError,
     r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
    (lambda L: L.view_as_real(L.ones(2)), RuntimeError,
     "view_as_real is only supported for complex tensors"),
    (lambda L: L.view_as_complex(L.ones(3, 3)), RuntimeError,
     "Tensor must have a last dimension of size 2"),
    (lambda L: L.view_as_complex(L.ones(2, 2).long()), RuntimeError,
     "view_as_complex is only supported for half, float and double tensors, but got a "
     "tensor of scalar type: Long"),
    (lambda L: L.view_as_complex(L.ones(2, 2).t()), RuntimeError,
     "Tensor must have a last dimension with stride 1"),
    (lambda L: L.view_as_complex(L.ones(2, 3)[:, :2]), RuntimeError,
     "Tensor must have a stride divisible by 2 for all but last dimension"),
    (lambda L: L.view_as_complex(L.tensor(1.0)), RuntimeError,
     "Input tensor must have one or more dimensions"),
    (lambda L: L.imag(L.ones(2)), RuntimeError,
     "imag is not implemented for tensors with non-complex dtypes."),
    (lambda L: L.view_as_complex_copy(L.ones(2, 2, requires_grad=True)), RuntimeError,
     "view_as_complex_copy does not support automatic differentiation for outputs with "
     "complex dtype."),
])
def test_errors_are_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)


def test_complex32_exists_and_tensors_of_it_say_they_are_missing():
    def f(L):
        d = L.complex32
        return [_dt(d), d is L.chalf, d.is_complex, d.is_floating_point, d.itemsize,
                _dt(d.to_real()), _dt(L.complex64.to_real())]
    same_as_torch(f)
    for make in (lambda: hg.ones(2).chalf(), lambda: hg.zeros(2, dtype=hg.complex32),
                 lambda: hg.complex(hg.ones(2).half(), hg.ones(2).half()),
                 lambda: hg.fft.fft(hg.ones(4).half())):
        with pytest.raises(NotImplementedError,
                           match="hookgrad does not implement tensors of dtype torch.complex32"):
            make()


def test_complex_programs_compile_to_eager_values_and_gradients():
    def step(x, z):
        y = hg.fft.rfft(x) * hg.polar(hg.ones(5), hg.arange(5.0))
        loss = hg.view_as_real(y).pow(2).sum() + hg.fft.irfft(y).abs().sum() + \
            (z.conj() * z).real.sum() + z.sgn().angle().sum()
        loss.backward()
        return loss

    def run(fn):
        x = hg.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(3, 8),
                      requires_grad=True)
        z = hg.complex(hg.tensor(RE), hg.tensor(IM)).requires_grad_()
        loss = fn(x, z)
        return [np.asarray(loss._data), np.asarray(x.grad._data), np.asarray(z.grad._data)]
    eager = run(step)
    compiled = hg.compile(step)
    for _ in range(2):  # traced, then replayed
        for got, want in zip(run(compiled), eager):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_complex_ops_under_vmap_are_the_per_example_results():
    x = hg.tensor(np.linspace(-2, 2, 24, dtype=np.float32).reshape(3, 8))

    def f(r):
        return hg.view_as_real(hg.fft.fft(hg.complex(r, r.flip(0))).conj() * r.sgn())
    got = hg.vmap(f)(x)
    want = hg.stack([f(r) for r in x])
    np.testing.assert_allclose(np.asarray(got._data), np.asarray(want._data), rtol=1e-6,
                               atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda L: L.complex(L.tensor(RE), L.tensor(IM)),
    lambda L: L.complex(L.tensor([1.0, -2.5]), L.tensor([0.0, 1e-5])),
    lambda L: L.complex(L.tensor(2.0), L.tensor(-3.0)).double(),
    lambda L: L.complex(L.arange(3000.0), -L.arange(3000.0)),
    lambda L: L.zeros(2, 0, dtype=L.complex64),
    lambda L: L.tensor([], dtype=L.int64),
])
def test_repr_matches_torch(make):
    same_as_torch(lambda L: repr(make(L)).replace("torch.", "hookgrad."))
