"""``torch.autograd.graph``'s path: the same module object as ``hookgrad._autograd.graph``.

# NOTE: the public path aliases the internal module (one object, so attributes set on
# either are seen by both); hookgrad's own modules import the internal path only.
"""
import sys

from .._autograd import graph as _impl

sys.modules[__name__] = _impl
