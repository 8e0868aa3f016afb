"""The saved layout values a fused backward region rebuilds (``fusion.py``): a forward
segment leaves a saved ``t``/``reshape``/... of an array it takes or returns out of its
program (``_ops/lazy_layout.py``), and the region's program applies the op to that array
itself; run node by node, each is computed by its own op's program."""
from .._tensor import Pending as _PENDING
from .._ops.lazy import value as _value


def lays(flat):
    """``(lays, left)`` of the region's saved values ``flat``, where some are values left
    out of the forward's program (``lazy_layout``): each replaced in ``flat`` by the array
    it is built from; ``lays``: per such value ``(its position, its op, its statics)``, for
    the program; ``left``: ``(its position, its Pending)``, for a run node by node."""
    left = []
    for k, v in enumerate(flat):
        if v.__class__ is _PENDING:
            args = v.args  # (None: computed meanwhile, by another thread's read)
            a = None if args is None else args[0]  # the array it is built from
            x = a.value if a.__class__ is _PENDING else a
            if x is None:  # (or its segment failed, and its argument is pending too)
                flat[k] = _value(v)
            else:
                flat[k] = x
                left.append((k, v))
    return tuple([(k, v.op, v.key) for k, v in left]), left or None


def unlaid(args, off, left):
    """``args`` with each value left out (``lays``) computed by its own op's program."""
    for k, p in left:
        args[off + k] = _value(p)


def laid(args, off, lays):
    """The program's ``args`` with each value left out rebuilt from its array (traced)."""
    args = list(args)
    for k, op, key in lays:
        args[off + k] = op.fwd(args[off + k], **dict(key))
    return args
