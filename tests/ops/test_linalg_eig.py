"""``linalg.eig``: PyTorch's errors, values (eigenvectors up to a phase), the node and its
saved tensors, and gradients of losses free of the eigenvectors' phase, against torch and
against JAX (its eigenvalue derivative and finite differences)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from tests.differential import py, raises_as_torch, same_as_torch

_MATS = [([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [1.0, 1.0, 1.0]], "float32"),
         ([[0.0, -1.0], [1.0, 0.5]], "float64"),  # a conjugate pair
         ([[1 + 1j, 2.0, 0.3], [0.5j, -1.0, 1.0], [0.2, 1j, 2.0]], "complex128")]


@pytest.mark.parametrize("name", ["eig", "eigvals"])
@pytest.mark.parametrize("arg, exc, match", [
    (lambda L: L.ones(2, 3), RuntimeError,
     r"^linalg\.{}: A must be batches of square matrices, but they are 2 by 3 matrices$"),
    (lambda L: L.ones(3), RuntimeError,
     r"^linalg\.{}: The input tensor A must have at least 2 dimensions\.$"),
    (lambda L: L.ones(2, 2, dtype=L.int64), RuntimeError, r"^Unknown Complex ScalarType for Long$"),
    (lambda L: L.ones(2, 2, dtype=L.float16), NotImplementedError,
     r"^\"linalg_eig_out_cpu\" not implemented for 'Half'$"),
    (lambda L: L.ones(2, 2, dtype=L.bfloat16), NotImplementedError,
     r"^\"linalg_eig_out_cpu\" not implemented for 'BFloat16'$")])
def test_eig_and_eigvals_refuse_as_pytorchs(name, arg, exc, match):
    raises_as_torch(lambda L: getattr(L.linalg, name)(arg(L)), exc, match.format(name))


def test_eig_values_node_and_saved_tensors_are_pytorchs():
    def scenario(L):
        out = []
        for m, dt in _MATS:
            a = L.tensor(m, dtype=getattr(L, dt), requires_grad=True)
            res = L.linalg.eig(a)
            w, v = res
            node = w.grad_fn
            out.append([py(L.view_as_real(w)), type(res).__name__, res.eigenvectors is v,
                        node.name(), node is v.grad_fn, str(w.dtype).split(".")[-1],
                        py(L.view_as_real(node._saved_eigenvalues)),
                        py(L.view_as_real(v).pow(2).sum(-1))])  # moduli: free of the phase
        out.append(list(L.linalg.eig(L.ones(2, 3, 3))[1].shape))
        out.append(L.linalg.eig(L.eye(2)).eigenvalues.grad_fn is None)
        return out
    got = same_as_torch(scenario)
    assert got[0][1] == "linalg_eig" and got[0][3] == "LinalgEigBackward0"
    for (m, _), (w, *_rest) in zip(_MATS, got):  # A v = w v for each pair
        w_c = np.array(w)[:, 0] + 1j * np.array(w)[:, 1]
        assert np.allclose(np.sort_complex(w_c), np.sort_complex(np.linalg.eigvals(m)),
                           atol=1e-5)
    for m, dt in _MATS:  # the eigenvectors, each up to its phase, and normalized
        v = np.array(hg.linalg.eig(hg.tensor(m, dtype=getattr(hg, dt))).eigenvectors.tolist())
        w = np.array(hg.linalg.eig(hg.tensor(m, dtype=getattr(hg, dt))).eigenvalues.tolist())
        np.testing.assert_allclose(np.array(m) @ v, v * w, atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1, rtol=1e-5)


def _loss(L, w, v):
    """Depends on the eigenvectors through their moduli only (PyTorch refuses a loss that
    depends on their phase), and on the eigenvalues' real and imaginary parts."""
    n = v.shape[-1]
    weights = L.arange(n * n).reshape(n, n).to(v.real.dtype)
    return ((v.abs() ** 2 * weights).sum() + (w.real ** 3).sum() + (w.imag ** 2).sum()
            + v.abs().sum())


@pytest.mark.parametrize("m, dt", _MATS)
def test_eig_gradients_are_pytorchs_and_finite_differences(m, dt):
    def scenario(L):
        a = L.tensor(m, dtype=getattr(L, dt), requires_grad=True)
        _loss(L, *L.linalg.eig(a)).backward()
        g = a.grad
        return py(L.view_as_real(g) if g.is_complex() else g)
    got = same_as_torch(scenario, tol=1e-4 if dt == "float32" else 1e-8)
    if dt != "float32":  # central differences of the same loss, in float64
        a0 = np.array(m, dtype=np.complex128 if dt == "complex128" else np.float64)

        def f(a):  # _loss in NumPy
            w, v = np.linalg.eig(a)
            return ((np.abs(v) ** 2 * np.arange(v.size).reshape(v.shape)).sum()
                    + (w.real ** 3).sum() + (w.imag ** 2).sum() + np.abs(v).sum())
        eps, fd = 1e-6, np.zeros(a0.shape + ((2,) if dt == "complex128" else ()))
        for idx in np.ndindex(a0.shape):
            for k, step in enumerate((1, 1j) if dt == "complex128" else (1,)):
                e = np.zeros_like(a0)
                e[idx] = eps * step
                d = (f(a0 + e) - f(a0 - e)) / (2 * eps)
                if dt == "complex128":
                    fd[idx + (k,)] = d
                else:
                    fd[idx] = d
        np.testing.assert_allclose(np.array(got), fd, rtol=1e-5, atol=1e-6)


def test_eig_eigenvalue_gradient_is_jaxs():
    """The eigenvalues' gradient (PyTorch's formula of the saved eigenvalues and
    eigenvectors) equals JAX's own (jnp.linalg.eigvals's) derivative."""
    m = np.array(_MATS[0][0], np.float64)
    a = hg.tensor(m.tolist(), dtype=hg.float64, requires_grad=True)
    w = hg.linalg.eig(a).eigenvalues
    (w.real ** 3 + w.imag ** 2).sum().backward()
    want = jax.grad(lambda x: (lambda e: (e.real ** 3 + e.imag ** 2).sum())(
        jnp.linalg.eigvals(x)))(jnp.asarray(m))
    np.testing.assert_allclose(np.array(a.grad.tolist()), np.asarray(want), rtol=1e-10,
                               atol=1e-13)


def test_eig_out_takes_the_pair():
    def scenario(L):
        outs = (L.empty(2, dtype=L.complex64), L.empty(2, 2, dtype=L.complex64))
        res = L.linalg.eig(L.tensor([[2.0, 0.0], [0.0, 3.0]]), out=outs)
        return [py(L.view_as_real(outs[0])), res[0] is outs[0], res[1] is outs[1]]
    assert same_as_torch(scenario)[1:] == [True, True]


@pytest.mark.parametrize("name", ["eig", "eigvals"])
@pytest.mark.parametrize("m, dt", _MATS)
def test_eig_and_eigvals_pack_only_the_eigenvalues_and_eigenvectors(name, m, dt):
    """PyTorch's ``LinalgEigBackward0`` saves the results, not ``A``: the pack hooks see
    the eigenvalues and then the eigenvectors, the unpack hooks give them back to the
    backward, whose gradient is the one without hooks."""
    def scenario(L):
        a = L.tensor(m, dtype=getattr(L, dt), requires_grad=True)
        log = []

        def pack(t):
            log.append(("pack", list(t.shape), str(t.dtype).split(".")[-1]))
            return t

        def unpack(t):
            log.append(("unpack", list(t.shape)))
            return t
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            res = getattr(L.linalg, name)(a)
        w = res if name == "eigvals" else res[0]
        node = w.grad_fn
        saved = sorted(n for n in dir(node) if n.startswith("_saved_"))
        (w.real ** 3 + w.imag ** 2).sum().backward()
        g = a.grad
        a.grad = None
        w = getattr(L.linalg, name)(a)
        (w if name == "eigvals" else w[0]).real.pow(3).add(
            (w if name == "eigvals" else w[0]).imag.pow(2)).sum().backward()
        return [log, node.name(), saved, py(L.view_as_real(g) if g.is_complex() else g),
                py(L.view_as_real(a.grad) if a.grad.is_complex() else a.grad)]
    got = same_as_torch(scenario, tol=1e-4 if dt == "float32" else 1e-8)
    n, cdt = len(m), "complex64" if dt == "float32" else "complex128"
    assert got[0] == [("pack", [n], cdt), ("pack", [n, n], cdt), ("unpack", [n]),
                      ("unpack", [n, n])]
    assert got[1:3] == ["LinalgEigBackward0", ["_saved_eigenvalues", "_saved_eigenvectors"]]
    np.testing.assert_allclose(np.array(got[3]), np.array(got[4]), rtol=1e-5, atol=1e-6)


def test_eig_second_order_reaches_each_saved_result_by_its_output():
    """Under ``create_graph`` the backward reads the saved eigenvalues and eigenvectors as
    outputs 0 and 1 of the node: the second derivative is PyTorch's."""
    def scenario(L):
        a = L.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=L.float64, requires_grad=True)
        w, v = L.linalg.eig(a)
        loss = (w.real ** 3).sum() + (v.abs() ** 2 * L.arange(4.0).reshape(2, 2)).sum()
        g, = L.autograd.grad(loss, a, create_graph=True)
        e = L.linalg.eigvals(a)
        g2, = L.autograd.grad((e.real ** 3).sum(), a, create_graph=True)
        return [py(L.autograd.grad(g.sum(), a)[0]), py(L.autograd.grad(g2.sum(), a)[0])]
    got = same_as_torch(scenario, tol=1e-8)
    assert np.array(got).shape == (2, 2, 2)



def test_eig_under_jax_grad_with_saved_tensor_hooks_packs_the_results_and_differentiates():
    """Functional mode (``jax.grad`` of ``functional_call``) runs the op as a custom_vjp
    whose backward gets what the hooks unpacked: the eigenvalues and eigenvectors, read by
    the node's formula; its gradient is eager's."""
    seen = []

    class Eig(hg.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = hg.nn.Parameter(hg.tensor([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0],
                                                [1.0, 1.0, 1.0]], dtype=hg.float64))

        def forward(self, s):
            b = self.a * s
            with hg.autograd.graph.saved_tensors_hooks(
                    lambda t: seen.append(list(t.shape)) or t, lambda t: t):
                w = hg.linalg.eigvals(b)
            return (w.real ** 3 + w.imag ** 2).sum()
    m = Eig()
    m(hg.tensor(2.0, dtype=hg.float64)).backward()
    eager = np.array(m.a.grad.tolist())
    assert seen == [[3], [3, 3]]
    seen.clear()
    got = jax.grad(lambda p: hg.func.functional_call(m, p, (jnp.float64(2.0),)))(
        hg.func.state(m))
    assert seen == [[3], [3, 3]]
    np.testing.assert_allclose(np.asarray(got["a"]), eager, rtol=1e-10, atol=1e-12)
