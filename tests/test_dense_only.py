"""The sparse and quantized accessors on hookgrad's (dense, unquantized) Tensors answer as
PyTorch's do on a strided float Tensor: the same result, or the same exception type and
message (for PyTorch's dispatcher errors, its first sentence, which names the op and the
backend)."""
import pytest

import hookgrad
from tests.differential import py, same_as_torch

torch = pytest.importorskip("torch")

X = [[1.0, 2.0], [3.0, 4.0]]

EXPRS = [
    "x.values()", "x.indices()", "x.coalesce()", "x.is_coalesced()", "x.crow_indices()",
    "x.col_indices()", "x.ccol_indices()", "x.row_indices()",
    "L.indices_copy(x)", "L.values_copy(x)", "L.crow_indices_copy(x)", "L.col_indices_copy(x)",
    "L.ccol_indices_copy(x)", "L.row_indices_copy(x)",
    "x.int_repr()", "x.q_scale()", "x.q_zero_point()", "x.q_per_channel_scales()",
    "x.q_per_channel_zero_points()", "x.q_per_channel_axis()", "x.qscheme()",
    "L.int_repr(x)", "L.q_scale(x)", "L.q_zero_point(x)", "L.q_per_channel_scales(x)",
    "L.q_per_channel_zero_points(x)", "L.q_per_channel_axis(x)",
    "x.sparse_mask(x > 2)", "x.resize_as_sparse_(x)", "L.resize_as_sparse_(x, x)",
    "L.hspmm(x, x)", "L.hsmm(x, x)", "L.smm(x, x)", "x.smm(x)", "L.sspaddmm(x, x, x)",
    "x.sspaddmm(x, x)", "L.saddmm(x, x, x)", "L.dequantize([x, x])", "L.dsmm(L.ones(3), x)",
    "x.sparse_dim()", "x.dense_dim()", "L.ones(2, 3, 4).dense_dim()",
    "x.to_dense()", "x.to_dense(dtype=L.int32)", "x.to_dense(masked_grad=True)",
    "x.to_dense() is x", "x.dequantize()", "x.dequantize() is x", "L.dequantize(x)",
    "L.dequantize(L.tensor([1, 2]))", "x.sparse_mask()", "L.hspmm(x)",
]


def _answer(expr):
    def run(L):
        x = L.tensor(X, device="cpu")  # the dispatcher errors name the backend
        try:
            out = eval(expr, {"L": L, "x": x})
        except Exception as e:  # noqa: BLE001 - the exception is the answer compared
            return {"raises": type(e).__name__, "first": str(e).split(". ")[0]}
        if isinstance(out, (bool, int)):
            return {"returns": out}
        return {"value": py(out), "dtype": str(out.dtype).rsplit(".", 1)[-1]}
    return run


@pytest.mark.parametrize("expr", EXPRS)
def test_answers_as_torch(expr):
    got = _answer(expr)(hookgrad)
    want = _answer(expr)(torch)
    assert got == want


def test_to_dense_keeps_the_graph():
    def run(L):
        x = L.tensor(X, requires_grad=True)
        (x.to_dense() * x.to_dense(dtype=L.float32)).sum().backward()
        return py(x.grad)
    assert same_as_torch(run) == [[2.0, 4.0], [6.0, 8.0]]


def test_dense_products_as_torch():
    def run(L):
        x = L.tensor(X, requires_grad=True)
        outs = [L.dsmm(x, x.t()), L.spmm(x, L.ones(2, 3))]
        sum(o.sum() for o in outs).backward()
        return {"values": [py(o) for o in outs], "nodes": [o.grad_fn.name() for o in outs],
                "grad": py(x.grad)}
    same_as_torch(run)


def test_dequantize_has_no_derivative():
    def run(L):
        x = L.tensor(X, requires_grad=True)
        d = x.dequantize()
        node = d.grad_fn
        try:
            d.sum().backward()
        except RuntimeError as e:
            error = str(e)
        with L.no_grad():
            plain = L.tensor(X, requires_grad=True)
            kept = plain.dequantize() is plain and plain.is_leaf
        return {"same": d is x, "leaf": x.is_leaf, "node": node.name(), "error": error,
                "next": [type(f).__name__ for f, _ in node.next_functions], "no_grad": kept}
    got = same_as_torch(run)
    assert got["error"] == "derivative for dequantize is not implemented"
