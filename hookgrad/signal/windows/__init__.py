"""``torch.signal.windows``: window functions (Bartlett, Blackman, cosine, exponential,
Gaussian, general cosine and Hamming, Hamming, Hann, Kaiser, Nuttall)."""
from ... import _missing
from . import windows  # noqa: F401
from .windows import (bartlett, blackman, cosine, exponential, gaussian,  # noqa: F401
                      general_cosine, general_hamming, hamming, hann, kaiser, nuttall)

__all__ = windows.__all__

__getattr__ = _missing.module_getattr(__name__)
