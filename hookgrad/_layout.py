"""Memory layouts with PyTorch's names (``hookgrad.strided``, ...). Every hookgrad Tensor is
dense and strided; the sparse layouts exist so that code comparing against them runs."""


class layout:
    """A memory layout, as ``torch.layout``: ``hookgrad.strided`` for every Tensor here."""

    __slots__ = ("_name",)

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'hookgrad.layout' objects is not writable")

    def __repr__(self):
        return f"hookgrad.{self._name}"

    def __reduce__(self):
        return self._name  # pickled by name: the module's global of that name


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged, _mkldnn = (
    layout(n) for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                        "sparse_bsc", "jagged", "_mkldnn"))
