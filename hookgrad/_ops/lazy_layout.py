"""Saved layout values left out of a deferred segment's program (``lazy._flush``), rebuilt
where the backward reads them (``_engine/fusion.py``).

A training step's forward segment returns every value the backward saved. Many are pure
layout ops of another value the program takes or returns: Linear's ``t`` of a weight
(``mm`` saves it, as PyTorch's does), the ``reshape``/``unsqueeze`` of an activation. XLA
materializes each returned one as a copy, and each returned array costs the calling thread
its array object: a tiny Llama step's forward program returned 79 arrays, 38 of them such
layout values (its XLA time ~550 us, ~210 us for the others alone). Left out, such a value
stays a ``Pending`` holding its op and its argument (whose array the segment gives out or
took in); a fused backward region applies the op inside its own program, and any other
read (a node run alone, ``_saved_*``, a saved-tensor hook's unpack, double backward) runs
it as a ``Pending`` left out of a segment always runs: its op alone, on the same array.
What is seen is unchanged: the value is computed from the array the op was given (a later
in-place write replaces a Tensor's array, never that one; the saved Tensor's version check
is the node's, before any read).
"""
from .._tensor import Pending

# the pure layout ops: one array argument, their statics in the key, an output that is the
# argument's elements in another shape or order
LAYOUT = frozenset(("t", "transpose", "permute", "reshape", "view", "_unsafe_view",
                    "unsqueeze", "squeeze", "flatten", "unflatten"))
LEFT = 2  # a ``Pending.saved`` of a saved layout value left out of its segment's program
ON = [True]  # whether segments leave such values out (off: every saved value returned)


def leave_out(nodes, outs, read=None):
    """``outs`` (positions of ``nodes`` that the segment returns) without the saved layout
    values whose argument is an array the program takes or one of the values it still
    returns, but for ``read`` (the value whose read runs the segment); each left out is
    marked ``LEFT``."""
    if not ON[0]:
        return outs
    left = None  # the positions left out
    index = None
    for k in outs:
        q = nodes[k]
        # NOTE: its Tensor may be alive (the node's saved tuple holds it): a later read
        # runs its op alone, on the same array (a ``Pending`` left out of a segment)
        if q.saved is True and q is not read and getattr(q.op, "name", None) in LAYOUT \
                and q.ref is not None and len(args := q.args) == 1 \
                and q.aval.__class__ is not tuple and q.op.positions is None:
            a = args[0]
            if a.__class__ is Pending and a.value is None:  # an op of the segment
                if index is None:
                    index = {p: j for j, p in enumerate(nodes)}
                    given = set(outs)
                j = index.get(a)
                if j not in given or left is not None and j in left:
                    continue
            # (else an array the program takes, such as a weight, or a value computed)
            q.saved = LEFT
            if left is None:
                left = set()
            left.add(k)
    return outs if left is None else tuple([k for k in outs if k not in left])

