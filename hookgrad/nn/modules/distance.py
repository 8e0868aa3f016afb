"""Distance layers: ``PairwiseDistance``, ``CosineSimilarity``."""
from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The p-norm distance between rows of ``x1`` and ``x2`` (``eps`` added to the
    difference).

    ::

        PairwiseDistance(p=2.0, eps=1e-06, keepdim=False)

    Example::

        >>> nn.PairwiseDistance(p=2)(hookgrad.randn(100, 128), hookgrad.randn(100, 128)).shape
        hookgrad.Size([100])
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim`` (norms clamped to ``eps``).

    ::

        CosineSimilarity(dim=1, eps=1e-08)

    Example::

        >>> nn.CosineSimilarity(dim=1)(hookgrad.randn(100, 128), hookgrad.randn(100, 128)).shape
        hookgrad.Size([100])
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
