"""Activation layers: thin modules over ``nn.functional`` (PyTorch's arguments and
``extra_repr``). ``MultiheadAttention`` is in ``transformer``."""
from ... import _errors
from .. import functional as F
from .. import init
from ._utils import _param
from ._functional_module import _Inplace, _Stored
from .module import Module
from ..._arguments import keep, own_init

__all__ = ["ReLU", "ReLU6", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "Softmin",
           "LogSoftmax", "LeakyReLU", "ELU", "SELU", "CELU", "Softplus", "Hardtanh", "Mish",
           "Hardswish", "Hardsigmoid", "LogSigmoid", "Softsign", "Tanhshrink", "Softshrink",
           "Hardshrink", "Threshold", "GLU", "PReLU", "Softmax2d",
           "RReLU"]


def _inplace(flag, lead=""):
    return f"{lead}inplace=True" if flag else ""


@own_init
class ReLU(_Inplace):
    """``max(0, x)`` elementwise.

    Example::

        >>> nn.ReLU()(hookgrad.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """
    _fn = staticmethod(F.relu)


@own_init
class SiLU(_Inplace):
    """``x * sigmoid(x)``."""
    _fn = staticmethod(F.silu)


@own_init
class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""
    _fn = staticmethod(F.mish)


@own_init
class Hardswish(_Inplace):
    _fn = staticmethod(F.hardswish)
    extra_repr = Module.extra_repr  # PyTorch's repr leaves out inplace here


@own_init
class Hardsigmoid(_Inplace):
    _fn = staticmethod(F.hardsigmoid)
    extra_repr = Module.extra_repr  # PyTorch's repr leaves out inplace here


@own_init
class SELU(_Inplace):
    _fn = staticmethod(F.selu)


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh approximation."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class _DimModule(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


@own_init
class Softmax(_DimModule):
    """``softmax`` along ``dim``.

    Example::

        >>> nn.Softmax(dim=1)(hookgrad.randn(2, 3)).sum(1)
        tensor([1., 1.])
    """
    _fn = staticmethod(F.softmax)


@own_init
class Softmin(_DimModule):
    _fn = staticmethod(F.softmin)


class Softmax2d(Module):
    """``softmax`` over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` at each location."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


@own_init
class LogSoftmax(_DimModule):
    """``log_softmax`` along ``dim``."""
    _fn = staticmethod(F.log_softmax)


class LeakyReLU(_Stored):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    _fn, _args = staticmethod(F.leaky_relu), ("negative_slope", "inplace")

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__(negative_slope, inplace)


class ELU(_Stored):
    _fn, _args = staticmethod(F.elu), ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(alpha, inplace)


class CELU(_Stored):
    _fn, _args = staticmethod(F.celu), ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(alpha, inplace)


class Softplus(_Stored):
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold``."""
    _fn, _args = staticmethod(F.softplus), ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__(beta, threshold)


class Hardtanh(_Stored):
    """Clamps to ``[min_val, max_val]``."""
    _fn, _args = staticmethod(F.hardtanh), ("min_val", "max_val", "inplace")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        for old, new, given in (("min_value", "min_val", min_value),
                                ("max_value", "max_val", max_value)):
            if given is not None:
                _errors.warn(f"keyword argument `{old}` is deprecated and renamed to `{new}`",
                             FutureWarning)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        super().__init__(min_val, max_val, inplace)
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace(self.inplace)


class _Shrink(_Stored):
    """``Softshrink`` and ``Hardshrink`` (in PyTorch neither subclasses the other)."""
    _args = ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__(lambd)

    def extra_repr(self):
        return str(self.lambd)


@own_init
class Softshrink(_Shrink):
    _fn = staticmethod(F.softshrink)


@own_init
class Hardshrink(_Shrink):
    _fn = staticmethod(F.hardshrink)


class Threshold(_Stored):
    """``x`` where ``x > threshold``, else ``value``."""
    _fn, _args = staticmethod(F.threshold), ("threshold", "value", "inplace")

    def __init__(self, threshold, value, inplace=False):
        super().__init__(threshold, value, inplace)


class GLU(_Stored):
    _fn, _args = staticmethod(F.glu), ("dim",)

    def __init__(self, dim=-1):
        super().__init__(dim)


class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with a learnable ``weight``
    (``(num_parameters,)``, initialized to ``init``)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = _param((num_parameters,), device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: in training, negative inputs times a slope drawn from
    ``U(lower, upper)``; in eval mode, times ``(lower + upper) / 2``.

    ::

        RReLU(lower=0.125, upper=0.3333333333333333, inplace=False)
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        keep(self, locals(), "lower", "upper", "inplace")

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + _inplace(self.inplace, ", ")


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
