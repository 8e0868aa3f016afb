"""C++ extensions whose operators hookgrad supplies itself.

A library built for PyTorch ships its operators as a shared object that registers them
with libtorch's dispatcher when ``torch.ops.load_library`` loads it; hookgrad has no
libtorch, so it cannot load one. For the extensions below it defines the same operators
(same names and schemas) computed with JAX, and ``hookgrad.ops.load_library`` imports
that definition in place of the binary: the library's Python code then runs unchanged.
"""
import os

# (package directory, file name up to its first dot) -> the module defining its ops
_SUPPLIED = {("torchvision", "_C"): "hookgrad._extensions.torchvision"}


def supplier(path):
    """The module defining the operators of the extension at ``path``, or None."""
    key = (os.path.basename(os.path.dirname(path)), os.path.basename(path).split(".")[0])
    return _SUPPLIED.get(key)


def supplied():
    """The extensions hookgrad supplies, as ``package/name`` text."""
    return ", ".join(f"{pkg}/{name}" for pkg, name in _SUPPLIED)
