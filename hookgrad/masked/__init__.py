"""``torch.masked``: reductions and normalizations that skip the elements a ``mask`` leaves
out, on ordinary Tensors.

Example::

    >>> x = hookgrad.tensor([[1., 2., 3.], [4., 5., 6.]])
    >>> hookgrad.masked.mean(x, 1, mask=x > 1.5)
    tensor([2.5000, 5.0000])
"""
from .. import _missing
from ._ops import (_canonical_dim, _combine_input_and_mask, _input_mask,  # noqa: F401
                   _reduction_identity, _where, amax, amin, argmax, argmin, cumprod, cumsum,
                   log_softmax, logaddexp, logsumexp, mean, median, norm, normalize, prod,
                   softmax, softmin, std, sum, var)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "is_masked_tensor",
           "log_softmax", "logaddexp", "logsumexp", "mean", "median", "norm", "normalize",
           "prod", "softmax", "softmin", "std", "sum", "var"]


def is_masked_tensor(obj):
    """Returns True if ``obj`` is a ``MaskedTensor``: never, since hookgrad has none yet."""
    return False


__getattr__ = _missing.module_getattr(__name__)
