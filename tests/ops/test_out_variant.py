"""``out=`` on the functions the op table makes (``hookgrad.sin(x, out=y)``): PyTorch's
resize, cast and autograd rules, against PyTorch where torch is installed."""
import warnings

import numpy as np
import pytest

import hookgrad as hg
from hookgrad._ops.registry import FUNCTIONS, METHODS
from tests.differential import py, raises, same_as_torch


def test_result_is_written_into_out_and_returned():
    def f(L):
        x = L.tensor([0.5, 1.0])
        y = L.zeros(2)
        r = L.sin(x, out=y)
        s = L.add(x, x, alpha=2, out=L.empty(2))
        m = L.clamp(x, max=0.75, out=L.empty(2))
        return [r is y, y._version, py(y), py(s), py(m)]
    got = same_as_torch(f)
    assert got[:2] == [True, 1]
    np.testing.assert_allclose(got[2], np.sin([0.5, 1.0]), rtol=1e-6)
    assert got[3:] == [[1.5, 3.0], [0.5, 0.75]]


def test_out_of_another_shape_is_resized_with_a_warning_unless_empty():
    def f(L):
        logs = []
        for y in (L.zeros(3), L.empty(0)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                L.neg(L.ones(2, 2), out=y)
            logs.append([list(y.shape), py(y), [str(m.message)[:60] for m in w]])
        return logs
    got = same_as_torch(f)
    assert got[0][2] == ["An output with one or more elements was resized since it had"]
    assert got[1] == [[2, 2], [[-1.0, -1.0], [-1.0, -1.0]], []]
    with pytest.warns(UserWarning, match=r"had shape \[3\], which does not match the required "
                                         r"output shape \[2\]\. This behavior is deprecated"):
        hg.exp(hg.zeros(2), out=hg.zeros(3))


def test_result_is_cast_to_outs_dtype_where_pytorch_casts():
    def f(L):
        ints = L.tensor([1, 2], dtype=L.int32)
        ok = L.add(ints, ints, out=L.empty(2))          # int into float: allowed
        return [py(ok), str(ok.dtype).split(".")[-1],
                raises(lambda: L.sin(L.ones(2), out=L.empty(2, dtype=L.int32))),
                raises(lambda: L.eq(L.ones(2), 1, out=L.empty(2)))]   # bool into float
    got = same_as_torch(f)
    assert got[:2] == [[2.0, 4.0], "float32"]
    assert got[2]["raises"] == "RuntimeError" and got[3] == {"returned": True}
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Int"):
        hg.sin(hg.ones(2), out=hg.empty(2, dtype=hg.int32))


def test_out_does_not_support_autograd():
    def f(L):
        x = L.ones(2, requires_grad=True)
        out = [raises(lambda: L.sin(x, out=L.empty(2))),
               raises(lambda: L.sin(L.ones(2), out=L.empty(2, requires_grad=True)))]
        with L.no_grad():
            y = L.empty(2)
            out.append([L.sin(x, out=y) is y, y.requires_grad, y.grad_fn is None])
        return out
    got = same_as_torch(f)
    assert [g["raises"] for g in got[:2]] == ["RuntimeError"] * 2
    assert got[2] == [True, False, True]
    x = hg.ones(2, requires_grad=True)
    y = hg.zeros(2)
    with pytest.raises(RuntimeError, match=r"^mul\(\): functions with out=\.\.\. arguments don't "
                                           "support automatic differentiation, but one of the "
                                           "arguments requires grad.$"):
        hg.mul(hg.ones(2), x, out=y)
    assert y.tolist() == [0.0, 0.0] and y._version == 0   # nothing written


def test_out_must_be_a_tensor_and_in_place_forms_take_none():
    with pytest.raises(TypeError, match=r"sin\(\): argument 'out' must be Tensor, not list"):
        hg.sin(hg.ones(2), out=[1.0, 2.0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        hg.ones(2).sin_(out=hg.empty(2))
    # every op-table function form has it (OpDef rows and @variants choosers), no in-place
    # form does
    import inspect
    for name in ("sin", "add", "mul", "clamp", "neg", "atan2", "div"):
        assert "out" in inspect.signature(FUNCTIONS[name]).parameters
        assert "out" not in inspect.signature(METHODS[name + "_"]).parameters


def test_writing_into_a_saved_tensor_under_allow_mutation_keeps_the_saved_value():
    def f(L):
        with L.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = L.tensor([1.0], requires_grad=True)
            b = L.tensor([3.0])
            out = a * b
            L.sin(L.tensor([2.0]), out=b)
            n_cloned = len(ctx.cloned)
            out.backward()
            return [n_cloned, py(a.grad), len(ctx.cloned)]
    assert same_as_torch(f) == [1, [3.0], 0]


def test_out_inside_compile_matches_eager():
    x = hg.tensor([0.25, 0.5])

    def step(y):
        hg.mul(x, 3, out=y)
        return hg.exp(y, out=y) + 1

    eager_y, comp_y = hg.zeros(2), hg.zeros(2)
    want = step(eager_y)
    got = hg.compile(step)(comp_y)
    np.testing.assert_allclose(np.asarray(got.tolist()), np.asarray(want.tolist()), rtol=1e-6)
    np.testing.assert_allclose(comp_y.tolist(), eager_y.tolist(), rtol=1e-6)
