"""``from_optax`` and the compiled-mode contract (``_state_arrays`` / ``_load_state_arrays``
through ``jax.jit``, and under ``hookgrad.compile``)."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import INIT, arr, leaf, quad_grad


# ------------------------------------------------------------------ from_optax

def test_from_optax_matches_optax():
    tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(0.05))
    ps = [leaf(a) for a in INIT]
    opt = optim.from_optax(ps, tx)
    ref = [jnp.asarray(a) for a in INIT]
    state = tx.init(ref)
    update = jax.jit(tx.update)
    for _ in range(4):
        grads = [jnp.asarray(quad_grad(k, np.asarray(r))) for k, r in enumerate(ref)]
        for p, g in zip(ps, grads):
            p.grad = hookgrad.Tensor._wrap(g)
        opt.step()
        upd, state = update(grads, state, ref)
        ref = optax.apply_updates(ref, upd)
    for p, r in zip(ps, ref):
        np.testing.assert_allclose(arr(p), np.asarray(r), rtol=1e-6, atol=1e-6)
    assert ps[0]._version == 4


def test_from_optax_skips_missing_grads_and_round_trips():
    ps = [leaf(a) for a in INIT]
    opt = optim.from_optax(ps, optax.sgd(0.1, momentum=0.9))
    opt.step()  # no grads at all: nothing happens
    assert ps[0]._version == 0
    ps[0].grad = hookgrad.tensor(np.ones(3, np.float32))
    opt.step()
    np.testing.assert_array_equal(arr(ps[1]), INIT[1])
    np.testing.assert_allclose(arr(ps[0]), INIT[0] - 0.1, rtol=1e-6)
    sd = opt.state_dict()
    qs = [leaf(arr(p)) for p in ps]
    opt2 = optim.from_optax(qs, optax.sgd(0.1, momentum=0.9))
    opt2.load_state_dict(sd)
    for o, params in ((opt, ps), (opt2, qs)):
        params[0].grad = hookgrad.tensor(np.ones(3, np.float32))
        o.step()
    np.testing.assert_array_equal(arr(ps[0]), arr(qs[0]))
    with pytest.raises(ValueError, match="does not match"):
        optim.from_optax(qs, optax.adam(0.1)).load_state_dict(sd)


# ------------------------------------------------------------------ compiled-mode contract

@pytest.mark.parametrize("name,kwargs", [("Adam", {"lr": 0.05, "amsgrad": True}),
                                         ("SGD", {"lr": 0.05, "momentum": 0.9})])
def test_state_arrays_lift_through_jit(name, kwargs):
    """Emulate hookgrad.compile: params, grads and optimizer state in and out of jax.jit."""
    ps = [leaf(a) for a in INIT]
    opt = getattr(optim, name)(ps, **kwargs)
    ref_ps = [leaf(a) for a in INIT]
    ref = getattr(optim, name)(ref_ps, **kwargs)
    traces = []

    def compiled(p_arrays, g_arrays, tree):
        traces.append(1)
        opt._load_state_arrays(tree)
        for p, a, g in zip(ps, p_arrays, g_arrays):
            p._data = a
            p.grad = hookgrad.Tensor._wrap(g)
        opt.step()
        out = [p._data for p in ps], opt._state_arrays()["state"]
        for p in ps:
            p.grad = None
        return out

    jitted = jax.jit(compiled)
    for i in range(6):
        if i == 3:  # a schedule: new lr, same program
            opt.param_groups[0]["lr"] = ref.param_groups[0]["lr"] = 0.01
        grads = [quad_grad(k, arr(p)) for k, p in enumerate(ps)]
        new_p, new_state = jitted([p._data for p in ps], grads, opt._state_arrays())
        for p, a in zip(ps, new_p):
            p._data = a
        opt._load_state_arrays({"state": new_state, "hparams": opt._state_arrays()["hparams"]})
        for k, p in enumerate(ref_ps):
            p.grad = hookgrad.tensor(grads[k])
        ref.step()
        for p, q in zip(ps, ref_ps):
            np.testing.assert_allclose(arr(p), arr(q), rtol=1e-6, atol=1e-6)
    # traced once without state (first step), once with it; the lr change did not retrace
    assert len(traces) == 2
    assert opt._hp_override is None
    sd, rsd = opt.state_dict(), ref.state_dict()
    for k in rsd["state"]:
        for n in rsd["state"][k]:
            np.testing.assert_allclose(arr(sd["state"][k][n]), arr(rsd["state"][k][n]),
                                       rtol=1e-6, atol=1e-6)
    # eager steps still work after compiled ones
    for k, p in enumerate(ps):
        p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
    opt.step()


def test_state_arrays_layout():
    ps = [leaf(a) for a in INIT]
    opt = optim.Adam([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}], lr=0.1)
    tree = opt._state_arrays()
    assert tree["state"] == [[], []]   # a list of blocks per group: none before a step
    assert float(tree["hparams"][1]["lr"]) == 0.5
    # group keys; weight_decay is left out: whether it is 0 shapes the program
    assert set(tree["hparams"][0]) == {"lr", "betas", "eps"}
    assert [float(b) for b in tree["hparams"][0]["betas"]] == pytest.approx([0.9, 0.999])
    ps[1].grad = hookgrad.tensor(np.ones((2, 2), np.float32))
    opt.step()
    tree = opt._state_arrays()
    assert tree["state"][0] == []
    [block] = tree["state"][1]
    assert block.index == (0,)   # the positions of its parameters in the group
    assert all(isinstance(x, jax.Array) for x in jax.tree_util.tree_leaves(tree))


def test_under_hookgrad_compile():
    """The real compiled mode: the step (backward + optimizer + zero_grad) as one program,
    an LR schedule feeding new rates without retracing, results equal to eager."""
    try:
        compile_ = hookgrad.compile
    except Exception as e:  # noqa: BLE001 - compiled mode is another module
        pytest.skip(f"hookgrad.compile unavailable: {e}")
    from hookgrad.optim import lr_scheduler
    c = hookgrad.tensor(np.array([0.5, -1.0, 2.0], np.float32))

    def make():
        ps = [leaf(a) for a in INIT]
        opt = optim.Adam(ps, lr=0.1, amsgrad=True)
        return ps, opt, lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def body(ps, opt):
        loss = (ps[0] * ps[0] * c).sum() + (ps[1] * ps[1]).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    ps, opt, sched = make()
    ref_ps, ref, ref_sched = make()
    step = compile_(lambda: body(ps, opt))
    for _ in range(6):
        loss = step()
        ref_loss = body(ref_ps, ref)
        sched.step()
        ref_sched.step()
        assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-5)
        for p, q in zip(ps, ref_ps):
            np.testing.assert_allclose(arr(p), arr(q), rtol=1e-5, atol=1e-6)
    assert opt.param_groups[0]["lr"] == 0.1 * 0.5 ** 3
    assert step.trace_count <= 2  # first call creates the state; the lr is an input
    assert opt.state[ps[0]]["step"].item() == 6.0
