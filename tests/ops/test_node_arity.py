"""A node has as many outputs as PyTorch's: Node pre-hooks see one gradient per
differentiable output (integer outputs such as indices are not node outputs)."""
import pytest

from tests.differential import same_as_torch

CALLS = {
    "max.dim": lambda x: x.max(1),
    "min.dim_keepdim": lambda x: x.min(0, keepdim=True),
    "max.0d": lambda x: x.sum().max(0),
    "sort": lambda x: x.sort(1),
    "topk": lambda x: x.topk(2),
}


@pytest.mark.parametrize("name", CALLS)
def test_pre_hooks_see_one_gradient_per_differentiable_output(name):
    def scenario(L):
        x = L.arange(12.0).reshape(3, 4).requires_grad_()
        values, indices = CALLS[name](x)
        seen = []
        values.grad_fn.register_prehook(lambda grads: seen.append(len(grads)))
        (values * 2).sum().backward()
        return {"node": type(values.grad_fn).__name__, "edges": len(values.grad_fn.next_functions),
                "seen": seen, "indices": indices.tolist(), "grad": x.grad.tolist()}
    got = same_as_torch(scenario)
    assert got["seen"] == [1] and got["edges"] == 1
