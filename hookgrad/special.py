"""``torch.special``: special functions, elementwise.

The functions that are also ``torch.<name>`` call those (``special.psi`` calls
:func:`hookgrad.digamma`, recording ``DigammaBackward0``; their argument errors name
``special_psi()``, as PyTorch's do); the others record PyTorch's
``Special...Backward0`` nodes, or, as in PyTorch, no node at all (the Bessel functions and the
orthogonal polynomials have no derivative).
"""
import functools as _functools

from ._ops.registry import FUNCTIONS as _F
from ._ops.special import (entr, erfcx, i0e, i1, i1e, log_ndtr, ndtr, ndtri, xlog1py,
                           zeta)
from ._ops.bessel import BESSEL as _BESSEL
from ._ops.special_polynomials import POLYNOMIALS as _POLYNOMIALS
from ._ops.parser_errors import not_a as _not_a
from ._ops.reduction import softmax_dim as _softmax_dim, softmax_input as _softmax_input
from ._tensor import Tensor


def _alias(name, base):
    """``hookgrad.<base>`` as ``special.<name>``: the same function, but a TypeError of its
    argument checks names ``special_<name>()``, as PyTorch's parser does (renamed after the
    call failed: a valid call pays one frame)."""
    fn = _F[base]
    prefix = f"{base}()"

    @_functools.wraps(fn)
    def alias(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            message = str(e)
            if not message.startswith(prefix):
                raise
            raise TypeError(f"special_{name}(){message[len(prefix):]}") from None
    alias.__name__ = alias.__qualname__ = name
    alias.__module__ = __name__
    return alias


digamma, psi = _alias("digamma", "digamma"), _alias("psi", "digamma")
erf, erfc, erfinv = _alias("erf", "erf"), _alias("erfc", "erfc"), _alias("erfinv", "erfinv")
exp2, expm1, log1p = _alias("exp2", "exp2"), _alias("expm1", "expm1"), _alias("log1p", "log1p")
expit = _alias("expit", "sigmoid")
gammaln = _alias("gammaln", "lgamma")
gammainc, gammaincc = _alias("gammainc", "igamma"), _alias("gammaincc", "igammac")
i0 = _alias("i0", "i0")
logit, logsumexp = _alias("logit", "logit"), _alias("logsumexp", "logsumexp")
polygamma = _alias("polygamma", "polygamma")
multigammaln = _alias("multigammaln", "mvlgamma")
round = _alias("round", "round")  # noqa: A001 - PyTorch's name
sinc, xlogy = _alias("sinc", "sinc"), _alias("xlogy", "xlogy")
globals().update(_POLYNOMIALS)
globals().update(_BESSEL)


def _softmax_args(name, input, dim, dtype):
    # PyTorch's ``special_*`` signatures: ``dim`` required and an int, ``input`` a Tensor;
    # their errors name ``name``, which hookgrad.softmax's own checks would not
    if dim is _REQUIRED:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    if not isinstance(input, Tensor):
        raise _not_a(name, "input", input, "Tensor")
    x = input if dtype is None else _softmax_input(input, dtype, name)
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
