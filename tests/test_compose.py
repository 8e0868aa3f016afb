"""Every hook kind in every mode under every transformation the mode admits: the same
gradients and the same ordered hook log as the eager run (and as PyTorch's, where torch is
installed). The programs and runners are in tests/_compose.py.

mode x transform: eager (plain, grad_of_grad: ``create_graph=True``), compiled
(``hookgrad.compile``: jit, grad_of_grad), functional (``functional_call`` under
``jax.grad``: plain, jit, vmap, grad_of_grad: ``jax.grad(jax.grad(...))``). ``vmap`` is not
a transformation of eager or compiled code (no ``vmap`` of a tape), hence not in their rows.
"""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from tests import _compose as C
from tests.differential import close, needs_torch, py, torch
from tests.test_func import _close

TRANSFORMS = {"eager": ("plain", "grad_of_grad"),
              "compiled": ("jit", "grad_of_grad"),
              "functional": ("plain", "jit", "vmap", "grad_of_grad")}

# Documented differences: the cell still runs and asserts what the documentation says.
DOCUMENTED = {
    # docs/modes.md, "torch.func hooks" row: post-accumulate-grad hooks are not called
    # (JAX returns gradients as values; nothing is accumulated into .grad)
    **{("functional", t, "post_accumulate"): "not called"
       for t in TRANSFORMS["functional"]},
    # docs/modes.md Differences, "double backward (jax.grad of jax.grad)" row: the outer
    # level differentiates the inner backward's JAX ops; unpack runs once per saved tensor
    ("functional", "grad_of_grad", "saved_tensors"): "unpacked once",
}

# Real bugs, not fixed here (listed in the issue 14 note).
XFAIL = {}


def _cells():
    # eager is the reference of each cell; it is checked against PyTorch below
    for mode, transforms in TRANSFORMS.items():
        if mode == "eager":
            continue
        for transform in transforms:
            for kind in C.KINDS:
                marks = ()
                if (mode, transform, kind) in XFAIL:
                    marks = pytest.mark.xfail(strict=True,
                                              reason=XFAIL[mode, transform, kind])
                yield pytest.param(mode, transform, kind, marks=marks,
                                   id=f"{mode}-{transform}-{kind}")


_EAGER = {}


def _eager(kind, transform):
    """The reference run, once per (kind, transform) for the whole module."""
    key = (kind, transform)
    if key not in _EAGER:
        if transform == "vmap":
            _EAGER[key] = C.per_example_eager(kind)
        else:
            _EAGER[key] = C.run(kind, "eager", "grad_of_grad" if transform == "grad_of_grad"
                                else "plain")
    return _EAGER[key]


def _squeeze(log):
    # A host hook under jax.vmap runs once per example, except when none of its arguments
    # is batched (a parameter, a name, a constant cotangent): then once (docs/modes.md
    # Differences, "host hooks under jax.vmap" row). Runs of equal entries are one.
    return [e for i, e in enumerate(log) if i == 0 or e != log[i - 1]]


@pytest.mark.parametrize("mode, transform, kind", list(_cells()))
def test_mode_and_transform_match_eager(mode, transform, kind):
    grads_e, log_e, counts_e = _eager(kind, transform)
    assert log_e, "every program's hooks record something eagerly"
    grads, log, counts = C.run(kind, mode, transform)
    _close(grads, grads_e)
    documented = DOCUMENTED.get((mode, transform, kind))
    runs = 2 if mode == "compiled" or transform == "jit" else 1  # the cached program, again
    if documented == "not called":
        assert log == []
    elif documented == "unpacked once":
        assert counts["pack"] == counts["unpack"] == counts_e["pack"]
        assert counts_e["unpack"] > counts_e["pack"]   # PyTorch unpacks in both backwards
        assert log == log_e[:len(log)] and len(log) == 2 * counts_e["pack"]
    elif transform == "vmap":
        assert _squeeze(log) == _squeeze(log_e)
        assert counts == counts_e
    else:
        assert log == log_e * runs
        # pack/unpack run once per saved tensor: eagerly, and while the program is traced
        assert counts == counts_e


@needs_torch
@pytest.mark.parametrize("transform", ["plain", "grad_of_grad"])
@pytest.mark.parametrize("kind", C.KINDS)
def test_eager_matches_pytorch(kind, transform):
    grads, log, counts = _eager(kind, transform)
    grads_t, log_t, counts_t = C.run(kind, "eager", transform, L=torch)
    _close(grads, grads_t)
    assert close(py(log), py(log_t), tol=1e-4), f"hookgrad: {log}\n   torch: {log_t}"
    assert counts == counts_t


@pytest.mark.parametrize("kind", [k for k in C.KINDS if k != "mod_tracker"])
def test_the_hooks_change_or_see_the_gradients(kind):
    # the matrix would pass with hooks that do nothing: each kind's hooks act or record
    plain = _eager("mod_tracker", "plain")[0]   # ModTracker's hooks only record
    grads, log, _ = _eager(kind, "plain")
    changes = any(not np.allclose(grads[k], plain[k]) for k in grads)
    assert changes or kind in ("post_accumulate", "multi_grad", "saved_tensors",
                               "returns_arg"), kind
    assert any(isinstance(v, float) and v != 0.0 for e in log for v in e[1:]), log


# --------------------------------------------------------------------------- single checks


@pytest.mark.xfail(strict=True, reason="F.linear's node is AddmmBackward0 with grad_inputs "
                   "in linear's order (input, weight, bias); PyTorch's AddmmBackward0 has "
                   "(bias, input, weight.t())")
@needs_torch
def test_linear_node_grad_inputs_in_pytorchs_order():
    def fn(L):
        L.manual_seed(0)
        lin = L.nn.Linear(3, 2)
        out = lin(L.ones(4, 3))
        seen = []
        out.grad_fn.register_hook(lambda gi, go: seen.append([g is None for g in gi]))
        out.sum().backward()
        return seen
    got, want = fn(hg), fn(torch)
    assert got == want


def _penalty_step(m, create_graph_via):
    params = list(m.parameters())

    def step(x):
        loss = (m(x) ** 2).sum()
        if create_graph_via == "backward":
            loss.backward(create_graph=True)
            gs = [p.grad for p in params]
            m.zero_grad()
        else:
            gs = hg.autograd.grad(loss, params, create_graph=True)
        pen = sum((g * g).sum() for g in gs)
        pen.backward()
        return pen
    return step


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("via", ["backward", "autograd.grad"])
def test_create_graph_inside_compile(via):
    # create_graph=True inside hookgrad.compile: the double backward is traced with the rest
    hg.manual_seed(0)
    m, x = hg.nn.Sequential(hg.nn.Linear(3, 4), hg.nn.Tanh(), hg.nn.Linear(4, 2)), hg.randn(3, 3)
    hooked = []
    m[0].weight.register_hook(hg.compile.host_hook(lambda g: hooked.append(g.sum().item())))
    pen_e = _penalty_step(m, via)(x).item()
    grads_e = {k: p.grad.numpy() for k, p in m.named_parameters()}
    log_e = list(hooked)
    assert len(log_e) == 2   # the hook runs in both backwards
    step = hg.compile(_penalty_step(m, via))
    for _ in range(2):
        m.zero_grad()
        pen = step(x)
    assert step.trace_count == 1
    np.testing.assert_allclose(pen.item(), pen_e, rtol=1e-5)
    _close({k: p.grad.numpy() for k, p in m.named_parameters()}, grads_e)
    assert hooked == log_e * 3


@pytest.mark.parametrize("hook", ["tensor", "module_pre"])
def test_grad_of_grad_through_functional_hooks_matches_pytorch(hook):
    # jax.grad(jax.grad(...)) over functional_call with a gradient-changing hook: both
    # backwards run it, as PyTorch's double backward does
    def install(L, net):
        if hook == "tensor":
            net.fc1.register_forward_hook(
                lambda m, a, out: out.register_hook(lambda g: g * 2.0) and None)
        else:
            net.fc2.register_full_backward_pre_hook(lambda m, go: (go[0] * 3.0,))

    net, x, y = C.make()
    install(hg, net)

    def loss_fn(p):
        return hg.func.functional_call(net, p, (x._data, y._data))

    def penalty(p):
        return sum(jnp.sum(v ** 2) for v in jax.grad(loss_fn)(p).values())

    got = {k: np.asarray(v) for k, v in jax.grad(penalty)(hg.func.state(net)).items()}
    C._eager_step(hg, net, contextlib.nullcontext, "grad_of_grad")(x, y)
    _close(got, {k: p.grad.numpy() for k, p in net.named_parameters()})
    if torch is not None:
        tnet, tx, ty = C.make(torch)
        install(torch, tnet)
        C._eager_step(torch, tnet, contextlib.nullcontext, "grad_of_grad")(tx, ty)
        _close(got, {k: p.grad.numpy() for k, p in tnet.named_parameters()})
