"""One small program per hook kind, run in every mode under every transformation it admits
(tests/test_compose.py), as JAX's own tests compose each feature with jit/vmap/grad.

A program is a two-layer net ``fc2(relu(fc1(x)))`` whose forward returns the squared-error
loss, with one kind of hook installed by ``install(kind, env, net)``. ``env`` carries the
library (``hookgrad`` or ``torch``, so the same installer serves the differential check)
and ``rec(tag, *tensors)``, which appends ``(tag, sum of each tensor)`` to the hook log: a
``hookgrad.compile.host_hook``, so that it records every call's values in every mode.

A run returns ``(gradients, hook log, pack/unpack counts)``:
- transforms: ``plain`` (one backward), ``jit`` (``jax.jit``: the program is reused, so it
  runs twice), ``vmap`` (per-example gradients), ``grad_of_grad`` (the gradient of the
  squared norm of the gradient: ``create_graph=True`` eagerly and compiled,
  ``jax.grad(jax.grad(...))`` functionally);
- modes: ``eager`` (the engine), ``compiled`` (``hookgrad.compile`` of the eager step, run
  twice, traced once), ``functional`` (``hookgrad.func.functional_call`` under ``jax.grad``).
"""
import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np

import hookgrad as hg

from hookgrad._autograd.hooks import KINDS as _TABLE

# the program that exercises each row of the hook table (``hookgrad._autograd.hooks``);
# retain_grad fills a non-leaf's ``.grad``, which no program returns: tests/autograd and
# tests/test_three_modes.py cover it
PROGRAM_OF = {"Tensor.register_hook": "tensor", "Node.register_prehook": "node",
              "Node.register_hook": "node",
              "Tensor.register_post_accumulate_grad_hook": "post_accumulate",
              "Tensor.retain_grad": None}
# the table's kinds, then those built on them: multi-grad hooks (tensor hooks), saved-tensor
# hook contexts, module hooks (node post-hooks of identity nodes), ModTracker, and every
# kind returning its argument
KINDS = (*dict.fromkeys(p for p in map(PROGRAM_OF.__getitem__, (k.name for k in _TABLE)) if p),
         "multi_grad", "saved_tensors", "module", "mod_tracker", "returns_arg")
BATCH = 3


def net_class(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = L.nn.Linear(3, 4)
            self.fc2 = L.nn.Linear(4, 2)

        def forward(self, x, y):
            return ((self.fc2(L.relu(self.fc1(x))) - y) ** 2).sum()
    return Net


def make(L=hg):
    """A fresh net and its batch: the same values in both libraries."""
    hg.manual_seed(0)
    net = net_class(hg)()
    x, y = hg.randn(BATCH, 3), hg.randn(BATCH, 2)
    if L is hg:
        return net, x, y
    tnet = net_class(L)()
    with L.no_grad():
        for k, p in tnet.named_parameters():
            p.copy_(L.tensor(np.asarray(net.get_parameter(k)._data)))
    return tnet, L.tensor(np.asarray(x._data)), L.tensor(np.asarray(y._data))


class Env:
    """What an installer needs of the library, and the log it writes."""

    def __init__(self, L):
        self.L = L
        self.log = []
        self.counts = {"pack": 0, "unpack": 0}
        if L is hg:
            from hookgrad.utils.mod_tracker import ModTracker
            self.rec = hg.compile.host_hook(self._rec)
        else:
            from torch.distributed._tools.mod_tracker import ModTracker
            self.rec = self._rec
        self.ModTracker = ModTracker

    def _rec(self, tag, *ts):
        self.log.append((tag, *[None if t is None else round(float(t.detach().sum()), 4) for t in ts]))


def _scaled(env, tag, factor):
    def hook(g):
        env.rec(tag, g)
        return g * factor
    return hook


def install(kind, env, net):
    """Register ``kind``'s hooks on ``net``; returns (context around the whole run, context
    around the forward)."""
    L, rec = env.L, env.rec
    run_ctx = fwd_ctx = contextlib.nullcontext
    if kind == "tensor":
        net.fc1.weight.register_hook(_scaled(env, "param", 0.5))
        net.fc1.register_forward_hook(
            lambda m, a, out: out.register_hook(_scaled(env, "out", 2.0)) and None)
    elif kind == "node":
        def pre(go):
            rec("pre", go[0])
            return (go[0] + 0.01,)

        def post(gi, go):
            rec("post", *gi, *go)
            return tuple(None if g is None else g * 1.5 for g in gi)
        # the pre-hook on fc1's AddmmBackward0, the post-hook on the ReluBackward0 fc2 reads
        # (test_compose.test_linear_node_grad_inputs_in_pytorchs_order: why not on addmm)
        net.fc1.register_forward_hook(lambda m, a, out: out.grad_fn.register_prehook(pre)
                                      and None)
        net.fc2.register_forward_pre_hook(lambda m, a: a[0].grad_fn.register_hook(post)
                                          and None)
    elif kind == "post_accumulate":
        net.fc1.weight.register_post_accumulate_grad_hook(lambda p: rec("acc", p.grad))
        net.fc2.bias.register_post_accumulate_grad_hook(lambda p: rec("acc", p.grad))
    elif kind == "multi_grad":
        reg = L.autograd.graph.register_multi_grad_hook

        # over two halves of fc1's output that the hook then joins: registered before
        # their use (in functional mode a hook covers the uses after its registration,
        # docs/modes.md "torch.func hooks" row), and not leaves (PyTorch refuses a leaf
        # in a multi-grad hook during autograd.grad)
        def fwd(m, args, out):
            a, b = out.chunk(2, dim=-1)
            reg((a, b), lambda gs: rec("all", *gs))
            # "any" in argument order, which the engine's order is here (docs/modes.md: the
            # functional mode passes the first non-zero cotangent in argument order)
            reg((a, b), lambda g: rec("any", g), mode="any")
            return L.cat((a, b), dim=-1)
        net.fc1.register_forward_hook(fwd)
    elif kind == "saved_tensors":
        def pack(t):
            env.counts["pack"] += 1
            rec("pack", t)
            return t * 2.0

        def unpack(p):
            env.counts["unpack"] += 1
            rec("unpack", p)
            return p / 2.0
        fwd_ctx = functools.partial(L.autograd.graph.saved_tensors_hooks, pack, unpack)
    elif kind == "module":
        net.fc2.register_forward_pre_hook(lambda m, a: rec("fwd_pre", a[0]))
        net.fc2.register_forward_hook(lambda m, a, out: rec("fwd", out))

        def bw_pre(m, go):
            rec("bw_pre", *go)
            return (go[0] * 2.0,)

        def bw(m, gi, go):
            rec("bw", *gi, *go)
            return (gi[0].clamp(-0.5, 0.5),)
        net.fc2.register_full_backward_pre_hook(bw_pre)
        net.fc2.register_full_backward_hook(bw)
    elif kind == "mod_tracker":
        tracker = env.ModTracker()

        def event(tag):
            def hook(mod, *rest):
                env.log.append((tag, tracker.get_known_fqn(mod).split(".", 1)[-1]))
            return hg.compile.host_hook(hook) if L is hg else hook
        tracker.register_user_hooks(event("pre_fw"), event("post_fw"), event("pre_bw"),
                                    event("post_bw"))
        run_ctx = lambda: tracker  # noqa: E731 - the tracker is its own context
    elif kind == "returns_arg":
        _install_returns_arg(env, net)
    else:
        raise ValueError(kind)
    return run_ctx, fwd_ctx


def _install_returns_arg(env, net):
    """Every kind of hook returns its own argument, which PyTorch counts as unmodified (a
    post-accumulate-grad hook may return its tensor): the gradients stay those of no hooks."""
    rec = env.rec

    def same(tag):
        def hook(g):
            rec(tag, g)
            return g
        return hook

    def pre(go):
        rec("pre", go[0])
        return go

    def post(gi, go):
        rec("post", *gi)
        return gi

    def fc1_out(m, args, out):
        out.register_hook(same("out"))
        out.grad_fn.register_prehook(pre)

    net.fc1.weight.register_hook(same("param"))
    net.fc1.register_forward_hook(fc1_out)
    net.fc2.register_forward_pre_hook(lambda m, a: a[0].grad_fn.register_hook(post) and None)
    net.fc2.register_full_backward_pre_hook(lambda m, go: go)
    net.fc2.register_full_backward_hook(lambda m, gi, go: gi)
    net.fc2.bias.register_post_accumulate_grad_hook(lambda p: p)  # not called functionally


# --------------------------------------------------------------------------- runners


def _eager_step(L, net, fwd_ctx, transform):
    """The step PyTorch code writes: forward, backward (twice for grad_of_grad)."""
    def step(x, y):
        with fwd_ctx():
            loss = net(x, y)
        if transform == "grad_of_grad":
            gs = L.autograd.grad(loss, list(net.parameters()), create_graph=True)
            loss = sum((g ** 2).sum() for g in gs)
        loss.backward()
        return loss
    return step


def _grads_of(net):
    return {k: p.grad.detach().numpy() for k, p in net.named_parameters()}


def run(kind, mode, transform, L=hg):
    """``(gradients, log, counts)`` of the ``kind`` program in ``mode`` under ``transform``."""
    env = Env(L)
    net, x, y = make(L)
    run_ctx, fwd_ctx = install(kind, env, net)
    with run_ctx():
        if mode == "eager":
            _eager_step(L, net, fwd_ctx, transform)(x, y)
            grads = _grads_of(net)
        elif mode == "compiled":
            step = hg.compile(_eager_step(L, net, fwd_ctx, transform))  # jit or grad_of_grad
            for _ in range(2):
                net.zero_grad()   # outside: .grad present or not is part of the cache key
                step(x, y)
            assert step.trace_count == 1
            grads = _grads_of(net)
        else:
            grads = _functional(net, x, y, fwd_ctx, transform)
    return grads, env.log, env.counts


def _functional(net, x, y, fwd_ctx, transform):
    def loss_fn(p, x, y):
        with fwd_ctx():
            return hg.func.functional_call(net, p, (x, y))

    params = hg.func.state(net)
    if transform == "plain":
        g = jax.grad(loss_fn)(params, x._data, y._data)
    elif transform == "jit":
        f = jax.jit(jax.grad(loss_fn))
        for _ in range(2):
            g = f(params, x._data, y._data)
    elif transform == "vmap":
        def one(p, xi, yi):
            return loss_fn(p, xi[None], yi[None])
        g = jax.vmap(jax.grad(one), in_axes=(None, 0, 0))(params, x._data, y._data)
    else:
        def penalty(p):
            return sum(jnp.sum(v ** 2) for v in jax.grad(loss_fn)(p, x._data, y._data).values())
        g = jax.grad(penalty)(params)
    return {k: np.asarray(v) for k, v in g.items()}


def per_example_eager(kind):
    """The vmap reference: one eager run per example. Returns (per-example gradients
    stacked, log in vmap's order, counts): a host hook under ``jax.vmap`` runs once per
    example at each place it is reached, so entry k of every example comes before entry
    k+1 of any."""
    grads, logs, counts = [], [], {"pack": 0, "unpack": 0}
    for i in range(BATCH):
        env = Env(hg)
        net, x, y = make()
        run_ctx, fwd_ctx = install(kind, env, net)
        with run_ctx():
            _eager_step(hg, net, fwd_ctx, "plain")(x[i:i + 1], y[i:i + 1])
        grads.append(_grads_of(net))
        logs.append(env.log)
        counts = env.counts
    assert len({len(log) for log in logs}) == 1
    log = [logs[i][k] for k in range(len(logs[0])) for i in range(BATCH)]
    return {k: np.stack([g[k] for g in grads]) for k in grads[0]}, log, counts
