"""Exceptions and message texts shared by several layers (a leaf: imports nothing of
hookgrad but the mode flags), so that a low module can raise what a high one defines."""
from . import _mode

__all__ = ["TracedValueError", "traced_value_error"]


class TracedValueError(RuntimeError):
    """A traced Tensor's value was read on the host (``.item()``, ``float(t)``, printing)
    inside ``hookgrad.compile`` or a JAX transformation."""


TracedValueError.__module__ = "hookgrad.compile"  # its public path


def traced_value_error(what):
    where = ("a hookgrad.compile step" if _mode.state.compiling else
             "a JAX transformation (hookgrad.compile, hookgrad.func, jax.jit/grad/vmap)")
    return TracedValueError(
        f"{what} needs the concrete value of a Tensor, but inside {where} Tensors hold JAX "
        "tracers: values exist only when the compiled program runs. Keep the computation on "
        "Tensors, or mark the hook that needs values on the host with "
        "@hookgrad.compile.host_hook (its Tensor arguments are then delivered as concrete "
        "values through jax.debug.callback every time the program runs), or use "
        "jax.debug.print.")
