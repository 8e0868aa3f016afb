"""A compiled training step's first call, which creates ``.grad`` and the optimizer's
state, runs by the program of the calls after it: one XLA compilation for the loop
(``hookgrad._compile.first_call``), with the first call's results, state and hooks as eager."""
import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg


@pytest.fixture
def lowerings():
    # programs lowered to XLA: each is compiled or, with the persistent cache, loaded
    seen = collections.Counter()

    def listen(event, duration_secs=0.0, **kw):
        if event.endswith("jaxpr_to_mlir_module_duration"):
            seen["n"] += 1
    jax.monitoring.register_event_duration_secs_listener(listen)
    yield seen
    jax.monitoring.unregister_event_duration_listener(listen)


def _model(opt_cls, **kw):
    hg.manual_seed(0)
    m = hg.nn.Sequential(hg.nn.Linear(3, 5), hg.nn.Tanh(), hg.nn.Linear(5, 2))
    calls = []
    # a host hook: runs on every compiled call with its values, not only while tracing
    m[2].register_full_backward_hook(hg.compile.host_hook(
        lambda mod, gin, gout: calls.append(np.abs(gout[0].numpy()).sum().round(4))))
    return m, opt_cls(m.parameters(), **kw), calls


def _step(m, opt):
    def step(x):
        opt.zero_grad()
        loss = m(x).square().mean()
        loss.backward()
        opt.step()
        return loss
    return step


def _same_state(me, oe, mc, oc):
    for (k, pe), pc in zip(me.named_parameters(), mc.parameters()):
        np.testing.assert_allclose(pc.detach().numpy(), pe.detach().numpy(), rtol=1e-5,
                                   atol=1e-7, err_msg=k)
        np.testing.assert_allclose(pc.grad.numpy(), pe.grad.numpy(), rtol=1e-5, atol=1e-7)
        assert pc._version == pe._version
        se, sc = oe.state[pe], oc.state[pc]
        assert se.keys() == sc.keys()
        for name in se:
            np.testing.assert_allclose(np.asarray(sc[name]), np.asarray(se[name]),
                                       rtol=1e-5, atol=1e-7, err_msg=f"{k} {name}")


def test_a_training_loop_compiles_its_step_once(lowerings):
    me, oe, calls_e = _model(hg.optim.AdamW, lr=0.05)
    mc, oc, calls_c = _model(hg.optim.AdamW, lr=0.05)
    xs = [hg.randn(4, 3) for _ in range(3)]
    eager, compiled = _step(me, oe), hg.compile(_step(mc, oc))
    jnp.asarray(0.05)  # the optimizer's hyper-parameter scalars: made once per process
    assert all(p.grad is None for p in mc.parameters()) and not oc.state_dict()["state"]
    n = 0
    for x in xs:
        lowerings.clear()
        loss = compiled(x).item()
        n += lowerings["n"]
        assert n == 1   # the first call compiles the program of all three
        np.testing.assert_allclose(loss, eager(x).item(), rtol=1e-5)
        _same_state(me, oe, mc, oc)
    assert compiled.trace_count == 1
    assert calls_c == calls_e and len(calls_c) == 3


def test_trace_count_counts_programs_kept_not_traces():
    # as its docstring and docs/modes.md say: the first call traces twice, keeps one
    m, opt, _ = _model(hg.optim.Adam, lr=0.05)
    traces = []
    note = hg.compile.trace_only(lambda: traces.append(1))
    step = _step(m, opt)
    compiled = hg.compile(lambda x: (note(), step(x))[1])
    x = hg.randn(4, 3)
    for _ in range(3):
        compiled(x)
        assert (len(traces), compiled.trace_count) == (2, 1)
    compiled.cache_clear()
    compiled(x)       # a program traced again is counted again
    assert (len(traces), compiled.trace_count) == (3, 2)


@pytest.mark.parametrize("opt_cls, kw", [
    (hg.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (hg.optim.Adagrad, dict(lr=0.1, initial_accumulator_value=0.5)),
    (hg.optim.RMSprop, dict(lr=0.01, momentum=0.5)),
])
def test_first_step_by_the_steady_program_matches_eager(opt_cls, kw):
    me, oe, calls_e = _model(opt_cls, **kw)
    mc, oc, calls_c = _model(opt_cls, **kw)
    eager, compiled = _step(me, oe), hg.compile(_step(mc, oc))
    for _ in range(3):
        x = hg.randn(4, 3)
        np.testing.assert_allclose(compiled(x).item(), eager(x).item(), rtol=1e-5)
        _same_state(me, oe, mc, oc)
    assert compiled.trace_count == 1 and calls_c == calls_e


def test_a_step_that_reads_grad_before_zero_grad_runs_its_own_first_program():
    # the first call sees .grad None, the next ones a Tensor: two programs, as eager
    def make(m, opt):
        def step(x):
            had = m[0].weight.grad is not None
            opt.zero_grad()
            m(x).sum().backward()
            opt.step()
            return had
        return step
    me, oe, _ = _model(hg.optim.Adam, lr=0.1)
    mc, oc, _ = _model(hg.optim.Adam, lr=0.1)
    eager, compiled = make(me, oe), hg.compile(make(mc, oc))
    for _ in range(3):
        x = hg.randn(4, 3)
        assert compiled(x) == eager(x)
        _same_state(me, oe, mc, oc)
    assert compiled.trace_count == 2


def test_accumulating_grads_first_call_matches_eager():
    # no zero_grad and no optimizer: each call runs the program its .grad state keys
    def make(m):
        def step(x):
            m(x).sum().backward()
        return step
    me, _, _ = _model(hg.optim.SGD, lr=0.1)
    mc, _, _ = _model(hg.optim.SGD, lr=0.1)
    eager, compiled = make(me), hg.compile(make(mc))
    for _ in range(3):
        x = hg.randn(4, 3)
        eager(x)
        compiled(x)
        for pe, pc in zip(me.parameters(), mc.parameters()):
            np.testing.assert_allclose(pc.grad.numpy(), pe.grad.numpy(), rtol=1e-5)
            assert pc.grad._version == pe.grad._version
    assert compiled.trace_count == 2



def test_an_optax_optimizer_first_call_matches_eager():
    # from_optax makes its state up front: the first call creates only .grad, which the
    # steady program drops unread (zero_grad)
    import optax
    me, _, calls_e = _model(hg.optim.SGD, lr=0.1)
    mc, _, calls_c = _model(hg.optim.SGD, lr=0.1)
    oe = hg.optim.from_optax(me.parameters(), optax.adam(0.05))
    oc = hg.optim.from_optax(mc.parameters(), optax.adam(0.05))
    eager, compiled = _step(me, oe), hg.compile(_step(mc, oc))
    for _ in range(3):
        x = hg.randn(4, 3)
        np.testing.assert_allclose(compiled(x).item(), eager(x).item(), rtol=1e-5)
        for pe, pc in zip(me.parameters(), mc.parameters()):
            np.testing.assert_allclose(pc.detach().numpy(), pe.detach().numpy(), rtol=1e-5)
    assert compiled.trace_count == 1 and calls_c == calls_e


def test_initial_state_values_are_folded_or_computed():
    # what the steady program's first call reads: constants folded in NumPy, values
    # computed from the inputs by the part of P1 that computes them
    from types import SimpleNamespace
    from hookgrad._compile import first_call

    def p1(x, k):
        return jnp.zeros((2, 3)), x * 2.0, jnp.full((3,), 7, jnp.int32), jax.jit(
            lambda: jnp.ones(4))()
    x = jnp.arange(3.0)
    closed = jax.make_jaxpr(p1)(x, jnp.zeros(2, jnp.uint32))
    plan = SimpleNamespace(flat=[x], rng=jax.random.key(0))
    vals = first_call._evaluate(closed, plan, list(closed.jaxpr.outvars))
    want = [np.zeros((2, 3)), [0.0, 2.0, 4.0], [7, 7, 7], np.ones(4)]
    for v, w, a in zip(vals, want, closed.out_avals):
        assert isinstance(v, jax.Array) and v.dtype == a.dtype and v.shape == a.shape
        np.testing.assert_array_equal(np.asarray(v), w)
    assert len({id(v) for v in vals}) == 4   # one buffer each: the program may donate them
