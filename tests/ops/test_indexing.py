"""``x[idx]`` and ``x[idx] = v`` for every kind of index: values against NumPy and PyTorch,
gradients, the nodes recorded (PyTorch's chain of select/slice/unsqueeze/index nodes),
and PyTorch's errors."""
import numpy as np
import pytest

import hookgrad as hg
from tests.differential import py, raises, raises_as_torch, same_as_torch, torch

BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10.0


def _chain(t):
    """Node names from ``t.grad_fn`` down the first input, to the leaf."""
    out, n = [], t.grad_fn
    while n is not None:
        out.append(n.name())
        nxt = [m for m, _ in n.next_functions if m is not None]
        n = nxt[0] if nxt else None
    return out


# (id, index builder taking the library) - NumPy gives the expected values where it agrees
GET = [
    ("int", lambda L: 1), ("negint", lambda L: -1), ("slice", lambda L: slice(1, None)),
    ("step", lambda L: (slice(None), slice(None, None, 2))),
    ("full_slice", lambda L: slice(None)), ("full_tuple", lambda L: (slice(None), slice(None))),
    ("none", lambda L: None), ("ellipsis", lambda L: Ellipsis),
    ("ellipsis_int", lambda L: (Ellipsis, 1)), ("int_ellipsis", lambda L: (0, Ellipsis, 2)),
    ("none_ellipsis_none", lambda L: (None, Ellipsis, None)),
    ("int_none_slice", lambda L: (1, None, slice(0, 2))), ("ints", lambda L: (1, 2, 3)),
    ("slice_out_of_range", lambda L: (slice(None), slice(1, 10))),
    ("empty_slice", lambda L: (slice(None), slice(2, 1))),
    ("true", lambda L: True), ("false", lambda L: False), ("int_true", lambda L: (0, True)),
    ("list", lambda L: [1, 0, 1]), ("tensor", lambda L: L.tensor([1, 0])),
    ("tensor_neg", lambda L: L.tensor([-1, 0])),
    ("tensor_0d", lambda L: L.tensor(1)), ("tensor_2d", lambda L: L.tensor([[0, 1], [1, 1]])),
    ("slice_tensor", lambda L: (slice(None), L.tensor([2, 0]))),
    ("two_tensors", lambda L: (L.tensor([0, 1]), L.tensor([2, 1]))),
    ("broadcast_tensors", lambda L: (L.tensor([[0], [1]]), slice(None), L.tensor([3, 0]))),
    ("tensor_int", lambda L: (L.tensor([1, 0]), 2)),
    ("ellipsis_tensor", lambda L: (Ellipsis, L.tensor([3, 3, 0]))),
    ("mask", lambda L: L.tensor([True, False])),
    ("mask2d", lambda L: L.tensor([[True, False, True], [False, False, True]])),
    ("mask_last", lambda L: (Ellipsis, L.tensor([True, False, False, True]))),
    ("none_tensor", lambda L: (None, L.tensor([1]))),
]


def _np_index(idx):
    if isinstance(idx, tuple):
        return tuple(_np_index(i) for i in idx)
    if isinstance(idx, hg.Tensor):
        return np.asarray(idx._data)
    return idx


@pytest.mark.parametrize("make", [m for _, m in GET], ids=[i for i, _ in GET])
def test_getitem_values_grads_and_nodes_match_torch(make):
    x = hg.tensor(BASE)
    want = BASE[_np_index(make(hg))]
    assert x[make(hg)].tolist() == want.tolist()

    def f(L):
        t = L.tensor(BASE, requires_grad=True)
        y = t[make(L)]
        w = L.arange(y.numel(), dtype=L.float32).reshape(y.shape)
        (y * w).sum().backward()
        return {"value": py(y), "chain": _chain(y), "grad": py(t.grad)}
    same_as_torch(f)


def test_a_basic_index_read_again_is_the_same_read():
    """A basic index's view ops are worked out once per index and shape
    (``indexing._BASIC``): read again, in any order, each index keeps its own nodes,
    values and gradients (a whole slice alone is a slice node; inside a tuple it is none),
    and an index out of bounds still raises."""
    def f(L):
        out = []
        for make in ([m for _, m in GET[:15]] + [lambda L: (slice(None),)]) * 2:
            t = L.tensor(BASE, requires_grad=True)
            y = t[make(L)]
            (y * 2).sum().backward()
            out.append({"value": py(y), "chain": _chain(y), "grad": py(t.grad)})
        for _ in range(2):
            out.append(raises(lambda: L.tensor(BASE)[0, -4]))
            out.append(raises(lambda: L.tensor(BASE)[..., slice(None, None, -1)]))
        return out
    got = same_as_torch(f)
    assert got[1]["chain"][0].endswith("SelectBackward0") and \
        got[4]["chain"][0].endswith("SliceBackward0") and \
        got[5]["chain"][0].endswith("AliasBackward0") and \
        got[15]["chain"][0].endswith("AliasBackward0")
    assert got[-1]["raises"] == "ValueError" and got[-2]["raises"] == "IndexError"


def test_int_then_advanced_index_follows_torch_not_numpy():
    # PyTorch selects first, then indexes: the advanced dimension stays in place
    x = hg.tensor(BASE)
    y = x[0, :, hg.tensor([3, 1])]
    assert y.shape == (3, 2)
    assert y.tolist() == BASE[0][:, [3, 1]].tolist()
    if torch is not None:
        assert torch.tensor(BASE)[0, :, torch.tensor([3, 1])].shape == (3, 2)


@pytest.mark.parametrize("make, exc, match", [
    (lambda L: 2, IndexError, "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda L: (0, -4), IndexError, "index -4 is out of bounds for dimension 1 with size 3"),
    (lambda L: (0, 0, 0, 0), IndexError, "too many indices for tensor of dimension 3"),
    (lambda L: L.tensor([0, 2]), IndexError, "index 2 is out of bounds for dimension 0 with "
                                             "size 2"),
    (lambda L: L.tensor([0.0]), IndexError, "tensors used as indices must be long, int, byte "
                                            "or bool tensors"),
    (lambda L: slice(None, None, -1), ValueError, "step must be greater than zero"),
])
def test_getitem_errors_match_torch(make, exc, match):
    with pytest.raises(exc, match=match):
        hg.tensor(BASE)[make(hg)]
    if torch is not None:
        with pytest.raises(exc, match=match):
            torch.tensor(BASE)[make(torch)]


def test_getitem_is_a_view_writes_reach_the_source():
    # a view by functionalization (hookgrad/_views.py): the write is scattered into x
    x = hg.tensor([1.0, 2.0, 3.0])
    y = x[1:]
    y.add_(10)
    assert x.tolist() == [1.0, 12.0, 13.0] and y.tolist() == [12.0, 13.0]
    assert y._base is x and x._version == y._version == 1


# (id, index builder, value builder)
SET = [
    ("int_scalar", lambda L: 0, lambda L: 5.0),
    ("int_row", lambda L: 1, lambda L: L.tensor([9.0, 8.0, 7.0, 6.0], requires_grad=True)),
    ("slice_broadcast", lambda L: (slice(None), slice(1, 3)),
     lambda L: L.tensor([1.0, 2.0], requires_grad=True)),
    ("ellipsis", lambda L: (Ellipsis, 0), lambda L: -1.0),
    ("step", lambda L: (slice(None), slice(None, None, 2)), lambda L: L.tensor(3.0)),
    ("mask", lambda L: L.tensor([[True, False, False, True]] * 3), lambda L: 0.0),
    ("tensor", lambda L: L.tensor([2, 0]), lambda L: L.tensor([[1.0] * 4, [2.0] * 4],
                                                               requires_grad=True)),
    ("list", lambda L: [0, 2], lambda L: 4.0),
    ("two_tensors", lambda L: (L.tensor([0, 1]), L.tensor([3, 2])),
     lambda L: L.tensor([5.0, 6.0], requires_grad=True)),
    ("slice_tensor", lambda L: (slice(1, None), L.tensor([0])), lambda L: 8.0),
    ("int_value_tensor0d", lambda L: (1, 1), lambda L: L.tensor(2.5, requires_grad=True)),
]


@pytest.mark.parametrize("make, value", [(m, v) for _, m, v in SET], ids=[i for i, _, _ in SET])
def test_setitem_values_grads_and_nodes_match_torch(make, value):
    def f(L):
        x = L.tensor(BASE[0], requires_grad=True)
        y = x * 2
        v = value(L)
        ver = y._version
        y[make(L)] = v
        res = {"value": py(y), "bump": y._version - ver, "node": y.grad_fn.name(),
               "next": [(n.name() if n is not None else None, nr)
                        for n, nr in y.grad_fn.next_functions]}
        (y * L.arange(12, dtype=L.float32).reshape(3, 4)).sum().backward()
        res["x_grad"] = py(x.grad)
        if isinstance(v, L.Tensor) and v.requires_grad:
            res["v_grad"] = py(v.grad)
        return res
    got = same_as_torch(f)
    assert got["bump"] == 1


def test_setitem_node_kinds():
    y = hg.zeros(3, 4)
    y.requires_grad_(False)
    w = hg.ones(4, requires_grad=True)
    y[0] = w
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    y[hg.tensor([1])] = w
    assert y.grad_fn.name() == "IndexPutBackward0"


def test_setitem_on_leaf_requiring_grad():
    def f(L):
        x = L.zeros(3, requires_grad=True)
        err = raises(lambda: x.__setitem__(0, 1.0))
        with L.no_grad():
            x[1] = 2.0
        return [err["raises"], py(x), x._version, x.is_leaf]
    assert same_as_torch(f) == ["RuntimeError", [0.0, 2.0, 0.0], 1, True]


@pytest.mark.parametrize("make, match", [
    (lambda L: 0, r"The expanded size of the tensor \(4\) must match the existing size \(3\) at "
                  r"non-singleton dimension 0.  Target sizes: \[4\].  Tensor sizes: \[3\]"),
    (lambda L: L.tensor([0, 1]), r"shape mismatch: value tensor of shape \[3\] cannot be "
                                 r"broadcast to indexing result of shape \[2, 4\]"),
])
def test_setitem_shape_mismatch_raises_and_leaves_tensor_unchanged(make, match):
    x = hg.zeros(3, 4)
    with pytest.raises(RuntimeError, match=match):
        x[make(hg)] = hg.ones(3)
    assert x.tolist() == [[0.0] * 4] * 3 and x._version == 0
    if torch is not None:
        with pytest.raises(RuntimeError, match=match):
            torch.zeros(3, 4)[make(torch)] = torch.ones(3)


@pytest.mark.parametrize("stmt", ["y[:] = 1.5", "y[:, :] = 1.5", "y[...] = w", "y[:] = w",
                                  "y[:, t] = 1.5", "y[None] = 1.5", "y[0] = w[:1]",
                                  "y[0] = w[None]", "y[t] = w[:1]", "y[True] = 1.5"])
def test_setitem_records_the_node_torch_records(stmt):
    def f(L):
        x = L.zeros(3, 4, requires_grad=True)
        y = x * 2
        w = L.arange(4, dtype=L.float32).requires_grad_()
        exec(stmt, {"y": y, "w": w, "t": L.tensor([0, 2])})
        res = [py(y), y.grad_fn.name(), [n.name() if n is not None else None
                                         for n, _ in y.grad_fn.next_functions]]
        (y * L.arange(12, dtype=L.float32).reshape(3, 4)).sum().backward()
        return res + [py(x.grad), py(w.grad)]
    same_as_torch(f)


def test_index_put_accumulate_sums_repeated_indices():
    def f(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = L.tensor([10.0, 20.0, 30.0], requires_grad=True)
        y.index_put_((L.tensor([0, 0, 2]),), v, accumulate=True)
        name = y.grad_fn.name()
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        return [py(y), name, py(x.grad), py(v.grad)]
    assert same_as_torch(f)[0] == [31.0, 2.0, 33.0]


def test_index_put_without_accumulate_and_out_of_place_form():
    def f(L):
        x = L.zeros(4)
        y = L.index_put(x, (L.tensor([1, 3]),), L.tensor([5.0, 6.0]))
        x.index_put_((L.tensor([0]),), L.tensor(1.0))
        return [py(x), py(y)]
    assert same_as_torch(f) == [[1.0, 0.0, 0.0, 0.0], [0.0, 5.0, 0.0, 6.0]]


def test_select_function_matches_indexing():
    def f(L):
        t = L.tensor(BASE, requires_grad=True)
        y = L.select(t, 1, -1)
        return [py(y), y.grad_fn.name()]
    same_as_torch(f)


def _write(L, idx):
    x = L.ones(2, 3)
    x[idx] = 1.0


# PyTorch reads a str in an index as a sequence, and refuses it as tensor() does (it warns
# first, of a non-tuple sequence, for the str alone)
@pytest.mark.parametrize("idx", ["a", (0, "a"), (None, "a")], ids=repr)
@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
def test_a_str_in_an_index_raises_pytorchs_type_error(idx):
    raises_as_torch(lambda L: L.ones(2, 3)[idx], TypeError, r"^new\(\): invalid data type 'str'$")
    raises_as_torch(lambda L: _write(L, idx), TypeError, r"^new\(\): invalid data type 'str'$")
