"""``torch.qscheme`` and its five values (``torch.per_tensor_affine``, ...): how a
quantized Tensor maps its integers to real numbers.

They are plain named constants, as in PyTorch (compared by identity, pickled by name).
hookgrad has no quantized Tensors, so nothing takes them yet but code that names them.
"""

__all__ = ["qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams"]


class qscheme:
    """A quantization scheme: one of the five constants; cannot be made anew."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.qscheme' instances")

    def __repr__(self):
        return f"hookgrad.{self._name}"

    def __reduce__(self):
        return self._name  # pickled as the module attribute of that name


qscheme.__module__ = "hookgrad"


def _make(name):
    value = object.__new__(qscheme)
    value._name = name
    return value


per_tensor_affine = _make("per_tensor_affine")
per_channel_affine = _make("per_channel_affine")
per_tensor_symmetric = _make("per_tensor_symmetric")
per_channel_symmetric = _make("per_channel_symmetric")
per_channel_affine_float_qparams = _make("per_channel_affine_float_qparams")
