"""``torch.compiler``: the public face of compilation. ``compile`` is ``hookgrad.compile``;
the rest are ``torch._dynamo``'s, with the same differences (docs/differences.md)."""
import sys

from .. import _missing
from .._dynamo import (allow_in_graph, assume_constant_result, config, disable,
                       is_compiling, is_dynamo_compiling, reset)

__all__ = ["compile", "config", "assume_constant_result", "reset", "allow_in_graph",
           "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "list_backends",
           "cudagraph_mark_step_begin"]


def compile(*args, **kwargs):
    """``hookgrad.compile``."""
    from .. import compile as _compile
    return _compile(*args, **kwargs)


def is_exporting() -> bool:
    """Whether ``torch.export.export`` is tracing the code now."""
    trace = sys.modules.get("hookgrad.export._trace")  # no export imported: none running
    return trace is not None and trace.is_exporting()


def list_backends(exclude_tags=("debug", "experimental")) -> list:
    """The compiler backends ``hookgrad.compile`` accepts."""
    return ["xla"]


def cudagraph_mark_step_begin() -> None:
    """Mark the start of a CUDA-graph step: hookgrad uses no CUDA graphs (XLA runs the
    step), so there is nothing to mark."""
    return None


_NAMES = ["substitute_in_graph", "set_stance", "save_cache_artifacts", "load_cache_artifacts",
          "load_compiled_function", "wrap_numpy", "nested_compile_region",
          "set_default_backend", "get_default_backend"]
globals().update({n: _missing.not_implemented(f"torch.compiler.{n}") for n in _NAMES})

__getattr__ = _missing.module_getattr(__name__)
