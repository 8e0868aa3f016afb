"""``nn.functional.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and
``nn.LinearCrossEntropyOptions`` against PyTorch: losses and gradients (class indices,
probabilities, K-dimensional, weights, smoothing), the options' validation, the errors."""
import numpy as np
import pytest

import hookgrad

from ..differential import py, raises_as_torch, same_as_torch

_rng = np.random.default_rng(4)
X = _rng.standard_normal((5, 6)).astype(np.float32)
W = _rng.standard_normal((4, 6)).astype(np.float32)
WK = _rng.standard_normal((4, 3, 6)).astype(np.float32)
B = _rng.standard_normal(4).astype(np.float32)
T = [0, 3, 1, -100, 2]
PROBS = _rng.dirichlet(np.ones(4), 5).astype(np.float32)


def _run(L, w, target, **kw):
    x = L.tensor(X, requires_grad=True)
    weight = L.tensor(w, requires_grad=True)
    bias = L.tensor(B if w.ndim == 2 else B[:, None] * np.ones((1, 3), np.float32),
                    requires_grad=True)
    loss = L.nn.functional.linear_cross_entropy(x, weight, L.tensor(target), linear_bias=bias,
                                                **kw)
    loss.sum().backward()
    return py([loss, x.grad, weight.grad, bias.grad])


CASES = [
    ("indices", W, T, {}),
    ("sum_weighted", W, T, {"reduction": "sum", "weight": None}),
    ("none_smoothing", W, T, {"reduction": "none", "label_smoothing": 0.2}),
    ("ignore_index", W, [0, 3, 1, 2, 2], {"ignore_index": 2}),
    ("probabilities", W, PROBS, {}),
    ("k_dimensional", WK, [[0, 1, 3], [2, 2, 2], [1, 0, 0], [3, 3, 1], [0, 2, 1]], {}),
]


@pytest.mark.parametrize("name,w,target,kw", CASES, ids=[c[0] for c in CASES])
def test_functional_matches_torch(name, w, target, kw):
    same_as_torch(lambda L: _run(L, w, target, **kw), tol=1e-4)


def test_options_give_the_same_loss():
    def run(L):
        opts = L.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
        return _run(L, W, T, options=opts)
    same_as_torch(run, tol=1e-4)


def _module(L):
    m = L.nn.LinearCrossEntropyLoss(6, 4, out_features=(3,), bias=True, label_smoothing=0.1,
                                    weight=L.tensor([1.0, 2.0, 0.5, 1.0]))
    with L.no_grad():
        m.linear.weight.copy_(L.tensor(WK.reshape(12, 6)))
        m.linear.bias.copy_(L.tensor(np.arange(12, dtype=np.float32) / 10))
    loss = m(L.tensor(X), L.tensor(CASES[-1][2]))
    loss.backward()
    return py([loss, m.linear.weight.grad, m.linear.bias.grad, repr(m),
               sorted(n for n, _ in m.named_buffers())])


def test_module_matches_torch():
    same_as_torch(_module, tol=1e-4)


def test_options_ignored_warns():
    opts = hookgrad.nn.LinearCrossEntropyOptions()
    with pytest.warns(UserWarning, match="linear_cross_entropy: ``options`` ignored"):
        hookgrad.nn.functional.linear_cross_entropy(
            hookgrad.tensor(X), hookgrad.tensor(W), hookgrad.tensor(T), label_smoothing=0.1,
            options=opts)


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.nn.LinearCrossEntropyOptions(acc_policy="fast"), ValueError,
     "invalid acc_policy: 'fast'"),
    (lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"), ValueError,
     "invalid chunking_method: 'aspect_ratio:0'"),
    (lambda L: L.nn.LinearCrossEntropyOptions(batch_chunk_size=0), ValueError,
     "batch_chunk_size must be positive int or None, got 0"),
    (lambda L: L.nn.LinearCrossEntropyOptions(acc_dtype=L.int32), ValueError,
     "acc_dtype must be one of"),
    (lambda L: L.nn.functional.linear_cross_entropy(L.ones(2, 2, 6), L.tensor(W), L.tensor(T)),
     RuntimeError, "expected input with dimensionality 1 or 2, got 3"),
    (lambda L: L.nn.functional.linear_cross_entropy(L.ones(5, 5), L.tensor(W), L.tensor(T)),
     RuntimeError, r"expected equal input and linear_weight last dimensions \(in_features\), "
                   "got 5 and 6, respectively"),
    (lambda L: L.nn.functional.linear_cross_entropy(L.ones(6), L.tensor(WK), L.tensor(1)),
     RuntimeError, "K-dimensional loss defined by linear_weight shape"),
    (lambda L: L.nn.functional.linear_cross_entropy(L.tensor(X), L.tensor(W), L.tensor(PROBS),
                                                    ignore_index=0),
     RuntimeError, "ignore_index cannot be specified when target contains probabilities"),
    (lambda L: L.nn.LinearCrossEntropyLoss(6, 4, label_smoothing=1.5), RuntimeError,
     r"expected label_smoothing to be in range \[0, 1\], got 1.5"),
])
def test_errors_as_torch(call, exc, match):
    raises_as_torch(call, exc, match)


def test_options_are_frozen():
    with pytest.raises(dataclasses_error()):
        hookgrad.nn.LinearCrossEntropyOptions().acc_policy = "compact"


def dataclasses_error():
    import dataclasses
    return dataclasses.FrozenInstanceError
