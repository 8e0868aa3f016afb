"""A bias-free ``linear`` on an input of 3 dims or more, taken as its four ops in one pass
(``hookgrad/_ops/linear_rows.py``) once a training step repeats: the graph is PyTorch's
(``t``, the rows' ``reshape`` view, ``mm``, ``_unsafe_view``), with its saved values,
version checks, hook order and gradients, and is the one the op-by-op path records; and
everything the one-pass path does not take (a first step, modes, hooks, tracers) records
the same graph op by op."""
import collections
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as HF
from hookgrad._ops import lazy, linear_rows, nn as _nn
from tests import _lazy_caches
from tests.differential import close, graph, py, same_as_torch, torch

B, S, D, O = 2, 12, 40, 120  # the weight past the host stage's bound: a model's arrays
_rng = np.random.default_rng(0)
X = _rng.standard_normal((B, S, D)).astype(np.float32)
W = (_rng.standard_normal((O, D)) / D).astype(np.float32)
W2 = (_rng.standard_normal((D, O)) / O).astype(np.float32)
B1, B2 = _rng.standard_normal(O).astype(np.float32), _rng.standard_normal(D).astype(np.float32)
RUNS = lazy.COMPILE_AT + 3  # first calls, the sequence remembered, then followed


@pytest.fixture
def taken(monkeypatch):
    """Fresh traces and segment caches; counts the calls the one-pass path took."""
    _lazy_caches.empty(monkeypatch)
    seen = collections.Counter()

    def counting(rows):
        def taking(*args):
            out = rows(*args)
            seen["taken" if out is not None else "declined"] += 1
            return out
        return taking
    monkeypatch.setattr(_nn, "_linear_rows", counting(linear_rows.rows))
    monkeypatch.setattr(_nn, "_linear_addmm_rows", counting(linear_rows.rows_addmm))
    return seen


def _nodes(fn, out, seen=None):
    """Name, sequence order and the saved sizes of each node below ``fn``, depth first."""
    seen = [] if seen is None else seen
    if fn is None or any(fn is s for s, _ in seen):
        return out
    info = {"name": fn.name().replace("torch::autograd::", "")}
    # (not ``_saved_mat2_sym_strides``: hookgrad's ``t`` outside a mode is a contiguous copy
    # in layout, either path: (O, 1) where PyTorch's strided view has (1, D))
    for attr in ("_saved_self_sym_sizes", "_saved_mat2_sym_sizes", "_saved_self_sym_strides",
                 "_saved_self", "_saved_mat2", "_saved_mat1", "_saved_mat1_sym_sizes",
                 "_saved_mat1_sym_strides", "_saved_alpha", "_saved_beta"):
        v = getattr(fn, attr, None)
        if v is not None:
            info[attr] = list(v.shape) if hasattr(v, "shape") else \
                v if isinstance(v, int) else py(list(v))
    seen.append((fn, None))
    out.append(info)
    for nxt, _ in fn.next_functions:
        _nodes(nxt, out, seen)
    return out


def step(L, view_input=False, order=None, bias=False):
    """Two stacked projections (the second on a contiguous view, as attention's output
    projection reads its heads), hooks on the weights, the input and the nodes; returns
    the loss, the gradients, the graph and the hooks' order."""
    x = L.tensor(X, requires_grad=True)
    w = L.nn.Parameter(L.tensor(W))
    w2 = L.nn.Parameter(L.tensor(W2))
    b1 = L.nn.Parameter(L.tensor(B1)) if bias else None
    b2 = L.nn.Parameter(L.tensor(B2)) if bias else None
    F = L.nn.functional
    order = [] if order is None else order
    h = F.linear(x * 1.5, w, b1)  # (B, S, O)
    h = L.sin(h)
    if view_input:
        h = h.view(B, S, 3, O // 3).transpose(1, 2).contiguous().transpose(1, 2)
        h = h.contiguous().reshape(B, S, O)  # a view of a contiguous Tensor
    y = F.linear(h, w2, b2)  # (B, S, D)
    before, nodes = graph(y), _nodes(y.grad_fn, [])
    w.register_hook(lambda g: order.append("w"))
    w2.register_hook(lambda g: order.append("w2"))
    x.register_hook(lambda g: order.append("x"))
    last = y.grad_fn.name()[-20:]
    y.grad_fn.register_hook(lambda gi, go: order.append(last))
    mm = y.grad_fn.next_functions[0][0]
    mm.register_prehook(lambda go: order.append("mm pre"))
    y.mul_(1.0)  # in place: with a bias, ``y`` is a view, and its base's node a CopySlices
    if bias:
        b1.register_hook(lambda g: order.append("b1"))
        b2.register_hook(lambda g: order.append("b2"))
    loss = (y * y).sum()
    loss.backward()
    return {"loss": py(loss), "x": py(x.grad), "w": py(w.grad), "w2": py(w2.grad),
            "b": bias and [py(b1.grad), py(b2.grad)], "graph": before, "after": graph(y),
            "nodes": nodes, "order": order,
            "views": [y._is_view(), y._base is not None and list(y._base.shape), y._version]}


def _steady(L, **kw):
    for _ in range(RUNS):
        got = step(L, **kw)
    return got


@pytest.mark.parametrize("view_input", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_a_repeated_step_takes_the_one_pass_and_records_pytorchs_graph(taken, view_input,
                                                                       bias):
    first = step(hg, view_input=view_input, bias=bias)
    got = same_as_torch(lambda L: _steady(L, view_input=view_input, bias=bias), tol=1e-4)
    assert taken["taken"] >= 2 * (RUNS - 3)  # both projections, once followed
    # the op-by-op path's (the first step's) graph and order, its values up to rounding
    assert got["graph"] == first["graph"] and got["nodes"] == first["nodes"] and \
        got["order"] == first["order"] and close(got, first, 1e-4)
    if bias:  # view(addmm(bias, view(input), t(weight)))
        assert got["graph"][:4] == ["ViewBackward0", "  AddmmBackward0", "    AccumulateGrad",
                                    "    ViewBackward0"]
        mm = got["nodes"][1]
        assert mm["name"] == "AddmmBackward0" and mm["_saved_mat1"] == [B * S, O] and \
            mm["_saved_mat2"] == [O, D] and mm["_saved_alpha"] == mm["_saved_beta"] == 1
    else:  # _unsafe_view(mm(reshape(input), t(weight)))
        assert got["graph"][:3] == ["UnsafeViewBackward0", "  MmBackward0", "    ViewBackward0"]
        mm = got["nodes"][1]
        assert mm["name"] == "MmBackward0" and mm["_saved_self"] == [B * S, O] and \
            mm["_saved_mat2"] == [O, D]
    assert "TBackward0" in "".join(got["graph"])


def _grads(params, x):
    w, w2 = params
    return jnp.sum(jnp.square(jnp.sin((x * 1.5) @ w.T) @ w2.T))


def test_gradients_are_jaxs(taken):
    got = _steady(hg)
    gw, gw2 = jax.grad(_grads)((jnp.asarray(W), jnp.asarray(W2)), jnp.asarray(X))
    np.testing.assert_allclose(np.array(got["w"]), np.asarray(gw), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.array(got["w2"]), np.asarray(gw2), rtol=1e-4, atol=1e-4)
    assert taken["taken"]


def _changed_after(L):
    """The input changed in place after a projection saved its rows: backward refuses."""
    x = L.tensor(X, requires_grad=True)
    w = L.nn.Parameter(L.tensor(W))
    h = x * 2
    y = L.nn.functional.linear(h, w)
    h.add_(1)
    return y


def test_an_input_changed_in_place_fails_the_saved_version_check(taken):
    message = (r"modified by an inplace operation: \[(torch|hookgrad).FloatTensor \[24, 40\]\], "
               r"which is output 0 of AsStrided, is at version 1; expected version 0")
    for _ in range(RUNS):
        y = _changed_after(hg)
        with pytest.raises(RuntimeError, match=message):
            y.sum().backward()
    assert taken["taken"]
    if torch is not None:
        with pytest.raises(RuntimeError, match=message):
            _changed_after(torch).sum().backward()


def test_saved_tensor_hooks_pack_what_pytorch_packs(taken):
    def packed(L):
        names = []
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: names.append(list(t.shape)) or t, lambda t: t):
            for _ in range(RUNS):
                names.clear()
                out = step(L)
        return {"packed": names, "w": out["w"]}
    same_as_torch(packed, tol=1e-4)


def test_a_dispatch_mode_sees_the_four_ops(taken):
    from hookgrad.utils._python_dispatch import TorchDispatchMode

    class Names(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func.overloadpacket.__name__))
            return func(*args, **(kwargs or {}))
    _steady(hg)
    before = taken["taken"]
    with Names() as mode:
        got = step(hg)
    assert taken["taken"] == before  # declined: the mode sees each op
    assert [n for n in mode.seen if n in ("t", "mm", "view", "_unsafe_view", "reshape",
                                          "_reshape_alias")][:4] == \
        ["t", "view", "mm", "_unsafe_view"]
    assert close(got, step(hg), 1e-4)



@pytest.mark.parametrize("bias", [False, True])
def test_once_a_dtensor_exists_plain_tensors_still_take_the_one_pass(taken, bias):
    """DTensor's stage stays in the interceptor slot once a DTensor was made (for the rest
    of the process) and passes plain Tensors through unchanged: their Linears keep the one
    pass (they declined for good after any DTensor test ran in the same process)."""
    from hookgrad.distributed.tensor import _dispatch  # noqa: F401 (fills SUBCLASS_STAGE)
    from hookgrad._ops.stages import modes
    before = modes.INTERCEPT[0]
    modes.INTERCEPT[0] = modes.SUBCLASS_STAGE[0]
    try:
        _steady(hg, bias=bias)
        warm = taken["taken"]
        got = _steady(hg, bias=bias)
    finally:
        modes.INTERCEPT[0] = before
    assert taken["taken"] - warm == 2 * RUNS  # both projections, every step once warm
    assert close(got, step(hg, bias=bias), 1e-4)

def test_forward_ad_compiled_functional_and_vmapped_calls_agree(taken):
    want = _steady(hg)
    x, w = hg.tensor(X), hg.tensor(W)
    import hookgrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        d = fwAD.make_dual(x, hg.ones_like(x))
        tangent = fwAD.unpack_dual(HF.linear(d, w.requires_grad_())).tangent
    np.testing.assert_allclose(tangent.detach().numpy(), np.ones((B, S, D)) @ W.T, rtol=1e-5)
    compiled = hg.compile(lambda a, b: HF.linear(a, b))
    np.testing.assert_allclose(compiled(x, w).detach().numpy(), X @ W.T, rtol=1e-5, atol=1e-6)
    g = hg.func.grad(lambda b: HF.linear(x, b).sum())(w.detach())
    np.testing.assert_allclose(g.numpy(), np.broadcast_to(X.sum((0, 1)), (O, D)), rtol=1e-4)
    v = hg.func.vmap(lambda a: HF.linear(a, w.detach()))(x)
    np.testing.assert_allclose(np.asarray(v), X @ W.T, rtol=1e-5, atol=1e-6)
    assert close(step(hg), want, 1e-4) and taken["taken"]


def test_double_backward_through_the_one_pass(taken):
    def twice(L):
        for _ in range(RUNS):
            x = L.tensor(X, requires_grad=True)
            w = L.nn.Parameter(L.tensor(W))
            y = L.nn.functional.linear(x * 1.0, w)
            (gx,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
            (gw,) = L.autograd.grad((gx * gx).sum(), w)
        return py(gw)
    same_as_torch(twice, tol=1e-3)
    assert taken["taken"]


@pytest.mark.parametrize("bias", [False, True])
def test_a_strided_input_and_anomaly_mode_take_the_op_by_op_path(taken, bias):
    """A non-contiguous input (its rows a copy, by PyTorch's rules) declines before
    looking at the trace; anomaly mode is taken by the record stage either way."""
    def strided(L):
        for _ in range(RUNS):
            x = L.tensor(X, requires_grad=True)
            w = L.nn.Parameter(L.tensor(W2.T.copy()))
            b = L.nn.Parameter(L.tensor(B1)) if bias else None
            y = L.nn.functional.linear((x * 2).transpose(0, 1), w, b)
            y.sum().backward()
        return {"graph": graph(y), "w": py(w.grad), "x": py(x.grad)}
    same_as_torch(strided, tol=1e-4)
    assert not taken["taken"] and not taken["declined"]

    def anomalous(L):
        with L.autograd.detect_anomaly():
            return _steady(L, bias=bias)
    got = same_as_torch(anomalous, tol=1e-4)
    assert taken["taken"] and got["graph"] == step(hg, bias=bias)["graph"]


def test_threads_take_the_one_pass_on_their_own_traces(taken):
    """Each thread follows its own trace (``lazy._local``): steps with and without a bias
    run side by side, each giving what it gives alone."""
    alone = {bias: _steady(hg, bias=bias) for bias in (False, True)}
    errors = []

    def worker(bias):
        try:
            for _ in range(RUNS):
                assert close(step(hg, bias=bias), alone[bias], 1e-4)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)
    before = taken["taken"]
    threads = [threading.Thread(target=worker, args=(b,)) for b in (False, True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert taken["taken"] > before


def _slot_values(node):
    """Every slot of ``node`` (an unset one named), values as comparable forms: the site
    itself (a steady step's nodes share their site's), the edges' node names."""
    out = {}
    for cls in type(node).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name in ("__weakref__", "_seq"):
                continue
            try:
                v = getattr(node, name)
            except AttributeError:
                out[name] = "unset"
                continue
            if name == "_next":
                v = [None if e is None else (type(e[0]).__name__, e[1]) for e in v]
            elif name == "_stored":
                v = [type(s).__name__ if s.__class__ is tuple else s for s in v]
            elif name == "_site":
                v = id(v)
            out[name] = v
    return out


@pytest.mark.parametrize("bias", [False, True])
def test_the_nodes_are_the_op_by_op_paths_slot_for_slot(taken, monkeypatch, bias):
    """The one pass's nodes (``linear_rows._node``, the record stage's fields where its
    site's node is known) hold what the op-by-op path's hold in a steady step, slot for
    slot, every slot set; their sequence numbers rise in the same order."""
    def nodes():
        x = hg.tensor(X, requires_grad=True)
        w = hg.nn.Parameter(hg.tensor(W))
        b = hg.nn.Parameter(hg.tensor(B1)) if bias else None
        y = HF.linear(x * 1.5, w, b)
        found, todo = [], [y.grad_fn]
        while todo:
            n = todo.pop()
            if n is not None and hasattr(n, "_site"):
                found.append(n)
                todo += [e[0] for e in n.next_functions]
        got = [_slot_values(n) for n in found], [n._seq for n in found]
        y.sum().backward()  # (the step ends: its segment runs, its sequence is kept)
        return got
    for _ in range(RUNS):
        one_pass, seqs = nodes()
    assert taken["taken"] >= 2  # (the last steps, followed)
    monkeypatch.setattr(_nn, "_linear_rows", lambda *args: None)
    monkeypatch.setattr(_nn, "_linear_addmm_rows", lambda *args: None)
    for _ in range(3):
        op_by_op, seqs2 = nodes()
    assert len(one_pass) == 5 and one_pass == op_by_op  # (the four and the mul)
    assert "unset" not in str(one_pass)
    assert sorted(range(5), key=seqs.__getitem__) == sorted(range(5), key=seqs2.__getitem__)


def test_compiled_and_functional_steps_give_jaxs_gradients(taken):
    """A compiled training step (tracers: the op-by-op path) and ``jax.grad`` of a
    functional call give ``jax.grad``'s gradients, before and after eager steps took the
    one pass."""
    want = jax.grad(lambda w, x: jnp.sum(jnp.square((x * 1.5) @ w.T)))(jnp.asarray(W),
                                                                          jnp.asarray(X))
    lin = hg.nn.Linear(D, O, bias=False)
    with hg.no_grad():
        lin.weight.copy_(hg.tensor(W))

    def train(x):
        loss = (lin(x * 1.5) ** 2).sum()
        loss.backward()
        return loss
    compiled = hg.compile(train)
    for _ in range(RUNS):
        lin.weight.grad = None
        train(hg.tensor(X, requires_grad=True))  # eager
        eager = lin.weight.grad.detach().numpy()
        lin.weight.grad = None
        compiled(hg.tensor(X, requires_grad=True))
        np.testing.assert_allclose(lin.weight.grad.detach().numpy(), np.asarray(want),
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(eager, np.asarray(want), rtol=1e-4, atol=1e-4)
    assert taken["taken"]
    params = hg.func.state(lin)
    g = jax.grad(lambda p: jnp.sum(jnp.square(
        hg.func.functional_call(lin, p, (jnp.asarray(X) * 1.5,)))))(params)
    np.testing.assert_allclose(np.asarray(g["weight"]), np.asarray(want), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("frozen", ["weight", "input", "weight and input"])
def test_a_frozen_weight_or_an_input_without_grad_records_pytorchs_nodes(taken, bias, frozen):
    """A frozen weight (an adapter's base layer) or an input no gradient reaches (a
    model's first projection of its features): the ops on them make no node, as
    PyTorch's, in the one pass too."""
    def frozen_step(L):
        for _ in range(RUNS):
            # (a batch past the host stage's bound: the input without grad stays pending)
            x = L.tensor(np.concatenate([X] * 6), requires_grad="input" not in frozen)
            w = L.nn.Parameter(L.tensor(W), requires_grad="weight" not in frozen)
            b = L.nn.Parameter(L.tensor(B1)) if bias else None
            h = L.sin(x * 1.5) if "input" not in frozen else L.sin(x * 1.5).detach() * 2
            y = L.nn.functional.linear(h, w, b)
            if y.grad_fn is None:
                return {"graph": None}
            # (not the strides saved beside a value no gradient reads: PyTorch's are empty)
            nodes = [{k: v for k, v in n.items() if not k.endswith("_strides")}
                     for n in _nodes(y.grad_fn, [])]
            (y * y).sum().backward()
        return {"graph": graph(y), "nodes": nodes, "x": x.grad is not None and py(x.grad),
                "w": w.grad is not None and py(w.grad), "b": bias and py(b.grad)}
    got = same_as_torch(frozen_step, tol=1e-4)
    if got["graph"] is not None:
        assert taken["taken"] >= 2, taken  # (the last steps, followed)
        assert got["graph"][0] in ("UnsafeViewBackward0", "ViewBackward0")
