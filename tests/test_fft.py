"""``torch.fft`` and ``stft``/``istft`` against PyTorch: values, gradients of real losses,
node chains, the ``n``/``s``/``dim``/``norm`` arguments, ``out=``, errors and warnings.
Each transform also has an op row (tests/ops/_op_table.py, "branch complex")."""
import warnings

import numpy as np
import pytest

import hookgrad as hg
from tests.differential import py, raises, raises_as_torch, same_as_torch
from tests.ops.test_indexing import _chain as chain

SIG = np.linspace(-1.5, 2.0, 24, dtype=np.float32).reshape(4, 6) ** 2 - 1


def real_loss(L, y):
    """A real loss of a real or complex result that reads every part of it."""
    r = L.view_as_real(y.resolve_conj()) if y.is_complex() else y
    return (r * L.linspace(-1, 1, r.numel()).reshape(r.shape)).sum()


CALLS = {
    "fft n pad": lambda L, x, z: L.fft.fft(z, n=9),
    "fft n trim dim 0 ortho": lambda L, x, z: L.fft.fft(z, n=2, dim=0, norm="ortho"),
    "fft of real": lambda L, x, z: L.fft.fft(x, norm="forward"),
    "ifft of real": lambda L, x, z: L.fft.ifft(x, n=8),
    "ifft": lambda L, x, z: L.fft.ifft(z, dim=-2),
    "fft2 s": lambda L, x, z: L.fft.fft2(z, s=(3, 8)),
    "ifft2": lambda L, x, z: L.fft.ifft2(z, norm="ortho"),
    "fftn dims": lambda L, x, z: L.fft.fftn(z, s=(5, 2), dim=(1, 0)),
    "fftn s only": lambda L, x, z: L.fft.fftn(x, s=(4,)),
    "ifftn": lambda L, x, z: L.fft.ifftn(z, dim=[0]),
    "rfft": lambda L, x, z: L.fft.rfft(x, n=7, dim=0),
    "irfft": lambda L, x, z: L.fft.irfft(z, norm="ortho"),
    "irfft n": lambda L, x, z: L.fft.irfft(z, n=9, dim=0),
    "irfft of real": lambda L, x, z: L.fft.irfft(x),
    "rfft2": lambda L, x, z: L.fft.rfft2(x, s=(4, 5), norm="forward"),
    "irfft2": lambda L, x, z: L.fft.irfft2(z, s=(4, 7)),
    "rfftn": lambda L, x, z: L.fft.rfftn(x, dim=(0,)),
    "irfftn": lambda L, x, z: L.fft.irfftn(z, s=(2, 4), dim=(1, 0)),
    "hfft": lambda L, x, z: L.fft.hfft(z, n=7, norm="forward"),
    "ihfft": lambda L, x, z: L.fft.ihfft(x, n=5),
    "hfft2": lambda L, x, z: L.fft.hfft2(z),
    "ihfft2": lambda L, x, z: L.fft.ihfft2(x, s=(3, 6), norm="ortho"),
    "hfftn": lambda L, x, z: L.fft.hfftn(z, dim=(1, 0)),
    "ihfftn": lambda L, x, z: L.fft.ihfftn(x, dim=(0,)),
    "fftshift": lambda L, x, z: L.fft.fftshift(z, dim=(0, 1)),
    "ifftshift": lambda L, x, z: L.fft.ifftshift(x),
    "fftshift dim": lambda L, x, z: L.fft.fftshift(x, dim=-1),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=list(CALLS))
def test_transform_values_gradients_and_nodes(call):
    def f(L):
        x = L.tensor(SIG, requires_grad=True)
        z = L.complex(x, x.flip(0) * 0.5)
        y = call(L, x, z)
        real_loss(L, y).backward()
        return [str(y.dtype).rpartition(".")[2], list(y.shape),
                py(L.view_as_real(y.resolve_conj()) if y.is_complex() else y),
                py(x.grad), chain(y)]
    same_as_torch(f, tol=1e-4, names=False)


def test_double_and_integer_inputs_and_out():
    def f(L):
        d = L.fft.fft(L.tensor(SIG).double())
        i = L.fft.rfft(L.arange(6))
        out = L.empty(0, dtype=L.complex64)
        r = L.fft.fft(L.tensor(SIG), out=out)
        return [str(d.dtype).rpartition(".")[2], str(i.dtype).rpartition(".")[2],
                py(L.view_as_real(i)), r is out, list(out.shape)]
    same_as_torch(f, tol=1e-4)


def test_frequencies():
    def f(L):
        return [py(L.fft.fftfreq(5)), py(L.fft.fftfreq(6, d=0.25)), py(L.fft.rfftfreq(7, 2.0)),
                str(L.fft.fftfreq(4, dtype=L.float64).dtype).rpartition(".")[2],
                L.fft.rfftfreq(4, requires_grad=True).requires_grad,
                py(L.fft.fftfreq(3, out=L.empty(3)))]
    same_as_torch(f)


@pytest.mark.parametrize("call, exc, match", [
    (lambda L: L.fft.fft(L.ones(4), norm="bad"), RuntimeError,
     'Invalid normalization mode: "bad"'),
    (lambda L: L.fft.fft(L.ones(4), n=0), RuntimeError,
     r"Invalid number of data points \(0\) specified"),
    (lambda L: L.fft.irfft(L.ones(1, dtype=L.complex64)), RuntimeError,
     r"Invalid number of data points \(0\) specified"),
    (lambda L: L.fft.fft(L.ones(2, 4), dim=3), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)"),
    (lambda L: L.fft.rfft(L.ones(4, dtype=L.complex64)), RuntimeError,
     "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda L: L.fft.ihfft(L.ones(4, dtype=L.complex64)), RuntimeError,
     "ihfft expects a real input tensor, but got ComplexFloat"),
    (lambda L: L.fft.fftn(L.ones(2, 4), s=(3,), dim=(0, 1)), RuntimeError,
     "When given, dim and shape arguments must have the same length"),
    (lambda L: L.fft.fftn(L.ones(2, 4), dim=(1, 1)), RuntimeError, "FFT dims must be unique"),
])
def test_errors_are_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)


def test_fft_is_a_module_at_pytorchs_path():
    import importlib
    mod = importlib.import_module("hookgrad.fft")
    assert hg.fft is mod and hg.fft.Tensor is hg.Tensor
    with pytest.raises(AttributeError, match="hookgrad does not implement torch.fft.nope yet"):
        hg.fft.nope  # noqa: B018


# --------------------------------------------------------------------------- stft, istft

STFTS = {
    "hann hop 2": dict(n_fft=8, hop_length=2, window="hann"),
    "1-D normalized": dict(n_fft=8, window="hann", normalized=True, one_d=True),
    "rectangle no centre": dict(n_fft=8, center=False, window="ones"),
    "short window constant pad": dict(n_fft=8, hop_length=3, win_length=6, window="hann6",
                                      pad_mode="constant"),
    "aligned to window": dict(n_fft=8, hop_length=2, win_length=4, window="hann4",
                              center=False, align_to_window=True),
    "two-sided": dict(n_fft=8, window="hann", onesided=False),
}
WINDOWS = {"hann": lambda L: L.hann_window(8), "hann6": lambda L: L.hann_window(6),
           "hann4": lambda L: L.hann_window(4), "ones": lambda L: L.ones(8)}


def _stft(L, x, kw):
    kw = dict(kw)
    win = WINDOWS[kw.pop("window")](L)
    if kw.pop("one_d", False):
        x = x[1]
    return L.stft(x, window=win, return_complex=True, **kw), win


@pytest.mark.parametrize("kw", STFTS.values(), ids=list(STFTS))
def test_stft_and_its_inverse(kw):
    def f(L):
        x = L.tensor(np.sin(np.linspace(0, 9, 80, dtype=np.float32)).reshape(2, 40),
                     requires_grad=True)
        s, win = _stft(L, x, kw)
        real_loss(L, s).backward(retain_graph=True)
        out = [list(s.shape), py(L.view_as_real(s)), py(x.grad), chain(s)[:2]]
        if kw.get("center", True):  # the inverse needs the overlap a centred stft gives
            x.grad = None
            n = {k: kw[k] for k in ("hop_length", "win_length", "onesided") if k in kw}
            y = L.istft(s, kw["n_fft"], window=win, length=x.shape[-1] - 3, **n)
            real_loss(L, y).backward()
            out += [py(y), py(x.grad), chain(y)[:3]]
        return out
    same_as_torch(f, tol=1e-4, names=False)


def test_stft_of_complex_signals_and_its_method_forms():
    def f(L):
        x = L.tensor(SIG.reshape(-1))
        z = L.complex(x, x.flip(0))
        s = z.stft(8, hop_length=4, window=L.hann_window(8))
        y = L.istft(s, 8, hop_length=4, window=L.hann_window(8), onesided=False,
                    return_complex=True)
        r = s.istft(8, hop_length=4, window=L.hann_window(8), onesided=False)
        return [list(s.shape), py(L.view_as_real(s)), py(L.view_as_real(y)), py(r)]
    same_as_torch(f, tol=1e-4)


def test_stft_warnings_are_pytorchs():
    def f(L):
        x = L.tensor(SIG.reshape(-1))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = L.stft(x, 8, window=L.hann_window(8), return_complex=False)
            L.stft(x, 8, return_complex=True)
        return [list(old.shape), str(old.dtype).rpartition(".")[2],
                sorted(str(w.message).split(" (Triggered")[0][:40] for w in caught)]
    # hookgrad warns once per process, as PyTorch's TORCH_WARN_ONCE: compare one run each
    from hookgrad._ops import stft
    stft._WARNED.clear()
    got = same_as_torch(f)
    assert len(got[2]) == 2


@pytest.mark.parametrize("call, match", [
    (lambda L: L.stft(L.ones(40), 8), "stft requires the return_complex parameter be given "
                                      "for real inputs"),
    (lambda L: L.stft(L.ones(2, 2, 40), 8, return_complex=True),
     r"n_fft=8, hop_length=2, .* : expected a 1D or 2D tensor"),
    (lambda L: L.stft(L.ones(40), 8, hop_length=0, return_complex=True),
     "expected hop_length > 0, but got hop_length=0"),
    (lambda L: L.stft(L.ones(40), 50, center=False, return_complex=True),
     "expected 0 < n_fft < 40, but got n_fft=50"),
    (lambda L: L.stft(L.ones(40), 8, win_length=9, return_complex=True),
     "expected 0 < win_length <= n_fft, but got win_length=9"),
    (lambda L: L.stft(L.ones(40), 8, window=L.ones(7), return_complex=True),
     r"expected a 1D window tensor of size equal to win_length=8, but got window with size "
     r"\[7\]"),
    (lambda L: L.stft(L.ones(40), 8, return_complex=True, align_to_window=True),
     "stft align_to_window should only be set when center = false"),
    (lambda L: L.istft(L.ones(5, 21), 8), "istft requires a complex-valued input tensor"),
    (lambda L: L.istft(L.ones(5, 21, dtype=L.complex64), 8, window=L.zeros(8)),
     r"window overlap add min: 1"),
    (lambda L: L.istft(L.ones(5, 21, dtype=L.complex64), 8, window=L.ones(8),
                       return_complex=True),
     "Cannot have onesided output if window or input is complex"),
    (lambda L: L.istft(L.ones(5, 21, dtype=L.complex64), 8, window=L.ones(8),
                       onesided=False),
     r"expected the frequency dimension \(3rd to the last\) of the input tensor to match "
     r"n_fft when onesided=False, but got 5"),
])
def test_stft_errors_are_pytorchs(call, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_as_torch(call, RuntimeError, match)
    assert raises(call, hg)["raises"] == "RuntimeError"
