"""nextafter beyond its op row: PyTorch's gradient where input equals other (zero), in place,
and its error for integer tensors."""
from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch


def test_gradient_is_zero_where_input_equals_other():
    def fn(L):
        a = L.tensor([1.0, 2.0, 3.0, 0.0], requires_grad=True)
        b = L.tensor([1.0, 5.0, -1.0, 0.0], requires_grad=True)
        y = L.nextafter(a, b)
        (y * L.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        c = L.tensor([1.0, 2.0], requires_grad=True)
        c.clone().nextafter_(c).sum().backward()
        return [py(y), py(a.grad), py(b.grad), py(c.grad)]
    got = same_as_torch(fn)
    assert got[1] == [0.0, 2.0, 3.0, 0.0] and got[3] == [0.0, 0.0]


def test_integer_tensors_are_refused():
    pytorch_error(lambda L: L.nextafter(L.tensor([1, 2]), L.tensor([3, 0])))
