"""register_multi_grad_hook, as PyTorch's docstring specifies."""
import threading

import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch


def test_all_mode_gets_every_grad_once():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        out = []
        L.autograd.graph.register_multi_grad_hook((a, b), lambda gs: out.append(py(gs)))
        (a * b).sum().backward()
        (a * b).sum().backward()
        return out
    assert same_as_torch(f) == [[[3.0, 4.0], [1.0, 2.0]]] * 2


def test_all_mode_none_for_unreached_and_inputs_subset():
    def f(L):
        a = L.tensor([1.0], requires_grad=True)
        b = L.tensor([2.0], requires_grad=True)
        out = []
        L.autograd.graph.register_multi_grad_hook((a, b), lambda gs: out.append(
            [None if g is None else py(g) for g in gs]))
        (a * 3).sum().backward()
        (a * b).sum().backward(inputs=[b])
        err = raises(lambda: L.autograd.grad((a * b).sum(), [a]))["raises"]
        return [out, err]
    assert same_as_torch(f) == [[[[3.0], None], [None, [1.0]]], "RuntimeError"]


def test_all_mode_non_leaf_tensors():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h1, h2 = x * 2, x.exp()
        out = []
        L.autograd.graph.register_multi_grad_hook((h1, h2), lambda gs: out.append(py(gs)))
        (h1 * h2).sum().backward()
        return out
    same_as_torch(f)


def test_any_mode_called_once_with_first_grad():
    def f(L):
        a = L.tensor([1.0], requires_grad=True)
        b = a * 4
        calls = []
        L.autograd.graph.register_multi_grad_hook((a, b), lambda g: calls.append(py(g)),
                                                  mode="any")
        (b * 2).sum().backward(retain_graph=True)
        (b * 2).sum().backward()
        return calls
    assert same_as_torch(f) == [[2.0], [2.0]]


def test_handle_removes_everything():
    def f(L):
        a = L.tensor([1.0], requires_grad=True)
        b = L.tensor([2.0], requires_grad=True)
        out = []
        h = L.autograd.graph.register_multi_grad_hook((a, b), lambda gs: out.append(1))
        h.remove()
        (a * b).sum().backward()
        return out
    assert same_as_torch(f) == []


def test_bad_mode():
    a = hg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got every"):
        hg.autograd.graph.register_multi_grad_hook((a,), lambda g: None, mode="every")


def test_per_graph_task_buffers_across_threads():
    a = hg.tensor([1.0], requires_grad=True)
    b = hg.tensor([2.0], requires_grad=True)
    calls = []
    lock = threading.Lock()

    def fn(gs):
        with lock:
            calls.append(tuple(g.item() for g in gs))
    hg.autograd.graph.register_multi_grad_hook((a, b), fn)

    def work():
        for _ in range(5):
            (a * b).sum().backward()
    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert calls == [(2.0, 1.0)] * 15
