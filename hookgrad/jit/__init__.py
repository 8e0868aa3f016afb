"""``torch.jit``: TorchScript's decorators and queries, so code written for it runs.

hookgrad compiles with ``hookgrad.compile`` (XLA), not TorchScript: :func:`script` and
:func:`trace` return the function or Module unchanged (nothing is compiled;
docs/differences.md), :func:`is_scripting` and :func:`is_tracing` are False, and saving or
loading TorchScript archives raises ``NotImplementedError``.
"""
import typing

from .. import _missing
from ..futures import Future
from ..nn.modules.module import Module

__all__ = ["Attribute", "Error", "Final", "Future", "ScriptFunction", "ScriptModule",
           "annotate", "export", "fork", "freeze", "ignore", "interface", "isinstance",
           "load", "optimize_for_inference", "save", "script", "script_if_tracing", "trace",
           "trace_module", "unused", "wait", "is_scripting", "is_tracing"]

Final = typing.Final


class Error(RuntimeError):
    """An error raised by TorchScript code."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Compile ``obj`` to TorchScript. hookgrad has no TorchScript: ``obj`` (a function,
    Module or class) is returned and runs as Python."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Trace ``func`` into TorchScript. hookgrad has no TorchScript: ``func`` is returned
    and runs as Python (``hookgrad.compile`` compiles it with XLA)."""
    return func


def trace_module(mod, inputs, *args, **kwargs):
    """Trace methods of ``mod``: like :func:`trace`, ``mod`` is returned."""
    return mod


def script_if_tracing(fn):
    """Script ``fn`` when it is first called during tracing: it is returned unchanged."""
    return fn


_script_if_tracing = script_if_tracing


def ignore(drop=False, **kwargs):
    """Leave a function to Python when scripting (``@ignore`` or ``@ignore(drop=True)``):
    hookgrad runs everything as Python, so the function is returned."""
    if callable(drop):  # @ignore without arguments
        return drop
    return lambda fn: fn


def unused(fn):
    """Mark a method that scripting should skip: it is returned and still runs in Python."""
    return fn


def export(fn):
    """Mark a Module method to compile as an entry point: it is returned."""
    return fn


def interface(obj):
    """Declare a TorchScript interface: the class is returned."""
    return obj


def _overload(func):
    return func


def _overload_method(func):
    return func


def is_scripting() -> bool:
    """False: hookgrad never runs code as TorchScript."""
    return False


def is_tracing() -> bool:
    """False: hookgrad's :func:`trace` does not run the function (nothing is traced)."""
    return False


def annotate(the_type, the_value):
    """Give ``the_value`` a type for the TorchScript compiler: returns ``the_value``."""
    return the_value


# TorchScript's container check (element types included) is not written yet
isinstance = _missing.not_implemented("torch.jit.isinstance")  # noqa: A001


class Attribute(typing.NamedTuple):
    """A Module attribute with its TorchScript type: eagerly, its value."""
    value: typing.Any
    type: typing.Any


def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` and return a ``Future`` of its result. As in PyTorch's
    eager mode, the call runs now, in this thread."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """The result of a :func:`fork`'s ``Future``."""
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Freeze a scripted Module: hookgrad has no scripted Modules (see :func:`script`)."""
    _missing.not_implemented("torch.jit.freeze")()


def optimize_for_inference(mod, other_methods=None):
    _missing.not_implemented("torch.jit.optimize_for_inference")()


class ScriptModule(Module):
    """A TorchScript Module. hookgrad never makes one (:func:`script` returns the Module
    itself), so ``isinstance(m, torch.jit.ScriptModule)`` is False for hookgrad's Modules."""


ScriptFunction = _missing.not_implemented_class("torch.jit.ScriptFunction")
RecursiveScriptModule = _missing.not_implemented_class("torch.jit.RecursiveScriptModule",
                                                       (ScriptModule,))
save = _missing.not_implemented("torch.jit.save")
load = _missing.not_implemented("torch.jit.load")
CompilationUnit = _missing.not_implemented_class("torch.jit.CompilationUnit")

__getattr__ = _missing.module_getattr(__name__)
