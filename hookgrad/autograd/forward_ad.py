"""``torch.autograd.forward_ad``'s path: the same module object as ``hookgrad._engine.forward_ad``.

# NOTE: the public path aliases the internal module (one object, so attributes set on
# either are seen by both); hookgrad's own modules import the internal path only.
"""
import sys

from .._engine import forward_ad as _impl

sys.modules[__name__] = _impl
