"""``torch.fft``: discrete Fourier transforms and their helpers, recorded with PyTorch's
nodes (``FftC2CBackward0``, ``FftR2CBackward0``, ``FftC2RBackward0``) and differentiated
by JAX's vjp (see ``hookgrad/_ops/spectral.py``)."""
from ._tensor import Tensor
from ._ops.spectral import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft,
                            ifft2, ifftn, ifftshift, ihfft, ihfft2, ihfftn, irfft, irfft2,
                            irfftn, rfft, rfft2, rfftfreq, rfftn)

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn", "Tensor"]

from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
