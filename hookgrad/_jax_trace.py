"""What JAX is tracing now, read from JAX's private trace context in this one place.

``no_trace()`` is the cheap test hot paths use (a key split, a deferred read, an
optimizer's first state): True when no JAX transformation traces the running code.
``current()`` is the trace itself (None where JAX has no such context), which code
compares with the trace it started (a compiled step's host hooks and index checks).
``size(s)`` reads a size argument, keeping the symbolic sizes ``jax.export`` traces with.
"""
import jax
try:  # NOTE: private, but the one cheap way to know no JAX trace is active: JAX's
    # ``trace_state_clean`` read in one frame, not four (a loop's every write asks it)
    from jax._src.core import (axis_env_state as _axis_env, eval_trace as _eval_trace,
                               top_axis_env as _top_axis_env,
                               trace_state_strong_ref as _trace_ref)

    def no_trace():
        return _trace_ref.value is _eval_trace and _axis_env.value is _top_axis_env
except ImportError:  # pragma: no cover - a JAX without them: JAX's own test, or traced
    try:
        from jax._src.core import trace_state_clean as no_trace
    except ImportError:
        def no_trace():
            return False
try:  # NOTE: imported once: an import in the function costs Python calls each time (a
    # model asks ``is_compiling()`` per layer)
    from jax._src import core as _core
except ImportError:  # pragma: no cover
    _core = None


def current():
    """The JAX trace running now, or None on a JAX without a trace context."""
    try:
        return _core.trace_ctx.trace
    except AttributeError:  # (no such context, or no ``_core``)
        return None


def active():
    """Whether a JAX transformation traces the running code (jit, grad, vmap)."""
    try:
        return not isinstance(_core.trace_ctx.trace, _core.EvalTrace)
    except AttributeError:
        return False


def size(s):
    """``int(s)`` for a size argument, or ``s`` itself when it is a symbolic dimension of a
    ``jax.export`` trace (``torch.export``'s dynamic sizes), so shapes built from it stay
    symbolic."""
    if type(s) is int:
        return s
    if s.__class__ is float or s.__class__ is str:  # int() would truncate or fail: PyTorch's
        raise TypeError(f"type must be tuple of ints,but got {s.__class__.__name__}")  # words
    return s if jax.export.is_symbolic_dim(s) else int(s)


def size_args(shape):
    """A shape given as sizes (``x.view(2, 3)``, ``zeros(2, 3)``) or as one sequence of
    them (``x.view((2, 3))``), as a tuple, each size through :func:`size`; plain ints,
    what views and factories are given, are taken as they are."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):  # a Size is a tuple
        shape = shape[0]
    for s in shape:
        if s.__class__ is not int:
            return tuple(size(s) for s in shape)
    return tuple(shape)


def usable(v):
    """Whether the array ``v`` may be used by the code running now: a concrete array, or a
    tracer of the running trace or of one it runs inside (not of a trace that ended, or of
    a sibling's, such as another ``custom_vjp`` backward batched by ``jax.vmap``)."""
    if not isinstance(v, jax.core.Tracer):
        return True
    trace = current()
    owner = getattr(v, "_trace", None)
    while trace is not None:
        if trace is owner:
            return True
        trace = getattr(trace, "parent_trace", None)
    return False
