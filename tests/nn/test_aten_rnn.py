"""``torch.lstm``/``gru``/``rnn_tanh``/``rnn_relu`` (flat weight lists, ATen's signatures)
against PyTorch: outputs, final states and gradients, padded and packed."""
import numpy as np
import pytest

from ..differential import py, same_as_torch

_rng = np.random.default_rng(8)
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
I, H, P, N, T = 3, 4, 2, 2, 5


def _params(kind, layers, dirs, bias, proj):
    out = []
    hidden = P if proj else H
    for layer in range(layers):
        for _ in range(dirs):
            size_in = I if layer == 0 else hidden * dirs
            shapes = [(GATES[kind] * H, size_in), (GATES[kind] * H, hidden)]
            shapes += [(GATES[kind] * H,)] * 2 if bias else []
            shapes += [(P, H)] if proj else []
            out += [(_rng.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]
    return out


CASES = [
    ("lstm", 1, 1, True, False, False),
    ("lstm", 2, 2, True, False, True),
    ("lstm", 1, 2, False, True, False),
    ("gru", 2, 1, True, False, True),
    ("gru", 1, 2, False, False, False),
    ("rnn_tanh", 2, 2, True, False, False),
    ("rnn_relu", 1, 1, False, False, True),
]
DATA = {c: (_params(*c[:4], c[4]), _rng.standard_normal((T, N, I)).astype(np.float32))
        for c in CASES}


def _run(L, case, packed):
    kind, layers, dirs, bias, proj, batch_first = case
    params, x = DATA[case]
    ps = [L.tensor(p, requires_grad=True) for p in params]
    hidden = P if proj else H
    h0 = L.tensor(np.full((layers * dirs, N, hidden), 0.1, np.float32))
    hx = (h0, L.zeros(layers * dirs, N, H)) if kind == "lstm" else h0
    fn = getattr(L, kind)
    xs = L.tensor(x.transpose(1, 0, 2).copy() if batch_first else x, requires_grad=True)
    if packed:
        seq = L.nn.utils.rnn.pack_padded_sequence(L.tensor(x), [5, 3])
        res = fn(seq.data, seq.batch_sizes, hx, ps, bias, layers, 0.0, False, dirs == 2)
    else:
        res = fn(xs, hx, ps, bias, layers, 0.0, False, dirs == 2, batch_first)
    sum(r.sum() for r in res).backward()
    return py([list(res), [p.grad for p in ps], None if packed else xs.grad])


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}l-{c[2]}d-b{int(c[3])}"
                                             f"-p{int(c[4])}-bf{int(c[5])}" for c in CASES])
def test_matches_torch(case):
    same_as_torch(lambda L: _run(L, case, False), tol=1e-4)


@pytest.mark.parametrize("case", [CASES[1], CASES[4]], ids=["lstm", "gru"])
def test_packed_matches_torch(case):
    same_as_torch(lambda L: _run(L, case, True), tol=1e-4)
