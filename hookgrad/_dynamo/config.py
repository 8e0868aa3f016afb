"""``torch._dynamo.config``: Dynamo's settings, with PyTorch's defaults, so code that reads or
sets them runs. ``hookgrad.compile`` traces with JAX and reads none of them
(docs/differences.md) but ``recompile_limit``; :func:`patch` sets some for a block or a
function and puts them back."""
import contextlib
import sys

from .. import _missing, _mode

capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
cache_size_limit = 8
recompile_limit = 8
accumulated_cache_size_limit = 256
accumulated_recompile_limit = 256
suppress_errors = False
verbose = False
automatic_dynamic_shapes = True
assume_static_by_default = True
dynamic_shapes = True
optimize_ddp = True
inline_inbuilt_nn_modules = True
error_on_recompile = False
force_parameter_static_shapes = True
force_nn_module_property_static_shapes = True
allow_unspec_int_on_nn_module = False
specialize_int = False
specialize_float = False
guard_nn_modules = True
skip_nnmodule_hook_guards = True
raise_on_ctx_manager_usage = True
allow_rnn = False
capture_func_transforms = True
compiled_autograd = False
replay_record_enabled = False
disable = False

_SETTINGS = {k for k, v in dict(globals()).items()
             if not k.startswith("_") and isinstance(v, (bool, int))}


@contextlib.contextmanager
def _patched(changes):
    unknown = sorted(set(changes) - _SETTINGS)
    if unknown:
        raise AttributeError(f"torch._dynamo.config has no setting {unknown[0]!r}")
    g = globals()
    before = {k: g[k] for k in changes}
    g.update(changes)
    try:
        yield
    finally:
        g.update(before)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, changes):
        self.changes = changes

    def __enter__(self):
        self._cm = _patched(self.changes)
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def patch(arg1=None, arg2=None, **kwargs):
    """Set settings for a ``with`` block or a decorated function:
    ``patch("verbose", True)``, ``patch({"verbose": True})`` or ``patch(verbose=True)``."""
    if isinstance(arg1, str):
        changes = {arg1: arg2}
    elif isinstance(arg1, dict):
        changes = dict(arg1)
    else:
        changes = {}
    changes.update(kwargs)
    return _Patch(changes)


__getattr__ = _missing.module_getattr(__name__)

_mode.dynamo_config = sys.modules[__name__]   # recompile_limit, read by hookgrad.compile
