"""Exceptions and message texts shared by several layers (a leaf: imports nothing of
hookgrad but the mode flags), so that a low module can raise what a high one defines."""
from . import _mode

__all__ = ["TracedValueError", "traced_value_error"]


class TracedValueError(RuntimeError):
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
