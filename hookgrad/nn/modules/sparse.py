"""``Embedding``: a lookup table of ``num_embeddings`` vectors of size ``embedding_dim``."""
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._utils import _param
from .module import Module

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table; input: integer indices of any shape, output: ``(*, embedding_dim)``.

    ::

        Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                  norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                  _freeze=False, device=None, dtype=None)

    ``weight`` starts from N(0, 1), the ``padding_idx`` row zeroed; that row gets no
    gradient. ``sparse=True`` still gives dense gradients.

    Example::

        >>> emb = nn.Embedding(10, 3)
        >>> emb(hookgrad.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])).shape
        hookgrad.Size([2, 4, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = _param((num_embeddings, embedding_dim), device, dtype)
            self.weight.requires_grad_(not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self):
        """``weight`` from N(0, 1), the ``padding_idx`` row set to zero."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            w = self.weight
            init._write(w, w._data.at[self.padding_idx].set(0))

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An ``Embedding`` whose weight is the 2-D ``embeddings`` (frozen by default)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        if not isinstance(embeddings, Tensor):
            raise TypeError("embeddings must be a Tensor")
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
