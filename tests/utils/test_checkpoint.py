"""``hookgrad.utils.checkpoint``: activations re-computed in backward, in the three modes."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import nn
from hookgrad.utils.checkpoint import checkpoint, checkpoint_sequential

from ..differential import needs_torch, torch

if torch is not None:
    import torch.utils.checkpoint  # noqa: F401 - torch.utils does not import it


def _arr(t):
    return np.asarray(t._data, dtype=np.float64)


def _block(dropout=0.0):
    hg.manual_seed(0)
    layers = [nn.Linear(3, 4), nn.Tanh()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers, nn.Linear(4, 4), nn.Tanh())


def _run(L, blk, x_data, use_reentrant, seed=5):
    """(packs seen by an outer saved-tensor hook, forward calls of the block, grads)."""
    x = L.tensor(x_data, requires_grad=True)
    calls, packs = [0], [0]

    def fn(z):
        calls[0] += 1
        return blk(z)

    def pack(t):
        packs[0] += 1
        return t

    if L is hg:
        hg.manual_seed(seed)
    with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if use_reentrant is None:
            y = fn(x)
        else:
            y = L.utils.checkpoint.checkpoint(fn, x, use_reentrant=use_reentrant)
    (y * y).sum().backward()
    grads = [p.grad for p in blk.parameters()] + [x.grad]
    return packs[0], calls[0], [np.asarray(g.detach().numpy() if L is not hg else g._data,
                                           dtype=np.float64) for g in grads]


X = np.random.RandomState(0).randn(2, 3).astype(np.float32)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_recomputes_instead_of_saving(use_reentrant):
    n0, c0, g0 = _run(hg, _block(), X, None)
    n1, c1, g1 = _run(hg, _block(), X, use_reentrant)
    assert n0 > 0 and c0 == 1
    # only the segment's input is saved (as in PyTorch); its activations are re-computed
    assert n1 == 1
    assert c1 == 2            # the forward ran again in backward
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@needs_torch
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_packs_and_grads_as_torch(use_reentrant):
    hb = _block()
    tb = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4),
                             torch.nn.Tanh())
    tb.load_state_dict({k: torch.tensor(_arr(v)).float() for k, v in hb.state_dict().items()})
    got = _run(hg, hb, X, use_reentrant)
    want = _run(torch, tb, X, use_reentrant)
    assert got[:2] == want[:2]
    for a, b in zip(got[2], want[2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_mask_replayed(use_reentrant):
    _, _, g0 = _run(hg, _block(0.5), X, None)
    _, _, g1 = _run(hg, _block(0.5), X, use_reentrant)
    _, _, g2 = _run(hg, _block(0.5), X, None, seed=6)
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert any(not np.allclose(a, b) for a, b in zip(g0, g2))   # the mask matters


def test_preserve_rng_state_false_draws_a_new_mask():
    _, _, g0 = _run(hg, _block(0.5), X, None)
    blk = _block(0.5)
    x = hg.tensor(X, requires_grad=True)
    hg.manual_seed(5)
    y = checkpoint(blk, x, use_reentrant=False, preserve_rng_state=False)
    (y * y).sum().backward()
    assert not np.allclose(_arr(x.grad), g0[-1])


def test_warning_and_bad_arguments():
    blk = _block()
    x = hg.randn(2, 3, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9"):
        checkpoint(blk, x)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly"):
        checkpoint_sequential(blk, 2, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(blk, x, use_reentrant=False)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(blk, x, use_reentrant=True, scale=2)
    with pytest.raises(ValueError, match="Passing `context_fn` or `debug` is only supported"):
        checkpoint(blk, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(blk, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(blk, 2, x, use_reentrant=False, foo=1)


def test_non_reentrant_passes_kwargs_and_works_with_autograd_grad():
    blk = _block()
    x = hg.randn(2, 3, requires_grad=True)
    y = checkpoint(lambda a, scale: blk(a) * scale, x, scale=3.0, use_reentrant=False)
    (g,) = hg.autograd.grad(y.sum(), x)
    x2 = hg.tensor(x._data, requires_grad=True)
    (blk(x2) * 3.0).sum().backward()
    np.testing.assert_allclose(_arr(g), _arr(x2.grad), rtol=1e-6)


def test_checkpoint_sequential_equals_plain():
    blk = _block()
    x = hg.randn(2, 3, requires_grad=True)
    checkpoint_sequential(blk, 2, x, use_reentrant=False).sum().backward()
    got = [_arr(p.grad) for p in blk.parameters()] + [_arr(x.grad)]
    blk.zero_grad()
    x2 = hg.tensor(x._data, requires_grad=True)
    blk(x2).sum().backward()
    want = [_arr(p.grad) for p in blk.parameters()] + [_arr(x2.grad)]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)


class _Net(nn.Module):
    def __init__(self, ck):
        super().__init__()
        self.a, self.b, self.ck = nn.Linear(3, 4), nn.Linear(4, 2), ck

    def forward(self, x):
        if self.ck:
            h = checkpoint(lambda z: self.a(z).tanh(), x, use_reentrant=False)
        else:
            h = self.a(x).tanh()
        return self.b(h)


def test_functional_mode_is_jax_checkpoint():
    hg.manual_seed(0)
    m = _Net(True)
    e = _Net(False)
    e.load_state_dict(m.state_dict())
    params = hg.func.state(m)
    x = jnp.ones((2, 3))

    def loss(p, mod):
        return hg.func.functional_call(mod, p, (x,)).sum()
    text = str(jax.make_jaxpr(jax.grad(loss), static_argnums=1)(params, m))
    assert "checkpoint" in text or "remat" in text
    assert "checkpoint" not in str(jax.make_jaxpr(jax.grad(loss), static_argnums=1)(params, e))
    g1, g2 = jax.grad(loss)(params, m), jax.grad(loss)(params, e)
    for k in g1:
        np.testing.assert_allclose(np.asarray(g1[k]), np.asarray(g2[k]), rtol=1e-6)


def test_compiled_step_recomputes_behind_a_barrier():
    hg.manual_seed(0)
    m = _Net(True)
    e = _Net(False)
    e.load_state_dict(m.state_dict())
    x = hg.randn(2, 3)
    losses = []
    for net, wrap in ((m, hg.compile), (e, lambda f: f)):
        opt = hg.optim.SGD(net.parameters(), lr=0.1)

        def make(net=net, opt=opt):
            def step(x):
                loss = net(x).sum()
                loss.backward()
                opt.step()
                opt.zero_grad()
                return loss
            return step
        step = wrap(make())
        losses.append([float(step(x)) for _ in range(2)])
        if net is m:
            assert "optimization_barrier" in str(step.jaxpr(x))
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-6)
    for p, q in zip(m.parameters(), e.parameters()):
        np.testing.assert_allclose(_arr(p), _arr(q), rtol=1e-6)


def _twice_read(L, seen):
    class MyFunc(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            try:  # re-made tensors are freed once unpacked, as PyTorch frees them
                ctx.saved_tensors
            except RuntimeError as e:
                seen.append((type(e).__name__, str(e)))
            return g * y, g * x
    return MyFunc


def _checkpointed_function_grads(L):
    seen, calls = [], [0]
    MyFunc = _twice_read(L, seen)
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = L.tensor([3.0, 4.0], requires_grad=True)

    def seg(x, y):
        calls[0] += 1
        return MyFunc.apply(x * y, y)
    out = L.utils.checkpoint.checkpoint(seg, x, y, use_reentrant=False).sum()
    out.backward(retain_graph=True)  # each backward re-runs the segment once
    out.backward()
    return seen, calls[0], x.grad.tolist(), y.grad.tolist()


def test_non_reentrant_unpack_of_a_freed_tensor_raises_per_backward():
    seen, calls, gx, gy = _checkpointed_function_grads(hg)
    assert calls == 3 and gx == [18.0, 32.0] and gy == [12.0, 32.0]
    assert len(seen) == 2 and seen[0][0] == "CheckpointError"
    assert seen[0][1].startswith("torch.utils.checkpoint: Unpack is being triggered for a "
                                 "tensor that was already unpacked once. If you are calling "
                                 "ctx.saved_tensors in backward, make sure to do so only once.")
    assert issubclass(hg.utils.checkpoint.CheckpointError, RuntimeError)


@needs_torch
def test_non_reentrant_unpack_of_a_freed_tensor_as_torch():
    assert _checkpointed_function_grads(hg) == _checkpointed_function_grads(torch)
