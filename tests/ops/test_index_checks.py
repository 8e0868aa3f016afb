"""Ops taking indices give PyTorch's shapes and raise PyTorch's errors, where JAX would
broadcast the index, clamp it or drop the write silently."""
import jax
import numpy as np
import pytest

import hookgrad
from tests.differential import same_as_torch

X = np.arange(6, dtype=np.float32).reshape(3, 2)


def _run(call):
    """``call(L, x)`` under hookgrad, checked against PyTorch: its values, or its error."""
    def scenario(L):
        x = L.tensor(X)
        try:
            return {"value": call(L, x).tolist()}
        except (RuntimeError, IndexError) as e:
            return {"raises": type(e).__name__, "message": str(e)}
    return same_as_torch(scenario)


SHAPES = [  # (id, call, expected value)
    ("gather-narrow-index", lambda L, x: x.gather(0, L.tensor([[0], [2], [1]])),
     [[0.0], [4.0], [2.0]]),
    ("gather-longer-along-dim", lambda L, x: x.gather(1, L.tensor([[0, 1, 0], [1, 0, 1]])),
     [[0.0, 1.0, 0.0], [3.0, 2.0, 3.0]]),
    ("gather-0d", lambda L, x: L.tensor(2.0).gather(0, L.tensor(0)), 2.0),
    ("take-negative", lambda L, x: L.take(x, L.tensor([-6, 5])), [0.0, 5.0]),
    ("index-fill-negative", lambda L, x: x.index_fill(0, L.tensor([-1]), 9.0),
     [[0.0, 1.0], [2.0, 3.0], [9.0, 9.0]]),
    ("scatter-reduce-int-mean", lambda L, x: L.tensor([[4, 5], [6, 7]]).scatter_reduce(
        0, L.tensor([[0, 0]]), L.tensor([[1, 2]]), "mean"), [[2, 3], [6, 7]]),
    ("scatter-reduce-max-alias", lambda L, x: x.scatter_reduce(
        0, L.tensor([[0, 0]]), L.full((1, 2), 0.5), "max"), [[0.5, 1.0], [2.0, 3.0], [4.0, 5.0]]),
    ("scatter-add-narrow", lambda L, x: x.scatter_add(0, L.tensor([[1], [2]]), L.ones(2, 2)),
     [[0.0, 1.0], [3.0, 3.0], [5.0, 5.0]]),
]


@pytest.mark.parametrize("call,want", [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
def test_index_shapes_follow_pytorch(call, want):
    assert _run(call) == {"value": want}


ERRORS = [  # (id, call, error type, message)
    ("gather-out-of-range", lambda L, x: x.gather(0, L.tensor([[0], [3]])), "RuntimeError",
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("gather-negative", lambda L, x: x.gather(0, L.tensor([[0], [-1]])), "RuntimeError",
     "index -1 is out of bounds for dimension 0 with size 3"),
    ("gather-ndim", lambda L, x: x.gather(0, L.tensor([0, 1])), "RuntimeError",
     "Index tensor must have the same number of dimensions as input tensor"),
    ("gather-index-too-large", lambda L, x: x.gather(1, L.tensor([[0, 1]] * 4)),
     "RuntimeError", "Size does not match at dimension 0 expected index [4, 2] to be no "
     "larger than self [3, 2] apart from dimension 1"),
    ("index-select-out-of-range", lambda L, x: x.index_select(0, L.tensor([3])),
     "IndexError", "index out of range in self"),
    ("index-select-negative", lambda L, x: x.index_select(0, L.tensor([-1])), "IndexError",
     "index out of range in self"),
    ("take-out-of-range", lambda L, x: L.take(x, L.tensor([6])), "IndexError",
     "out of range: tried to access index 6 on a tensor of 6 elements."),
    ("take-below-range", lambda L, x: L.take(x, L.tensor([-7])), "IndexError",
     "out of range: tried to access index -7 on a tensor of 6 elements."),
    ("scatter-add-out-of-range", lambda L, x: x.scatter_add(0, L.tensor([[3]]), L.ones(1, 1)),
     "RuntimeError", "index 3 is out of bounds for dimension 0 with size 3"),
    ("scatter-add-src-too-small",
     lambda L, x: x.scatter_add(0, L.tensor([[0, 0]]), L.ones(1, 1)), "RuntimeError",
     "Expected index [1, 2] to be no larger than self [3, 2] apart from dimension 0 and to "
     "be no larger size than src [1, 1]"),
    ("scatter-value-out-of-range", lambda L, x: x.scatter(1, L.tensor([[-1]]), 1.0),
     "RuntimeError", "index -1 is out of bounds for dimension 1 with size 2"),
    ("index-copy-out-of-range", lambda L, x: x.index_copy(0, L.tensor([3]), x[:1]),
     "IndexError", "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"),
    ("index-copy-count", lambda L, x: x.index_copy(0, L.tensor([1]), x[:2]), "IndexError",
     "index_copy_(): Number of indices (1) should be equal to source.size(dim) (2)"),
    ("index-fill-below-range", lambda L, x: x.index_fill(0, L.tensor([-4]), 1.0),
     "IndexError", "index -4 is out of bounds for dimension 0 with size 3"),
    ("index-fill-matrix-index", lambda L, x: x.index_fill(0, L.tensor([[1]]), 1.0),
     "RuntimeError", "Index has to be a vector/scalar"),
    ("take-along-dim-flat-out-of-range", lambda L, x: L.take_along_dim(x, L.tensor([6])),
     "RuntimeError", "index 6 is out of bounds for dimension 0 with size 6"),
    ("take-along-dim-broadcast", lambda L, x: L.take_along_dim(x, L.tensor([[0, 1, 0]]), 0),
     "RuntimeError", "The size of tensor a (2) must match the size of tensor b (3) at "
     "non-singleton dimension 1"),
    ("scatter-reduce-name", lambda L, x: x.scatter_reduce(0, L.tensor([[0]]), x, "add"),
     "RuntimeError", "reduce argument must be either sum, prod, mean, amax or amin, got add"),
    # indices made on the device, or changed in place after their bounds were taken on the
    # host, are read back for the check
    ("index-select-device-made", lambda L, x: x.index_select(0, L.tensor([1]) * 3),
     "IndexError", "index out of range in self"),
    ("index-select-changed-in-place", lambda L, x: x.index_select(0, L.tensor([1]).add_(2)),
     "IndexError", "index out of range in self"),
    ("getitem-device-made", lambda L, x: x[L.tensor([0, 1]) * 3], "IndexError",
     "index 3 is out of bounds for dimension 0 with size 3"),
    ("getitem-host-made", lambda L, x: x[L.tensor([0, -4])], "IndexError",
     "index -4 is out of bounds for dimension 0 with size 3"),
    ("embedding-bag-out-of-range",
     lambda L, x: L.nn.functional.embedding_bag(L.tensor([1, 0, 7, 2]), x, L.tensor([0, 2])),
     "RuntimeError", "Index 2 of input takes value 7 which is not in the valid range [0, 3)"),
    ("embedding-bag-2d-negative",
     lambda L, x: L.nn.functional.embedding_bag(L.tensor([[1, 2], [-1, -1]]), x),
     "RuntimeError", "Index 2 of input takes value -1 which is not in the valid range [0, 3)"),
    ("scatter-inplace-out-of-range",
     lambda L, x: x.clone().scatter_(0, L.tensor([[3]]), L.ones(1, 1)), "RuntimeError",
     "index 3 is out of bounds for dimension 0 with size 3"),
]


@pytest.mark.parametrize("call,kind,message", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_bad_indices_raise_pytorchs_error(call, kind, message):
    assert _run(call) == {"raises": kind, "message": message}


def test_failed_inplace_scatter_leaves_the_tensor_unchanged():
    x = hookgrad.tensor(X)
    with pytest.raises(RuntimeError, match="index 3 is out of bounds"):
        x.scatter_add_(0, hookgrad.tensor([[3]]), hookgrad.ones(1, 1))
    assert x._version == 0 and x.tolist() == X.tolist()


def test_gather_with_a_narrow_index_has_jax_gradients():
    idx = np.array([[0], [2]])
    x = hookgrad.tensor(X, requires_grad=True)
    x.gather(0, hookgrad.tensor(idx)).pow(2).sum().backward()

    def ref(a):
        return (jax.numpy.take_along_axis(a[:, :1], idx, axis=0) ** 2).sum()
    np.testing.assert_allclose(x.grad.numpy(), jax.grad(ref)(X))


@pytest.mark.parametrize("idx", [0, slice(0, 2), None, slice(None), Ellipsis, [0]])
def test_writing_into_a_leaf_by_index_names_the_view_when_pytorch_does(idx):
    def scenario(L):
        a = L.ones(3, requires_grad=True)
        try:
            a[idx] = 0.5
        except RuntimeError as e:
            return str(e)
    got = same_as_torch(scenario)
    view = idx not in (slice(None), Ellipsis) and not isinstance(idx, list)
    assert got == ("a view of a leaf" if view else "a leaf") + (
        " Variable that requires grad is being used in an in-place operation.")


def test_indices_made_from_host_data_are_checked_without_reading_the_device():
    from hookgrad._device import host_bounds
    from hookgrad.utils.data import DataLoader

    made = {"tensor": hookgrad.tensor([[4, 0], [7, 2]]),
            "randint": hookgrad.randint(3, 5, (16,))}
    labels = np.array([5, 1, 9, 2])
    made["batch"] = next(iter(DataLoader(labels, batch_size=4)))
    for name, t in made.items():
        a = np.asarray(t)
        assert host_bounds(t._data) == (a.min(), a.max()), name
    # a host op's result keeps host bounds; one made on the device is read back when indexed
    assert host_bounds((made["tensor"] + 1)._data) == (1, 8)
    assert host_bounds(made["tensor"].roll(1, 0)._data) is None
    w = hookgrad.zeros(9, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        hookgrad.nn.functional.embedding(made["batch"], w)


INDEX_DTYPE_OPS = {  # op: a call taking its index (the index values are 0 and 1)
    "gather": lambda L, x, i: x.gather(1, i.reshape(1, 2)),
    "scatter": lambda L, x, i: x.scatter(1, i.reshape(1, 2), L.ones(1, 2)),
    "scatter-value": lambda L, x, i: x.scatter(1, i.reshape(1, 2), 2.0),
    "scatter_add": lambda L, x, i: x.scatter_add(1, i.reshape(1, 2), L.ones(1, 2)),
    "scatter_reduce": lambda L, x, i: x.scatter_reduce(1, i.reshape(1, 2), L.ones(1, 2), "sum"),
    "index_select": lambda L, x, i: x.index_select(1, i),
    "index_add": lambda L, x, i: x.index_add(1, i, L.ones(3, 2)),
    "take": lambda L, x, i: L.take(x, i),
    "take_along_dim": lambda L, x, i: L.take_along_dim(x, i.reshape(1, 2), 1),
    "index_copy": lambda L, x, i: x.index_copy(1, i, L.ones(3, 2)),
    "index_fill": lambda L, x, i: x.index_fill(1, i, 2.0),
}


@pytest.mark.parametrize("dtype", ["float32", "int32", "int16", "bool", "int64"])
@pytest.mark.parametrize("op", list(INDEX_DTYPE_OPS))
def test_each_op_takes_the_index_dtypes_pytorch_takes_and_says_so_in_its_words(op, dtype):
    got = _run(lambda L, x: INDEX_DTYPE_OPS[op](L, x, L.tensor([0, 1]).to(getattr(L, dtype))))
    takes_int32 = op.startswith(("gather", "scatter", "index_select", "index_add"))
    assert ("value" in got) == (dtype == "int64" or dtype == "int32" and takes_int32)


_DOUBLE = "Index put requires the source and destination dtypes match, got Float for the " \
          "destination and Double for the source."
_SCATTER = "scatter(): Expected self.dtype to be equal to src.dtype"


def _put_with_index(L, x):
    x[L.tensor([0, 1])] = L.ones(2, 2, dtype=L.float64)  # through index_put_, as PyTorch's


# the ops writing a source into a Tensor cast nothing: (id, call, message)
SOURCE_DTYPES = [
    ("index_add", lambda L, x: x.index_add(0, L.tensor([0, 1]), L.ones(2, 2, dtype=L.float64)),
     "index_add_(): self (Float) and source (Double) must have the same scalar type"),
    ("index_add_ before the count", lambda L, x: x.index_add_(0, L.tensor([0, 1]),
                                                              L.ones(3, 2, dtype=L.long)),
     "index_add_(): self (Float) and source (Long) must have the same scalar type"),
    ("index_put", lambda L, x: x.index_put((L.tensor([0, 1]),), L.ones(2, 2, dtype=L.float64)),
     _DOUBLE),
    ("index_put_ of a 0-d value, accumulating", lambda L, x: x.index_put_(
        (L.tensor([0, 1]),), L.tensor(1.0, dtype=L.float64), accumulate=True), _DOUBLE),
    ("index_put_ before the bounds", lambda L, x: x.index_put_(
        (L.tensor([0, 7]),), L.ones(2, dtype=L.float64)), _DOUBLE),
    ("setitem through a Tensor index", _put_with_index, _DOUBLE),
    ("scatter", lambda L, x: x.scatter(0, L.tensor([[0, 1]]), L.ones(1, 2, dtype=L.float64)),
     _SCATTER),
    ("scatter_ before the bounds", lambda L, x: x.scatter_(0, L.tensor([[0, 7]]),
                                                           L.ones(1, 2, dtype=L.float64)),
     _SCATTER),
    ("scatter_add", lambda L, x: x.scatter_add(0, L.tensor([[0, 1]]),
                                               L.ones(1, 2, dtype=L.float64)), _SCATTER),
    ("scatter_reduce_", lambda L, x: x.scatter_reduce_(0, L.tensor([[0, 1]]),
                                                       L.ones(1, 2, dtype=L.float64), "amax"),
     _SCATTER),
    ("index_copy", lambda L, x: x.index_copy(0, L.tensor([0, 1]), L.ones(2, 2, dtype=L.float64)),
     "index_copy_(): self and source expected to have the same dtype, but got (self) Float "
     "and (source) Double"),
]


@pytest.mark.parametrize("call,message", [e[1:] for e in SOURCE_DTYPES],
                         ids=[e[0] for e in SOURCE_DTYPES])
def test_a_source_of_another_dtype_raises_pytorchs_error(call, message):
    assert _run(call) == {"raises": "RuntimeError", "message": message}


def test_a_source_of_the_same_dtype_and_a_number_still_write():
    def call(L, x):
        x[L.tensor([0, 2])] = 7.5  # a number is cast, as PyTorch casts it
        x[0:1] = L.ones(1, 2, dtype=L.float64)  # a slice copies, casting
        return x.index_add(0, L.tensor([1]), L.ones(1, 2)).scatter(
            0, L.tensor([[2, 0]]), L.full((1, 2), 9.0))
    assert _run(call) == {"value": [[1.0, 9.0], [3.0, 4.0], [9.0, 7.5]]}
