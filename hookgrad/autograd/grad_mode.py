"""``torch.autograd.grad_mode``'s path: the same module object as ``hookgrad._autograd.grad_mode``.

# NOTE: the public path aliases the internal module (one object, so attributes set on
# either are seen by both); hookgrad's own modules import the internal path only.
"""
import sys

from .._autograd import grad_mode as _impl

sys.modules[__name__] = _impl
