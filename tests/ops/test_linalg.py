"""``torch.linalg`` beyond the op-table rows (tests/ops/_op_table.py): PyTorch's errors for
bad shapes, dtypes and singular or indefinite input (``LinAlgError``), the ``info`` of the
``_ex`` forms, the named-tuple results, empty and batched input, and what changes inside
``hookgrad.compile`` (no eager check of a traced result)."""
import numpy as np
import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch

_SING = [[1.0, 2.0], [2.0, 4.0]]
_NOT_PD = [[1.0, 2.0], [2.0, 1.0]]

BAD_INPUT = {
    "inv non-square": lambda L: L.linalg.inv(L.ones(3, 4)),
    "inv 1-d": lambda L: L.linalg.inv(L.ones(3)),
    "inv integer": lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.long)),
    "inverse non-square": lambda L: L.inverse(L.ones(3, 4)),
    "inv singular": lambda L: L.linalg.inv(L.tensor(_SING)),
    "inv singular batch": lambda L: L.linalg.inv(L.stack([L.eye(2), L.tensor(_SING)])),
    "inv_ex check_errors": lambda L: L.linalg.inv_ex(L.tensor(_SING), check_errors=True),
    "det non-square": lambda L: L.linalg.det(L.ones(3, 4)),
    "det method non-square": lambda L: L.ones(3, 4).det(),
    "det integer": lambda L: L.det(L.ones(3, 3, dtype=L.long)),
    "slogdet non-square": lambda L: L.linalg.slogdet(L.ones(3, 4)),
    "solve singular": lambda L: L.linalg.solve(L.tensor(_SING), L.ones(2)),
    "solve non-square": lambda L: L.linalg.solve(L.ones(3, 4), L.ones(3)),
    "solve vector rows": lambda L: L.linalg.solve(L.eye(3), L.ones(4)),
    "solve matrix rows": lambda L: L.linalg.solve(L.eye(3), L.ones(4, 2)),
    "solve right rows": lambda L: L.linalg.solve(L.eye(3), L.ones(2, 4), left=False),
    "solve batch": lambda L: L.linalg.solve(L.ones(2, 3, 3), L.ones(4, 3, 1)),
    "solve dtypes": lambda L: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.float64)),
    "solve integer": lambda L: L.linalg.solve(L.ones(3, 3, dtype=L.long), L.ones(3)),
    "cholesky not pd": lambda L: L.linalg.cholesky(L.tensor(_NOT_PD)),
    "cholesky not pd batch": lambda L: L.linalg.cholesky(L.stack([L.eye(2), L.tensor(_NOT_PD)])),
    "cholesky_ex check_errors": lambda L: L.linalg.cholesky_ex(L.tensor(_NOT_PD),
                                                               check_errors=True),
    "cholesky non-square": lambda L: L.linalg.cholesky(L.ones(3, 4)),
    "eigh non-square": lambda L: L.linalg.eigh(L.ones(3, 4)),
    "eigh UPLO": lambda L: L.linalg.eigh(L.eye(2), UPLO="X"),
    "eigvalsh non-square": lambda L: L.linalg.eigvalsh(L.ones(3, 4)),
    "qr mode": lambda L: L.linalg.qr(L.ones(3, 4), mode="full"),
    "qr 1-d": lambda L: L.linalg.qr(L.ones(3)),
    "svd 1-d": lambda L: L.linalg.svd(L.ones(3)),
    "svd integer": lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.long)),
    "svdvals 1-d": lambda L: L.linalg.svdvals(L.ones(3)),
    "matrix_power non-square": lambda L: L.linalg.matrix_power(L.ones(3, 4), 2),
    "matrix_power float n": lambda L: L.linalg.matrix_power(L.eye(2), 2.0),
    "matrix_power singular": lambda L: L.linalg.matrix_power(L.tensor(_SING), -1),
    "matrix_power integer inverse": lambda L: L.linalg.matrix_power(
        L.ones(3, 3, dtype=L.long), -1),
    "cross length": lambda L: L.linalg.cross(L.ones(4), L.ones(4)),
    "cross broadcast": lambda L: L.linalg.cross(L.ones(2, 3), L.ones(4, 3)),
    "vecdot length": lambda L: L.linalg.vecdot(L.ones(3), L.ones(4)),
    "vecdot dtypes": lambda L: L.linalg.vecdot(L.ones(3), L.ones(3, dtype=L.float64)),
    "vdot 2-d": lambda L: L.vdot(L.ones(3, 1), L.ones(3)),
    "multi_dot one": lambda L: L.linalg.multi_dot([L.eye(2)]),
    "multi_dot none": lambda L: L.linalg.multi_dot([]),
    "multi_dot 3-d last": lambda L: L.linalg.multi_dot([L.eye(2), L.ones(2, 2, 2)]),
    "multi_dot 3-d first": lambda L: L.linalg.multi_dot([L.ones(2, 2, 2), L.eye(2)]),
    "multi_dot 1-d middle": lambda L: L.linalg.multi_dot([L.eye(2), L.ones(2), L.eye(2)]),
    "multi_dot shapes": lambda L: L.linalg.multi_dot([L.eye(2), L.ones(3, 2)]),
    "vector_norm integer": lambda L: L.linalg.vector_norm(L.ones(3, dtype=L.long)),
    "vector_norm ord str": lambda L: L.linalg.vector_norm(L.ones(3), "fro"),
    "matrix_norm 1-d": lambda L: L.linalg.matrix_norm(L.ones(3)),
    "matrix_norm order": lambda L: L.linalg.matrix_norm(L.ones(3, 3), 3),
    "matrix_norm integer": lambda L: L.linalg.matrix_norm(L.ones(3, 3, dtype=L.long)),
    "matrix_norm dim": lambda L: L.linalg.matrix_norm(L.ones(3, 3), dim=(0,)),
    "norm 3-d with ord": lambda L: L.linalg.norm(L.ones(2, 2, 2), 2),
    "norm matrix ord 3": lambda L: L.linalg.norm(L.ones(2, 2), 3),
    "norm nuc of a vector": lambda L: L.linalg.norm(L.ones(3), "nuc"),
    "solve_triangular 1-d B": lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(3),
                                                                  upper=True),
    "solve_triangular non-square": lambda L: L.linalg.solve_triangular(L.ones(3, 4), L.ones(3, 1),
                                                                       upper=True),
    "solve_triangular rows": lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(4, 1),
                                                                 upper=True),
    "solve_triangular right": lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(1, 4),
                                                                  upper=True, left=False),
    "solve_triangular batch": lambda L: L.linalg.solve_triangular(L.ones(2, 3, 3),
                                                                  L.ones(4, 3, 1), upper=True),
    "lu_factor singular": lambda L: L.linalg.lu_factor(L.tensor(_SING)),
    "lu_factor 1-d": lambda L: L.linalg.lu_factor(L.ones(3)),
    "lu_factor integer": lambda L: L.linalg.lu_factor(L.ones(2, 2, dtype=L.long)),
    "lu_factor no pivot": lambda L: L.linalg.lu_factor(L.eye(2), pivot=False),
    "lu_solve rows": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(3)), L.ones(4, 2)),
    "matrix_exp non-square": lambda L: L.linalg.matrix_exp(L.ones(3, 4)),
    "matrix_exp 1-d": lambda L: L.matrix_exp(L.ones(3)),
    "matrix_exp integer": lambda L: L.linalg.matrix_exp(L.ones(2, 2, dtype=L.long)),
    "cholesky_solve 1-d": lambda L: L.cholesky_solve(L.ones(3), L.eye(3)),
    "cholesky_solve rows": lambda L: L.cholesky_solve(L.ones(4, 2), L.eye(3)),
    "cholesky_solve dtypes": lambda L: L.cholesky_solve(L.ones(3, 2, dtype=L.float64),
                                                        L.eye(3)),
    "cholesky_solve non-square": lambda L: L.cholesky_solve(L.ones(3, 2), L.ones(3, 4)),
    "cholesky_inverse non-square": lambda L: L.cholesky_inverse(L.ones(3, 4)),
    "cholesky_inverse integer": lambda L: L.cholesky_inverse(L.ones(2, 2, dtype=L.long)),
    "cholesky_solve integer": lambda L: L.cholesky_solve(L.ones(2, 1, dtype=L.long),
                                                         L.ones(2, 2, dtype=L.long)),
    "cholesky_inverse 1-d": lambda L: L.cholesky_inverse(L.ones(3)),
    "cholesky not pd top": lambda L: L.cholesky(L.stack([L.eye(2), L.tensor(_NOT_PD)])),
    "cholesky non-square top": lambda L: L.cholesky(L.ones(2, 3)),
    # ``upper`` and ``check_errors`` are bools: ``bool('a')`` is no upper triangle
    "cholesky str upper": lambda L: L.linalg.cholesky(L.eye(2), upper="a"),
    "cholesky int upper": lambda L: L.linalg.cholesky(L.eye(2), upper=1),
    "cholesky_ex str upper": lambda L: L.linalg.cholesky_ex(L.eye(2), upper="a"),
    "cholesky_ex None check_errors": lambda L: L.linalg.cholesky_ex(L.eye(2), check_errors=None),
    "cholesky str upper top": lambda L: L.cholesky(L.eye(2), upper="a"),
    "svd 1-d top": lambda L: L.svd(L.ones(3)),
    "lstsq 1-d": lambda L: L.linalg.lstsq(L.ones(3), L.ones(3)),
    "lstsq rows": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4, 2)),
    "lstsq driver": lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 2), driver="qr"),
    "pinv 1-d": lambda L: L.linalg.pinv(L.ones(3)),
    "pinv integer": lambda L: L.linalg.pinv(L.ones(3, 3, dtype=L.long)),
    "matrix_rank integer": lambda L: L.linalg.matrix_rank(L.ones(3, 3, dtype=L.long)),
    # vector_norm's dim is an int or a tuple of ints: a bool is not dim 1
    "vector_norm bool dim": lambda L: L.linalg.vector_norm(L.ones(3, 3), dim=True),
    "vector_norm float dim": lambda L: L.linalg.vector_norm(L.ones(3, 3), dim=1.0),
    "vector_norm str dim": lambda L: L.linalg.vector_norm(L.ones(3, 3), dim="0"),
    "vector_norm list of a float": lambda L: L.linalg.vector_norm(L.ones(3, 3), dim=[1.0]),
    "vector_norm tuple of a bool": lambda L: L.linalg.vector_norm(L.ones(3, 3), dim=(True,)),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_raises_pytorchs_error(case):
    got = same_as_torch(lambda L: raises(BAD_INPUT[case], L))
    assert "raises" in got
    want = raises(BAD_INPUT[case], hg)
    try:
        import torch
    except ImportError:
        return
    assert want["message"] == raises(BAD_INPUT[case], torch)["message"]


def test_a_failed_factorization_raises_linalg_error_a_runtime_error():
    assert issubclass(hg.linalg.LinAlgError, RuntimeError)
    with pytest.raises(hg.linalg.LinAlgError, match=r"^linalg.inv: The diagonal element 2 is "
                       r"zero, the inversion could not be completed because the input matrix "
                       r"is singular.$"):
        hg.linalg.inv(hg.tensor(_SING))
    with pytest.raises(hg.linalg.LinAlgError, match=r"\(Batch element 1\): The factorization "
                       r"could not be completed .* leading minor of order 2"):
        hg.linalg.cholesky(hg.stack([hg.eye(2), hg.tensor(_NOT_PD)]))


def test_ex_forms_report_info_instead_of_raising():
    def run(L):
        bad = L.stack([L.eye(2), L.tensor(_SING)])
        notpd = L.stack([L.tensor(_NOT_PD), L.eye(2)])
        return py({"inv": L.linalg.inv_ex(bad).info,
                   "solve": L.linalg.solve_ex(bad, L.ones(2)).info,
                   "cholesky": L.linalg.cholesky_ex(notpd).info,
                   "ok": L.linalg.inv_ex(L.eye(3)).info,
                   "dtype": str(L.linalg.inv_ex(bad).info.dtype).split(".")[-1]})
    got = same_as_torch(run, names=False)
    assert got["inv"] == [0, 2] and got["cholesky"] == [2, 0] and got["ok"] == 0


def test_results_are_pytorchs_named_tuples():
    a = hg.tensor([[2.0, 1.0], [1.0, 3.0]])
    fields = {
        "linalg_slogdet": (hg.linalg.slogdet(a), ("sign", "logabsdet")),
        "slogdet": (hg.slogdet(a), ("sign", "logabsdet")),
        "linalg_qr": (hg.linalg.qr(a), ("Q", "R")),
        "linalg_svd": (hg.linalg.svd(a), ("U", "S", "Vh")),
        "linalg_eigh": (hg.linalg.eigh(a), ("eigenvalues", "eigenvectors")),
        "linalg_inv_ex": (hg.linalg.inv_ex(a), ("inverse", "info")),
        "linalg_solve_ex": (hg.linalg.solve_ex(a, a), ("result", "info")),
        "linalg_cholesky_ex": (hg.linalg.cholesky_ex(a), ("L", "info")),
        "linalg_lstsq": (hg.linalg.lstsq(a, a), ("solution", "residuals", "rank",
                                                 "singular_values")),
        "linalg_lu_factor": (hg.linalg.lu_factor(a), ("LU", "pivots")),
        "linalg_lu_factor_ex": (hg.linalg.lu_factor_ex(a), ("LU", "pivots", "info")),
        "linalg_lu": (hg.linalg.lu(a), ("P", "L", "U")),
        "svd": (hg.svd(a), ("U", "S", "V")),
        "qr": (hg.qr(a), ("Q", "R")),
    }
    for name, (res, want) in fields.items():
        assert type(res).__name__ == name and res._fields == want
        assert repr(res).startswith(f"hookgrad.return_types.{name}(\n{want[0]}=")


def test_empty_and_batched_matrices():
    def run(L):
        e = L.ones(2, 0, 0)
        a = L.tensor([[[2.0, 1.0], [1.0, 3.0]], [[4.0, 0.0], [1.0, 1.0]]])
        return py({"inv": list(L.linalg.inv(e).shape), "det": L.linalg.det(e),
                   "cholesky": list(L.linalg.cholesky(e).shape),
                   "batch det": L.linalg.det(a), "batch solve": L.linalg.solve(a, L.ones(2, 2)),
                   "rank": L.linalg.matrix_rank(L.ones(3, 4)),
                   "power 0 int": L.linalg.matrix_power(L.ones(2, 2, dtype=L.long) * 3, 0)})
    same_as_torch(run, tol=1e-4)


def test_reads_one_triangle_as_pytorch():
    """cholesky and eigh read the lower (or ``UPLO``) triangle only; the other is ignored."""
    def run(L):
        a = L.tensor([[4.0, 100.0, -7.0], [1.0, 3.0, 50.0], [0.5, 0.2, 2.0]])
        return py({"cholesky": L.linalg.cholesky(a), "upper": L.linalg.cholesky(a.mT, upper=True),
                   "eigvalsh L": L.linalg.eigvalsh(a), "eigvalsh U": L.linalg.eigvalsh(a.mT, "U")})
    same_as_torch(run, tol=1e-4)


def test_lstsq_drivers_return_what_pytorchs_return():
    def run(L):
        a = L.tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [0.0, 1.0]])
        b = L.tensor([[1.0], [2.0], [2.0], [0.5]])
        out = {}
        for d in ("gels", "gelsy", "gelsd", "gelss"):
            r = L.linalg.lstsq(a, b, driver=d)
            out[d] = [r.solution, r.residuals, list(r.rank.shape), r.singular_values]
        out["deficient"] = L.linalg.lstsq(L.ones(4, 2), b, driver="gelsd").residuals
        return py(out)
    same_as_torch(run, tol=1e-4)


def test_cross_without_dim_warns_and_takes_the_first_size_3_dim():
    a, b = hg.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), hg.tensor([[0.0, 0.0], [1.0, 0.0],
                                                                       [0.0, 1.0]])
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg") as rec:
        got = hg.cross(a, b)
    assert rec[0].filename == __file__
    assert np.allclose(np.asarray(got._data), np.cross(np.asarray(a._data),
                                                       np.asarray(b._data), axis=0))


@pytest.mark.parametrize("name", ["cholesky", "qr"])
def test_deprecated_top_level_forms_warn(name):
    with pytest.warns(UserWarning, match=f"torch.{name} is deprecated in favor of "
                      f"torch.linalg.{name}") as rec:
        getattr(hg, name)(hg.eye(2))
    with pytest.warns(UserWarning, match=f"torch.{name} is deprecated") as rec_method:
        getattr(hg.eye(2), name)()
    assert rec[0].filename == rec_method[0].filename == __file__


def test_compiled_step_leaves_a_singular_result_unchecked():
    """Inside hookgrad.compile the result is traced: no LinAlgError, JAX's inf/nan instead
    (docs/differences.md); the ``_ex`` info still says what failed."""
    @hg.compile
    def step(a):
        return hg.linalg.inv(a), hg.linalg.inv_ex(a).info

    inv, info = step(hg.tensor(_SING))
    assert not np.isfinite(np.asarray(inv._data)).all() and int(info) == 2


def test_as_torch_binds_torch_linalg():
    import subprocess
    import sys
    code = ("import hookgrad.as_torch; hookgrad.as_torch.install()\n"
            "import torch, torch.linalg\n"
            "from torch.linalg import LinAlgError, solve\n"
            "import hookgrad\n"
            "assert torch.linalg is hookgrad.linalg\n"
            "assert LinAlgError is hookgrad.linalg.LinAlgError\n"
            "print(float(solve(torch.eye(2) * 2, torch.ones(2))[0]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "0.5"


def test_vector_norm_takes_int_dims_in_every_form():
    same_as_torch(lambda L: [py(L.linalg.vector_norm(L.ones(3, 3), dim=d)) for d in (
        0, -1, [0], (0, 1), [0, 1], L.tensor(1), np.int64(0), ())])


def test_eigvals_values_gradients_and_saved_tensors_are_pytorchs():
    """Complex eigenvalues of real and complex matrices (a conjugate pair too), recorded as
    PyTorch's ``LinalgEigBackward0``; its gradient, real for a real input."""
    def scenario(L):
        out = []
        for m, dt in (([[1., 2., 0.], [0.5, -1., 3.], [1., 1., 1.]], L.float32),
                      ([[0., -1.], [1., 0.5]], L.float64),
                      ([[1 + 1j, 2.], [0.5j, -1.]], L.complex64)):
            a = L.tensor(m, dtype=dt, requires_grad=True)
            e = L.linalg.eigvals(a)
            # an order-free loss: LAPACK's order is the same, but need not be relied on
            (e.real ** 3 + e.imag ** 2).sum().backward()
            out.append([sorted(py(L.view_as_real(e).sum(-1))), e.grad_fn.name(),
                        str(e.dtype)[-9:], py(L.view_as_real(a.grad) if a.is_complex()
                                              else a.grad)])
        out.append(list(L.linalg.eigvals(L.ones(2, 3, 3)).shape))
        out.append(L.linalg.eigvals(L.eye(2)).grad_fn is None)
        return out
    same_as_torch(scenario)
