"""Matrix products with shapes that do not fit raise PyTorch's RuntimeError with its words
(``mat1 and mat2 shapes cannot be multiplied (1x4 and 3x2)``, ...), eagerly and inside
``hookgrad.compile`` (shapes are static, so they are checked before JAX sees them)."""
import itertools

import pytest

import hookgrad as hg
from tests.differential import raises_as_torch, torch

_MAT = r"mat1 and mat2 shapes cannot be multiplied"

# (id, call(L, z) with z(shape) -> zeros, the message hookgrad and PyTorch give)
CASES = [
    ("linear", lambda L, z: L.nn.functional.linear(z(1, 4), z(2, 3)), _MAT + r" \(1x4 and 3x2\)"),
    ("linear_bias", lambda L, z: L.nn.functional.linear(z(1, 4), z(2, 3), z(2)),
     _MAT + r" \(1x4 and 3x2\)"),
    ("linear_1d", lambda L, z: L.nn.functional.linear(z(4), z(2, 3)), _MAT + r" \(1x4 and 3x2\)"),
    ("linear_3d", lambda L, z: L.nn.functional.linear(z(5, 2, 4), z(2, 3), z(2)),
     _MAT + r" \(10x4 and 3x2\)"),
    ("Linear", lambda L, z: L.nn.Linear(3, 2)(z(1, 4)), _MAT + r" \(1x4 and 3x2\)"),
    ("linear_bad_bias", lambda L, z: L.nn.functional.linear(z(5, 1, 3), z(2, 3), z(3)),
     r"The expanded size of the tensor \(2\) must match the existing size \(3\) at "
     r"non-singleton dimension 1.  Target sizes: \[5, 2\].  Tensor sizes: \[3\]"),
    ("linear_bad_bias2d", lambda L, z: L.nn.functional.linear(z(5, 4, 3), z(2, 3), z(3, 2)),
     r"The size of tensor a \(4\) must match the size of tensor b \(3\) at non-singleton "
     "dimension 1"),
    ("linear_weight3d", lambda L, z: L.nn.functional.linear(z(4, 3), z(1, 2, 3)),
     r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"),
    ("linear_0d", lambda L, z: L.nn.functional.linear(z(), z(2, 3)),
     "both arguments to linear need to be at least 1D, but they are 0D and 2D"),
    ("linear_weight1d", lambda L, z: L.nn.functional.linear(z(5, 4), z(3)),
     r"size mismatch, got input \(5\), mat \(5x4\), vec \(3\)"),
    ("mm", lambda L, z: L.mm(z(1, 4), z(3, 2)), _MAT + r" \(1x4 and 3x2\)"),
    ("addmm", lambda L, z: L.addmm(z(1, 2), z(1, 4), z(3, 2)), _MAT + r" \(1x4 and 3x2\)"),
    ("addmm_input", lambda L, z: L.addmm(z(3, 3), z(1, 4), z(4, 2)),
     r"The expanded size of the tensor \(2\) must match the existing size \(3\) at "
     r"non-singleton dimension 1.  Target sizes: \[1, 2\].  Tensor sizes: \[3, 3\]"),
    ("addmm_vector", lambda L, z: L.addmm(z(2), z(4), z(4, 2)),
     "mat1 must be a matrix, got 1-D tensor"),
    ("matmul_1d_1d", lambda L, z: L.matmul(z(4), z(3)),
     r"inconsistent tensor size, expected tensor \[4\] and src \[3\] to have the same number "
     "of elements, but got 4 and 3 elements respectively"),
    ("matmul_3d_1d", lambda L, z: z(5, 2, 4) @ z(3),
     r"size mismatch, got input \(10\), mat \(10x4\), vec \(3\)"),
    ("matmul_1d_2d", lambda L, z: z(4) @ z(3, 2), _MAT + r" \(1x4 and 3x2\)"),
    ("matmul_batched", lambda L, z: L.matmul(z(7, 5, 2, 4), z(5, 3, 2)),
     r"Expected size for first two dimensions of batch2 tensor to be: \[35, 4\] but got: "
     r"\[35, 3\]."),
    ("matmul_batch_broadcast", lambda L, z: L.matmul(z(7, 5, 2, 4), z(6, 3, 2)),
     r"The size of tensor a \(5\) must match the size of tensor b \(6\) at non-singleton "
     "dimension 1"),
    ("matmul_0d", lambda L, z: L.matmul(z(), z(3)),
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
]


def _zeros(L):
    return lambda *shape: L.zeros(tuple(shape))


@pytest.mark.parametrize("call, match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_shape_errors_eager_and_compiled(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(hg, _zeros(hg))

    @hg.compile
    def step(x):  # the operands are built from a traced input: the same check
        return call(hg, lambda *shape: hg.zeros(tuple(shape)) + x)
    with pytest.raises(RuntimeError, match=match):
        step(hg.zeros(()))
    if torch is not None:
        with pytest.raises(RuntimeError, match=match):
            call(torch, _zeros(torch))


def _outcome(fn):
    try:
        return "ok " + str(list(fn().shape))
    except RuntimeError as e:
        return str(e)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("a_requires_grad", [False, True])
def test_matmul_outcomes_match_torch_over_ranks(a_requires_grad):
    """Every rank pairing, fitting or not: the same result shape or the same message
    (which names the kernel PyTorch's matmul folds the operands into)."""
    sa = [(4,), (2, 4), (5, 2, 4), (7, 5, 2, 4), (3,), (2, 3)]
    sb = [(3,), (3, 2), (5, 3, 2), (6, 3, 2), (7, 5, 3, 2), (1, 3, 2)]
    for a, b in itertools.product(sa, sb):
        def run(L):
            return _outcome(lambda: L.matmul(L.zeros(a, requires_grad=a_requires_grad),
                                             L.zeros(b)))
        assert run(hg) == run(torch), (a, b)


def _f(L, *shape):
    return L.ones(*shape)


def _d(L, *shape):
    return L.ones(*shape, dtype=L.float64)


_SAME = r"^{} and mat2 must have the same dtype, but got {} and {}$"
# the fused products take one dtype, promoting nothing: (id, call, message)
ONE_DTYPE = [
    ("addmm of a float64 0-d input", lambda L: L.addmm(L.tensor(1.0, dtype=L.float64),
                                                       _f(L, 2, 3), _f(L, 3, 2)),
     _SAME.format("self", "Double", "Float")),
    ("addmm of a float64 mat1", lambda L: L.addmm(_f(L, 2, 2), _d(L, 2, 3), _f(L, 3, 2)),
     _SAME.format("mat1", "Double", "Float")),
    ("addmm compares self with mat2 first", lambda L: L.addmm(_f(L, 2, 2), _f(L, 2, 3),
                                                              _d(L, 3, 2)),
     _SAME.format("self", "Float", "Double")),
    ("addmm_ of an int mat2", lambda L: _f(L, 2, 2).addmm_(_f(L, 2, 3), _f(L, 3, 2).int()),
     _SAME.format("self", "Float", "Int")),
    ("addbmm", lambda L: L.addbmm(_d(L, 2), _f(L, 2, 2, 3), _f(L, 2, 3, 2)),
     _SAME.format("self", "Double", "Float")),
    ("addmv", lambda L: L.addmv(L.tensor(1.0, dtype=L.float64), _f(L, 2, 3), _f(L, 3)),
     r"^addmv input tensors must have the same dtype, but got Double, Float, and Float$"),
    ("addmv of an int input", lambda L: L.addmv(_f(L, 2).int(), _f(L, 2, 3), _f(L, 3)),
     r"^addmv input tensors must have the same dtype, but got Int, Float, and Float$"),
    ("baddbmm", lambda L: L.baddbmm(_d(L, 2), _f(L, 2, 2, 3), _f(L, 2, 3, 2)),
     r"^Input dtypes must be the same, got: input double, batch1: float, batch2: float$"),
    ("baddbmm of a float64 batch2", lambda L: L.baddbmm(_f(L, 2), _f(L, 2, 2, 3),
                                                        _d(L, 2, 3, 2)),
     r"^expected scalar type Float but found Double$"),
    # matmul's message is its kernel's: dot, addmv, mm (batches folded) or bmm
    ("matmul of matrices", lambda L: L.matmul(_f(L, 2, 3), _d(L, 3, 2)),
     r"^expected m1 and m2 to have the same dtype, but got: float != double$"),
    ("@ of a vector and a matrix", lambda L: _f(L, 3) @ _d(L, 3, 2),
     r"^expected m1 and m2 to have the same dtype, but got: float != double$"),
    ("matmul of vectors", lambda L: L.matmul(_f(L, 3), _d(L, 3)),
     r"^dot : expected both vectors to have same dtype, but found Float and Double$"),
    ("matmul of a matrix and a vector", lambda L: L.matmul(_f(L, 2, 3), _d(L, 3)),
     r"^addmv input tensors must have the same dtype, but got Double, Float, and Double$"),
    ("matmul of batches", lambda L: L.matmul(_f(L, 2, 2, 3), _d(L, 2, 3, 2)),
     r"^expected scalar type Float but found Double$"),
    ("mm of an int", lambda L: L.mm(_f(L, 2, 3), _f(L, 3, 2).long()),
     r"^expected m1 and m2 to have the same dtype, but got: float != long int$"),
    ("bmm", lambda L: L.bmm(_f(L, 2, 2, 3), _d(L, 2, 3, 2)),
     r"^expected scalar type Float but found Double$"),
    ("dot", lambda L: L.dot(_d(L, 3), _f(L, 3)),
     r"^dot : expected both vectors to have same dtype, but found Double and Float$"),
    ("mv", lambda L: L.mv(_f(L, 2, 3), _d(L, 3)),
     r"^addmv input tensors must have the same dtype, but got Double, Float, and Double$"),
    ("linear of an int input", lambda L: L.nn.functional.linear(_f(L, 2, 3).long(),
                                                               _f(L, 4, 3)),
     r"^expected m1 and m2 to have the same dtype, but got: long int != float$"),
    ("inner", lambda L: L.inner(_f(L, 3), _d(L, 3)), r"^both inputs should have same dtype$"),
    ("tensordot", lambda L: L.tensordot(_f(L, 2, 3), _d(L, 3, 2), 1),
     r"^both inputs should have same dtype$"),
    ("tensordot of too many dims", lambda L: L.tensordot(_f(L, 2, 3), _f(L, 3, 2), 5),
     r"^tensordot expects dims < ndim_a or ndim_b, but got dims=5$"),
    # in place, batch2's dtype is the result's: checked after input against batch1
    ("baddbmm_ of another batch2", lambda L: _f(L, 2, 3, 4).baddbmm_(_f(L, 2, 3, 5),
                                                                   _d(L, 2, 5, 4)),
     r"^Bad in-place call: input tensor dtype float and output tensor dtype double should "
     r"match$"),
    ("baddbmm_ of other batches", lambda L: _f(L, 2, 3, 4).baddbmm_(_d(L, 2, 3, 5),
                                                                  _d(L, 2, 5, 4)),
     r"^Input dtypes must be the same, got: input float, batch1: double, batch2: double$"),
]


@pytest.mark.parametrize("call,match", [c[1:] for c in ONE_DTYPE], ids=[c[0] for c in ONE_DTYPE])
def test_fused_products_take_one_dtype(call, match):
    raises_as_torch(call, RuntimeError, match)
