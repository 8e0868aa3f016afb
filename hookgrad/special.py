"""``torch.special``: special functions, elementwise.

The functions that are also ``torch.<name>`` are those (``special.psi`` is
:func:`hookgrad.digamma`, recording ``DigammaBackward0``); the others record PyTorch's
``Special...Backward0`` nodes, or, as in PyTorch, no node at all (the Bessel functions and the
orthogonal polynomials have no derivative).
"""
from ._ops.registry import FUNCTIONS as _F
from ._ops.special import (entr, erfcx, i0e, i1, i1e, log_ndtr, ndtr, ndtri, xlog1py,
                           zeta)
from ._ops.bessel import BESSEL as _BESSEL
from ._ops.special_polynomials import POLYNOMIALS as _POLYNOMIALS
from ._ops.parser_errors import not_a as _not_a
from ._ops.reduction import softmax_dim as _softmax_dim
from ._tensor import Tensor

digamma = psi = _F["digamma"]
erf, erfc, erfinv = _F["erf"], _F["erfc"], _F["erfinv"]
exp2, expm1, log1p = _F["exp2"], _F["expm1"], _F["log1p"]
expit = _F["sigmoid"]
gammaln = _F["lgamma"]
gammainc, gammaincc = _F["igamma"], _F["igammac"]
i0 = _F["i0"]
logit, logsumexp, polygamma = _F["logit"], _F["logsumexp"], _F["polygamma"]
multigammaln = _F["mvlgamma"]
round = _F["round"]  # noqa: A001 - PyTorch's name
sinc, xlogy = _F["sinc"], _F["xlogy"]
globals().update(_POLYNOMIALS)
globals().update(_BESSEL)


def _softmax_args(name, input, dim, dtype):
    # PyTorch's ``special_*`` signatures: ``dim`` required and an int, ``input`` a Tensor;
    # their errors name ``name``, which hookgrad.softmax's own checks would not
    if dim is _REQUIRED:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    if not isinstance(input, Tensor):
        raise _not_a(name, "input", input, "Tensor")
    x = input if dtype is None else input.to(dtype)
    _softmax_dim(x, dim, name, 2, name[len("special_"):])  # raises with this name
    return dim


_REQUIRED = object()


def softmax(input, dim=_REQUIRED, dtype=None) -> Tensor:
    """``softmax(input, dim, dtype=None)``: :func:`hookgrad.softmax` along ``dim``
    (required here), computed in ``dtype`` when given."""
    return _F["softmax"](input, _softmax_args("special_softmax", input, dim, dtype),
                         dtype=dtype)


def log_softmax(input, dim=_REQUIRED, *, dtype=None) -> Tensor:
    """``log_softmax(input, dim, *, dtype=None)``: :func:`hookgrad.log_softmax` along
    ``dim`` (required here), computed in ``dtype`` when given."""
    return _F["log_softmax"](input, _softmax_args("special_log_softmax", input, dim, dtype),
                             dtype=dtype)


__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma",
           "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta", *_POLYNOMIALS, *_BESSEL]

from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
