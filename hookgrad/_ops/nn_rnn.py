"""Recurrent-layer ops behind ``hookgrad.nn.RNN``/``LSTM``/``GRU`` and ``nn.utils.rnn``.

One layer and direction of a recurrent network is one op: the input projection for every
step at once, then the recurrence as one ``jax.lax.scan`` (one compiled program per layer
shape; its backward is JAX's vjp of the scan). Packed sequences enter as their packed
``data`` with the batch sizes as a static argument: the op unpacks, masks the steps past
each sequence's end (the state is carried unchanged there, so the final state is the one
at the last valid step, in both directions) and packs the output again.

Gate orders are PyTorch's: LSTM ``i, f, g, o``; GRU ``r, z, n`` with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .dispatch import apply
from .registry import defop


def _steps(batch_sizes):
    """Static (time, batch) positions of the packed rows, in packed order."""
    t_idx = np.concatenate([np.full(b, t, np.int32) for t, b in enumerate(batch_sizes)])
    b_idx = np.concatenate([np.arange(b, dtype=np.int32) for b in batch_sizes])
    return t_idx, b_idx


def _unpack(data, batch_sizes):
    """Packed ``(N, *)`` rows as padded ``(T, B, *)`` (zeros past the ends) and the
    ``(T, B)`` validity mask."""
    t_idx, b_idx = _steps(batch_sizes)
    shape = (len(batch_sizes), batch_sizes[0]) + data.shape[1:]
    padded = jnp.zeros(shape, data.dtype).at[t_idx, b_idx].set(data)
    mask = np.arange(batch_sizes[0])[None, :] < np.asarray(batch_sizes)[:, None]
    return padded, mask


def _cell(mode, w_hh, b_hh, w_hr):
    """``step(h, c, gi) -> (h', c')`` of one mode, ``gi`` the input projection."""
    def hidden(h):
        gh = h @ w_hh.T
        return gh if b_hh is None else gh + b_hh

    def step(h, c, gi):
        if mode == "RNN_TANH":
            return jnp.tanh(gi + hidden(h)), None
        if mode == "RNN_RELU":
            return jax.nn.relu(gi + hidden(h)), None
        if mode == "LSTM":
            i, f, g, o = jnp.split(gi + hidden(h), 4, axis=-1)
            c2 = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h2 = jax.nn.sigmoid(o) * jnp.tanh(c2)
            return (h2 if w_hr is None else h2 @ w_hr.T), c2
        xr, xz, xn = jnp.split(gi, 3, axis=-1)
        hr, hz, hn = jnp.split(hidden(h), 3, axis=-1)
        r = jax.nn.sigmoid(xr + hr)
        z = jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        return (1 - z) * n + z * h, None
    return step


def _rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, w_hr, mode, reverse, batch_first,
               batch_sizes):
    """One layer and direction: ``(output, h_n)`` or, for LSTM, ``(output, h_n, c_n)``.

    ``x`` is ``(T, B, I)`` (``(B, T, I)`` when ``batch_first``) or, with ``batch_sizes``,
    packed ``(N, I)``; the output has the same layout.
    """
    if batch_sizes is not None:
        xs, mask = _unpack(x, batch_sizes)
    else:
        xs, mask = (jnp.swapaxes(x, 0, 1) if batch_first else x), None
    gi = xs @ w_ih.T
    if b_ih is not None:
        gi = gi + b_ih
    cell = _cell(mode, w_hh, b_hh, w_hr)

    def step(carry, inp):
        h, c = carry
        g, m = inp
        h2, c2 = cell(h, c, g)
        if m is not None:  # past a sequence's end: keep its state, output zeros
            m = m[:, None]
            h2 = jnp.where(m, h2, h)
            c2 = None if c is None else jnp.where(m, c2, c)
            return (h2, c2), jnp.where(m, h2, 0)
        return (h2, c2), h2

    (h, c), ys = jax.lax.scan(step, (h0, c0), (gi, mask), reverse=reverse)
    if batch_sizes is not None:
        ys = ys[_steps(batch_sizes)]
    elif batch_first:
        ys = jnp.swapaxes(ys, 0, 1)
    return (ys, h) if c is None else (ys, h, c)


def _pack_padded(x, lengths, batch_first):
    """Rows of padded ``x`` at the valid (time, batch) positions, time-major."""
    t_idx, b_idx = _steps(_batch_sizes(lengths))
    return x[b_idx, t_idx] if batch_first else x[t_idx, b_idx]


def _pad_packed(data, batch_sizes, total_length, padding_value):
    t_idx, b_idx = _steps(batch_sizes)
    shape = (total_length, batch_sizes[0]) + data.shape[1:]
    return jnp.full(shape, padding_value, data.dtype).at[t_idx, b_idx].set(data)


def _batch_sizes(lengths):
    """Sorted (decreasing) lengths -> how many sequences are still running at each step."""
    lengths = np.asarray(lengths)
    return tuple(int((lengths > t).sum()) for t in range(int(lengths[0])))


# NOTE: PyTorch's CPU LSTM records one MkldnnRnnLayerBackward0 per layer and direction
# (edges: input, w_ih, w_hh, b_ih, b_hh, h_0, c_0); the same name is used for every mode
# here, where PyTorch's CPU RNN/GRU record a node per elementary op.
RNN_LAYER = defop("rnn_layer", _rnn_layer, "MkldnnRnnLayerBackward0")
PACK_PADDED = defop("pack_padded_sequence", _pack_padded, "PackPaddedSequenceBackward0", save=())
# PyTorch writes into a padded buffer (CopySlices); here one op
PAD_PACKED = defop("pad_packed_sequence", _pad_packed, "CopySlices", save=())


def rnn_layers(x, h0, c0, weights, mode, num_layers, bidirectional, batch_first, batch_sizes,
               dropout, train):
    """A whole recurrent network: ``(output, h_n, c_n)`` (``c_n`` None but for LSTM).

    ``weights`` holds ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` (absent ones None) per layer and
    direction, in PyTorch's order; ``h0``/``c0`` are ``(layers * directions, N, H)``;
    ``dropout`` applies between layers in training.
    """
    from .nn_layers import dropout as _dropout
    from .stacking import cat, stack
    dirs = 2 if bidirectional else 1
    statics = {"mode": mode, "batch_first": bool(batch_first), "batch_sizes": batch_sizes}
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[k]
            res = apply(RNN_LAYER, (x, w_ih, w_hh, b_ih, b_hh, h0[k],
                                    None if c0 is None else c0[k], w_hr),
                        dict(statics, reverse=d == 1))
            outs.append(res[0])
            hs.append(res[1])
            if c0 is not None:
                cs.append(res[2])
        x = outs[0] if dirs == 1 else cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            x = _dropout(x, dropout, training=True)
    return x, stack(hs, 0), (stack(cs, 0) if cs else None)
