"""Result dtypes as PyTorch's: integers promoted to a floating type give the default dtype
(``float32``), not JAX's ``float64`` under x64; explicit 64-bit requests and 64-bit
operands keep 64 bits; a 0-d Tensor beside a dimensioned one lifts its kind only, on the
host and the XLA path alike. Checked against PyTorch where installed, and by name here."""
import jax
import numpy as np
import pytest

import hookgrad as hg
from tests.differential import py, raises_as_torch, same_as_torch, torch


def _name(d):
    return str(d).split(".")[-1]


# (expression over the library L, PyTorch's result dtype)
CASES = {
    "int_times_float": (lambda L: L.tensor([1, 2]) * 1.5, "float32"),
    "int_plus_float": (lambda L: L.tensor([1, 2]) + 0.5, "float32"),
    "float_minus_int": (lambda L: 0.5 - L.tensor([1, 2]), "float32"),
    "int_true_divide": (lambda L: L.tensor([1, 2]) / 2, "float32"),
    "int_true_divide_int": (lambda L: L.tensor([1, 2]) / L.tensor([3, 4]), "float32"),
    "int_floor_divide": (lambda L: L.tensor([3, 4]) // 2, "int64"),
    "int_sqrt": (lambda L: L.tensor([1, 4]).sqrt(), "float32"),
    "int_exp": (lambda L: L.tensor([0, 1]).exp(), "float32"),
    "bool_times_float": (lambda L: L.tensor([True, False]) * 1.5, "float32"),
    "where_int_float": (lambda L: L.where(L.tensor([True, False]), L.tensor([1, 2]), 0.5),
                        "float32"),
    "int_pow_half": (lambda L: L.tensor([1, 4]) ** 0.5, "float32"),
    "int_times_complex": (lambda L: L.tensor([1, 2]) * 1j, "complex64"),
    "int_sum": (lambda L: L.tensor([1, 2]).sum(), "int64"),
    "int_argmax": (lambda L: L.tensor([1.0, 2.0]).argmax(), "int64"),
    "double_cast": (lambda L: L.tensor([1, 2]).double(), "float64"),
    "to_float64": (lambda L: L.tensor([1, 2]).to(L.float64), "float64"),
    "sum_dtype_float64": (lambda L: L.tensor([1, 2]).sum(dtype=L.float64), "float64"),
    "double_times_float": (lambda L: L.tensor([1.0], dtype=L.float64) * 2.5, "float64"),
    "double_plus_int": (lambda L: L.tensor([1.0], dtype=L.float64) + L.tensor([1]), "float64"),
    "float_plus_int64": (lambda L: L.tensor([1.0]) + L.tensor([1]), "float32"),
    "softmax_of_double": (lambda L: L.softmax(L.tensor([1.0, 2.0], dtype=L.float64), 0),
                          "float64"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_result_dtype_is_pytorchs(case):
    fn, want = CASES[case]
    assert _name(fn(hg).dtype) == want
    if torch is not None:
        assert _name(fn(torch).dtype) == want


def test_the_default_dtype_is_what_integers_promote_to():
    try:
        hg.set_default_dtype(hg.float64)
        assert (hg.tensor([1, 2]) * 1.5).dtype is hg.float64
        assert hg.tensor([1, 4]).sqrt().dtype is hg.float64
    finally:
        hg.set_default_dtype(hg.float32)
    assert (hg.tensor([1, 2]) * 1.5).dtype is hg.float32


def test_gradients_keep_the_operands_dtypes():
    d = hg.tensor([1.0, 2.0], dtype=hg.float64, requires_grad=True)
    f = hg.ones(2, requires_grad=True)
    i = hg.tensor([1, 2])
    ((d * 1.5 + i).sum() + (f * i / 3).sum()).backward()
    assert d.grad.dtype is hg.float64 and f.grad.dtype is hg.float32


@pytest.mark.parametrize("cast", ["float", "half", "to_float32"])
def test_a_gradient_through_a_cast_has_the_leafs_dtype(cast):
    def scenario(L):
        d = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        down = {"float": lambda t: t.float(), "half": lambda t: t.half(),
                "to_float32": lambda t: t.to(L.float32)}[cast]
        down((d * d).sum()).backward()  # nothing saved by the cast: its vjp sees only g
        return str(d.grad.dtype).rpartition(".")[2], d.grad.tolist()
    assert same_as_torch(scenario) == ("float64", [2.0, 4.0])


def test_compiled_and_functional_modes_agree():
    i = hg.tensor([1, 2])
    assert hg.compile(lambda a: (a * 1.5).sum())(i).dtype is hg.float32
    lin = hg.nn.Linear(2, 1)

    def loss(params, ints):  # integers made floating inside the functional call
        return hg.func.functional_call(lin, params, (ints * 0.5,)).sum()
    out = jax.jit(loss)(hg.func.state(lin), i._data[None])
    grads = jax.grad(loss)(hg.func.state(lin), i._data[None])
    assert out.dtype == jax.numpy.float32
    assert {k: v.dtype for k, v in grads.items()} == {"weight": jax.numpy.float32,
                                                       "bias": jax.numpy.float32}


def test_without_x64_integers_are_int32_and_promote_to_float32():
    with jax.enable_x64(False):
        i = hg.tensor([1, 2])
        assert i.dtype is hg.int32
        assert (i * 1.5).dtype is hg.float32 and (i / 2).dtype is hg.float32


def _vec(L, n, dtype):
    """``n`` values of ``dtype``: up to a few thousand are held on the host (its NumPy
    forms compute them), more run in XLA."""
    steps = np.arange(n) % 7
    if dtype.startswith(("int", "uint")):
        return L.tensor(steps).to(getattr(L, dtype))
    return L.tensor((steps - 3) * 0.75).to(getattr(L, dtype))


# a 0-d Tensor beside a dimensioned one: (expression over the library L and a length n,
# PyTorch's result dtype). A 0-d Tensor of no higher kind does not widen the dimensioned
# one; a higher kind lifts it, a complex one to complex at the dimensioned one's width.
ZERO_D = {
    "float64 0-d + complex64": (lambda L, n: L.tensor(1.5, dtype=L.float64) +
                                _vec(L, n, "complex64"), "complex64"),
    "complex64 + complex128 0-d": (lambda L, n: _vec(L, n, "complex64") +
                                   L.tensor(0.5 + 1j, dtype=L.complex128), "complex64"),
    "float32 * complex128 0-d": (lambda L, n: _vec(L, n, "float32") *
                                 L.tensor(2 - 1j, dtype=L.complex128), "complex64"),
    "float64 * complex64 0-d": (lambda L, n: _vec(L, n, "float64") *
                                L.tensor(2 - 1j, dtype=L.complex64), "complex128"),
    "int32 * complex128 0-d": (lambda L, n: _vec(L, n, "int32") *
                               L.tensor(2 - 1j, dtype=L.complex128), "complex128"),
    "bfloat16 * complex64 0-d": (lambda L, n: _vec(L, n, "bfloat16") *
                                 L.tensor(1j, dtype=L.complex64), "complex64"),
    "float32 + float64 0-d": (lambda L, n: _vec(L, n, "float32") +
                              L.tensor(0.1, dtype=L.float64), "float32"),
    "float64 0-d - float32": (lambda L, n: L.tensor(0.1, dtype=L.float64) -
                              _vec(L, n, "float32"), "float32"),
    "int32 + float64 0-d": (lambda L, n: _vec(L, n, "int32") +
                            L.tensor(0.1, dtype=L.float64), "float64"),
    "int32 // int64 0-d": (lambda L, n: _vec(L, n, "int32") // L.tensor(2), "int32"),
    "uint8 * int8 0-d": (lambda L, n: _vec(L, n, "uint8") *
                         L.tensor(-3, dtype=L.int8), "uint8"),
    "float16 maximum float64 0-d": (lambda L, n: L.maximum(
        _vec(L, n, "float16"), L.tensor(0.3, dtype=L.float64)), "float16"),
    "float32 < float64 0-d": (lambda L, n: _vec(L, n, "float32") <
                              L.tensor(0.1, dtype=L.float64), "bool"),
    "float32 / float64 0-d": (lambda L, n: _vec(L, n, "float32") /
                              L.tensor(3.0, dtype=L.float64), "float32"),
    "float32 ** float64 0-d": (lambda L, n: _vec(L, n, "float32").abs() **
                               L.tensor(0.5, dtype=L.float64), "float32"),
    # ops of three operands (where's condition is no operand of the promotion)
    "where of float32 and float64 0-d": (lambda L, n: L.where(
        _vec(L, n, "float32") > 0, _vec(L, n, "float32"), L.tensor(0.1, dtype=L.float64)),
        "float32"),
    "where of a 0-d condition": (lambda L, n: L.where(
        L.tensor(True), _vec(L, n, "float16"), _vec(L, n, "float16")), "float16"),
    "lerp by a float64 0-d": (lambda L, n: L.lerp(_vec(L, n, "float32"), _vec(
        L, n, "float32") * 2, L.tensor(0.25, dtype=L.float64)), "float32"),
    "addcmul by a float64 0-d": (lambda L, n: L.addcmul(_vec(L, n, "float32"), _vec(
        L, n, "float32"), L.tensor(0.25, dtype=L.float64)), "float32"),
    "clamp by a float64 0-d": (lambda L, n: L.clamp(_vec(L, n, "float32"), min=L.tensor(
        0.1, dtype=L.float64)), "float32"),
    "logaddexp with a float64 0-d": (lambda L, n: L.logaddexp(
        _vec(L, n, "float32"), L.tensor(0.1, dtype=L.float64)), "float32"),
    # addmm's beta and alpha as 0-d Tensors: PyTorch reads them as numbers
    "addmm by float64 0-d beta and alpha": (lambda L, n: L.addmm(
        _vec(L, n, "float32")[:2].reshape(2, 1), L.ones(2, 3), L.ones(3, 1),
        beta=L.tensor(0.5, dtype=L.float64), alpha=L.tensor(2.0, dtype=L.float64)), "float32"),
    # the foreach ops promote each pair as the op itself
    "foreach add of a float64 0-d list": (lambda L, n: L._foreach_add(
        [_vec(L, n, "float32")], [L.tensor(0.5, dtype=L.float64)])[0], "float32"),
    "foreach mul by a float64 0-d": (lambda L, n: L._foreach_mul(
        [_vec(L, n, "float32")], L.tensor(1.5, dtype=L.float64))[0], "float32"),
    "foreach maximum of a float64 0-d list": (lambda L, n: L._foreach_maximum(
        [_vec(L, n, "float16")], [L.tensor(0.5, dtype=L.float64)])[0], "float16"),
    "foreach add of a complex 0-d list": (lambda L, n: L._foreach_add(
        [_vec(L, n, "float32")], [L.tensor(1j)])[0], "complex64"),
    "foreach add by a float64 0-d alpha": (lambda L, n: L._foreach_add(
        [_vec(L, n, "float32")], [_vec(L, n, "float32")], alpha=L.tensor(
            2.0, dtype=L.float64))[0], "float32"),
}


# operands whose dtype PyTorch requires to be the input's (a 0-d one included)
DTYPE_REFUSED = {
    "lerp end": (lambda L: L.lerp(L.ones(2), L.ones(2, dtype=L.float64), 0.5),
                 r"^expected dtype float for `end` but got dtype double$"),
    "lerp_ 0-d end": (lambda L: L.ones(2).lerp_(L.tensor(1.0, dtype=L.float64), 0.5),
                      r"^expected dtype float for `end` but got dtype double$"),
    "lerp weight": (lambda L: L.lerp(L.ones(2), L.ones(2), L.ones(2, dtype=L.float64)),
                    r"^expected dtype float for `weight` but got dtype double$"),
    "masked_fill of a complex number": (lambda L: L.ones(2).masked_fill(L.ones(2) > 0, 1j),
                                        r"^value cannot be converted to type float without "
                                        r"overflow$"),
    "masked_fill of a complex 0-d": (lambda L: L.ones(2).half().masked_fill(
        L.ones(2) > 0, L.tensor(1j)), r"^value cannot be converted to type c10::Half without "
        r"overflow$"),
}


@pytest.mark.parametrize("case", list(DTYPE_REFUSED))
def test_an_operand_of_another_dtype_raises_pytorchs_error(case):
    call, match = DTYPE_REFUSED[case]
    raises_as_torch(call, RuntimeError, match)


@pytest.mark.parametrize("n", [6, 5000], ids=["host", "xla"])
@pytest.mark.parametrize("case", sorted(ZERO_D))
def test_a_0d_operand_promotes_as_pytorch_on_both_paths(case, n):
    fn, want = ZERO_D[case]

    def run(L):
        r = fn(L, n)
        vals = r.to(L.complex128) if r.dtype.is_complex else r.to(L.float64)
        return [_name(r.dtype), py(vals.real if r.dtype.is_complex else vals),
                py(vals.imag) if r.dtype.is_complex else None]
    assert same_as_torch(run)[0] == want


def test_the_0d_rule_holds_for_a_recorded_op_and_its_gradients():
    # an input requiring grad takes the XLA path at any size; the 0-d operand's gradient
    # keeps its own dtype
    def run(L):
        x = L.tensor([1.5, -2.0, 3.0], requires_grad=True)
        s = L.tensor(0.25, dtype=L.float64, requires_grad=True)
        y = x * s + s
        y.sum().backward()
        return [_name(y.dtype), _name(s.grad.dtype), py(s.grad), py(x.grad)]
    assert same_as_torch(run)[:2] == ["float32", "float64"]


def test_half_times_a_complex_number_is_complex64_where_pytorch_has_complex32():
    # docs/differences.md: hookgrad has no complex32; the nearest, complex64, on both paths
    for n in (6, 5000):
        h = _vec(hg, n, "float16")
        assert (h * 1j).dtype is hg.complex64
        assert (h * hg.tensor(1j)).dtype is hg.complex64
    assert hg.result_type(_vec(hg, 6, "float16"), 1j) is hg.complex64
    if torch is not None:
        assert (torch.ones(2, dtype=torch.float16) * 1j).dtype is torch.complex32
