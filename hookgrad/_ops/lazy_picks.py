"""The outputs of a deferred multi-output op (``split``, ``chunk``, ``unbind``): one
``Pending`` for the op, whose value is its tuple, and per output a ``Pending`` picking
its item (``lazy._outputs`` joins them to the trace); in a segment, the op's outputs come
out of one program."""
import operator
from weakref import ref as _weakref

from .._tensor import Pending

_new = object.__new__


def _item(outs, k):
    return outs[k]


class Pick:
    """The op of output ``k`` of a deferred multi-output op: its item of the op's tuple."""
    fwd = staticmethod(_item)


PICK = Pick()
_PICKERS = [operator.itemgetter(k) for k in range(64)]


def picks(p):
    """The outputs of ``p``, a deferred multi-output op, each a ``Pending`` picking its
    item; ``p`` itself is never read by a Tensor, so a segment always gives it out."""
    outs = []
    for k, av in enumerate(p.aval):
        q = _new(Pending)
        q.op, q.key, q.args, q.aval = PICK, (("k", k),), (p,), av
        q.fn = _PICKERS[k] if k < len(_PICKERS) else operator.itemgetter(k)
        q.value, q.ref, q.saved, q.gen = None, None, False, p.gen
        outs.append(q)
    # NOTE: known before the picks join: a pick past the bounds runs the trace, ``p``
    # with it, and ``p`` computed gives each pick its item (``lazy_segment._settle``)
    p.outs = [_weakref(q) for q in outs]
    return outs
