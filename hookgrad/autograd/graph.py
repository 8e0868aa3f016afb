"""``torch.autograd.graph``'s path: the same module object as ``hookgrad._autograd.graph``,
which also carries the saved-tensor hook contexts of ``hookgrad._autograd.saved``.

# NOTE: the public path aliases the internal module (one object, so attributes set on
# either are seen by both); hookgrad's own modules import the internal paths only. The
# contexts live with the saved tensors (above the Tensor, which they wrap), the graph
# below it, so the graph cannot import them: this facade puts them where PyTorch has them.
"""
import sys

from .._autograd import graph as _impl
from .._autograd import saved as _saved

for _name in _saved.CONTEXTS:
    setattr(_impl, _name, getattr(_saved, _name))
sys.modules[__name__] = _impl
