"""PyTorch's whole-network recurrent functions at the top level: ``torch.lstm``,
``torch.gru``, ``torch.rnn_tanh``, ``torch.rnn_relu`` (ATen's signatures: the weights as
one flat list, and a packed form taking ``(data, batch_sizes)``). They run the layers
``nn.RNN``/``LSTM``/``GRU`` run (one op per layer and direction).
"""
from __future__ import annotations

from .._tensor import Tensor
from .nn_rnn import rnn_layers
from .registry import export


def _grouped(params, has_biases, num_layers, bidirectional):
    """The flat list as ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` per layer and direction."""
    groups = num_layers * (2 if bidirectional else 1)
    params = list(params)
    per = len(params) // groups if groups else 0
    if per * groups != len(params) or per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(f"got {len(params)} parameters for {num_layers} layer(s)"
                           f"{' bidirectional' if bidirectional else ''} "
                           f"{'with' if has_biases else 'without'} biases")
    out = []
    for g in range(groups):
        w = params[g * per:(g + 1) * per]
        biases = (w[2], w[3]) if has_biases else (None, None)
        out.append((w[0], w[1], *biases, w[per - 1] if per in (3, 5) else None))
    return out


def _run(mode, input, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
         bidirectional, batch_first):
    h0, c0 = (hx[0], hx[1]) if mode == "LSTM" else (hx, None)
    sizes = None
    if batch_sizes is not None:
        sizes = tuple(int(b) for b in batch_sizes.tolist())
        batch_first = False
    out, h, c = rnn_layers(input, h0, c0, _grouped(params, has_biases, num_layers,
                                                  bidirectional),
                           mode, num_layers, bidirectional, batch_first, sizes, float(dropout),
                           bool(train))
    return (out, h, c) if mode == "LSTM" else (out, h)


def _dispatch(mode, args, kwargs):
    if len(args) > 3 and isinstance(args[3], (list, tuple)):
        # (data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
        #  bidirectional)
        data, batch_sizes, hx, params, *rest = args
        return _run(mode, data, batch_sizes, hx, params, *rest, False)
    input, hx, params, *rest = args
    names = ("has_biases", "num_layers", "dropout", "train", "bidirectional", "batch_first")
    values = dict(zip(names, rest), **kwargs)
    return _run(mode, input, None, hx, params, *(values[n] for n in names))


@export(method=False)
def lstm(*args, **kwargs) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, h_n, c_n)`` of a multi-layer LSTM.

    ::

        lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
             batch_first)
        lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
             bidirectional)

    ``hx`` is ``(h_0, c_0)``; ``params`` lists ``w_ih, w_hh[, b_ih, b_hh][, w_hr]`` for each
    layer and direction.
    """
    return _dispatch("LSTM", args, kwargs)


@export(method=False)
def gru(*args, **kwargs) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer GRU (``lstm``'s arguments, ``hx`` one Tensor)."""
    return _dispatch("GRU", args, kwargs)


@export(method=False)
def rnn_tanh(*args, **kwargs) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer Elman RNN with ``tanh`` (``gru``'s arguments)."""
    return _dispatch("RNN_TANH", args, kwargs)


@export(method=False)
def rnn_relu(*args, **kwargs) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer Elman RNN with ``relu`` (``gru``'s arguments)."""
    return _dispatch("RNN_RELU", args, kwargs)
