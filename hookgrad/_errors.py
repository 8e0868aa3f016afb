"""Exceptions and message texts shared by several layers (a leaf: imports nothing of
hookgrad but the mode flags), so that a low module can raise what a high one defines."""
import contextlib
import os
import sys
import warnings

from . import _mode

__all__ = ["TorchDynamoException", "Unsupported", "TracedValueError", "traced_value_error",
           "leaked_tracer", "warn"]

# where a warning must not point: hookgrad's own files, and the frames that stand between
# them and a user's line (JAX calling back into hookgrad, contextlib's context managers)
_HOOKGRAD = os.path.dirname(os.path.abspath(__file__)) + os.sep
_BETWEEN = [os.path.dirname(contextlib.__file__) + os.sep + "contextlib.py"]


def _internal(filename):
    if filename.startswith(_HOOKGRAD) or filename in _BETWEEN:
        return True
    for name in ("jax", "jaxlib"):
        mod = sys.modules.get(name)
        if mod is not None and filename.startswith(os.path.dirname(mod.__file__) + os.sep):
            return True
    return False


def warn(message, category=UserWarning):
    """``warnings.warn`` at the user's line: the innermost frame on the stack outside
    hookgrad (and JAX and contextlib), as PyTorch's warnings name the line that called it,
    however deep inside the library the warning is raised. Every hookgrad warning goes
    through here."""
    frame, level = sys._getframe(0), 1
    while frame is not None and _internal(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


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


def type_name(value):
    """``value``'s type as PyTorch's parser names it: a builtin's or a Tensor's bare name,
    another module's qualified (``numpy.ndarray``): the ops' and the
    factories' TypeErrors name it."""
    t = type(value)
    if t.__module__.startswith("hookgrad"):
        # (PyTorch's own Python classes are named by module: ``torch.dtype``)
        return f"torch.{t.__name__}" if t.__name__ in _TORCH_CLASSES else t.__name__
    if t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


# hookgrad's classes that stand for PyTorch's ``torch.<name>`` in its parser's messages
_TORCH_CLASSES = frozenset(("dtype", "device", "Size", "layout", "memory_format"))


def dim_out_of_range(dim, ndim):
    """PyTorch's IndexError for ``dim`` outside a tensor of ``ndim`` dimensions (a 0-d
    tensor's reads as one of no dimensions)."""
    if ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                      f"{ndim - 1}], but got {dim})")
