"""JAX's 64-bit mode, on by default: PyTorch's ``int64`` and ``float64``.

PyTorch code takes 64-bit types for granted: integer tensors and indices are ``int64``
(``torch.tensor([1, 2])``, ``arange``, ``argmax``, ``.long()``), ``gradcheck`` and
numerical tests run in ``float64`` (``.double()``, ``dtype=torch.float64``). JAX creates
neither unless its x64 mode is on, so hookgrad turns it on at import. hookgrad's own
defaults stay PyTorch's (``float32`` for floating tensors and parameters, as
``get_default_dtype()`` says), so models compute in 32 bits as they do in PyTorch.

The mode is process-wide: JAX code beside hookgrad gets JAX's 64-bit defaults too
(``jnp.zeros(3)`` is ``float64``). To keep JAX's 32-bit mode:

- ``HOOKGRAD_X64=0`` (or ``off``/``false``): leave JAX's setting alone;
- ``JAX_ENABLE_X64`` set in the environment (to anything): the user's JAX setting wins.

Without x64, ``float64`` tensors are an error and integer tensors are ``int32`` (see
docs/differences.md).
"""
import os

import jax

ENV = "HOOKGRAD_X64"
_OFF = frozenset({"0", "off", "false", "no"})


def configure(environ=os.environ):
    """Turn JAX's 64-bit mode on as the module docstring says; returns whether hookgrad
    turned it on."""
    if environ.get(ENV, "").strip().lower() in _OFF or "JAX_ENABLE_X64" in environ:
        return False
    jax.config.update("jax_enable_x64", True)
    return True
