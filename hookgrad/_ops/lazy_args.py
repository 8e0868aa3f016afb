"""The deferred forward's view of an op's arguments (hookgrad/_ops/lazy.py): which it
takes into a trace (arrays, pending values, Python numbers), and what a trace that misses
its memo's op (``lazy._missed``) reads of them."""
from jax._src.array import ArrayImpl  # NOTE: private; JAX has no public name for it
from jax._src.random.prng import PRNGKeyArray  # NOTE: private, as ArrayImpl

from .._host_value import Host
from .._tensor import Pending, Tensor

# operands a deferred op may take besides arrays: Python numbers, None (an optional operand
# left out, such as attention's mask) and a concrete PRNG key (dropout's, drawn when called)
SCALARS = frozenset((int, float, bool, complex, type(None), PRNGKeyArray))
# a concrete array's class (jaxlib's ArrayImpl), named without making one: hookgrad's import
# starts no JAX backend, so jax.distributed can still be initialized after it
ARRAY = ArrayImpl
BIG = 2 ** 63  # an int at or past it (either sign): JAX refuses it


def waits(v):
    """Whether the walk takes ``v``, an argument of an op made here, into a trace (not a
    Tensor held on the host, a tracer, an array placed by the user, a constant array, an
    int JAX refuses)."""
    c = v.__class__
    if c is Tensor or c not in SCALARS and isinstance(v, Tensor):
        c = (v := v._arr).__class__
        return c is Pending or c is ARRAY and not v._committed
    return c in SCALARS and (c is not int or -BIG <= v < BIG)


def put_held(op, args, forms):
    """Whether ``args``' Tensors held on the host were put on the device here: where they
    are all that keeps the op out of the trace, and the host stage (``forms``, the NumPy
    forms, None once tried) does not take the op (no form for it, or an argument requires
    grad or is pending). apply's general path puts them so, then defers the op: a decode
    step's ids and positions, and its stop check's flags, cost a miss and a second walk
    each that way (4 a GPT-2 decode step)."""
    held = []
    declined = False  # by the host stage: an argument requires grad or is pending
    for v in args:
        c = v.__class__
        if c is Tensor or c not in SCALARS and isinstance(v, Tensor):
            if v._requires_grad:
                declined = True
            a = v._arr
            c = a.__class__
            if c is Host:
                held.append(v)
            elif c is Pending:
                declined = True
            elif c is not ARRAY or a._committed:
                return False
        elif c not in SCALARS or c is int and not -BIG <= v < BIG:
            return False
    if not held or forms is not None and not declined and op.name in forms:
        return False
    for v in held:
        v._data  # (the Tensor holds the array from now on, as after the general path's)
    return True


def pending_args(tr, args, made):
    """``(arrays, late, depth)`` of ``args`` as the walk reads them: ``late``, whether
    one is pending and not in ``tr`` (a trace, ``lazy._Trace``) or held on the host;
    ``depth``, the deepest of those in ``tr``."""
    index = tr.index
    arrs = [v._arr if made and isinstance(v, Tensor) else v for v in args]
    late, depth = False, 0
    for v in arrs:
        if v.__class__ is Pending:
            x = v.value
            if x is None and v in index:
                depth = max(depth, v.depth)
            elif x is None or x.__class__ is Host:
                late = True
    return arrs, late, depth
