"""``Embedding``: a lookup table of ``num_embeddings`` vectors of size ``embedding_dim``;
``EmbeddingBag``: sums, means or maxima of bags of its rows."""
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._utils import _nondefault_repr, _param
from .module import Module
from ..._arguments import keep

__all__ = ["Embedding", "EmbeddingBag"]


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
        keep(self, locals(), "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq")
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
        w = self.weight
        if self.padding_idx is not None and not w.is_meta:  # meta: no values to set
            init._write(w, w._data.at[self.padding_idx].set(0))

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}" + _nondefault_repr(self, (
            ("padding_idx", None), ("max_norm", None), ("norm_type", 2),
            ("scale_grad_by_freq", False), ("sparse", False)))

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


class EmbeddingBag(Module):
    """Sums (``mode='sum'``), means (``'mean'``) or maxima (``'max'``) of bags of
    embeddings, without materialising the embeddings of each index.

    ::

        EmbeddingBag(num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                     scale_grad_by_freq=False, mode='mean', sparse=False, _weight=None,
                     include_last_offset=False, padding_idx=None, device=None, dtype=None)

    ``forward(input, offsets=None, per_sample_weights=None)``: a 2-D ``input`` is one bag
    per row; a 1-D ``input`` needs ``offsets`` with values (a Tensor in eager mode; a list or
    tuple inside ``hookgrad.compile``). ``sparse=True`` still gives dense
    gradients.

    Example::

        >>> bag = nn.EmbeddingBag(10, 3, mode='sum')
        >>> bag(hookgrad.tensor([1, 2, 4, 5, 4, 3, 2, 9]), hookgrad.tensor([0, 4])).shape
        hookgrad.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        keep(self, locals(), "num_embeddings", "embedding_dim", "max_norm", "norm_type",
             "scale_grad_by_freq")
        if padding_idx is not None:
            if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = _param((num_embeddings, embedding_dim), device, dtype)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        keep(self, locals(), "mode", "sparse", "include_last_offset")

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        return (f"{self.num_embeddings}, {self.embedding_dim}"
                + _nondefault_repr(self, (("max_norm", None), ("norm_type", 2),
                                          ("scale_grad_by_freq", False)))
                + f", mode={self.mode!r}" + _nondefault_repr(self, (("padding_idx", None),)))

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An ``EmbeddingBag`` whose weight is the 2-D ``embeddings`` (frozen by default)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
