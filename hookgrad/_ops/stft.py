"""The short-time Fourier transform and its inverse (``stft``, ``istft``), composed as
PyTorch composes them: frames of the (padded) signal, windowed, through ``spectral``'s
transforms; the inverse adds the frames back (``UnfoldBackwardBackward0``) and divides by
the window's overlap.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _errors
from .._tensor import Tensor
from .dispatch import apply
from .registry import FUNCTIONS, defop, export
from . import complex_numbers, nn_pad_fold, spectral

# PyTorch transposes its frames, and squeezes a 1-D signal's batch, in place
# (``transpose_``, ``squeeze_``): the nodes are TransposeBackward1 and SqueezeBackward4
_SWAP = defop("stft_transpose", lambda x: jnp.swapaxes(x, -1, -2), "TransposeBackward1", ())
_SQUEEZE = defop("stft_squeeze", lambda x: x[0], "SqueezeBackward4", ())


def _overlap_add(frames, hop, length):
    """Frames ``(B, n_frames, n_fft)`` added into signals ``(B, length)``, frame ``i`` at
    ``i * hop`` (PyTorch's ``unfold_backward``)."""
    n_frames, n_fft = frames.shape[-2:]
    idx = (np.arange(n_frames)[:, None] * hop + np.arange(n_fft)[None, :]).reshape(-1)
    out = jnp.zeros(frames.shape[:-2] + (length,), frames.dtype)
    return out.at[..., idx].add(frames.reshape(frames.shape[:-2] + (-1,)))


OVERLAP_ADD = defop("overlap_add", _overlap_add, "UnfoldBackwardBackward0", ())

_WARNED = set()  # PyTorch's TORCH_WARN_ONCE


def _warn_once(key, message):
    if key not in _WARNED:
        _WARNED.add(key)
        _errors.warn(message, UserWarning)


def _call(fname, input, args):
    """PyTorch's prefix of an stft/istft error: the call with its arguments."""
    kind = _dtype.legacy_type_name(input.dtype.np) if fname == "stft" else \
        f"CPU{_dtype.torch_kind(input.dtype.np)}Type"
    shape = ", ".join(str(s) for s in input.shape)
    text = ", ".join(f"{k}={_arg(v)}" for k, v in args.items())
    return f"{fname}({kind}[{shape}], {text})"


def _arg(v):
    if isinstance(v, Tensor):
        return f"{_dtype.legacy_type_name(v.dtype.np)}{{{list(v.shape)}}}"
    return int(v) if isinstance(v, bool) else v


def _window(window, n_fft, win_length, like, fail, wrong_shape):
    """The window padded (centred) to ``n_fft``; a rectangle of ``win_length`` when None.
    ``wrong_shape`` is the message of a window that is not 1-D of ``win_length``."""
    if window is None:
        w = Tensor._wrap(jnp.ones(win_length, _dtype.to_jax(like.dtype.to_real())))
    else:
        if window.ndim != 1 or window.shape[0] != win_length:
            fail(wrong_shape)
        w = window
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = FUNCTIONS["constant_pad_nd"](w, [left, n_fft - win_length - left])
    return w


def _lengths(n_fft, hop_length, win_length):
    hop = hop_length if hop_length is not None else n_fft // 4
    win = win_length if win_length is not None else n_fft
    return hop, win


def _check_stft(input, n_fft, hop, win, fail):
    """PyTorch's checks of stft's signal and lengths."""
    if input.ndim not in (1, 2):
        fail("expected a 1D or 2D tensor")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")


@export
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None) -> Tensor:
    """``stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
    pad_mode='reflect', normalized=False, onesided=None, return_complex=None,
    align_to_window=None)``: the short-time Fourier transform, frequencies by frames
    (``return_complex=True``; ``False`` gives the deprecated real pairs)."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    hop, win = _lengths(n_fft, hop_length, win_length)
    if center:
        pad = n_fft // 2
        x = input.view([1] * (3 - input.ndim) + list(input.shape))
        x = nn_pad_fold.pad(x, [pad, pad], pad_mode)
        input = x.view(x.shape[-input.ndim:]) if input.ndim in (1, 2) else x
    complex_input = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    args = {"n_fft": n_fft, "hop_length": hop, "win_length": win, "window": window,
            "normalized": normalized, "onesided": onesided,
            "return_complex": return_complex, "align_to_window": align_to_window}

    def fail(msg):
        raise RuntimeError(f"{_call('stft', input, args)} : {msg}")
    if return_complex is None:
        if not complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True "
                               "in a future PyTorch release.")
        return_complex = True
    elif not return_complex:
        _warn_once("return_complex", "stft with return_complex=False is deprecated. In a "
                   "future pytorch release, stft will return complex tensors for all "
                   "inputs, and return_complex=False will raise an error.\nNote: you can "
                   "still call torch.view_as_real on the complex output to recover the old "
                   "return format.")
    _check_stft(input, n_fft, hop, win, fail)
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if window is None:
        _warn_once("window", "A window was not provided. A rectangular window will be "
                   "applied,which is known to cause spectral leakage. Other windows such as "
                   "torch.hann_window or torch.hamming_window are recommended to reduce "
                   "spectral leakage.To suppress this warning and use a rectangular window, "
                   "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    w = _window(window, n_fft, win, x, fail,
                f"expected a 1D window tensor of size equal to win_length={win}, but got "
                f"window with size {list(window.shape) if window is not None else []}")
    if align_to_window and win < n_fft:  # frames start where their windows start
        left = (n_fft - win) // 2
        x = FUNCTIONS["constant_pad_nd"](x, [left, n_fft - win - left])
    frames = x.unfold(-1, n_fft, hop)
    if window is not None or win < n_fft:
        frames = frames * w
    onesided = (not complex_input) if onesided is None else onesided
    if onesided and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    if frames.dtype.is_complex:
        out = spectral.c2c(frames, (2,), norm, True)
    else:
        out = spectral.r2c(frames, (2,), norm, onesided)
    out = apply(_SWAP, (out,))
    if input.ndim == 1:
        out = apply(_SQUEEZE, (out,))
    return out if return_complex else complex_numbers.view_as_real(out)


def _check_istft(input, x, n_fft, hop, win, window, onesided, return_complex, fail):
    """PyTorch's checks of istft's arguments; the ``onesided`` that applies."""
    if input.ndim not in (2, 3):
        # PyTorch counts the dimensions of the real pairs (view_as_real)
        fail(f"expected a tensor with 3 or 4 dimensions, but got {input.ndim + 1}")
    complex_window = window is not None and window.dtype.is_complex
    onesided = (x.shape[-2] != n_fft) if onesided is None else onesided
    if onesided:
        if return_complex or complex_window:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        if x.shape[-2] != n_fft // 2 + 1:
            fail(f"expected the frequency dimension (3rd to the last) of the input tensor to "
                 f"match n_fft / 2 + 1 when onesided=True, but got {x.shape[-2]}")
    elif x.shape[-2] != n_fft:
        fail(f"expected the frequency dimension (3rd to the last) of the input tensor to "
             f"match n_fft when onesided=False, but got {x.shape[-2]}")
    if hop <= 0 or hop > win:
        fail("expected 0 < hop_length <= win_length")
    if win <= 0 or win > n_fft:
        fail("expected 0 < win_length <= n_fft")
    return onesided


@export
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False) -> Tensor:
    """``istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
    normalized=False, onesided=None, length=None, return_complex=False)``: the inverse of
    :func:`stft`, the signal by overlap-add of the inverse transforms of its frames."""
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop, win = _lengths(n_fft, hop_length, win_length)
    args = {"n_fft": n_fft, "hop_length": hop, "win_length": win, "window": window,
            "center": center, "normalized": normalized, "onesided": onesided,
            "length": length, "return_complex": return_complex}

    def fail(msg, sep=" : "):
        raise RuntimeError(f"{_call('istft', input, args)}{sep}{msg}")
    x = input if input.ndim == 3 else input.unsqueeze(0)
    onesided = _check_istft(input, x, n_fft, hop, win, window, onesided, return_complex,
                            fail)
    if window is None:
        _warn_once("istft window", "A window was not provided. A rectangular window will be "
                   "applied.Please provide the same window used by stft to make the "
                   "inversion lossless.To suppress this warning and use a rectangular "
                   "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    w = _window(window, n_fft, win, x, fail,
                "Invalid window shape. window has to be 1D and length of `win_length`")
    frames = x.transpose(1, 2)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        y = spectral.ifft(frames, n_fft, -1, norm)
    else:  # a real signal: PyTorch reads the first half of a two-sided spectrum
        if not onesided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        y = spectral.irfft(frames, n_fft, -1, norm)
    # as PyTorch's: the window and its overlap envelope keep a leading dim of 1, which is
    # what saved-tensor hooks see, and the envelope is differentiable in the window
    y = y * w.view(1, 1, n_fft)
    n_frames = x.shape[-1]
    expected = n_fft + hop * (n_frames - 1)
    y = apply(OVERLAP_ADD, (y,), {"hop": hop, "length": expected})
    env = w.pow(2).expand(1, n_frames, n_fft)
    env = apply(OVERLAP_ADD, (env,), {"hop": hop, "length": expected})
    start = n_fft // 2 if center else 0
    end = expected - n_fft // 2 if center else expected
    if length is not None:
        end = start + length
    if end > expected:
        _warn_once("istft length", "The length of signal is shorter than the length "
                   "parameter. Result is being padded with zeros in the tail. Please check "
                   "your center and hop_length settings.")
        end = expected
    y = y.narrow(-1, start, end - start)
    env = env.narrow(-1, start, end - start)
    low = env.abs().min()._data
    # NOTE: read eagerly only; inside hookgrad.compile a zero overlap gives inf/nan, as
    # the linalg checks that cannot read a traced value
    if not isinstance(low, jax.core.Tracer) and float(low) < 1e-11:
        # PyTorch's message prints its check's boolean tensor
        fail("window overlap add min: 1\n[ CPUBoolType{} ]", " ")
    y = y / env
    if length is not None and y.shape[-1] < length:
        y = FUNCTIONS["constant_pad_nd"](y, [0, length - y.shape[-1]])
    return y.squeeze(0) if input.ndim == 2 else y
