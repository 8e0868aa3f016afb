"""The older custom-op API, kept at PyTorch's path ``torch._custom_op``.

``hookgrad._custom_op.impl.custom_op`` defines an operator from a typed function stub,
then ``.impl(device_types)``, ``.impl_save_for_backward()`` and ``.impl_backward()``
register its implementation and backward. New code should use
``hookgrad.library.custom_op``.
"""
