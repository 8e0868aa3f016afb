"""torch.cond and torch.while_loop: eager values and gradients against PyTorch, and the
compiled forms (a traced predicate) against the eager ones."""
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch


def test_cond_runs_the_chosen_branch_with_gradients():
    def run(L):
        x = L.ones(3, requires_grad=True)
        w = L.nn.Parameter(L.tensor(2.0))
        r = L.cond(x.sum() > 0, lambda a: (a * w).sin(), lambda a: a.cos(), (x,))
        r.sum().backward()
        s = L.cond(False, lambda a, b: a + b, lambda a, b: a - b, (L.ones(2), L.ones(2)))
        t = L.cond(L.tensor([1.0]), lambda: L.ones(1), lambda: L.zeros(1))
        return [py(r), py(x.grad), py(w.grad), py(s), py(t),
                raises(lambda: L.cond(L.ones(3), lambda a: a, lambda a: a, (x,))),
                raises(lambda: L.cond("a", lambda a: a, lambda a: a, (x,)))]
    got = same_as_torch(run)
    assert got[3] == [0.0, 0.0] and got[5]["raises"] == "RuntimeError"


def test_while_loop_runs_the_body_with_gradients():
    def run(L):
        y = L.ones(2, requires_grad=True)
        i, v = L.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), (L.tensor(0), y))
        v.sum().backward()
        return [py(i), py(v), py(y.grad),
                py(L.while_loop(lambda i: i < 3, lambda i: i + 1, (L.tensor(0),))),
                py(L.while_loop(lambda i: i < 3, lambda i: (i + 1,), [L.tensor(0)])),
                py(L.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,)))]
    got = same_as_torch(run)
    assert got[:3] == [3, [8.0, 8.0], [8.0, 8.0]]


def test_a_traced_predicate_inside_compile():
    def step(x, n):
        i, v = hookgrad.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 2),
                                   (hookgrad.tensor(0), x))
        return hookgrad.cond(v.sum() > 10, lambda a: a * 10, lambda a: a - 1, (v,))
    compiled = hookgrad.compile(step)
    for n in (3, 1):
        args = (hookgrad.ones(2), hookgrad.tensor(n))
        assert compiled(*args).tolist() == step(*args).tolist()


def test_cond_gradients_inside_compile_match_eager():
    def step(x, w):
        out = hookgrad.cond(x.sum() > 0, lambda a: (a * w).sin(), lambda a: a.cos() * w, (x,))
        out.sum().backward()
        return out.detach()
    results = []
    for fn in (step, hookgrad.compile(step)):
        for sign in (1.0, -1.0):
            x = (hookgrad.ones(3) * sign).requires_grad_()
            w = hookgrad.tensor(2.0, requires_grad=True)
            results.append([fn(x, w).tolist(), x.grad.tolist(), w.grad.tolist()])
    assert results[:2] == results[2:]


def test_while_loop_inputs_that_require_grad_inside_compile_raise():
    @hookgrad.compile(fullgraph=True)   # by default: eagerly
    def step(x, n):
        return hookgrad.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 2),
                                   (hookgrad.tensor(0), x))[1]
    with pytest.raises(NotImplementedError, match="hookgrad does not implement "
                                                  "torch.while_loop with inputs that require"):
        step(hookgrad.ones(2, requires_grad=True), hookgrad.tensor(2))
