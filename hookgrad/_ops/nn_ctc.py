"""Connectionist temporal classification: ``nn.functional.ctc_loss`` and ``torch.ctc_loss``.

The loss is the negative log of the summed probability of every alignment of the target
with the input, computed by the forward (alpha) recursion over the blank-interleaved
target as one ``jax.lax.scan``; log-space sums use a large finite "minus infinity" so that
impossible alignments give finite intermediate values and clean gradients (a loss that
reaches it is infinite).

The gradient is JAX's vjp of that recursion plus ``exp(log_probs)`` over each sample's
valid steps: PyTorch's kernel returns the gradient with respect to the logits that
``log_softmax`` made ``log_probs`` from, which is what its users train through.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop

_NEG = -1e30  # "log 0": finite, so that sums of impossible paths keep finite gradients


def _extended(targets, blank):
    """The targets interleaved with blanks: ``(N, 2 S + 1)``."""
    n, s = targets.shape
    ext = jnp.full((n, 2 * s + 1), blank, targets.dtype)
    return ext.at[:, 1::2].set(targets)


def _nll(lp, targets, in_len, tgt_len, blank):
    """Each sample's negative log likelihood, ``lp`` ``(T, N, C)``, padded ``targets``."""
    ext = _extended(targets, blank)
    n, width = ext.shape
    pos = jnp.arange(width)
    # a skip over a blank is allowed between two different labels
    skip = (pos >= 2) & (ext != blank) & (ext != jnp.roll(ext, 2, axis=1))
    emit = jnp.take_along_axis(lp, jnp.broadcast_to(ext[None], (lp.shape[0], n, width)), axis=2)
    alpha0 = jnp.where(pos[None] < jnp.minimum(2, 2 * tgt_len[:, None] + 1), emit[0], _NEG)

    def step(alpha, inp):
        t, e = inp
        one = jnp.pad(alpha[:, :-1], ((0, 0), (1, 0)), constant_values=_NEG)
        two = jnp.where(skip, jnp.pad(alpha[:, :-2], ((0, 0), (2, 0)), constant_values=_NEG),
                        _NEG)
        new = jnp.logaddexp(jnp.logaddexp(alpha, one), two) + e
        return jnp.where((t < in_len)[:, None], jnp.maximum(new, _NEG), alpha), None

    steps = (jnp.arange(1, lp.shape[0]), emit[1:])
    alpha, _ = jax.lax.scan(step, alpha0, steps)
    last = jnp.take_along_axis(alpha, (2 * tgt_len)[:, None], axis=1)[:, 0]
    before = jnp.take_along_axis(alpha, jnp.maximum(2 * tgt_len - 1, 0)[:, None], axis=1)[:, 0]
    total = jnp.where(tgt_len > 0, jnp.logaddexp(last, before), last)
    return -total


@functools.partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _ctc(lp, targets, in_len, tgt_len, blank, zero_infinity):
    return _finish(_nll(lp, targets, in_len, tgt_len, blank), zero_infinity)


def _finish(nll, zero_infinity):
    inf = nll > -_NEG / 2
    return jnp.where(inf, 0.0 if zero_infinity else jnp.inf, nll).astype(nll.dtype)


def _ctc_fwd(lp, targets, in_len, tgt_len, blank, zero_infinity):
    nll, vjp = jax.vjp(lambda x: _nll(x, targets, in_len, tgt_len, blank), lp)
    return _finish(nll, zero_infinity), (lp, in_len, nll, vjp)


def _ctc_bwd(blank, zero_infinity, res, g):
    lp, in_len, nll, vjp = res
    inf = nll > -_NEG / 2
    g = jnp.where(inf, 0.0, g)
    grad, = vjp(g.astype(nll.dtype))
    valid = (jnp.arange(lp.shape[0])[:, None] < in_len[None])[..., None]
    grad = grad + jnp.where(valid, jnp.exp(lp) * g[None, :, None], 0.0)
    if not zero_infinity:  # PyTorch's kernel: NaN over the valid steps of an infinite loss
        grad = jnp.where(valid & inf[None, :, None], jnp.nan, grad)
    return grad.astype(lp.dtype), None, None, None


_ctc.defvjp(_ctc_fwd, _ctc_bwd)


def _ctc_op(lp, targets, in_len, tgt_len, blank, zero_infinity, unbatched):
    if unbatched:
        return _ctc(lp[:, None], targets[None], in_len[None], tgt_len[None], blank,
                    zero_infinity)[0]
    return _ctc(lp, targets, in_len, tgt_len, blank, zero_infinity)


CTC_LOSS = defop("ctc_loss", _ctc_op, "CtcLossBackward0", nondiff=(1, 2, 3))
# zero_infinity: PyTorch's last op replaces the infinite losses (a where)
CTC_LOSS_ZERO_INF = defop("ctc_loss_zero_infinity", _ctc_op, "WhereBackward0", nondiff=(1, 2, 3))


def _lengths(x):
    if isinstance(x, Tensor):
        return x
    from .._factory import tensor
    return tensor([int(v) for v in x]) if isinstance(x, (list, tuple)) else tensor(int(x))


def _padded(targets, tgt_len):
    """1-D concatenated targets as padded ``(N, S)`` rows (the lengths must be values)."""
    from .._factory import tensor
    lengths = [int(v) for v in np.asarray(tgt_len.numpy()).reshape(-1)]
    flat = np.asarray(targets.numpy())
    if sum(lengths) != flat.shape[0]:
        raise RuntimeError(f"Expected tensor to have size {sum(lengths)} at dimension 0, but got "
                           f"size {flat.shape[0]} for argument #2 'targets' (while checking "
                           "arguments for ctc_loss_allocate_outputs)")
    rows = np.zeros((len(lengths), max(lengths, default=0)), flat.dtype)
    start = 0
    for i, n in enumerate(lengths):
        rows[i, :n] = flat[start:start + n]
        start += n
    return tensor(rows)


def ctc_loss_unreduced(log_probs, targets, input_lengths, target_lengths, blank,
                       zero_infinity):
    """Each sample's loss (``(N,)``, or a scalar for unbatched ``(T, C)`` input)."""
    in_len, tgt_len = _lengths(input_lengths), _lengths(target_lengths)
    unbatched = log_probs.ndim == 2
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss(): expected log_probs to be 2-D (T, C) or 3-D (T, N, C), "
                           f"but got {log_probs.ndim}-D")
    n = 1 if unbatched else log_probs.shape[1]
    if not 0 <= blank < log_probs.shape[-1]:
        raise RuntimeError("blank must be in label range")
    if in_len.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tgt_len.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not unbatched and targets.ndim == 1:
        targets = _padded(targets, tgt_len)
    if unbatched:
        in_len, tgt_len = in_len.reshape(-1)[0], tgt_len.reshape(-1)[0]
    return apply(CTC_LOSS_ZERO_INF if zero_infinity else CTC_LOSS,
                 (log_probs, targets, in_len, tgt_len),
                 {"blank": int(blank), "zero_infinity": bool(zero_infinity),
                  "unbatched": unbatched})


def reduce_ctc(loss, target_lengths, reduction):
    if reduction == "mean":
        tl = _lengths(target_lengths).to(loss.dtype).clamp(min=1)
        return (loss / tl.reshape(loss.shape)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss of ``log_probs`` ``(T, N, C)`` (or
    unbatched ``(T, C)``, log-softmax outputs) against ``targets``: padded ``(N, S)`` or
    concatenated 1-D (``sum(target_lengths)``), given each sample's input and target length.

    ``reduction='mean'`` divides each loss by its target length, then averages over the
    batch. ``zero_infinity`` replaces infinite losses (no alignment fits) and their
    gradients by zeros.
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    loss = ctc_loss_unreduced(log_probs, targets, input_lengths, target_lengths, blank,
                              zero_infinity)
    return reduce_ctc(loss, target_lengths, reduction)
