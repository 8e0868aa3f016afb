import hookgrad as hg


def test_hook_doubles_gradient_of_square():
    x = hg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 2)
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]
