"""The transposes of a tensor's last dimensions: ``.T``, ``.mT``, ``.H``, ``.mH`` and
``adjoint()``, with PyTorch's rules for other ranks: a 0-d tensor is its own transpose
(with PyTorch's deprecation warning), a vector has none."""
from __future__ import annotations

from .. import _errors
from .._tensor import Tensor
from .registry import FUNCTIONS, export
from .shape import TENSOR_PROPERTIES, permute, transpose


def _deprecated(message):
    # NOTE: PyTorch warns once per process; here Python's filters decide (by default once
    # per calling line)
    _errors.warn(message)


def _on_scalar(name):
    _deprecated(f"{name} is deprecated on 0-D tensors. Consider using x.conj().")


def _conj(t):
    # complex_numbers (imported after this module) conjugates
    return FUNCTIONS["conj"](t) if t.dtype.is_complex else t


def _T(self) -> Tensor:
    if self.ndim == 0:
        _deprecated("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                    "these cases.")
    elif self.ndim != 2:
        _deprecated("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                    "shape is deprecated and it will throw an error in a future release. "
                    "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                    "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
    return permute(self, tuple(range(self.ndim - 1, -1, -1)))


def _batched_only(self, name):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                           f"matrices. Got {self.ndim}-D tensor.")


def _mT(self) -> Tensor:
    if self.ndim == 0:
        _deprecated("Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                    "these cases.")
        return self
    _batched_only(self, "mT")
    return transpose(self, -2, -1)


def _conj_transposed(t, scalar_name, batched_name):
    """The conjugate of ``t`` with its last two dimensions swapped (``mH``, ``adjoint``);
    a 0-d ``t`` conjugated, with PyTorch's deprecation."""
    if t.ndim == 0:
        _on_scalar(scalar_name)
        return _conj(t)
    _batched_only(t, batched_name)
    return _conj(transpose(t, -2, -1))


def _mH(self) -> Tensor:
    return _conj_transposed(self, "Tensor.mH", "mH")


def _H(self) -> Tensor:
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.")
    if self.ndim == 0:
        _on_scalar("Tensor.H")
        return _conj(self)
    return _conj(transpose(self, 0, 1))


@export
def adjoint(input) -> Tensor:
    """``adjoint(input)``: the conjugate transpose of the last two dimensions."""
    return _conj_transposed(input, "adjoint()", "adjoint()")


TENSOR_PROPERTIES.update({"T": _T, "mT": _mT, "H": _H, "mH": _mH})
