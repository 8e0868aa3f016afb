"""``fake_quantize_per_tensor_affine`` and ``fake_quantize_per_channel_affine`` beyond their
op rows: rounding half to even, clamped elements without gradient, float zero points, and
PyTorch's argument errors."""
from tests.differential import py, raises_as_torch, same_as_torch

X = [[0.25, 0.75, -0.3, 1.7], [2.5, 0.05, 3.0, -1.25]]


def test_rounding_and_gradient_as_torch():
    def run(L):
        x = L.tensor(X, requires_grad=True)
        y = L.fake_quantize_per_tensor_affine(x, 0.5, 2, 0, 6)
        (y * L.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8]])).sum().backward()
        return {"y": py(y), "grad": py(x.grad), "node": y.grad_fn.name()}
    got = same_as_torch(run)
    assert got["grad"][1][2] == 0.0  # 3.0 / 0.5 + 2 = 8 > quant_max: clamped, no gradient


def test_float_zero_point_as_torch():
    def run(L):
        x = L.tensor(X, requires_grad=True)
        y = L.fake_quantize_per_channel_affine(x, L.tensor([0.1, 0.5]),
                                               L.tensor([0.5, 1.5]), 0, 0, 10)
        y.sum().backward()
        return {"y": py(y), "grad": py(x.grad)}
    same_as_torch(run)


def test_errors_as_torch():
    def x(L):
        return L.tensor(X)

    def per_channel(L, scale, zero_point, axis=1, lo=0, hi=10):
        return L.fake_quantize_per_channel_affine(x(L), scale, zero_point, axis, lo, hi)
    raises_as_torch(lambda L: L.fake_quantize_per_tensor_affine(x(L), 0.5, 2, 10, 0),
                    RuntimeError, "`quant_min` should be less than or")
    raises_as_torch(lambda L: L.fake_quantize_per_tensor_affine(x(L), 0.5, 20, 0, 10),
                    RuntimeError, "`zero_point` must be between `quant_min` and `quant_max`.")
    raises_as_torch(lambda L: L.fake_quantize_per_tensor_affine(L.tensor([1, 2]), 0.5, 2, 0, 9),
                    NotImplementedError, "fake_quantize_tensor_cachemask_kernel_type_handling")
    raises_as_torch(lambda L: per_channel(L, L.ones(4), L.zeros(4, dtype=L.int32), axis=0),
                    RuntimeError, "dimensions of scale and zero-point are not consistent")
    raises_as_torch(lambda L: per_channel(L, L.ones(4), L.tensor([0, 1, 20, 2],
                                                                 dtype=L.int32)),
                    RuntimeError, "`zero_point` must be between")
    raises_as_torch(lambda L: per_channel(L, L.ones(4), L.zeros(4, dtype=L.int16)),
                    RuntimeError, "Zero-point must be Int32, Float or Half, found Short")
    raises_as_torch(lambda L: per_channel(L, L.ones(1, 4), L.zeros(4, dtype=L.int32)),
                    RuntimeError, "scale should be a 1-D tensor")
    raises_as_torch(lambda L: per_channel(L, L.ones(4), L.zeros(4, dtype=L.int32), axis=2),
                    IndexError, r"Dimension out of range \(expected to be in range of "
                                r"\[-2, 1\], but got 2\)")
