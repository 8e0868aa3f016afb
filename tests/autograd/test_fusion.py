"""Fused backward (hookgrad/_engine/fusion.py): chains of hook-free op nodes run as one
compiled program from the second backward of the same graph shape on (from the first when
two or more of its nodes' programs were never compiled). Nothing a user can observe
changes: gradients (to float rounding), hook order, errors. Scenarios run each graph three
times (node by node or compiled, compiled, cached) and under PyTorch when installed."""
import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad._engine import fusion
from hookgrad._ops import tiered
from tests.differential import py, raises, same_as_torch

X = [[0.1, -0.4, 0.7], [0.3, 0.2, -0.9]]


@pytest.fixture
def cache(monkeypatch):
    """An empty chain cache for the test: what it compiles is what it counts."""
    monkeypatch.setattr(fusion, "_seen", {})
    monkeypatch.setattr(fusion, "_compiled", collections.OrderedDict())
    monkeypatch.setattr(fusion, "_plans", {})
    return fusion


def chain(L, x, c):
    y = x
    for _ in range(3):
        y = ((y * c).sin() + c).tanh()
    return y.sum()


def jax_chain(x, c):
    y = x
    for _ in range(3):
        y = jnp.tanh(jnp.sin(y * c) + c)
    return y.sum()


def _chain_sizes(x, c):
    want = jax.grad(jax_chain)(jnp.asarray(X), jnp.asarray(0.5))
    sizes = []
    for _ in range(3):
        x.grad = None
        chain(hg, x, c).backward()
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-7)
        sizes.append([len(key[2]) for key in fusion._compiled])
    return sizes


def test_a_chain_compiles_on_its_second_backward_and_is_reused(cache, monkeypatch):
    monkeypatch.setattr(fusion, "_compiled_once", lambda fn: True)  # every vjp compiled
    # the 13 nodes (sum and 12 ops) form one chain: compiled once, then reused
    assert _chain_sizes(hg.tensor(X, requires_grad=True), hg.tensor(0.5)) == [[], [13], [13]]


@pytest.mark.parametrize("cold, sizes", [(1, [[], [13], [13]]), (2, [[13], [13], [13]])])
def test_a_chain_of_new_vjps_compiles_on_its_first_backward(cache, monkeypatch, cold, sizes):
    """Node by node, a first backward compiles each vjp never compiled before: with two or
    more of them, compiling the chain at once is fewer compilations."""
    fresh = []

    def compiled_once(fn):
        if fn not in fresh and len(fresh) < cold:
            fresh.append(fn)
        return fn not in fresh
    monkeypatch.setattr(fusion, "_compiled_once", compiled_once)
    assert _chain_sizes(hg.tensor(X, requires_grad=True), hg.tensor(0.5)) == sizes


@pytest.mark.parametrize("repeats, programs", [(33, 1), (90, 2)])  # 100 and 271 nodes
def test_a_long_chain_runs_as_few_programs_as_max_len_allows(cache, monkeypatch, repeats,
                                                             programs):
    """A tiny model's backward is a few hundred small nodes: each program called costs
    more than its nodes' work, so a region takes up to ``MAX_LEN`` (256) of them."""
    monkeypatch.setattr(fusion, "_compiled_once", lambda fn: True)  # every vjp compiled
    x, c = hg.tensor(X, requires_grad=True), hg.tensor(0.5)

    def long(x, c, sin):
        y = x
        for _ in range(repeats):
            y = sin(y * c) + c
        return y.sum()
    want = jax.grad(long)(jnp.asarray(X), jnp.asarray(0.5), jnp.sin)
    nodes = 3 * repeats + 1  # mul, sin, add per repeat, and the sum
    for _ in range(3):
        x.grad = None
        long(x, c, hg.sin).backward()
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-7)
    sizes = sorted(len(key[2]) for key in fusion._compiled)
    assert sum(sizes) == nodes and max(sizes) == min(nodes, fusion.MAX_LEN)
    assert len(sizes) == programs  # (at 32 nodes a region: 4 and 9)


def test_a_vjp_program_counts_as_compiled_once_it_ran():
    fn = jax.jit(lambda a: a * 2)
    assert not fusion._compiled_once(fn)
    fn(jnp.ones(2))
    assert fusion._compiled_once(fn)


def test_turned_off_every_node_runs_by_itself(cache):
    x = hg.tensor(X, requires_grad=True)
    c = hg.tensor(0.5)
    with hg.autograd.set_backward_fusion(False):
        assert not hg.autograd.is_backward_fusion_enabled()
        for _ in range(3):
            chain(hg, x, c).backward()
    assert hg.autograd.is_backward_fusion_enabled()
    assert len(cache._compiled) == 0
    np.testing.assert_allclose(x.grad.numpy(), 3 * jax.grad(jax_chain)(jnp.asarray(X), 0.5),
                               rtol=1e-5)


def test_fused_and_node_by_node_gradients_agree():
    def grads(fused):
        x = hg.tensor(X, requires_grad=True)
        c = hg.tensor(0.5, requires_grad=True)
        with hg.autograd.set_backward_fusion(fused):
            out = []
            for _ in range(3):
                x.grad = c.grad = None
                chain(hg, x, c).backward()
                out.append((x.grad.numpy(), c.grad.numpy()))
        return out
    for (gx, gc), (wx, wc) in zip(grads(True), grads(False)):
        np.testing.assert_allclose(gx, wx, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gc, wc, rtol=1e-6, atol=1e-8)


def test_hooks_keep_pytorchs_order_around_fused_chains(cache):
    """Tensor hooks, retain_grad and node hooks split chains; gradients for leaves leave a
    chain in the order node-by-node execution delivers them."""
    def f(L):
        events = []
        x = L.tensor(X, requires_grad=True)
        w1 = L.tensor([1.5, -0.5, 2.0], requires_grad=True)
        w2 = L.tensor([0.5, 1.0, -1.0], requires_grad=True)
        for name, t in (("x", x), ("w1", w1), ("w2", w2)):
            t.register_post_accumulate_grad_hook(
                lambda p, name=name: events.append(["acc", name, py(p.grad)]))
        res = []
        for step in range(3):
            h = (x * w1).sin()
            h.retain_grad()
            m = (h * w2).tanh() * 2
            m.register_hook(lambda g, step=step: events.append(["m", step, py(g)]))
            e = m.exp()
            e.grad_fn.register_hook(lambda gi, go: events.append(["exp node", py(gi)]))
            ((e * 0.5 + 1) ** 2).sum().backward()
            res.append([py(h.grad), py(x.grad), py(w1.grad), py(w2.grad)])
        return [events, res]
    same_as_torch(f)
    assert len(cache._compiled) > 0  # the hook-free stretches between them were fused


def test_a_captured_intermediate_ends_the_chain_it_sits_in(cache):
    def f(L):
        x = L.tensor(X, requires_grad=True)
        out = []
        for _ in range(3):
            h = (x * 2).sin()
            y = (h.tanh() * 3).exp().sum()
            gh, gx = L.autograd.grad(y, [h, x])
            out.append([py(gh), py(gx)])
        return out
    r = same_as_torch(f)
    assert r[0] == r[2]


def test_a_tensor_used_twice_sums_its_gradients(cache):
    def f(L):
        x = L.tensor(X, requires_grad=True)
        for _ in range(3):
            h = (x * 1.5).tanh()
            (h.sin() * h.cos()).exp().sum().backward()
        return py(x.grad)
    same_as_torch(f)


def test_forks_and_joins_stay_inside_one_region(cache):
    """A tensor read by several ops forks the backward; an op of two such reads joins it:
    hook-free, the whole backward is one program (its gradients summed in the order node
    by node delivers them)."""
    def f(L):
        x = L.tensor(X, requires_grad=True)
        for _ in range(3):
            h = (x * 2).sin()
            (h.cos() * h.tanh() + h).exp().sum().backward()
        return py(x.grad)
    same_as_torch(f)
    # mul, sin, cos, tanh, mul, add, exp, sum
    assert [len(k[2]) for k in fusion._compiled] == [8]


def _fork_join_graph():
    x = hg.tensor(X, requires_grad=True)
    h = (x * 2).sin()
    a, b = h.cos(), h.tanh()
    return ((a * 3).exp() * (b + 1).sin() + h.exp()).sum()


def test_a_region_takes_its_nodes_in_the_order_node_by_node_runs_them(cache, monkeypatch):
    """A region replays the ready queue: through forks, joins and the chains between them
    its nodes come in the order the engine runs them one by one (seen by pre-hooks)."""
    order = []
    with hg.autograd.set_backward_fusion(False):
        y = _fork_join_graph()
        todo, nodes = [y.grad_fn], set()
        while todo:
            n = todo.pop()
            if n is not None and n not in nodes and type(n).__name__ != "AccumulateGrad":
                nodes.add(n)
                n.register_prehook(lambda g, n=n: order.append(n))
                todo.extend(e[0] for e in n.next_functions)
        y.backward()
    names = [n.name() for n in order]
    regions = []
    region = fusion._region
    monkeypatch.setattr(fusion, "_region", lambda *a: regions.append(region(*a)) or regions[-1])
    _fork_join_graph().backward()
    assert [[n.name() for n in r] for r in regions] == [names]
    assert len(names) == 12 and len(set(names)) < len(names)  # every node, one region


def test_a_hooked_branch_splits_the_region_and_the_join_waits_for_it(cache):
    """The hooked node ends the region that reaches it; the region behind it starts at it
    and takes the gradient the first region already delivered to the join."""
    def f(L):
        events = []
        x = L.tensor(X, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda p: events.append(["acc", py(p.grad)]))
        for step in range(3):
            h = (x * 2).sin()
            a = h.cos()
            a.register_hook(lambda g, step=step: events.append(["a", step, py(g)]))
            (a * h.tanh()).exp().sum().backward()
        return events
    same_as_torch(f)
    # sum, exp, mul, tanh; then cos, sin (its gradient from tanh waiting), mul
    assert sorted(len(k[2]) for k in fusion._compiled) == [3, 4]


def test_retain_graph_and_the_second_backward_error(cache):
    def f(L):
        x = L.tensor(X, requires_grad=True)
        for _ in range(2):  # the same graph shape twice: the third is compiled
            chain(L, x, 0.5).backward()
        y = chain(L, x, 0.5)
        y.backward(retain_graph=True)
        y.backward()
        return [py(x.grad), raises(y.backward)]
    grad, err = same_as_torch(f)
    assert err["raises"] == "RuntimeError"
    assert "backward through the graph a second time" in err["message"]


def test_an_inplace_change_of_a_saved_tensor_raises_in_a_compiled_chain(cache):
    def f(L):
        x = L.tensor(X, requires_grad=True)

        def graph(modify):
            h = (x * 2).sin()
            y = (h.cos() * 3).tanh().sum()
            if modify:
                h.mul_(2)  # cos saved h
            return y
        for _ in range(2):
            graph(False).backward()
        return raises(graph(True).backward)
    err = same_as_torch(f)
    assert "modified by an inplace operation" in err["message"]
    assert len(fusion._compiled) > 0


def test_a_node_whose_saved_tensor_changed_raises_after_the_nodes_before_it_ran(cache):
    """Node by node, the nodes the queue runs before the failing one have run: the leaf
    they feed has its gradient when the error comes."""
    def f(L):
        x = L.tensor(X, requires_grad=True)
        w = L.tensor([1.5, -0.5, 2.0], requires_grad=True)

        def graph(modify):
            h = (x * 2).sin()
            y = ((h.cos() * w) * 3).tanh().sum()
            if modify:
                h.mul_(2)  # cos saved h
            return y
        for _ in range(2):
            graph(False).backward()
        w.grad = x.grad = None
        return [raises(graph(True).backward), py(w.grad), py(x.grad)]
    err, wgrad, xgrad = same_as_torch(f)
    assert "modified by an inplace operation" in err["message"]
    assert wgrad is not None and xgrad is None


def test_saved_tensor_hooks_keep_their_nodes_out_of_chains(cache):
    def f(L):
        log = []
        x = L.tensor(X, requires_grad=True)
        for _ in range(3):
            with L.autograd.graph.saved_tensors_hooks(
                    lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t):
                y = (x * 2).sin().cos()
            y.exp().tanh().sum().backward()
        return [log.count("pack"), log.count("unpack"), py(x.grad)]
    packs, unpacks, _ = same_as_torch(f)
    assert packs == unpacks > 0
    # only the hook-free nodes after the context (exp, tanh, sum) were fused
    assert [len(k[2]) for k in fusion._compiled] == [3]


def test_create_graph_runs_node_by_node_and_the_graph_it_records_may_fuse(cache):
    def f(L):
        x = L.tensor(X, requires_grad=True)
        for _ in range(3):
            (gx,) = L.autograd.grad(chain(L, x, 0.5), x, create_graph=True)
        compiled = len(fusion._compiled)
        out = []
        for _ in range(3):  # the recorded backward is an ordinary graph
            (ggx,) = L.autograd.grad(gx.sum(), x, retain_graph=True)
            out.append(py(ggx))
        return [compiled, py(gx), out]
    compiled, _, _ = f(hg)
    assert compiled == 0
    assert len(fusion._compiled) > 0
    same_as_torch(lambda L: f(L)[1:])


def test_the_cache_keeps_the_most_recent_chains(cache, monkeypatch):
    monkeypatch.setattr(fusion, "CACHE_SIZE", 2)
    x = hg.tensor(X, requires_grad=True)
    for n in (2, 3, 4):  # three chain shapes, each seen twice
        for _ in range(2):
            y = x
            for _ in range(n):
                y = y.sin()
            y.sum().backward()
    assert [len(k[2]) for k in fusion._compiled] == [4, 5]


def test_backward_in_several_threads_shares_the_chain_cache(cache):
    import threading
    x = hg.tensor(X, requires_grad=True)
    want = jax.grad(jax_chain)(jnp.asarray(X), jnp.asarray(0.5))
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                (g,) = hg.autograd.grad(chain(hg, x, hg.tensor(0.5)), x)
                results.append(g.numpy())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 12
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-5, atol=1e-7)
    assert len(cache._compiled) == 1


@pytest.mark.parametrize("kind", [k for k in fusion._hooks.KINDS if k.fused is not None],
                         ids=lambda k: k.name)
def test_each_hook_kind_keeps_its_node_where_the_table_says(kind):
    # the region test is written out from the hook table (``fusion._plain_test``): a node
    # holding any kind is refused as the table's ``fused`` says, and a node holding
    # none is taken, first or not
    x = hg.tensor(X, requires_grad=True)
    node = (x * 2.0).grad_fn
    assert fusion._plain_first(node) and fusion._plain_next(node)
    setattr(node, kind.node_attr, {0: {}})  # any value but None: what a node holds
    assert bool(fusion._plain_first(node)) == (kind.fused == fusion._hooks.FIRST_ONLY)
    assert not fusion._plain_next(node)


@pytest.fixture
def replays(cache, monkeypatch):
    """The regions replayed from a plan (``fusion._replay``), per backward's call."""
    done = []
    real = fusion._replay

    def spy(*args):
        found = real(*args)
        if found is not None:
            done.append([n.name() for n in found[0]])
        return found
    monkeypatch.setattr(fusion, "_replay", spy)
    return done


def test_a_replayed_region_keeps_hooks_registered_on_later_backwards(replays):
    """The same graph every step: its regions replay from the second compiled backward
    on, and a hook registered any time still splits them, with PyTorch's calls."""
    def f(L):
        events = []
        x = L.tensor(X, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda p: events.append(["acc", py(p.grad)]))
        for step in range(7):
            h = (x * 2).sin()
            a, b = h.cos(), h.tanh()
            m = (a * 3).exp()
            if step >= 3:
                a.register_hook(lambda g, step=step: events.append(["a", step, py(g)]))
            if step == 4:
                m.grad_fn.register_prehook(lambda go: events.append(["m pre", py(go)]))
            if step == 5:
                b.retain_grad()
            (m * (b + 1).sin() + h.exp()).sum().backward()
            events.append(["b", step, py(b.grad) if step == 5 else None])
        return events
    same_as_torch(f)
    assert replays  # steps 2 and 6 replay their regions


def test_a_function_giving_none_inside_a_replayed_graph(replays):
    """A Function's backward that gives None for its input on some steps: the nodes behind
    it get no gradient (those fed only by it do not run their op), as node by node."""
    def f(L):
        class Gate(L.autograd.Function):
            @staticmethod
            def forward(ctx, t, on):
                ctx.on = on
                return t * 1.0

            @staticmethod
            def backward(ctx, g):
                return (g * 2 if ctx.on else None), None

        x = L.tensor(X, requires_grad=True)
        w = L.tensor([1.5, -0.5, 2.0], requires_grad=True)
        out = []
        for step in range(6):
            x.grad = w.grad = None
            h = (x * w).sin().tanh()
            y = (Gate.apply(h, step % 3 != 1).exp() * 2 + h.cos()).sum()
            y.backward()
            out.append([py(x.grad), py(w.grad)])
        return out
    same_as_torch(f)
    assert replays


def test_a_replayed_region_whose_saved_tensor_changed_raises(replays):
    def f(L):
        x = L.tensor(X, requires_grad=True)
        out = []
        for step in range(5):
            h = (x * 2).sin()
            y = (h.exp() * 3).tanh().sum()
            if step == 4:
                with L.no_grad():
                    h.mul_(2)
                out.append(raises(y.backward))
            else:
                y.backward()
            out.append(py(x.grad))
        return out
    same_as_torch(f)
    assert replays


def test_a_graph_of_another_shape_behind_the_same_first_node_is_walked_afresh(replays):
    """Plans are kept per first node's op and vjp key; a graph that differs behind it (a
    view of another shape, a longer chain) gets its own region, not the plan's. Each of
    the four graphs runs three times: a region is compiled (and remembered) on its first
    or its second sighting, whichever the vjps' compiled state decides, and replayed on
    its third at the latest."""
    def f(L):
        x = L.tensor(X, requires_grad=True)
        out = []
        for step in range(12):
            x.grad = None
            y = x.sin() * 2
            y = y.reshape(3, 2) if step % 2 else y.reshape(6)
            for _ in range(step // 6):
                y = y.tanh()
            y.exp().sum().backward()
            out.append(py(x.grad))
        return out
    same_as_torch(f)
    assert len({len(r) for r in replays}) > 1


def test_plans_are_dropped_with_the_default_dtype(replays):
    x = hg.tensor(X, requires_grad=True)
    for _ in range(3):
        chain(hg, x, 0.5).backward()
    assert fusion._plans
    old = hg.get_default_dtype()
    try:
        hg.set_default_dtype(hg.float64)
        assert not fusion._plans
    finally:
        hg.set_default_dtype(old)


def test_a_replayed_node_waiting_for_a_gradient_from_outside_is_left_out(replays):
    """The plan took ``j`` when only the region fed it; when another root's branch also
    feeds it (queued, it runs after the region's first nodes), the replayed region stops
    before ``j`` as a fresh walk does (the queued root outranks it; its dependency count
    says the same). Taking it would run ``j`` before its second gradient arrived."""
    def f(L):
        x = L.tensor(X, requires_grad=True)
        out = []
        for step in range(5):
            x.grad = None
            j = x * 2
            l2 = (j.cos() * 3).sum()  # recorded first: its nodes run after l1's
            l1 = (j.sin() * 0.5).exp().sum()
            if step < 4:
                l1.backward()
            else:
                L.autograd.backward([l1, l2])
            out.append(py(x.grad))
        return out
    same_as_torch(f)
    assert replays


def test_a_plan_made_while_a_gradient_waited_replays_where_none_waits(replays):
    """A double backward's graph feeds the weight's transpose from two places, so its
    plan of [addmm, t] is made with a gradient waiting for ``t``; a plain backward of the
    same sites has none waiting: the exact replay works its parts out again rather than
    read an argument that is not there (it was a raw JAX shape error)."""
    def f(L):
        x = L.tensor([[-1.4, -0.7, 1.8], [-1.2, -0.7, -0.8], [1.0, 1.0, -1.2]],
                     requires_grad=True)
        m = L.nn.Linear(3, 2)
        with L.no_grad():
            m.weight.copy_(L.tensor([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]]))
            m.bias.copy_(L.tensor([0.1, -0.1]))
        m.register_full_backward_pre_hook(lambda mod, go: None)  # ends the region at it
        out = []
        for step in range(6):
            x.grad = None
            loss = m(x * 1.5).tanh().sum()
            if step < 3:
                (g,) = L.autograd.grad(loss, [x], create_graph=True)
                (g * g).sum().backward()
            else:
                loss.backward()
            out.append([py(x.grad), py(m.weight.grad)])
        return out
    same_as_torch(f)
    assert ["AddmmBackward0", "TBackward0"] in replays


def test_a_replayed_region_whose_saved_values_changed_shape(replays, monkeypatch):
    """The plan's checks (ops, vjp keys, edges, the gradient's shape and dtype) do not fix
    the saved values' shapes: a vjp key says only "saved" for them. A contraction over the
    batch keeps every gradient's shape, so one plan replays for two batch sizes, and with
    tiered execution on (the default outside the suite) its program is asked on the
    arguments' own signature: each size compiles in the background (a signature taken from
    the plan would run the other size through ``jax.jit`` at once, compiling it in the
    caller's thread, and never record it). The plan takes the sites of each size's nodes
    in turn: a signature it hands the program is always the arguments' own."""
    real = tiered.Program.call_ready
    given = []

    def call_ready(self, *args, sig=None):
        if sig is not None and any(fn is self for fn in fusion._compiled.values()):
            given.append(sig == tiered.signature(args))
        return real(self, *args, sig=sig)
    monkeypatch.setattr(tiered.Program, "call_ready", call_ready)

    def f(L):
        out = []
        for batch in (3, 3, 3, 3, 5, 5, 5, 3, 5, 5, 3, 3):
            # no op whose vjp key holds a shape (a constant's operand, a view) inside
            a = L.tensor([[0.1 * k - 0.3 for k in range(batch)]], requires_grad=True)
            b = L.tensor([[0.2 - 0.1 * k] for k in range(batch)], requires_grad=True)
            y = (a * a).sin() @ b.cos().exp()  # (1, 1) whatever the batch
            (y.tanh() * 0.5).sum().backward()
            if L is hg:
                tiered.wait()  # the background compile ends: the next call runs it
            out.append([py(a.grad), py(b.grad)])
        return out
    with hg.autograd.set_tiered_execution(True):
        same_as_torch(f)
    assert len(replays) >= 6 and len({len(r) for r in replays}) == 1  # one plan, both sizes
    assert [len(fn._sigs) for fn in fusion._compiled.values()] == [2]  # one per size
    assert given and all(given)


def _chain_signatures(monkeypatch, steps, lazy_from=0):
    """``chain``'s backward ``steps`` times with tiered execution on (the deferred forward
    from step ``lazy_from`` on), checked against JAX's gradients: the signatures the
    plans worked out (``tiered.signature``'s calls) and the one plan replayed."""
    worked = []
    real = tiered.signature
    monkeypatch.setattr(tiered, "signature", lambda args: worked.append(1) or real(args))
    x, c = hg.tensor(X, requires_grad=True), hg.tensor(0.5)
    x._data, c._data  # small values are held on the host: in XLA now, deferred ops
    want = jax.grad(jax_chain)(jnp.asarray(X), jnp.asarray(0.5))
    with hg.autograd.set_tiered_execution(True):
        for step in range(steps):
            x.grad = None
            with hg.autograd.set_lazy_forward(step >= lazy_from):
                y = chain(hg, x, c)
            y.backward()
            tiered.wait()
            np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-7)
    (plan,) = [p for plans in fusion._plans.values() for p in plans if p.hits]
    return worked, plan


def test_a_plan_whose_nodes_hold_its_own_sites_works_out_its_signature_once(replays,
                                                                             monkeypatch):
    """A replayed region whose every node holds the plan's own ``NodeSite`` comes from
    the op sites the plan was made from (``lazy.Site``: the same argument shapes and
    dtypes), so its program's signature is the plan's, worked out at its first replay."""
    worked, plan = _chain_signatures(monkeypatch, 8)
    assert len(replays) >= 4
    assert plan.sig is not None and worked == [1]
    assert [len(fn._sigs) for fn in fusion._compiled.values()] == [1]


def test_a_plan_made_before_its_sites_takes_theirs_and_its_later_replays_are_exact(
        replays, monkeypatch):
    """A plan remembered from nodes recorded off an op site (the deferred forward off:
    each node has a ``NodeSite`` of its own) replays on the sites' nodes with equal keys;
    it then takes their sites, so later replays are exact and the program's signature is
    worked out once."""
    worked, plan = _chain_signatures(monkeypatch, 10, lazy_from=4)
    assert len(replays) >= 6 and worked == [1] and plan.sig is not None


def test_a_replay_on_the_plans_own_sites_still_checks_the_edges_it_did_not_follow(replays):
    """Nodes of a plan's own op sites have their edges where the plan's nodes had them, so
    a replay follows the plan's paths and looks only at the other edges (``plan.checks``).
    ``x * w`` is one op site whether ``w`` is a leaf or made by an op: its edge to the
    leaf's AccumulateGrad, now to an op node, refuses the plan, and the region walked
    afresh takes that node in (two MulBackward0), as node by node would run it next."""
    marks = []

    def f(L):
        x = L.tensor(X, requires_grad=True)
        w0 = L.tensor([1.5, -0.5, 2.0], requires_grad=True)
        out = []
        for step in range(12):  # the leaf's plan is the most used: tried first
            x.grad = w0.grad = None
            w = w0 * 2.0 if step % 3 == 2 else w0
            (x * w).sin().sum().backward()
            out.append([py(x.grad), py(w0.grad)])
            if L is hg:
                marks.append(len(replays))
        return out
    same_as_torch(f)
    seen = set()
    for step, (a, b) in enumerate(zip([0] + marks, marks)):
        for names in replays[a:b]:
            muls = names.count("MulBackward0")
            assert muls == (2 if step % 3 == 2 else 1), (step, names)
            seen.add(muls)
    assert seen == {1, 2}


def test_a_plan_moved_up_after_another_thread_shortened_its_list(replays, monkeypatch):
    """The most used plan of a first node moves up its list (``run``), which another
    thread's ``_remember`` may shorten meanwhile (a new plan: the list keeps four). The
    interleaving is made here: the list is cut between the plan's match and its move. The
    backward goes on with the list as it now is."""
    x = hg.tensor(X, requires_grad=True)
    c = hg.tensor(0.5)
    want = jax.grad(jax_chain)(jnp.asarray(X), jnp.asarray(0.5))
    for _ in range(3):
        chain(hg, x, c).backward()
    assert replays
    (kept,) = [plans for plans in fusion._plans.values() if any(p.hits for p in plans)]
    for _ in range(3):  # plans tried first that never match (another gradient's shape)
        other = fusion._Plan()
        other.shape, other.dtype, other.hits = (7, 7), None, 0
        kept.insert(0, other)
    spy = fusion._replay

    def cut_meanwhile(plan, *args):
        found = spy(plan, *args)
        if found is not None and len(kept) == 4:
            del kept[3:]  # another thread's ``_remember``, before it appends its plan
        return found
    monkeypatch.setattr(fusion, "_replay", cut_meanwhile)
    x.grad = None
    chain(hg, x, c).backward()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-7)
    assert len(kept) == 3
