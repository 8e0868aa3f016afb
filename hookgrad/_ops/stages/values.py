"""Stage 4, lazy and tiered values: arguments not computed yet, or with no data at all.

An op whose arguments are all concrete may be deferred (``_ops/lazy.py``: its output is
a ``Pending`` value, computed with the ops after it as one program when read); its
forward is jitted in tiers (``_ops/tiered.py``). An argument still pending is computed
first. An argument on the meta device has shapes and dtypes only: the op runs abstractly.
"""
import jax

from ... import _meta
from ..._tensor import Pending, Tensor
from .. import lazy as _lazy
from . import inplace
from .record import _record

_value = _lazy.value
_wrap = Tensor._wrap


def on_meta(op, key, fn, args, arrs, record, out):
    """``apply`` with an argument on the meta device: the forward's shapes and dtypes
    (``jax.eval_shape``), nothing computed; the node is recorded as for any Tensor."""
    arrs = [_meta.abstract(_value(v) if v.__class__ is Pending else v) for v in arrs]
    res = _meta.concrete(jax.eval_shape(fn, *arrs))
    if out is None:
        if record:
            return _record(op, key, args, res)
        return tuple(map(_wrap, res)) if res.__class__ is tuple else _wrap(res)
    if not out.is_meta:  # as PyTorch's copy_ from a meta Tensor
        raise NotImplementedError(_meta.NO_DATA)
    return inplace.write(op, key, args, (), lambda: res, out, record)
