"""No raw JAX exception reaches a user: every op of the op table (tests/ops/_op_table.py)
is fed a wrong dtype (an integer or a bool tensor for its first float input), a wrong rank
(0-d, one more dim) and a wrong size (its last dim one longer). What hookgrad raises must be
its own exception, not one raised inside JAX, JAX's type or NumPy's; where PyTorch raises
too, of PyTorch's type (or a subclass of it: ``NotImplementedError`` is a
``RuntimeError``), but for the calls ``TYPE_DIFFERS`` lists, where hookgrad's own check
raises another type (a to-do list: each must still differ so). Where PyTorch runs the
call, hookgrad runs it too, with PyTorch's values and dtypes, but for the calls
``RUNS_DIFFER`` lists (``python tests/ops/test_raw_jax_errors.py`` prints every call that
differs).

Each variant compiles a program, so the default tier checks every ``SAMPLE``-th row and
the slow tier (``HOOKGRAD_SLOW=1``) all of them.
"""
import warnings
import zlib

import numpy as np
import pytest

import hookgrad
from hookgrad._ops import jax_errors
from tests.differential import torch
from tests.ops import _op_table as T

SAMPLE = 12
VARIANTS = ("int", "bool", "0-d", "rank+1", "last+1")
# rows that call PyTorch's internal aten op, which crashes the process on wrong inputs
_UNCHECKED = {"rnn_layer gru", "rnn_layer lstm"}


# calls where hookgrad's own check raises another type than PyTorch's (not JAX's):
# (hookgrad's, PyTorch's) -> row-variant ids; a fixed one fails until removed
TYPE_DIFFERS = {}

_LISTED = {pid: kinds for kinds, pids in TYPE_DIFFERS.items() for pid in pids}

# calls PyTorch runs where hookgrad raises or returns other values: a to-do list, each must
# still differ. lu_factor_ex of a singular matrix: LAPACK's last pivot is -1e-7 in JAX's
# factorization and exactly 0 in PyTorch's, which reports it in ``info``.
RUNS_DIFFER = {"linalg.lu_factor_ex-last+1"}
# calls where hookgrad raises on purpose (docs/differences.md): PyTorch reads lengths past
# the padded length
_REFUSED = {"pack_padded_sequence-rank+1"}
# rows whose indices point at equal values, whose order PyTorch leaves unspecified: their
# values are compared, not the indices
_TIES = {"topk", "kthvalue"}


def _wrong(variant, a):
    if variant == "int":
        return np.round(a).astype(np.int64)
    if variant == "bool":
        return a > 0
    if variant == "0-d":
        return np.asarray(a.reshape(-1)[0] if a.size else 0.5, np.float32)
    if variant == "rank+1":
        return np.stack([a, a])
    shape = a.shape[:-1] + (a.shape[-1] + 1,)
    return np.resize(a, shape).astype(np.float32)


def _first_float(row):
    return next((i for i, s in enumerate(row.inputs) if isinstance(s, T.F)), None)


def _cases(rows):
    for row in rows:
        i = _first_float(row)
        if i is None or row.id in _UNCHECKED:
            continue
        for variant in VARIANTS:
            if variant == "last+1" and not row.inputs[i].shape and \
                    row.inputs[i].values is None:
                continue
            yield pytest.param(row, i, variant, id=f"{row.id}-{variant}")


def _call(L, row, i, variant):
    arrays = T.arrays_for(row)
    arrays[i] = _wrong(variant, arrays[i])
    if variant == "last+1" and arrays[i].ndim == 0:
        return None
    args = []
    for spec, a in zip(row.inputs, arrays):
        grad = isinstance(spec, T.F) and np.asarray(a).dtype == np.float32
        args.append(L.tensor(a, requires_grad=grad))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = row.call(L, *args)
            return None, _plain(out[0] if row.id in _TIES else out)
    except Exception as e:  # noqa: BLE001 - the exception is what is checked
        return e, None


def _plain(x):
    """A result as nested lists of ``(dtype name, array)`` and plain values, comparable
    across the two libraries."""
    if hasattr(x, "detach") and hasattr(x, "dtype"):
        x = x.detach()
        kind = str(x.dtype).rsplit(".", 1)[-1]
        return kind, np.asarray((x.float() if kind == "bfloat16" else x).tolist())
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (bool, int, float, complex, str)) or x is None:
        return x
    return str(x).rsplit(".", 1)[-1]  # a dtype, a device: by name


def _same(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple) and isinstance(a[1], np.ndarray):
        return a[0] == b[0] and a[1].shape == b[1].shape and \
            np.allclose(a[1], b[1], rtol=1e-4, atol=1e-5, equal_nan=True)
    if isinstance(a, float) and isinstance(b, float):
        return np.isclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    return a == b


def _differs(ours, theirs):
    """What hookgrad does differently (``ours``: ``_call``'s answer) where PyTorch runs the
    call, or None."""
    (got, out), (want, ref) = ours, theirs
    if want is not None:
        return None
    if got is not None:
        return f"raises {type(got).__name__}: {got}"
    return None if _same(out, ref) else f"returns {out}\n  PyTorch: {ref}"


def check(row, i, variant):
    pid = f"{row.id}-{variant}"
    ours = _call(hookgrad, row, i, variant)
    got = ours[0]
    if got is not None:
        assert not jax_errors.from_jax(got) and \
            type(got).__module__.split(".")[0] not in ("jax", "jaxlib", "numpy"), \
            f"{row.id} ({variant}): a raw {type(got).__name__} from JAX: {got}"
    if torch is None:
        return None
    theirs = _call(torch, row, i, variant)
    want = theirs[0]
    differs = None if pid in _REFUSED else _differs(ours, theirs)
    assert (differs is not None) == (pid in RUNS_DIFFER), \
        f"{pid} is listed in RUNS_DIFFER: remove it" if differs is None else \
        f"{row.id} ({variant}): PyTorch runs it; hookgrad {differs}"
    listed = _LISTED.get(pid)
    if got is not None and want is not None and listed is not None:
        assert (type(got).__name__, type(want).__name__) == listed, \
            f"{pid} is listed in TYPE_DIFFERS as {listed}: remove it"
    elif got is not None and want is not None:
        assert isinstance(got, type(want)), \
            f"{row.id} ({variant}): {type(got).__name__}: {got}\n  PyTorch: " \
            f"{type(want).__name__}: {want}"
    return differs


def _sampled(row):
    return zlib.crc32(row.id.encode()) % SAMPLE == 0


@pytest.mark.parametrize("row,i,variant", list(_cases([r for r in T.ROWS if _sampled(r)])))
def test_no_raw_jax_error_escapes(row, i, variant):
    check(row, i, variant)


@pytest.mark.slow
@pytest.mark.parametrize("row,i,variant", list(_cases([r for r in T.ROWS if not _sampled(r)])))
def test_no_raw_jax_error_escapes_slow(row, i, variant):
    check(row, i, variant)


def test_jax_errors_become_pytorch_errors():
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(5\) must match the size "
                                           r"of tensor b \(4\) at non-singleton dimension 1$"):
        hookgrad.isclose(hookgrad.ones(3, 5), hookgrad.ones(3, 4))
    with pytest.raises(NotImplementedError, match="^\"frac\" not implemented for 'Bool'$"):
        hookgrad.tensor([True]).frac()
    with pytest.raises(IndexError, match="^Dimension specified as 0 but tensor has no "
                                         "dimensions$"):
        hookgrad.fft.rfft(hookgrad.tensor(1.0))
    with pytest.raises(RuntimeError, match="^histc: ") as info:
        hookgrad.histc(hookgrad.ones(2, 3), bins=-1)  # (not checked before JAX yet)
    assert jax_errors.from_jax(info.value.__cause__)  # JAX's exception stays the cause
    # three shapes (where, masked_fill): the first pair that does not broadcast
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size "
                                           r"of tensor b \(5\) at non-singleton dimension 1$"):
        hookgrad.where(hookgrad.ones(2, 3) > 0, hookgrad.ones(2, 3), hookgrad.ones(4, 5))


if __name__ == "__main__":  # every call PyTorch runs that hookgrad does not run alike
    for p in _cases(T.ROWS):
        row, i, variant = p.values
        d = _differs(_call(hookgrad, row, i, variant), _call(torch, row, i, variant))
        if d is not None:
            print(f"{row.id}-{variant}: {d}")
