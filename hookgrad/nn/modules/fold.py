"""``Fold`` and ``Unfold``: sliding local blocks to columns and back (``F.fold``,
``F.unfold``)."""
from .. import functional as F
from ._functional_module import _Stored

__all__ = ["Fold", "Unfold"]


class Unfold(_Stored):
    """Extracts sliding local blocks of ``(N, C, H, W)`` into columns
    ``(N, C * prod(kernel_size), L)``.

    ::

        Unfold(kernel_size, dilation=1, padding=0, stride=1)
    """
    _fn, _args = staticmethod(F.unfold), ("kernel_size", "dilation", "padding", "stride")

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)


class Fold(_Stored):
    """Sums columns ``(N, C * prod(kernel_size), L)`` back into ``(N, C, *output_size)``:
    the adjoint of ``Unfold``.

    ::

        Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)
    """
    _fn = staticmethod(F.fold)
    _args = ("output_size", "kernel_size", "dilation", "padding", "stride")

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(output_size, kernel_size, dilation, padding, stride)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
