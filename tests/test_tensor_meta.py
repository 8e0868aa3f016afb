"""A Tensor's metadata (``hookgrad/_tensor_meta.py``): shape, dtype and device read
without computing a pending value, and without a Python call where a model asks per op."""
import sys

import jax
import numpy as np

import hookgrad as hg
from hookgrad import _dtype
from hookgrad._tensor import Pending

from ._calls import watch
from .differential import same_as_torch

RUNS = 4  # an op's first calls run at once (lazy.py learns its output); later ones wait


def _pending():
    x = hg.ones(2, 3)
    for _ in range(RUNS):
        y = (x * 2).sin()
    assert y._arr.__class__ is Pending
    return y


def _python_calls(fn):
    """The Python functions ``fn`` calls (``fn`` itself not counted)."""
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append(frame.f_code.co_name)
                   if event == "call" else None)
    try:
        fn()
    finally:
        sys.setprofile(None)
    assert calls[0] == fn.__name__
    return calls[1:]


def test_a_pending_values_shape_and_dtype_cost_no_python_call():
    p = _pending()._arr

    def read():
        return p.shape, p.dtype
    # a Python getter would be a call each (a model's step reads ~1,000 pending shapes;
    # ``ndim`` is JAX's abstract value's own Python property)
    assert _python_calls(read) == []
    assert (p.shape, p.dtype, p.ndim) == ((2, 3), np.dtype("float32"), 2)


def test_a_tensors_dtype_is_the_tables_for_every_dtype():
    for d in _dtype._ALL:
        if d.np is None or d not in _dtype.FIXED_JAX and not jax.config.jax_enable_x64:
            continue  # (int64 is int32 without x64 mode: docs/differences.md)
        t = hg.zeros(2, dtype=d)
        assert t.dtype is d, d
        assert _pending_of(t).dtype is d, d


def _pending_of(t):
    for _ in range(RUNS):
        y = t.clone()
    return y


def test_metadata_as_pytorchs():
    def f(L):
        x = L.ones(2, 3, dtype=L.float16)
        y = (x * 2).transpose(0, 1)
        return [str(y.dtype).split(".")[1], list(y.shape), y.size(1), y.dim(), y.ndim, y.numel(),
                y.element_size(), y.is_floating_point(), y.is_complex(), str(y.device),
                y.is_contiguous(), y.contiguous().is_contiguous(), y.get_device(),
                y.is_meta, y.is_cuda, y.is_quantized, type(y.shape[1:]).__name__,
                list(y.shape[1:]), y.shape.numel()]
    same_as_torch(f)


def test_is_contiguous_of_views_as_pytorchs_worked_out_once_per_geometry(monkeypatch):
    # a model's views repeat their geometries each step: the walk over sizes and strides
    # runs once for each, and every view answers as PyTorch's
    from hookgrad import _tensor_meta
    walks = watch(monkeypatch, _tensor_meta, "_contiguous", "_CONTIGUOUS")

    def made(x):  # eight geometries
        return (x[0], x[:, 1], x.transpose(0, 2), x[..., :2], x[1:], x.unsqueeze(1)[:, :, 1],
                x[:, :0], x.permute(2, 0, 1).transpose(0, 1))

    same_as_torch(lambda L: [[v.is_contiguous() for v in made(L.arange(24.0).reshape(2, 3, 4))]
                             for _ in range(3)])  # three steps, new views each
    assert len(walks) == 8  # the 8 geometries, each walked once over 3 steps
