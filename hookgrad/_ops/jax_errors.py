"""PyTorch's error for an exception JAX raised while an op's forward ran.

An op checks what PyTorch's own checks would refuse before it calls JAX; what a row does
not check yet reaches JAX, whose ``TypeError``/``ValueError`` would name JAX's functions
and shapes. ``dispatch.apply`` passes such an exception here, the one place it is
translated: broadcasting failures get PyTorch's "The size of tensor a ..." message, a dtype
the kernel does not take PyTorch's "not implemented for 'Bool'", anything else a
``RuntimeError`` naming the op (JAX's exception stays its ``__cause__``). An exception
raised by hookgrad's own code (or a user's hook) passes through unchanged.
"""
import os
import re
import sys

import jax

from .. import _dtype, _errors

_DTYPE = re.compile(r"does not accept dtype (\w+)|data type <class 'numpy\.(\w+)'> not inexact|"
                    r"Invalid integer data type '(\w)'")
_BROADCAST = [re.compile(r"incompatible shapes for broadcasting: \(([\d, ]*)\), \(([\d, ]*)\)"),
              re.compile(r"shapes=\[\(([\d, ]*)\), \(([\d, ]*)\)\]"),
              re.compile(r"arg \d+ with shape \(([\d, ]*)\) and arg \d+ with shape \(([\d, ]*)\)"),
              re.compile(r"input type=\w+\[([\d,]*)\] and requested type=\w+\[([\d,]*)\]")]
_SIGNATURE = re.compile(r"unexpected keyword argument|positional argument")
_AXIS = re.compile(r"axis (-?\d+) is out of bounds for array of dimension (\d+)")
_CHARS = {"b": "bool"}  # NumPy's one-letter dtype codes in JAX's messages


def _roots():
    roots = []
    for name in ("jax", "jaxlib", "numpy", "opt_einsum"):
        mod = sys.modules.get(name)
        if mod is not None:
            roots.append(os.path.dirname(mod.__file__) + os.sep)
    return tuple(roots)


def from_jax(e):
    """Whether ``e`` was raised inside JAX (or NumPy and opt_einsum, which it calls)."""
    if type(e).__module__.split(".")[0] in ("jax", "jaxlib"):
        return True
    tb, last = e.__traceback__, None
    while tb is not None:
        last, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    return last is not None and last.startswith(_roots())


# what JAX raises for arguments it cannot take (``torch_error`` makes them PyTorch's), and
# the RuntimeErrors (NotImplementedError among them) an op's forward raises where it is
# traced: PyTorch's refusal of a dtype (``promotion.refuses_complex``), passed on as raised
RAISES = (TypeError, ValueError, IndexError, OverflowError, RuntimeError)
_LeakedTracer = jax.errors.UnexpectedTracerError


def forward(op, fn, arrs):
    """``fn(*arrs)``, ``op``'s forward: JAX's errors as PyTorch's (``torch_error``).
    ``dispatch.apply`` inlines it for an op run at once."""
    try:
        return fn(*arrs)
    except RAISES as e:
        raise torch_error(op.name, e)


def without_jax_note(e):
    """``e`` less the note ``jax.jit`` adds to what leaves a trace (its frames are removed,
    so the note says nothing of the user's)."""
    if getattr(e, "__notes__", None):
        e.__notes__ = [n for n in e.__notes__ if "JAX_TRACEBACK_FILTERING" not in n]
    return e


def torch_error(op_name, e):
    """The exception to raise for ``e``, raised while op ``op_name``'s forward ran:
    PyTorch's, or ``e`` itself where it did not come from inside JAX (a leaked tracer:
    hookgrad's error naming the op). NOTE: JAX removes its own frames from the traceback
    of what it raises while tracing, so a ``TypeError`` or ``ValueError`` counts as JAX's
    wherever it was raised: an op's forward is JAX code, and hookgrad raises PyTorch's own
    errors (``RuntimeError``, ``IndexError``) before it."""
    if isinstance(e, RuntimeError):  # PyTorch's own error, or XLA's: as raised
        return without_jax_note(e)
    if isinstance(e, _LeakedTracer):  # a TypeError: checked first
        err = _errors.leaked_tracer(op_name)
        err.__suppress_context__ = True  # as ``raise ... from None``: JAX's says less
        return err
    if not (from_jax(e) or type(e) in (TypeError, ValueError)) or \
            type(e) is TypeError and _SIGNATURE.search(str(e)):
        return e  # a call's arguments that do not fit: Python's TypeError, as PyTorch's
    msg = str(e)
    err = _broadcast(msg) or _dim_error(msg) or _dtype_error(op_name, msg) or \
        RuntimeError(f"{op_name}: {msg.splitlines()[0] if msg else type(e).__name__}")
    err.__cause__ = e
    return err


def _shape(text):
    return tuple(int(s) for s in re.split(r"[, ]+", text.strip(", ")) if s)


def _broadcast(msg):
    for pattern in _BROADCAST:
        m = pattern.search(msg)
        if m is not None:
            return shape_broadcast_error(_shape(m.group(1)), _shape(m.group(2)))
    if (m := _SHAPES.search(msg)) is not None:  # three or more (where, masked_fill): the
        shapes = [_shape(g) for g in re.findall(r"\(([\d, ]*)\)", m.group(1))]  # first pair
        return next((e for i, a in enumerate(shapes) for b in shapes[i + 1:]
                     if (e := shape_broadcast_error(a, b)) is not None), None)
    return None


_SHAPES = re.compile(r"shapes=\[((?:\([\d, ]*\),? ?)+)\]")


def shape_broadcast_error(a, b):
    """PyTorch's error for shapes ``a`` and ``b`` that do not broadcast (None if they do)."""
    nd = max(len(a), len(b))
    for k in range(1, nd + 1):  # PyTorch names the first mismatch from the right
        da = a[-k] if k <= len(a) else 1
        db = b[-k] if k <= len(b) else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b "
                                f"({db}) at non-singleton dimension {nd - k}")
    return None


def _dim_error(msg):
    m = _AXIS.search(msg)
    if m is None:
        return None
    return _errors.dim_out_of_range(int(m.group(1)), int(m.group(2)))


def _dtype_error(op_name, msg):
    m = _DTYPE.search(msg)
    if m is None:
        return None
    name = m.group(1) or m.group(2) or _CHARS.get(m.group(3), m.group(3))
    kind = _dtype.TORCH_KINDS.get(name, name)
    op_name = _CPU_KERNELS.get(op_name, op_name)
    return NotImplementedError(f'"{op_name}" not implemented for \'{kind}\'')


# the CPU kernels PyTorch's refusal names, where not the op's own name
_CPU_KERNELS = {"bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu",
                "bitwise_xor": "bitwise_xor_cpu", "bitwise_not": "bitwise_not_cpu",
                "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu"}
