"""No raw JAX exception reaches a user: every op of the op table (tests/ops/_op_table.py)
is fed a wrong dtype (an integer or a bool tensor for its first float input), a wrong rank
(0-d, one more dim) and a wrong size (its last dim one longer). What hookgrad raises must be
its own exception, not one raised inside JAX, JAX's type or NumPy's; where PyTorch raises
too, of PyTorch's type (or a subclass of it: ``NotImplementedError`` is a
``RuntimeError``), but for the calls ``TYPE_DIFFERS`` lists, where hookgrad's own check
raises another type (a to-do list: each must still differ so). Where PyTorch runs the
call, hookgrad may still raise (``python tests/ops/test_raw_jax_errors.py`` lists those),
but not from inside JAX.

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
            row.call(L, *args)
    except Exception as e:  # noqa: BLE001 - the exception is what is checked
        return e
    return None


def check(row, i, variant):
    got = _call(hookgrad, row, i, variant)
    if got is None:
        return None
    assert not jax_errors.from_jax(got) and \
        type(got).__module__.split(".")[0] not in ("jax", "jaxlib", "numpy"), \
        f"{row.id} ({variant}): a raw {type(got).__name__} from JAX: {got}"
    want = _call(torch, row, i, variant) if torch is not None else None
    listed = _LISTED.get(f"{row.id}-{variant}")
    if want is not None and listed is not None:
        assert (type(got).__name__, type(want).__name__) == listed, \
            f"{row.id}-{variant} is listed in TYPE_DIFFERS as {listed}: remove it"
    elif want is not None:
        assert isinstance(got, type(want)), \
            f"{row.id} ({variant}): {type(got).__name__}: {got}\n  PyTorch: " \
            f"{type(want).__name__}: {want}"
    return got, want


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
    with pytest.raises(RuntimeError, match="^tril: ") as info:
        hookgrad.tril(hookgrad.tensor(1.0))
    assert jax_errors.from_jax(info.value.__cause__)  # JAX's exception stays the cause


if __name__ == "__main__":  # every row: what hookgrad raises where PyTorch does not
    for p in _cases(T.ROWS):
        row, i, variant = p.values
        res = check(row, i, variant)
        if res is not None and res[1] is None:
            print(f"{row.id} ({variant}): {type(res[0]).__name__}: {res[0]}")
