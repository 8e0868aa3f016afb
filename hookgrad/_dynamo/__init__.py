"""``torch._dynamo``: what code that cooperates with ``torch.compile`` calls.

hookgrad compiles by tracing the whole step with JAX (``hookgrad.compile``), not by
rewriting bytecode: :func:`is_compiling` says whether that trace runs; the decorators that
steer Dynamo return the function (it is traced like any other code: docs/differences.md);
the shape marks are accepted (hookgrad traces once per input shape); :func:`explain` is not
implemented.
"""
from .. import _missing
from . import config, eval_frame, exc  # noqa: F401 - torch._dynamo.config, ...
from .eval_frame import is_compiling

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "explain", "graph_break",
           "is_compiling", "mark_dynamic", "mark_static", "mark_static_address",
           "maybe_mark_dynamic", "reset", "config", "optimize"]


def is_dynamo_compiling() -> bool:
    return is_compiling()


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Exclude ``fn`` from compilation (``@disable`` or ``disable(fn)``). hookgrad traces the
    whole step: ``fn`` is returned and, called inside ``hookgrad.compile``, it is traced
    like the rest (no graph break)."""
    return (lambda f: f) if fn is None else fn


def allow_in_graph(fn):
    """Put ``fn`` in the graph as one call: hookgrad traces it into the program anyway."""
    return fn


def assume_constant_result(fn):
    """Treat ``fn``'s result as a constant: hookgrad traces ``fn`` instead (its result is
    computed in the program)."""
    return fn


def _accept_mark(t, *args, **kwargs):
    """A shape hint: hookgrad traces once per input shape, so nothing is marked."""
    return None


mark_dynamic = maybe_mark_dynamic = mark_static = _accept_mark


def mark_static_address(t, guard=False):
    """Mark ``t``'s storage address as static: hookgrad's compiled steps keep their
    buffers already, so nothing is marked."""
    return None


def graph_break(msg=""):
    """Break the graph here: eagerly nothing happens (as in PyTorch); inside
    ``hookgrad.compile`` the step stays one program."""
    return None


def reset() -> None:
    """Clear Dynamo's caches. hookgrad's compiled functions hold their own caches
    (``cache_clear()``); this clears nothing else."""
    return None


# Dynamo's older entry point (use hookgrad.compile) and its graph-break report
optimize = _missing.not_implemented("torch._dynamo.optimize")
explain = _missing.not_implemented("torch._dynamo.explain")


__getattr__ = _missing.module_getattr(__name__)
