"""A ``linear`` on an input of 3 dims or more, as one pass over its four ops.

PyTorch records such a call without a bias as ``t`` (the weight), ``reshape`` (the input
as rows: a view), ``mm`` and ``_unsafe_view`` (the rows' product back in the input's
batch shape), and with one (on a contiguous input) as ``view`` (the rows), ``t``,
``addmm`` and ``view`` (back): four nodes, each an op through ``dispatch.apply``. A
model's every projection makes these four (Llama's 7 per layer), and in a training step
the four follow a sequence of ops seen before (``lazy_memo.Memo``): ``lazy.defer``
checks each against the sequence's next op, one call at a time.

``rows`` (``rows_addmm`` with a bias) does that check once for the four: the sequence's
next four ops must be these four, wired as ``linalg._folded`` (``nn._linear_graph``)
wires them, and the Tensors that enter from outside (the weight, the input, the bias)
what the sequence had there. The four pending values are then
made as ``defer`` would make them, and each node is recorded by the record stage itself
(``stages/record.py``: sequence numbers, edges, saved values and their hooks, anomaly
mode, all as for any op), so the graph is the one the op-by-op path records. Anything
else (no sequence followed, a different next op, an argument of another kind) returns
None before changing anything, and the caller takes the op-by-op path, which also
teaches the sequence.
"""
from weakref import ref as _weakref

from .._tensor import Pending, Tensor
from . import lazy as _lazy
from .linalg import ADDMM, MM
from .shape import RESHAPE, T, UNSAFE_VIEW, VIEW
from .stages.record import record_at_site
from .views import GEOMETRY, make_view

_local, _ARRAY, _new = _lazy._local, _lazy.ARRAY, object.__new__
_wrap = Tensor._wrap
_RESHAPE_GEOMETRY, _VIEW_GEOMETRY = GEOMETRY["reshape"], GEOMETRY["view"]
_T_FWD, _MM_FWD, _ADDMM_FWD = T._fwd_cache, MM._fwd_cache, ADDMM._fwd_cache
_NO_KEY = ()
_ONES = (("beta", 1), ("alpha", 1))  # addmm's statics as ``linear`` passes them
# the exact classes taken as plain Tensors here (``nn.Parameter`` adds itself)
PLAIN = {Tensor}


def rows(input, weight, si, sw):
    """``input @ weight.t()`` for ``input`` of shape ``si`` (3 dims or more, no view or a
    contiguous one) and ``weight`` of shape ``sw`` (a matrix), plain Tensors of which one
    requires grad, in grad mode, no mode, forward AD or functional backend active; None
    where the trace follows no sequence that has the four ops next (nothing changed)."""
    tr = _local.trace
    if tr is None or (m := tr.memo) is None:
        return None
    n = tr.n
    if n + 3 > m.n:  # (the four within the sequence: ``ops[m.n]`` is its end)
        return None
    ops = m.ops
    e0, e1, e2, e3 = ops[n], ops[n + 1], ops[n + 2], ops[n + 3]
    shape_rows = (si[0] * si[1] if len(si) == 3 else _prod(si[:-1]), si[-1])
    k1 = (("shape", shape_rows),)
    k3 = (("shape", si[:-1] + sw[:1]),)
    # the sequence's next four are t, reshape, mm, _unsafe_view, wired as _folded wires
    # them (mm reads the rows and the transpose; _unsafe_view reads mm), each with its
    # site; an op at positions or of several outputs (``many``) is none of these
    if e0[0] is not T or e1[0] is not RESHAPE or e2[0] is not MM or \
            e3[0] is not UNSAFE_VIEW or e0[1] != _NO_KEY or e1[1] != k1 or \
            e2[1] != _NO_KEY or e3[1] != k3 or e2[2] != (n + 1, n) or e3[2] != (n + 2,) or \
            e0[3] is None or e1[3] is None or e2[3] is None or e3[3] is None:
        return None
    f0, f1 = _T_FWD.get(_NO_KEY), RESHAPE._fwd_cache.get(k1)
    f2, f3 = _MM_FWD.get(_NO_KEY), UNSAFE_VIEW._fwd_cache.get(k3)
    if f0 is None or f1 is None or f2 is None or f3 is None:
        return None
    leaves = tr.leaves
    index = tr.index
    wa, xa = weight._arr, input._arr
    if not input._requires_grad and xa.__class__ is not Pending:
        return None  # (its rows' view may be a host view: ``views.view_apply``)
    new = []  # the leaves the two outer arguments add, in order
    if not _fits(wa, e0[2][0], index, leaves, new) or \
            not _fits(xa, e1[2][0], index, leaves, new):
        return None
    # nothing is changed above: from here on, what defer's following makes, and the record
    # stage's node, op by op as ``dispatch.apply`` interleaves them (an error recording
    # one leaves the trace and the graph where the op-by-op path leaves them)
    if new:
        leaves.extend(new)
    # (an argument no gradient reaches, a frozen weight or a model's input: no node)
    wt = _step(tr, T, _NO_KEY, f0, [wa], e0, (weight,), weight._requires_grad)
    r = _step(tr, RESHAPE, k1, f1, [xa], e1, (input,), input._requires_grad)
    make_view(r, input, _RESHAPE_GEOMETRY, {"shape": shape_rows})  # as ``view_apply``
    y = _step(tr, MM, _NO_KEY, f2, [r._arr, wt._arr], e2, (r, wt), True)
    return _step(tr, UNSAFE_VIEW, k3, f3, [y._arr], e3, (y,), True)


def rows_addmm(input, weight, bias, si, sw):
    """``linear`` with a bias as PyTorch records it on an input of 3 dims or more that is
    contiguous, with a bias of one dim: ``view`` (the rows), ``t``, ``addmm``, ``view``
    (back); as :func:`rows`, None where the trace does not follow these four next."""
    tr = _local.trace
    if tr is None or (m := tr.memo) is None:
        return None
    n = tr.n
    if n + 3 > m.n:
        return None
    ops = m.ops
    e0, e1, e2, e3 = ops[n], ops[n + 1], ops[n + 2], ops[n + 3]
    shape_rows = (si[0] * si[1] if len(si) == 3 else _prod(si[:-1]), si[-1])
    k0 = (("shape", shape_rows),)
    k3 = (("shape", si[:-1] + sw[:1]),)
    if e0[0] is not VIEW or e1[0] is not T or e2[0] is not ADDMM or e3[0] is not VIEW or \
            e0[1] != k0 or e1[1] != _NO_KEY or e2[1] != _ONES or e3[1] != k3 or \
            e2[2][1:] != (n, n + 1) or e3[2] != (n + 2,) or \
            e0[3] is None or e1[3] is None or e2[3] is None or e3[3] is None:
        return None
    view_fwd = VIEW._fwd_cache
    f0, f1, f2, f3 = view_fwd.get(k0), _T_FWD.get(_NO_KEY), _ADDMM_FWD.get(_ONES), \
        view_fwd.get(k3)
    if f0 is None or f1 is None or f2 is None or f3 is None:
        return None
    leaves = tr.leaves
    index = tr.index
    xa, wa, ba = input._arr, weight._arr, bias._arr
    if not input._requires_grad and xa.__class__ is not Pending:
        return None  # (as in ``rows``)
    new = []
    if not _fits(xa, e0[2][0], index, leaves, new) or \
            not _fits(wa, e1[2][0], index, leaves, new) or \
            not _fits(ba, e2[2][0], index, leaves, new):
        return None
    if new:  # (as in ``rows``: each op's pending value, then its node)
        leaves.extend(new)
    r = _step(tr, VIEW, k0, f0, [xa], e0, (input,), input._requires_grad)
    make_view(r, input, _VIEW_GEOMETRY, {"shape": shape_rows})
    wt = _step(tr, T, _NO_KEY, f1, [wa], e1, (weight,), weight._requires_grad)
    y = _step(tr, ADDMM, _ONES, f2, [ba, r._arr, wt._arr], e2, (bias, r, wt), True)
    out = _step(tr, VIEW, k3, f3, [y._arr], e3, (y,), True)
    make_view(out, y, _VIEW_GEOMETRY, {"shape": k3[0][1]})
    return out


def _fits(a, w, index, leaves, new):
    """Whether the array ``a`` of an outer argument is what the sequence's kind ``w``
    says (``lazy.defer``'s check, for a Tensor's array); a new leaf goes to ``new``."""
    c = w.__class__
    if c is int:  # an earlier op's pending output, not computed yet
        return a.__class__ is Pending and index.get(a) == w and a.value is None
    x = a.value if a.__class__ is Pending else a
    if c is tuple:  # among the leaves already (NOTE: not one this call adds: fall back)
        return w[0] < len(leaves) and x is leaves[w[0]]
    if c is type or x.__class__ is not _ARRAY or x._committed or x.aval != w:
        return False
    new.append(x)
    return True


def _step(tr, op, key, fn, arrs, entry, args, record):
    """One of the four: its pending value (as ``defer`` makes one, the trace's next op),
    then its Tensor, through the record stage when ``record`` (an argument requires grad)."""
    p = _new(Pending)
    p.op, p.key, p.fn, p.args, p.aval = op, key, fn, arrs, entry[3].aval
    p.value, p.ref, p.saved, p.gen, p.depth = None, None, False, tr.gen, entry[4]
    tr.index[p] = tr.n
    tr.n += 1
    t = record_at_site(op, key, args, p, entry[3]) if record else _wrap(p)
    p.ref = _weakref(t)
    return t


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n
