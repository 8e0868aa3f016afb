"""``torch.nn.quantized``'s float modules (``FloatFunctional``, ``FXFloatFunctional``)
compute, observe and differentiate as PyTorch's; the quantized modules are missing."""
import pytest

import hookgrad
from tests.differential import py, raises_as_torch, same_as_torch

OPS = [("add", "t"), ("add_scalar", 2.5), ("mul", "t"), ("mul_scalar", -1.5),
       ("add_relu", "t"), ("matmul", "t")]


@pytest.mark.parametrize("cls", ["FloatFunctional", "FXFloatFunctional"])
@pytest.mark.parametrize("op,other", OPS)
def test_float_functional_op_as_torch(cls, op, other):
    def run(L):
        x = L.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        y = L.tensor([[0.25, 1.0], [-4.0, 2.0]], requires_grad=True)
        seen = []
        f = getattr(L.nn.quantized, cls)()
        if cls == "FloatFunctional":
            f.activation_post_process.register_forward_hook(
                lambda m, i, o: seen.append(py(o)))
        out = getattr(f, op)(x, y if other == "t" else other)
        out.sum().backward()
        return {"out": py(out), "grad": py(x.grad), "seen": seen,
                "node": out.grad_fn.name(), "y_grad": py(y.grad)}
    same_as_torch(run)


def test_cat_as_torch():
    def run(L):
        f = L.nn.quantized.FloatFunctional()
        a, b = L.ones(2, 1), L.zeros(2, 2)
        return [py(f.cat([a, b], dim=1)), py(f.cat([a.t(), b.t()]))]
    same_as_torch(run)


def test_module_structure_as_torch():
    def run(L):
        f, fx = L.nn.quantized.FloatFunctional(), L.nn.quantized.FXFloatFunctional()
        return {"children": [n for n, _ in f.named_children()],
                "fx_children": [n for n, _ in fx.named_children()],
                "state": list(f.state_dict()), "repr": repr(f).replace("hookgrad", "torch")}
    same_as_torch(run)


def test_forward_raises_as_torch():
    for cls in ("FloatFunctional", "FXFloatFunctional"):
        raises_as_torch(lambda L: getattr(L.nn.quantized, cls)()(L.ones(1)), RuntimeError,
                        "FloatFunctional is not intended to use the 'forward'. Please use the "
                        "underlying operation")


def test_quantized_modules_are_missing():
    with pytest.raises(AttributeError, match="hookgrad does not implement "
                                             "torch.nn.quantized.Conv2d yet"):
        hookgrad.nn.quantized.Conv2d
