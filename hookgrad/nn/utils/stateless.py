"""``torch.nn.utils.stateless``: the pre-2.0 home of ``functional_call``."""

from ... import _missing
from ... import _errors

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Deprecated: ``torch.func.functional_call``, with a ``FutureWarning``."""
    _errors.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                 "and will be removed in a future version of PyTorch. Please use "
                 "`torch.func.functional_call` instead which is a drop-in replacement.",
                 FutureWarning)
    from ...func import functional_call as call  # NOTE: func imports nn: import it at the call
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)


__getattr__ = _missing.module_getattr(__name__)
