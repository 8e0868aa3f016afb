"""Random small programs of chained ops, run under PyTorch and hookgrad on the same data:
every intermediate value, the gradients of the inputs and the recorded graph (node names
and ``next_functions`` edges, walked from the output) must agree.

A fixed small sample of programs runs by default; ``HOOKGRAD_SLOW=1`` runs many more.
"""
import os

import numpy as np
import pytest

import hookgrad as hg

torch = pytest.importorskip("torch")

N_PROGRAMS = 200 if os.environ.get("HOOKGRAD_SLOW") == "1" else 12
STEPS = 8

# Each op takes the library and tensors of shape (3, 4) (``w`` is (4, 4)) and returns one
# of shape (3, 4). Domains are kept safe (log of a positive value, division by >= 1).
UNARY = [
    ("sin", lambda L, a: a.sin()), ("exp", lambda L, a: (a * 0.5).exp()),
    ("tanh", lambda L, a: L.tanh(a)), ("sigmoid", lambda L, a: a.sigmoid()),
    ("relu", lambda L, a: L.relu(a)), ("neg", lambda L, a: -a), ("abs", lambda L, a: a.abs()),
    ("log", lambda L, a: (a * a + 1).log()), ("sqrt", lambda L, a: (a * a + 0.5).sqrt()),
    ("rsqrt", lambda L, a: L.rsqrt(a.abs() + 1)), ("square", lambda L, a: a ** 2),
    ("erf", lambda L, a: a.erf()), ("clamp", lambda L, a: a.clamp(-0.5, 0.5)),
    ("softmax", lambda L, a: a.softmax(1)), ("log_softmax", lambda L, a: L.log_softmax(a, 0)),
    ("center", lambda L, a: a - a.mean(1, keepdim=True)),
    ("normalize", lambda L, a: a / (a.norm(dim=1, keepdim=True) + 1)),
    ("std", lambda L, a: a * a.std(0)), ("cumsum", lambda L, a: a.cumsum(1)),
    ("flip", lambda L, a: a.flip(0)), ("roll", lambda L, a: a.roll(1, 1)),
    ("tril", lambda L, a: a.tril()), ("transpose2", lambda L, a: a.t().t()),
    ("reshape", lambda L, a: a.reshape(4, 3).reshape(3, 4)),
    ("index", lambda L, a: a[L.tensor([2, 0, 1])]),
    ("slice", lambda L, a: a[:, 1:].sum(1, True) * a),
    ("gather", lambda L, a: a.gather(1, L.tensor([[3, 2, 1, 0]] * 3))),
    ("max", lambda L, a: a - a.max(1, keepdim=True).values),
    ("amax", lambda L, a: a * a.amax()), ("logsumexp", lambda L, a: a - a.logsumexp(1, True)),
    ("cat_split", lambda L, a: L.cat(a.split(2, 1)[::-1], 1)),
    ("stack_unbind", lambda L, a: L.stack(a.unbind(0)[::-1])),
    ("expand", lambda L, a: a.sum(0).expand(3, 4)),
    ("where", lambda L, a: L.where(a > 0, a, a * 0.1)),
    ("masked_fill", lambda L, a: a.masked_fill(a < -1, 0.0)),
    ("inplace_sin", lambda L, a: a.clone().sin_()),
    ("inplace_mul", lambda L, a: a.clone().mul_(2).add_(1)),
    ("setitem", lambda L, a: _set_row(a)),
    ("prod", lambda L, a: a * (a.tanh() + 2).prod(1, keepdim=True)),
]
BINARY = [
    ("add", lambda L, a, b: a + b), ("sub", lambda L, a, b: L.sub(a, b, alpha=2)),
    ("mul", lambda L, a, b: a * b), ("div", lambda L, a, b: a / (b * b + 1)),
    ("maximum", lambda L, a, b: L.maximum(a, b)), ("minimum", lambda L, a, b: a.minimum(b)),
    ("lerp", lambda L, a, b: L.lerp(a, b, 0.3)), ("where2", lambda L, a, b: L.where(a > b, a, b)),
    ("pow", lambda L, a, b: (a.abs() + 0.5) ** b.tanh()), ("atan2", lambda L, a, b: L.atan2(a, b)),
    ("scatter_add", lambda L, a, b: a.scatter_add(1, L.tensor([[0, 1]] * 3), b[:, :2])),
]
MATRIX = [
    ("matmul", lambda L, a, w: a @ w), ("mm", lambda L, a, w: L.mm(a, w.t())),
    ("einsum", lambda L, a, w: L.einsum("ij,jk->ik", a, w)),
    ("bmm", lambda L, a, w: L.bmm(a[None], w[None])[0]),
]


# ops hookgrad records as one node where PyTorch records a chain (see the op table's
# "shallow" rows): their programs compare values and gradients, not graphs
COMPOSITE = {("m", 2)}


def _set_row(a):
    b = a.clone()
    b[1] = a[0] * 2
    return b


def _program(seed):
    """A list of (kind, op index, operand positions) over a growing pool of tensors."""
    rng = np.random.default_rng(seed)
    steps = []
    pool = 2  # x and y; w is separate
    for _ in range(STEPS):
        kind = rng.choice(["u", "u", "b", "m"])
        if kind == "u":
            steps.append(("u", int(rng.integers(len(UNARY))), (int(rng.integers(pool)),)))
        elif kind == "b":
            steps.append(("b", int(rng.integers(len(BINARY))),
                          tuple(int(i) for i in rng.integers(pool, size=2))))
        else:
            steps.append(("m", int(rng.integers(len(MATRIX))), (int(rng.integers(pool)),)))
        pool += 1
    return steps


def _run(L, seed, steps):
    rng = np.random.default_rng(1000 + seed)
    data = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    wd = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
    inputs = [L.tensor(d, requires_grad=True) for d in data]
    w = L.tensor(wd, requires_grad=True)
    pool = list(inputs)
    for kind, k, args in steps:
        if kind == "u":
            pool.append(UNARY[k][1](L, pool[args[0]]))
        elif kind == "b":
            pool.append(BINARY[k][1](L, pool[args[0]], pool[args[1]]))
        else:
            pool.append(MATRIX[k][1](L, pool[args[0]], w))
    weights = L.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    out = (pool[-1] * weights).sum() + pool[-2].mean()
    out.backward()
    return pool, out, inputs + [w]


def _graph(out):
    """The graph from ``out``: node names and edges, numbered in first-visit order."""
    ids, rows, stack = {}, [], [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in ids:
            continue
        ids[n] = len(ids)
        rows.append(n)
        stack.extend(m for m, _ in reversed(n.next_functions))
    return [(n.name(), [(ids.get(m) if m is not None else None, nr)
                        for m, nr in n.next_functions]) for n in rows]


def _describe(steps):
    names = {"u": UNARY, "b": BINARY, "m": MATRIX}
    return " -> ".join(f"{names[kind][k][0]}{list(args)}" for kind, k, args in steps)


@pytest.mark.fuzz
@pytest.mark.parametrize("seed", range(N_PROGRAMS))
def test_random_program_matches_torch(seed):
    steps = _program(seed)
    what = _describe(steps)
    hp, hout, hin = _run(hg, seed, steps)
    tp, tout, tin = _run(torch, seed, steps)
    for i, (a, b) in enumerate(zip(hp, tp)):
        np.testing.assert_allclose(np.asarray(a.detach()._data), b.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=f"value {i} of {what}")
    for i, (a, b) in enumerate(zip(hin, tin)):
        assert (a.grad is None) == (b.grad is None), f"grad of input {i} of {what}"
        if b.grad is None:  # not used by this program
            continue
        np.testing.assert_allclose(np.asarray(a.grad._data), b.grad.numpy(), rtol=1e-3,
                                   atol=1e-4, err_msg=f"grad of input {i} of {what}")
    if not any((kind, k) in COMPOSITE for kind, k, _ in steps):
        assert _graph(hout) == _graph(tout), what
