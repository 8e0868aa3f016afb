"""Result dtypes as PyTorch's: integers promoted to a floating type give the default dtype
(``float32``), not JAX's ``float64`` under x64; explicit 64-bit requests and 64-bit
operands keep 64 bits. Checked against PyTorch where installed, and by name here."""
import jax
import pytest

import hookgrad as hg
from tests.differential import same_as_torch, torch


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
