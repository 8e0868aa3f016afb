"""Every op-table row against PyTorch: the top node's ``_saved_*`` attributes have
PyTorch's names and values (a saved input is the input itself; sizes, dims and scalars
are the same Python values; other tensors are equal).

Rows that cannot agree carry their reason in ``DIFFERS`` (a strict xfail: a row that
starts to agree fails until its entry goes). The fast tier checks ``SAMPLE``; the slow
tier (HOOKGRAD_SLOW=1) every row.
"""
import numpy as np
import pytest

import hookgrad as hg

from tests.ops import _op_table as T

torch = pytest.importorskip("torch")

# Rows whose saved values cannot agree with PyTorch's, and why.
_NEGDIM = ("hookgrad normalizes a negative dim at the call (statics are the jit cache key); "
           "PyTorch saves it as given (shown as an unsigned 64-bit int)")
_SHAPE_ONLY = "hookgrad keeps only the shape of an argument whose tensor PyTorch saves"
_DEFAULT = ("PyTorch saves None (or ()) for an argument left out; hookgrad's row keeps the "
            "value it stands for")
_END = "hookgrad's narrow keeps start and length; PyTorch's node (a slice's) saves the end"
_LAYOUT = ("the op keeps its own statics (sections, resampling matrices, index templates), "
           "from which PyTorch's saved values are not derived yet")
_INDEX = "hookgrad saves the index with negative entries wrapped: equal values, a new Tensor"
_NODE = "a different top node class (PyTorch's CppFunction; the node-class slice)"
_SIGN = ("eigenvectors and singular vectors are unique up to sign: JAX's solvers choose other "
         "signs than LAPACK's")
_COLUMN_MAJOR = "PyTorch's inverse is column-major (LAPACK's layout); hookgrad's is row-major"
DIFFERS = {
    **dict.fromkeys(["sum.negdim", "log_softmax.method", "cat.dim"], _NEGDIM),
    **dict.fromkeys(["div.floor", "div.trunc", "gather", "gather.method", "take",
                     "index_add", "index_add.alpha", "interpolate area", "index_copy"],
                    _SHAPE_ONLY),
    **dict.fromkeys(["clamp.method", "clamp.max", "sum.empty_dims", "var",
                     "std", "edge std_const", "var_mean", "edge std_mean_const", "roll.flat",
                     "norm", "norm.dim", "edge norm0", "edge norm_dim0"], _DEFAULT),
    **dict.fromkeys(["narrow", "narrow.neg"], _END),
    **dict.fromkeys(["getitem true",
                     "getitem list", "getitem mask", "getitem tensor", "getitem tensor2",
                     "getitem slice_tensor", "getitem tensor2d", "getitem boolmask",
                     "getitem rowmask", "pack_padded_sequence", "repeat_interleave.tensor",
                     "repeat_interleave.tensor_flat", "embedding_bag per_sample_weights"]
                    + [r.id for r in T.ROWS if r.id.startswith("interpolate ")
                       and r.id != "interpolate area"], _LAYOUT),
    **dict.fromkeys(["index_fill", "index_fill.tensor"], _INDEX),
    **dict.fromkeys([r.id for r in T.ROWS if r.id.startswith("_foreach")], _NODE),
    **dict.fromkeys(["linalg.norm nuc", "linalg.matrix_norm nuc", "linalg.matrix_norm 2",
                     "linalg.matrix_norm -2", "linalg.diagonal"], _NEGDIM),
    **dict.fromkeys(["linalg.svd", "linalg.svdvals", "linalg.eigh upper", "linalg.eigvalsh",
                     "svd", "svd.method no_uv"],
                    _SIGN),
    "linalg.matrix_power -3": _COLUMN_MAJOR,
}
SAMPLE = {"exp", "sin", "mul", "mul.scalar", "div", "pow.scalar", "pow.tensor_op", "add",
          "sub.alpha", "maximum", "atan2", "sum.dim", "mean.dim", "max.dim", "mm", "matmul",
          "softmax", "clamp", "where", "lerp.tensor", "sqrt", "reshape", "transpose",
          "gather", "cat", "getitem int", "getitem slice"}
# ``shallow`` rows record another top node than PyTorch's, ``nonames`` rows none to compare
ROWS = [r for r in T.ROWS if "nonames" not in r.flags and "shallow" not in r.flags]


def _top(L, row):
    ins = T.tensors(L, row)
    outs = [o for o in T.outputs(row.call(L, *ins)) if isinstance(o, L.Tensor)]
    top = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
    return ins, outs, top


def _plain(v):
    """A saved non-Tensor value of PyTorch as a comparable Python value (PyTorch shows a
    negative dim of an int list as its unsigned 64-bit form)."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 2 ** 63:
        return v - 2 ** 64
    if isinstance(v, (tuple, list)):
        return tuple(_plain(x) for x in v)
    if isinstance(v, torch.dtype):
        return str(v).replace("torch.", "")
    return v


def _mine(v):
    if isinstance(v, (tuple, list)):
        return tuple(_mine(x) for x in v)
    if isinstance(v, hg.dtype):
        return str(v).replace("hookgrad.", "")
    return v


def _check_value(name, tv, hv, tins, hins):
    if isinstance(tv, torch.Tensor):
        assert isinstance(hv, hg.Tensor), f"{name}: {type(hv).__name__}, torch has a Tensor"
        for ti, hi in zip(tins, hins):
            if tv is ti:  # a saved input is returned as itself
                assert hv is hi, f"{name}: not the input itself"
                return
        assert tuple(hv.shape) == tuple(tv.shape), name
        np.testing.assert_allclose(np.asarray(hv.detach()._data), tv.detach().numpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    elif tv is None:
        assert hv is None, f"{name}: {hv!r}, torch has None"
    elif isinstance(tv, float):
        assert isinstance(hv, (int, float)) and np.isclose(hv, tv), f"{name}: {hv!r} vs {tv!r}"
    else:
        assert _mine(hv) == _plain(tv), f"{name}: {hv!r} vs {tv!r}"


def _params():
    for r in ROWS:
        marks = [pytest.mark.xfail(reason=DIFFERS[r.id], strict=True)] if r.id in DIFFERS \
            else []
        if r.id not in SAMPLE:
            marks.append(pytest.mark.slow)
        yield pytest.param(r, id=r.id, marks=marks)


@pytest.mark.parametrize("row", list(_params()))
def test_saved_attributes_match_torch(row):
    tins, _, tnode = _top(torch, row)
    hins, _, hnode = _top(hg, row)
    if tnode is None:
        assert hnode is None
        return
    assert type(hnode).__name__ == type(tnode).__name__
    names = sorted(a for a in dir(tnode) if a.startswith("_saved_"))
    assert sorted(a for a in dir(hnode) if a.startswith("_saved_")) == names
    for name in names:
        _check_value(name, getattr(tnode, name), getattr(hnode, name), tins, hins)
