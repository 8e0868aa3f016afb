"""Variable-length sequences for recurrent layers: ``PackedSequence``, packing, padding.

Lengths and batch sizes set shapes, so they need concrete values: a Python list or an
eager Tensor (inside ``hookgrad.compile``: a list, or a Tensor made inside the step from
constants). A ``PackedSequence`` crosses ``hookgrad.compile`` and JAX transformations with
its batch sizes as static data (one compilation per distinct set of lengths).
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtype
from ..._factory import tensor
from ..._compile.host_hook import TracedValueError
from ..._ops.dispatch import apply
from ..._ops.nn_rnn import PACK_PADDED, PAD_PACKED, _batch_sizes
from ..._tensor import Tensor
from .. import functional as F

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def _concrete_ints(t, what):
    """A 1-D integer Tensor or sequence as a tuple of Python ints."""
    if isinstance(t, Tensor):
        if isinstance(t._data, jax.core.Tracer):
            raise TracedValueError(
                f"{what} needs concrete sequence lengths (they set the packed shape), but got "
                "a traced Tensor. Inside hookgrad.compile pass the lengths as a Python list (a "
                "Tensor made inside the step is traced too).")
        return tuple(int(v) for v in np.asarray(t._data).reshape(-1))
    return tuple(int(v) for v in t)


def _long(values):
    return tensor(list(values), dtype=_dtype.int64)


def _cast(dtype):
    """A ``PackedSequence`` method converting ``data`` to ``dtype`` (``double()``, ...)."""
    def cast(self) -> PackedSequence:
        return self.to(dtype=dtype)
    return cast


class PackedSequence(namedtuple("PackedSequence_",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Holds the ``data`` and the ``batch_sizes`` of a packed batch of sequences.

    ::

        PackedSequence(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None)

    Made by :func:`pack_padded_sequence` and :func:`pack_sequence`, consumed by
    ``nn.RNN``/``LSTM``/``GRU`` and :func:`pad_packed_sequence`. ``data`` holds the steps
    of all sequences time-major (``batch_sizes[t]`` rows for step ``t``);
    ``sorted_indices`` is the order the batch was sorted into by length,
    ``unsorted_indices`` its inverse.

    Example::

        >>> p = pack_sequence([hookgrad.tensor([1, 2, 3]), hookgrad.tensor([4, 5])])
        >>> p.data, p.batch_sizes
        (tensor([1, 4, 2, 5, 3]), tensor([2, 2, 1]))
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), sorted_indices)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _static_sizes(self):
        """The batch sizes as Python ints: known since packing (inside a compiled step
        ``batch_sizes`` holds a tracer), else read from ``batch_sizes``."""
        sizes = self.__dict__.get("_sizes")
        if sizes is None:
            b = self.batch_sizes
            known = getattr(b, "_static_batch_sizes", None)
            if known is not None and known[0] == b._version:
                sizes = known[1]
            else:
                sizes = _concrete_ints(b, "a PackedSequence")
            self._sizes = sizes
        return sizes

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data`` converted by ``Tensor.to``; the indices follow it to its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        return _packed(data, self.batch_sizes,
                       None if self.sorted_indices is None else self.sorted_indices.to(dev),
                       None if self.unsorted_indices is None else self.unsorted_indices.to(dev),
                       self.__dict__.get("_sizes"))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        kwargs.setdefault("device", "cpu")
        return self.to(*args, **kwargs)

    double = _cast(_dtype.float64)
    float = _cast(_dtype.float32)
    half = _cast(_dtype.float16)
    long = _cast(_dtype.int64)
    int = _cast(_dtype.int32)
    short = _cast(_dtype.int16)
    char = _cast(_dtype.int8)
    byte = _cast(_dtype.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False

    def pin_memory(self) -> PackedSequence:
        return self


def _packed(data, batch_sizes, sorted_indices, unsorted_indices, sizes):
    """A PackedSequence that knows its batch sizes as Python ints."""
    p = tuple.__new__(PackedSequence, (data, batch_sizes, sorted_indices, unsorted_indices))
    p._sizes = sizes
    if sizes is not None and isinstance(batch_sizes, Tensor):
        # NOTE: also kept on the Tensor: hookgrad.compile rebuilds a PackedSequence argument
        # around the same Tensor objects, whose arrays it swaps for tracers
        batch_sizes._static_batch_sizes = (batch_sizes._version, sizes)
    return p


def _flatten(p):
    b = p.batch_sizes
    sizes = p.__dict__.get("_sizes")
    if sizes is None and isinstance(b, Tensor) and not isinstance(b._data, jax.core.Tracer):
        sizes = p._static_sizes()
    # NOTE: the batch sizes are also static data of the pytree, so that under jit the
    # recurrent layers still know the shapes of their programs
    return (p.data, b, p.sorted_indices, p.unsorted_indices), sizes


def _unflatten(sizes, children):
    return _packed(*children, sizes)


jax.tree_util.register_pytree_node(PackedSequence, _flatten, _unflatten)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-D permutation Tensor (``None`` for ``None``)."""
    if permutation is None:
        return None
    p = permutation._data
    return Tensor._wrap(jnp.argsort(p).astype(p.dtype))


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Packs a padded batch of variable-length sequences.

    ::

        pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True)
            -> PackedSequence

    ``input`` is ``T x B x *`` (``B x T x *`` with ``batch_first``); ``lengths`` a list or
    1-D Tensor of ``B`` concrete lengths, decreasing unless ``enforce_sorted=False``.

    Example::

        >>> x = hookgrad.randn(5, 3, 2)
        >>> pack_padded_sequence(x, [5, 3, 2]).batch_sizes
        tensor([3, 3, 2, 1, 1])
    """
    if isinstance(lengths, Tensor) and lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu Long tensor")
    lens = _concrete_ints(lengths, "pack_padded_sequence")
    batch_dim = 0 if batch_first else 1
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-np.asarray(lens, np.int64), kind="stable")
        lens = tuple(lens[i] for i in order)
        sorted_indices = _long(order)
        input = input.index_select(batch_dim, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.shape[batch_dim]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    steps = input.shape[1 - batch_dim]
    if lens[0] > steps:
        raise RuntimeError(f"Expected every length to be at most the padded length {steps}, "
                           f"but got a length of {lens[0]}")
    data = apply(PACK_PADDED, (input,), {"lengths": lens, "batch_first": bool(batch_first)})
    sizes = _batch_sizes(lens)
    return _packed(data, _long(sizes), sorted_indices, invert_permutation(sorted_indices),
                   sizes)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Pads a packed batch back to a Tensor; the inverse of :func:`pack_padded_sequence`.

    ::

        pad_packed_sequence(sequence, batch_first=False, padding_value=0.0,
                            total_length=None) -> (Tensor, Tensor)

    Returns the padded ``T x B x *`` (``B x T x *``) Tensor and the lengths, in the
    original batch order.

    Example::

        >>> p = pack_sequence([hookgrad.tensor([1., 2.]), hookgrad.tensor([3.])])
        >>> pad_packed_sequence(p, batch_first=True)
        (tensor([[1., 2.],
                [3., 0.]]), tensor([2, 1]))
    """
    sizes = sequence._static_sizes()
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    padded = apply(PAD_PACKED, (sequence.data,), {"batch_sizes": sizes, "total_length": steps,
                                                  "padding_value": float(padding_value)})
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = _long(sum(1 for s in sizes if s > b) for b in range(sizes[0]))
    if sequence.unsorted_indices is not None:
        u = sequence.unsorted_indices
        return padded.index_select(0 if batch_first else 1, u), lengths[u]
    return padded, lengths


def _check_trailing(want, seq):
    """PyTorch copies each sequence into its slot with broadcasting: the same error."""
    got = tuple(seq.shape)
    full = (got[0],) + want
    for k in range(1, max(len(full), len(got)) + 1):
        a = full[-k] if k <= len(full) else 1
        b = got[-k] if k <= len(got) else 1
        if a != b and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                               f"({b}) at non-singleton dimension {len(full) - k}")


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Pads a list of variable-length Tensors (``L_i x *``) with ``padding_value`` and
    stacks them: ``T x B x *`` (``B x T x *`` with ``batch_first``).

    ::

        pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side='right')
            -> Tensor

    Example::

        >>> pad_sequence([hookgrad.ones(3), hookgrad.ones(1)], batch_first=True)
        tensor([[1., 1., 1.],
                [1., 0., 0.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if any(s.dim() == 0 for s in sequences):
        raise RuntimeError("pad_sequence: Expected every sequence to have a length dimension, "
                           "but got a 0-D tensor")
    trailing = tuple(sequences[0].shape[1:])
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        _check_trailing(trailing, s)
        if tuple(s.shape[1:]) != trailing:
            s = s.expand(s.shape[0], *trailing)
        n = longest - s.shape[0]
        if n:
            s = F.pad(s, (0, 0) * len(trailing) + ((0, n) if padding_side == "right"
                                                   else (n, 0)), value=padding_value)
        padded.append(s)
    from ..._ops.stacking import stack
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """Splits a padded Tensor into a list of variable-length Tensors.

    ::

        unpad_sequence(padded_sequences, lengths, batch_first=False) -> list[Tensor]

    Example::

        >>> x = pad_sequence([hookgrad.ones(3), hookgrad.ones(1)])
        >>> [s.shape[0] for s in unpad_sequence(x, hookgrad.tensor([3, 1]))]
        [3, 1]
    """
    lens = _concrete_ints(lengths, "unpad_sequence")
    seqs = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [seqs[i, :n] for i, n in enumerate(lens)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Packs a list of variable-length Tensors (``L_i x *``, decreasing lengths unless
    ``enforce_sorted=False``).

    ::

        pack_sequence(sequences, enforce_sorted=True) -> PackedSequence

    Example::

        >>> pack_sequence([hookgrad.tensor([1, 2, 3]), hookgrad.tensor([4, 5])]).batch_sizes
        tensor([2, 2, 1])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of Tensors a :class:`PackedSequence` holds, in the original order.

    ::

        unpack_sequence(packed_sequences) -> list[Tensor]

    Example::

        >>> p = pack_sequence([hookgrad.tensor([1, 2]), hookgrad.tensor([3])])
        >>> unpack_sequence(p)
        [tensor([1, 2]), tensor([3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
