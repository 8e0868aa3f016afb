"""var, std, var_mean and std_mean with no degree of freedom left (``correction`` >= the
number of elements reduced): PyTorch's NaN or inf, its gradients and its warning."""
import warnings

import pytest

import hookgrad
from tests.differential import py, raises_as_torch, same_as_torch

_CALLS = {
    "std": lambda L, x: x.std(0),
    "var": lambda L, x: L.var(x, 0, keepdim=True),
    "std_mean": lambda L, x: L.std_mean(x, 0)[0],
    "var_mean": lambda L, x: L.var_mean(x, 0)[0],
    "std.all": lambda L, x: x[:, :1].std(),
    "var.past_dof": lambda L, x: x.var(1, correction=4),
    "std.past_dof": lambda L, x: x.std(1, correction=4),
    "std.zero_dof": lambda L, x: x.std(1, correction=3),
}


@pytest.mark.parametrize("name", _CALLS)
def test_no_degree_of_freedom_gives_pytorchs_values_and_gradients(name):
    def f(L):
        x = L.tensor([[1.0, 2.0, 4.0]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = _CALLS[name](L, x)
        (g,) = L.autograd.grad(y.sum(), x)
        return [py(y), py(g)]
    got = same_as_torch(f)
    assert "nan" in str(got) or "inf" in str(got)


@pytest.mark.parametrize("name", ["std", "var", "std_mean", "var_mean"])
def test_no_degree_of_freedom_warns_at_the_callers_line(name):
    fn = getattr(hookgrad, name)
    with pytest.warns(UserWarning, match=rf"^{name}\(\): degrees of freedom is <= 0\. "
                      r"Correction should be strictly less than the reduction factor") as w:
        fn(hookgrad.ones(1, 3), 0)
    assert w[0].filename == __file__


def test_enough_degrees_of_freedom_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert py(hookgrad.ones(2, 3).std(0, correction=1)) == [0.0, 0.0, 0.0]
        assert py(hookgrad.tensor([1.0, 3.0]).var(correction=1.5)) == 4.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "complex64"])
def test_dtypes_follow_pytorch(dtype):
    def f(L):
        x = L.tensor([[1.0, 2.5, 4.0], [0.5, 3.0, 3.5]]).to(getattr(L, dtype))
        return [str(x.var(1).dtype).split(".")[1], py(x.var(1).float()),
                py(L.std_mean(x, 0)[0].float())]
    same_as_torch(f, tol=1e-3)


def test_integer_input_raises_pytorchs_error():
    raises_as_torch(lambda L: L.tensor([1, 2]).std(), RuntimeError,
                    "std and var only support floating point and complex dtypes")


def test_nan_passes_through_std_and_norm_as_in_pytorch():
    def f(L):
        x = L.tensor([[1.0, float("nan"), 2.0], [0.0, 0.0, 0.0]], requires_grad=True)
        outs = [x.std(1), x.norm(dim=1), x.norm(p=3, dim=1), L.linalg.vector_norm(x, dim=1)]
        return [[py(o), py(L.autograd.grad(o.sum(), x)[0])] for o in outs]
    assert same_as_torch(f)[0][0] == ["nan", 0.0]
