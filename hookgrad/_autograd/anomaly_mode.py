"""Anomaly detection for the backward engine (``torch.autograd.anomaly_mode``).

While it is enabled, every node records the Python stack of the forward call that
created it (``node.metadata["traceback_"]``, and ``"parent_"``: the node whose backward
created it under ``create_graph``). In backward, an error raised while a node runs is
preceded by a ``UserWarning`` showing that forward stack, and with ``check_nan`` a node
whose gradients contain NaN raises ``RuntimeError``. Inside ``hookgrad.compile`` the
gradients are traced values: the check becomes a host callback in the program, which
warns and raises when a run produces NaN.

The state is process-wide, as PyTorch's is.
"""
import functools
import os
import traceback
from .. import _errors

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class _State:
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


_state = _State()  # read by dispatch (node creation) and the engine (once per graph task)

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_anomaly_enabled():
    """Whether anomaly detection is on (``torch.is_anomaly_enabled()``)."""
    return _state.enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks backward results for NaN."""
    return _state.check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``)."""
    _state.enabled = bool(enabled)
    _state.check_nan = bool(check_nan)


class detect_anomaly:
    """detect_anomaly(check_nan=True)

    Context manager (and decorator) that enables anomaly detection for the backward pass:
    nodes created inside it remember the traceback of their forward call, an error raised
    in a node's backward first warns with that traceback, and with ``check_nan`` a
    backward result containing NaN raises ``RuntimeError``. Slow: for debugging only.

    Example::

        >>> with hookgrad.autograd.detect_anomaly():
        ...     y = x / x           # x has a zero
        ...     y.sum().backward()
        RuntimeError: Function 'DivBackward0' returned nan values in its 1th output.
    """

    def __init__(self, check_nan=True):
        self.prev = _state.enabled
        self.check_nan = check_nan
        self.prev_check_nan = _state.check_nan
        _errors.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                     "and should only be enabled for debugging.")

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _Scope(self.check_nan):  # a fresh scope per call: calls may nest or recurse
                return fn(*args, **kwargs)
        return wrapper


class _Scope:
    """detect_anomaly's state change without its warning (one per decorated call)."""

    def __init__(self, check_nan):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = (_state.enabled, _state.check_nan)
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True)

    Turn anomaly detection on (``mode=True``) or off. Takes effect when called; used as a
    context manager, the previous state is restored on exit.

    Example::

        >>> with hookgrad.autograd.set_detect_anomaly(True, check_nan=False):
        ...     loss.backward()
    """

    def __init__(self, mode, check_nan=True):
        self.prev = _state.enabled
        self.prev_check_nan = _state.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


# --------------------------------------------------------------------------- forward


# NOTE: the node whose backward is running belongs to the engine, above this module; the
# engine's layer (hookgrad._engine.backward) puts its reader here when it is imported.
CURRENT_NODE = [lambda: None]


def store_stack(node):
    """Record where ``node``'s forward ran, and the node whose backward created it."""
    frames = traceback.extract_stack()
    end = len(frames)
    # hookgrad's own frames (the op's dispatch) stand where PyTorch has C++
    while end and frames[end - 1].filename.startswith(_PKG_DIR):
        end -= 1
    md = node.metadata
    md["traceback_"] = traceback.format_list(frames[:end])
    parent = CURRENT_NODE[0]()
    if parent is not None:
        md["parent_"] = parent


# --------------------------------------------------------------------------- backward


def warn_forward_trace(node):
    """Warn with the forward traceback of ``node`` (and of its parents), as PyTorch does
    before an error raised in backward propagates."""
    _warn(_trace_messages(node))


def _warn(messages):
    for msg in messages:
        _errors.warn(msg, UserWarning)


def _trace_messages(node):
    msgs = [_stack_message(node, False)]
    seen = {id(node)}
    parent = _metadata(node).get("parent_")
    while parent is not None and id(parent) not in seen:  # create_graph: who made it
        seen.add(id(parent))
        msgs.append(_stack_message(parent, True))
        parent = _metadata(parent).get("parent_")
    return msgs


def _metadata(node):
    return getattr(node, "_metadata", None) or {}


def _stack_message(node, is_parent):
    name = node.name()
    stack = _metadata(node).get("traceback_")
    if stack is None:
        return (f"Error detected in {name}. No forward pass information available. Enable "
                "detect anomaly during forward pass for more information.")
    if is_parent:
        return (f"\n\nPrevious calculation was induced by {name}. Traceback of forward call "
                f"that induced the previous calculation:\n{''.join(stack)}")
    return (f"Error detected in {name}. Traceback of forward call that caused the "
            f"error:\n{''.join(stack)}")


def _nan_message(name, i):
    return f"Function '{name}' returned nan values in its {i}th output."


def check_nan(node, grads):
    """Raise PyTorch's error if one of ``node``'s results holds a NaN; inside a trace,
    add a host check that does so when the program runs."""
    import jax
    import jax.numpy as jnp
    for i, g in enumerate(grads):
        arr = getattr(g, "_data", None)  # None: no gradient for that input
        if arr is None:
            continue
        if not jnp.issubdtype(arr.dtype, jnp.inexact):
            continue
        has_nan = jnp.isnan(arr).any()
        if isinstance(has_nan, jax.core.Tracer):
            # the messages are made now: the program must not keep the node (and what it
            # saved) alive
            check = functools.partial(_host_check, _nan_message(node.name(), i),
                                      _trace_messages(node))
            jax.debug.callback(check, has_nan)
        elif has_nan:
            raise RuntimeError(_nan_message(node.name(), i))


def _host_check(error, messages, has_nan):
    # runs on the host each time a compiled program runs; the error reaches the caller as
    # a jax.errors.JaxRuntimeError (a RuntimeError) carrying this message
    if has_nan:
        _warn(messages)
        raise RuntimeError(error)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__, "torch.autograd.anomaly_mode")
