"""``Tensor.char``, ``cfloat``, ``cdouble``: casts recorded as PyTorch records ``to``."""
import pytest

from tests.differential import same_as_torch


@pytest.mark.parametrize("cast", ["char", "cfloat", "cdouble"])
def test_cast_dtype_values_and_node(cast):
    def run(L):
        x = L.tensor([1.7, -2.5, 0.0], requires_grad=True)
        y = getattr(x, cast)()
        return [str(y.dtype).rpartition(".")[2], y.abs().tolist(),
                y.grad_fn.name() if y.grad_fn is not None else None]
    same_as_torch(run)


def test_gradient_flows_back_through_a_complex_cast():
    def run(L):
        x = L.tensor([1.5, -2.0], requires_grad=True)
        (x.cdouble() * 3).abs().sum().backward()
        return x.grad.tolist()
    same_as_torch(run)
