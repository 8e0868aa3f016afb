"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and the cells ``RNNCell``, ``LSTMCell``,
``GRUCell``, with PyTorch's parameters (names, shapes, ``_reverse`` suffixes,
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) init), shape checks and return structures.

A layer and direction runs as one op (``hookgrad._ops.nn_rnn``: the recurrence is one
``jax.lax.scan``); the cells are written in hookgrad ops, as PyTorch's CPU cells are.
"""
import math
import numbers

from ..._ops.nn_rnn import rnn_layers
from ..._ops.rnn_cells import gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell
from .. import init
from ..utils.rnn import PackedSequence, _packed
from ._utils import _nondefault_repr
from .linear import _param
from .module import Module
from ... import _errors

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _zeros(shape, like):
    from ..._factory import zeros
    return zeros(*shape, dtype=like.dtype, device=like.device)


def _check_args(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        _errors.warn("dropout option adds dropout after all but last recurrent layer, so "
                     "non-zero dropout expects num_layers greater than 1, but got "
                     f"dropout={dropout} and num_layers={num_layers}")
    for name, v, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                          ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
        if not isinstance(v, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                            f"{type(v).__name__}")
        if kind is int and v <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNNBase(Module):
    """Base class of ``RNN``, ``LSTM`` and ``GRU``: the parameters, their bookkeeping
    (``_flat_weights_names``, ``all_weights``) and the forward pass of all three.

    ::

        RNNBase(mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        _check_args(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        bound = 1.0 / math.sqrt(hidden_size)
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                suffix = "_reverse" if direction == 1 else ""
                layer_in = input_size if layer == 0 else real_hidden * (2 if bidirectional else 1)
                shapes = [("weight_ih", (gate, layer_in)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for name, shape in shapes:
                    names.append(f"{name}_l{layer}{suffix}")
                    setattr(self, names[-1], _param(shape, bound, device, dtype))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)

    @property
    def _flat_weights(self):
        # read on every access: functional_call and compile swap the Parameters
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters per layer and direction, in ``_flat_weights_names`` order."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op (PyTorch packs weights for cuDNN here; XLA needs no packing)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + _nondefault_repr(self, (
            ("proj_size", 0), ("num_layers", 1), ("bias", True), ("batch_first", False),
            ("dropout", 0), ("bidirectional", False)))

    # ------------------------------------------------------------------ checks
    def check_input(self, input, batch_sizes):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # ------------------------------------------------------------------ forward
    def _prepare(self, input, hx):
        """PyTorch's argument handling: ``(input, hx, batch_sizes, sorted, unsorted,
        unbatched_dim)`` with ``hx`` checked and in sorted order, ``None`` made zeros."""
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        lstm = self.mode == "LSTM"
        squeeze = None
        if isinstance(input, PackedSequence):
            batch_sizes = input._static_sizes()
            input, _, sorted_idx, unsorted_idx = input
            batch = batch_sizes[0]
        else:
            batch_sizes = sorted_idx = unsorted_idx = None
            if input.dim() not in (2, 3):
                tail = "tensor instead" if name == "RNN" else "instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D "
                                 f"{tail}")
            if input.dim() == 2:
                squeeze = 0 if self.batch_first else 1
                input = input.unsqueeze(squeeze)
            batch = input.size(0) if self.batch_first else input.size(1)
            if hx is not None:
                _check_hx_dims(hx, squeeze is None, lstm)
                if squeeze is not None:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
        dirs = 2 if self.bidirectional else 1
        if hx is None:
            h = _zeros((self.num_layers * dirs, batch, self.proj_size or self.hidden_size)
                       if lstm else (self.num_layers * dirs, batch, self.hidden_size), input)
            hx = (h, _zeros((self.num_layers * dirs, batch, self.hidden_size), input)) \
                if lstm else h
            self.check_forward_args(input, hx, batch_sizes)
        else:
            self.check_forward_args(input, hx, batch_sizes)
            hx = self.permute_hidden(hx, sorted_idx)
        return input, hx, batch_sizes, sorted_idx, unsorted_idx, squeeze

    def _layers(self, x, h0, c0, batch_sizes):
        """All layers and directions: the output and the stacked final states."""
        weights = []
        for names in self._all_weights:
            w = dict.fromkeys(("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))
            for name in names:
                w[name.split("_l")[0]] = getattr(self, name)
            weights.append(tuple(w.values()))
        return rnn_layers(x, h0, c0, weights, self.mode, self.num_layers, self.bidirectional,
                          self.batch_first, batch_sizes, self.dropout, self.training)

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        x, hx, batch_sizes, sorted_idx, unsorted_idx, squeeze = self._prepare(input, hx)
        lstm = self.mode == "LSTM"
        out, h, c = self._layers(x, hx[0] if lstm else hx, hx[1] if lstm else None,
                                 batch_sizes)
        hidden = (h, c) if lstm else h
        if packed:
            return (_packed(out, input.batch_sizes, sorted_idx, unsorted_idx, batch_sizes),
                    self.permute_hidden(hidden, unsorted_idx))
        if squeeze is not None:
            out = out.squeeze(squeeze)
            hidden = (h.squeeze(1), c.squeeze(1)) if lstm else h.squeeze(1)
        return out, hidden


def _check_hx_dims(hx, batched, lstm):
    want, kind = (3, "batched 3-D") if batched else (2, "unbatched 2-D")
    if lstm:
        if hx[0].dim() != want or hx[1].dim() != want:
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                               f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
    elif hx.dim() != want:
        raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                           f"{hx.dim()}-D tensor")


class RNN(RNNBase):
    """A multi-layer Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    (``relu`` with ``nonlinearity='relu'``).

    ::

        RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
            batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)

    ``forward(input, hx=None) -> (output, h_n)``; ``input`` is ``(L, N, H_in)``
    (``(N, L, H_in)`` with ``batch_first``), ``(L, H_in)`` unbatched, or a
    :class:`~hookgrad.nn.utils.rnn.PackedSequence`.

    Example::

        >>> rnn = nn.RNN(10, 20, 2)
        >>> output, hn = rnn(hookgrad.randn(5, 3, 10), hookgrad.randn(2, 3, 20))
        >>> output.shape, hn.shape
        (hookgrad.Size([5, 3, 20]), hookgrad.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity, args = args[3], args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """A multi-layer LSTM (gates ``i, f, g, o``; with ``proj_size > 0`` the hidden state is
    projected by ``weight_hr``).

    ::

        LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
             dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)

    ``forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))``.

    Example::

        >>> lstm = nn.LSTM(10, 20, 2)
        >>> output, (hn, cn) = lstm(hookgrad.randn(5, 3, 10))
        >>> output.shape, cn.shape
        (hookgrad.Size([5, 3, 20]), hookgrad.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch,
                self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)


class GRU(RNNBase):
    """A multi-layer GRU (gates ``r, z, n``;
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``).

    ::

        GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
            dropout=0.0, bidirectional=False, device=None, dtype=None)

    Example::

        >>> gru = nn.GRU(10, 20, 2)
        >>> output, hn = gru(hookgrad.randn(5, 3, 10))
        >>> hn.shape
        hookgrad.Size([2, 3, 20])
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# --------------------------------------------------------------------------- cells


class RNNCellBase(Module):
    """Base class of the cells: ``weight_ih``, ``weight_hh`` (and ``bias_ih``,
    ``bias_hh``), each of ``num_chunks * hidden_size`` rows."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
        rows = num_chunks * hidden_size
        self.weight_ih = _param((rows, input_size), bound, device, dtype)
        self.weight_hh = _param((rows, hidden_size), bound, device, dtype)
        if bias:
            self.bias_ih = _param((rows,), bound, device, dtype)
            self.bias_hh = _param((rows,), bound, device, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, input, hx, n_states):
        """Checks dims; returns ``(input, [states], batched)`` with a batch dim."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        states = None if hx is None else (list(hx) if n_states == 2 else [hx])
        if states is not None:
            for i, s in enumerate(states):
                if s.dim() not in (1, 2):
                    what = f"hx[{i}]" if n_states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D "
                                     "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if states is None:
            states = [_zeros((input.size(0), self.hidden_size), input)] * n_states
        elif not batched:
            states = [s.unsqueeze(0) for s in states]
        return input, states, batched


class RNNCell(RNNCellBase):
    """An Elman RNN cell: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or ``relu``).

    ::

        RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh', device=None,
                dtype=None)

    Example::

        >>> cell = nn.RNNCell(10, 20)
        >>> cell(hookgrad.randn(3, 10)).shape
        hookgrad.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), batched = self._batch(input, hx, 1)
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if self.nonlinearity == "tanh":
            ret = rnn_tanh_cell(input, h, *weights)
        elif self.nonlinearity == "relu":
            ret = rnn_relu_cell(input, h, *weights)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """A long short-term memory cell (gates ``i, f, g, o``):
    ``c' = f * c + i * g``, ``h' = o * tanh(c')``.

    ::

        LSTMCell(input_size, hidden_size, bias=True, device=None, dtype=None)

    ``forward(input, (h, c)=None) -> (h', c')``.

    Example::

        >>> cell = nn.LSTMCell(10, 20)
        >>> h, c = cell(hookgrad.randn(3, 10))
        >>> h.shape
        hookgrad.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._batch(input, hx, 2)
        hy, cy = lstm_cell(input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih,
                           self.bias_hh)
        return (hy, cy) if batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    """A gated recurrent unit cell (gates ``r, z, n``):
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    ::

        GRUCell(input_size, hidden_size, bias=True, device=None, dtype=None)

    Example::

        >>> cell = nn.GRUCell(10, 20)
        >>> cell(hookgrad.randn(3, 10)).shape
        hookgrad.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._batch(input, hx, 1)
        hy = gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return hy if batched else hy.squeeze(0)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
