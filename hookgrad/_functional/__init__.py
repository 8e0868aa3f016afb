"""The functional backend: hooks as ``jax.custom_vjp`` boundaries inside
``hookgrad.func.functional_call``, where JAX's AD runs the backward.

Importing this package registers the backend with ``hookgrad._mode``; core code reaches
it through ``_mode.state.backend`` (the calls listed in ``_mode``'s docstring).
"""
import jax

from .. import _mode
from . import apply as _apply
from . import function as _function
from . import hooks as _hooks
from . import module as _module


class _FunctionalBackend:
    """What the tape would do, done for JAX's AD (see ``hookgrad._mode``)."""

    name = "functional"
    apply = staticmethod(_apply.functional_apply)
    register_tensor_hook = staticmethod(_hooks.register_tensor_hook)
    register_multi_grad_hook = staticmethod(_hooks.register_multi_grad_hook)
    function_apply = staticmethod(_function.functional_apply)
    hook_identity = staticmethod(_module.hook_identity)
    stop_gradient = staticmethod(jax.lax.stop_gradient)


_mode.register("functional", _FunctionalBackend())
