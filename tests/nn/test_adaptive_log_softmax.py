"""``nn.AdaptiveLogSoftmaxWithLoss`` against PyTorch with the same weights: forward output
and loss, ``log_prob``, ``predict``, gradients, structure and errors."""
import numpy as np
import pytest

from ..differential import py, raises_as_torch, same_as_torch

_rng = np.random.default_rng(21)
X = _rng.standard_normal((6, 16)).astype(np.float32)
TARGET = [0, 3, 5, 9, 14, 2]  # shortlist (< 4), first cluster (4..9), second (10..14)


def _model(L, head_bias=True):
    m = L.nn.AdaptiveLogSoftmaxWithLoss(16, 15, [4, 10], div_value=2.0, head_bias=head_bias)
    rng = np.random.default_rng(0)
    with L.no_grad():
        for _, p in sorted(m.named_parameters()):
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def _forward(L, x=X, target=TARGET):
    m = _model(L)
    t = L.tensor(x, requires_grad=True)
    out, loss = m(t, L.tensor(target))
    loss.backward()
    grads = [p.grad for _, p in sorted(m.named_parameters())]
    return py([out, loss, t.grad, grads, sorted(n for n, _ in m.named_parameters()),
               [tuple(p.shape) for _, p in sorted(m.named_parameters())]])


def test_forward_and_gradients_match_torch():
    same_as_torch(_forward, tol=1e-4)


def test_unbatched_matches_torch():
    same_as_torch(lambda L: _forward(L, X[0], 12), tol=1e-4)


def test_log_prob_and_predict_match_torch():
    def run(L):
        m = _model(L, head_bias=False)
        x = L.tensor(X * 3)
        lp = m.log_prob(x)
        return py([lp, lp.exp().sum(1), m.predict(x), m.predict(x[:2]), m.predict(x[3:4])])
    got = same_as_torch(run, tol=1e-4)
    np.testing.assert_allclose(got[1], 1.0, rtol=1e-5)


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []), ValueError,
     "cutoffs should be a sequence of length larger than 0"),
    (lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3]), ValueError,
     "cutoffs should be a sequence of unique, positive integers"),
    (lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]), ValueError,
     "each value is between 1 and n_classes-1"),
    (lambda L: _model(L)(L.ones(6, 16), L.tensor([0, 15, 1, 2, 3, 4])), RuntimeError,
     r"Target values should be in \[0, 14\], but values in range \[0, 15\] were found."),
    (lambda L: _model(L)(L.ones(5, 16), L.tensor(TARGET)), RuntimeError,
     "Input and target should have the same size in the batch dimension."),
    (lambda L: _model(L)(L.ones(16), L.tensor([[1]])), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
])
def test_errors_as_torch(call, exc, match):
    raises_as_torch(call, exc, match)
