"""Exceptions and message texts shared by several layers (a leaf: imports nothing of
hookgrad but the mode flags), so that a low module can raise what a high one defines."""
import sys
import warnings

from . import _mode

__all__ = ["TorchDynamoException", "Unsupported", "TracedValueError", "traced_value_error",
           "leaked_tracer", "warn"]

# code objects of wrappers that stand between a public function and its caller (autocast's):
# ``warn`` does not count their frames
WRAPPERS = set()


def warn(message, category=UserWarning, stacklevel=1):
    """``warnings.warn`` whose ``stacklevel`` counts only frames of real callers: a public
    function wrapped (by autocast) still warns at its caller's line."""
    frame, level, counted = sys._getframe(1), 1, 1
    while counted < stacklevel and frame is not None:
        frame, level = frame.f_back, level + 1
        if frame is not None and frame.f_code not in WRAPPERS:
            counted += 1
    warnings.warn(message, category, stacklevel=level + 1)


class TorchDynamoException(RuntimeError):
    """The base of the compiler's errors (``torch._dynamo.exc``)."""

    __module__ = "hookgrad._dynamo.exc"


class Unsupported(TorchDynamoException):
    """What a step does cannot be one compiled program: raised where ``fullgraph=True``
    forbids running it eagerly."""

    __module__ = "hookgrad._dynamo.exc"


class TracedValueError(Unsupported):
    """A traced Tensor's value was read on the host (``.item()``, ``float(t)``, printing)
    inside ``hookgrad.compile`` or a JAX transformation."""

    __module__ = "hookgrad.compile"   # where users import it from


def traced_value_error(what):
    where = ("a hookgrad.compile step" if _mode.state.compiling else
             "a JAX transformation (hookgrad.compile, hookgrad.func, jax.jit/grad/vmap)")
    # NOTE: the first line is what to do; the explanation follows
    return TracedValueError(
        f"{what} inside {where}: mark the hook that reads the value "
        "@hookgrad.compile.host_hook, or move the read outside the step.\n"
        f"{what} needs the concrete value of a Tensor, but inside {where} Tensors hold JAX "
        "tracers: values exist only when the compiled program runs. A host_hook's Tensor "
        "arguments are delivered as concrete values (through jax.debug.callback) each time "
        "the program runs; jax.debug.print prints traced values; or keep the computation on "
        "Tensors.")


def leaked_tracer(op):
    """The error of an op given a value that existed only while a step was traced."""
    return RuntimeError(
        f"{op} got a Tensor kept from inside a hookgrad.compile step's trace: its value existed "
        "only while the step was traced. Keep it where the step can reach it (its closure, "
        "a global, a Module: hookgrad then runs such a step eagerly), return it from the "
        "step, or pass it to a @hookgrad.compile.host_hook.")


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory (``torch.OutOfMemoryError``, also
    ``torch.cuda.OutOfMemoryError``). NOTE: XLA reports its own out-of-memory errors as
    ``jax.errors.JaxRuntimeError`` (RESOURCE_EXHAUSTED), which this class does not catch
    (docs/differences.md)."""

    __module__ = "hookgrad"


class AcceleratorError(RuntimeError):
    """An error an accelerator's runtime reported (``torch.AcceleratorError``)."""

    __module__ = "hookgrad"
