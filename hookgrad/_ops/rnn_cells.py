"""One step of PyTorch's recurrent cells as top-level functions: ``torch.rnn_tanh_cell``,
``torch.rnn_relu_cell``, ``torch.lstm_cell``, ``torch.gru_cell`` (ATen's signatures: the
weights as arguments, ``(N, input_size)`` input, ``(N, hidden_size)`` state).

Composed from recorded ops, as ATen composes them, so the graph's last nodes are
PyTorch's (``lstm_cell``'s ``hy`` ends in ``MulBackward0``, its ``cy`` in ``AddBackward0``).
Gate orders are PyTorch's: LSTM ``i, f, g, o``; GRU ``r, z, n``.
"""
from __future__ import annotations

from .._tensor import Tensor
from .nn import linear
from .registry import export


def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    return linear(input, w_ih, b_ih), linear(hx, w_hh, b_hh)


@export(method=False)
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``tanh(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


@export(method=False)
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """``relu(input @ w_ih.T + b_ih + hx @ w_hh.T + b_hh)``."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


@export(method=False)
def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """``(hy, cy)``: one LSTM step from the state ``hx = (h, c)``."""
    if len(hx) != 2:
        raise RuntimeError(f"lstm_cell: Expected hx to have 2 tensors (h, c), got {len(hx)}")
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


@export(method=False)
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step: ``n + z * (hx - n)`` with the reset gate ``r`` applied to the hidden
    part of ``n``."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    ir, iz, inew = gi.chunk(3, 1)
    hr, hz, hnew = gh.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (inew + r * hnew).tanh()
    return (hx - n) * z + n
