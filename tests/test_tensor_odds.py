"""Tensor odds and ends against PyTorch: as_subclass, the host callbacks apply_/map_/map2_,
hash_tensor, nonzero_static, argwhere, resize_as, and the layout-naming factories
(empty_strided, empty_permuted, new_empty_strided)."""
import warnings

import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch


def test_as_subclass_is_an_alias_of_another_type():
    def run(L):
        class Mine(L.Tensor):
            pass
        x = L.ones(2, requires_grad=True)
        y = x * 2
        z = y.as_subclass(Mine)
        (z * 3).sum().backward()
        a = L.ones(2)
        b = a.as_subclass(Mine)
        b.add_(1)
        p = L.ones(2).as_subclass(L.nn.Parameter)
        return [type(z).__name__, isinstance(z, L.Tensor), z.grad_fn.name(), z._base is y,
                z.requires_grad, py(x.grad), py(a), a._version, type(p).__name__,
                x.as_subclass(Mine).is_leaf, raises(x.as_subclass, int)]
    got = same_as_torch(run)
    assert got[0] == "Mine" and got[2] == "AliasBackward0" and got[6] == [2.0, 2.0]


def test_zero_dim_running_products_sums_and_transpose_return_their_input():
    def run(L):
        x = L.tensor(2.0, requires_grad=True)
        ys = [L.cumsum(x, 0), x.cumprod(-1), x.transpose(0, -1)]
        (ys[0] + ys[1] + ys[2]).backward()
        return [py(y) for y in ys], py(x.grad), [y.grad_fn.name() for y in ys]
    assert same_as_torch(run) == ([2.0, 2.0, 2.0], 3.0,
                                  ["CumsumBackward0", "CumprodBackward0", "TransposeBackward0"])


def test_apply_map_map2_call_python_per_element():
    def run(L):
        a = L.arange(6.0).reshape(2, 3)
        v = a[0]
        r = v.apply_(lambda t: t * 10)
        seen = []
        L.tensor([1, 2]).apply_(lambda t: seen.append(type(t).__name__) or t)
        b = L.arange(3).apply_(lambda t: t + 0.7)
        c = L.zeros(2, 3).map_(L.tensor([1.0, 2.0, 3.0]), lambda p, q: q * 2)
        d = L.zeros(2, 2).map2_(L.ones(2), L.full((2, 1), 3.0), lambda p, q, s: p + q + s)
        g = L.ones(2, requires_grad=True)
        return [r is v, py(a), a._version, v._version, seen, py(b), py(c), py(d),
                py(L.tensor([True, False]).apply_(lambda t: 2)),
                raises(g.apply_, abs), raises(g.map_, g, max), raises(g.map2_, g, g, max),
                raises(L.tensor([1.0]).apply_, lambda t: "x"),
                raises(L.tensor([1], dtype=L.uint8).apply_, lambda t: 300),
                raises(L.zeros(3).map_, L.zeros(2, 3), max)]
    got = same_as_torch(run)
    assert got[1] == [[0.0, 10.0, 20.0], [3.0, 4.0, 5.0]] and got[2] == 0
    with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable that requires "
                                           r"grad. Use var.detach\(\).apply_\(\) instead."):
        hookgrad.ones(2, requires_grad=True).apply_(abs)


def test_hash_tensor_xors_the_64_bit_patterns():
    def run(L):
        t = L.tensor([[1, 2], [3, 4]])
        return [py(L.hash_tensor(L.tensor([1.5, -2.0]))), py(L.hash_tensor(t, [0, 1])),
                py(L.hash_tensor(t, 0, keepdim=True)), py(t.hash_tensor(1)),
                py(L.hash_tensor(L.zeros(0, 3), 1)), py(L.tensor([-1.0]).hash_tensor()),
                py(L.tensor([1.0], dtype=L.bfloat16).hash_tensor()),
                py(L.tensor([True, True, False]).hash_tensor()),
                str(L.hash_tensor(L.ones(2, requires_grad=True)).dtype).split(".")[1],
                L.hash_tensor(L.ones(2, requires_grad=True)).requires_grad,
                raises(lambda: L.hash_tensor(L.ones(1), mode=1)),
                raises(lambda: L.hash_tensor(L.ones(1, dtype=L.complex64))),
                raises(lambda: L.hash_tensor(L.zeros(0))),
                raises(lambda: L.hash_tensor(L.zeros(0, 3), 0))]
    got = same_as_torch(run)
    assert got[0] == 18444492273895866368 and got[1] == 4


def test_nonzero_static_and_argwhere():
    def run(L):
        t = L.tensor([[0, 1], [1, 1]])
        return [py(L.nonzero_static(L.tensor([0, 1, 2]), size=4, fill_value=-5)),
                py(L.nonzero_static(t, size=2)), py(t.nonzero_static(size=5)),
                list(L.nonzero_static(L.tensor(3.0), size=2).shape),
                str(L.nonzero_static(t, size=1).dtype).split(".")[1],
                raises(lambda: L.nonzero_static(t, size=-1)), py(t.argwhere()),
                py(L.argwhere(L.tensor([0.0, 2.0, 0.0])))]
    assert same_as_torch(run)[0] == [[1], [2], [-5], [-5]]


def test_nonzero_static_compiles():
    @hookgrad.compile
    def step(x):
        return hookgrad.nonzero_static(x > 0, size=3)
    got = step(hookgrad.tensor([0.0, 1.0, -1.0, 2.0]))
    assert got.tolist() == [[1], [3], [-1]]


def test_resize_as():
    def run(L):
        x = L.arange(6.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = x.resize_as(L.ones(2, 3))
            bad = raises(lambda: x.resize_as(L.ones(4)))
        (y * L.arange(6.0).reshape(2, 3)).sum().backward()
        return [py(y), y.grad_fn.name(), py(x.grad), [str(i.message) for i in w][:1], bad,
                py(L.resize_as_(L.ones(2), L.ones(3)))[:2]]  # the new element is uninitialised
    got = same_as_torch(run)
    assert got[1] == "ResizeBackward" and got[3] == ["non-inplace resize_as is deprecated"]


def test_layout_naming_factories():
    def run(L):
        a = L.empty_strided((2, 3), (1, 2), dtype=L.int32)
        b = L.empty_permuted((2, 3, 4), (0, 2, 1), requires_grad=True)
        c = L.ones(2, dtype=L.float64).new_empty_strided((2, 2), (1, 2))
        return [list(a.shape), str(a.dtype).split(".")[1], list(b.shape), b.requires_grad,
                str(c.dtype).split(".")[1], list(c.shape),
                raises(lambda: L.empty_strided((2, 3), (1,))),
                raises(lambda: L.empty_strided((2, -1), (1, 2))),
                raises(lambda: L.empty_permuted((2, 3), (0, 0))),
                raises(lambda: L.empty_permuted((2, 3), (0,))),
                raises(lambda: L.empty_permuted((2, 3), (0, 5)))]
    same_as_torch(run)
    # strides stay C order (docs/differences.md)
    assert hookgrad.empty_strided((2, 3), (1, 2)).stride() == (3, 1)
