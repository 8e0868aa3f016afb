"""``FloatFunctional`` and ``FXFloatFunctional``: the float stand-ins a model uses for
``add``/``mul``/``cat`` so that quantization can later swap them for quantized ones.

They compute in floating point and need no quantized Tensor. (``QFunctional``, the
quantized form, does: hookgrad has none.)
"""
from .... import _ops
from ... import functional as F
from ...modules.linear import Identity
from ...modules.module import Module

__all__ = ["FloatFunctional", "FXFloatFunctional"]

_NO_FORWARD = ("FloatFunctional is not intended to use the 'forward'. Please use the "
               "underlying operation")


# hookgrad.add, ... from the op table (the hookgrad package itself imports this module)
_add, _mul, _cat, _matmul = (_ops.FUNCTIONS[n] for n in ("add", "mul", "cat", "matmul"))


class FXFloatFunctional(Module):
    """Module holding the float operations a quantizable model's FX graph calls
    (``add``, ``add_scalar``, ``mul``, ``mul_scalar``, ``cat``, ``add_relu``, ``matmul``);
    calling the module itself raises."""

    def _observe(self, r):
        return r

    def forward(self, x):
        raise RuntimeError(_NO_FORWARD)

    def add(self, x, y):
        """Operation equivalent to ``torch.add(Tensor, Tensor)``."""
        return self._observe(_add(x, y))

    def add_scalar(self, x, y):
        """Operation equivalent to ``torch.add(Tensor, float)`` (not observed)."""
        return _add(x, y)

    def mul(self, x, y):
        """Operation equivalent to ``torch.mul(Tensor, Tensor)``."""
        return self._observe(_mul(x, y))

    def mul_scalar(self, x, y):
        """Operation equivalent to ``torch.mul(Tensor, float)`` (not observed)."""
        return _mul(x, y)

    def cat(self, x, dim=0):
        """Operation equivalent to ``torch.cat``."""
        return self._observe(_cat(x, dim=dim))

    def add_relu(self, x, y):
        """Operation equivalent to ``relu(torch.add(x, y))``."""
        return self._observe(F.relu(_add(x, y)))

    def matmul(self, x, y):
        """Operation equivalent to ``torch.matmul(Tensor, Tensor)``."""
        return self._observe(_matmul(x, y))


class FloatFunctional(FXFloatFunctional):
    """State collector class for float operations: as :class:`FXFloatFunctional`, with each
    observed result passed through ``activation_post_process`` (an ``Identity`` until
    quantization preparation replaces it with an observer).

    Example::

        >>> f_add = FloatFunctional()
        >>> a = hookgrad.tensor(3.0)
        >>> b = hookgrad.tensor(4.0)
        >>> f_add.add(a, b)  # Equivalent to ``hookgrad.add(a, b)``
        tensor(7.)
    """

    def __init__(self):
        super().__init__()
        self.activation_post_process = Identity()

    def _observe(self, r):
        return self.activation_post_process(r)


from .... import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__)
