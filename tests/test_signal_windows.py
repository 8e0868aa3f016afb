"""``torch.signal.windows``: every window equals PyTorch's (values, dtype, the node a
``requires_grad=True`` window ends in) for symmetric and periodic forms and short lengths,
and bad arguments raise PyTorch's errors."""
import pytest

from tests.differential import py, raises_as_torch, same_as_torch

WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 0.5}),
           ("gaussian", {"std": 0.9}), ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
           ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}),
           ("kaiser", {"beta": 0.9}), ("nuttall", {})]


@pytest.mark.parametrize("name,kwargs", WINDOWS, ids=[f"{n}{k or ''}" for n, k in WINDOWS])
def test_window_as_torch(name, kwargs):
    def run(L):
        fn = getattr(L.signal.windows, name)
        out = {}
        for M in (0, 1, 7):  # one length beyond the trivial ones: each costs compilations
            for sym in (True, False):
                w = fn(M, sym=sym, **kwargs)
                out[f"{M}{sym}"] = [py(w), str(w.dtype).rsplit(".", 1)[-1]]
        grad = fn(7, requires_grad=True, **kwargs)
        out["grad"] = [grad.requires_grad, grad.is_leaf]
        return out
    same_as_torch(run, tol=1e-5)


def test_exponential_center_as_torch():
    same_as_torch(lambda L: py(L.signal.windows.exponential(8, center=2.5, sym=False)))


def test_errors_as_torch():
    cases = [
        (lambda L: L.signal.windows.hann(-1), ValueError,
         "general_cosine requires non-negative window length, got M=-1"),  # as PyTorch's
        (lambda L: L.signal.windows.cosine(3, dtype=L.int32), ValueError,
         "cosine expects float32 or float64 dtypes, got: "),
        (lambda L: L.signal.windows.gaussian(3, std=0), ValueError,
         "Standard deviation must be positive, got: 0 instead."),
        (lambda L: L.signal.windows.exponential(3, tau=-1), ValueError,
         "Tau must be positive, got: -1 instead."),
        (lambda L: L.signal.windows.exponential(3, center=1.0), ValueError,
         "Center must be None for symmetric windows"),
        (lambda L: L.signal.windows.kaiser(3, beta=-1.0), ValueError,
         "beta must be non-negative, got: -1.0 instead."),
        (lambda L: L.signal.windows.general_cosine(3, a=[]), ValueError,
         "Coefficients cannot be empty"),
        (lambda L: L.signal.windows.general_cosine(3, a=1.0), TypeError,
         "Coefficients must be a list/tuple"),
    ]
    for call, exc, match in cases:
        raises_as_torch(call, exc, match)
