"""PyTorch's dispatch keys, at ``torch._C.DispatchKey``, for code that names them.

hookgrad has no key-based dispatcher: an operator runs the kernel of its first Tensor
argument's device, and ``torch.library`` maps the device keys (``CPU``, ``CUDA``, ...) to
those kernels. Libraries still build key sets at import (torchvision excludes the
autocast keys while its autocast kernels re-enter an op), so the names exist.
"""
import enum


class DispatchKey(enum.Enum):
    """The dispatch keys ``torch.library`` and libraries name."""
    Undefined = 0
    CompositeExplicitAutograd = 1
    CompositeImplicitAutograd = 2
    Autograd = 3
    AutocastCPU = 4
    AutocastCUDA = 5
    AutocastXPU = 6
    AutocastMPS = 7
    CPU = 8
    CUDA = 9
    XLA = 10
    MPS = 11
    XPU = 12
    Meta = 13
    AutogradCPU = 14
    AutogradCUDA = 15
    Python = 16


class DispatchKeySet:
    """A set of :class:`DispatchKey` (``|`` joins, ``has`` tests membership)."""

    __slots__ = ("_keys",)

    def __init__(self, *keys):
        if any(not isinstance(k, DispatchKey) for k in keys):
            raise TypeError(f"DispatchKeySet: expected DispatchKey values, got {keys}")
        self._keys = frozenset(keys)

    def __or__(self, other):
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        out = DispatchKeySet()
        out._keys = self._keys | other._keys
        return out

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self):
        return hash(self._keys)

    def has(self, key):
        return key in self._keys

    def __repr__(self):
        return f"DispatchKeySet({', '.join(sorted(k.name for k in self._keys))})"


class _ExcludeDispatchKeyGuard:
    """``with _ExcludeDispatchKeyGuard(keyset):`` no kernel registered for those keys runs
    inside. hookgrad selects kernels by device only and never runs a kernel registered for
    an autocast or other non-device key, so the exclusion always holds."""

    def __init__(self, keyset):
        if not isinstance(keyset, DispatchKeySet):
            raise TypeError(f"_ExcludeDispatchKeyGuard: expected a DispatchKeySet, got "
                            f"{type(keyset).__name__}")
        self.keyset = keyset

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
