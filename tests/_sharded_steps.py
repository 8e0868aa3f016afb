"""Sharded compiled training steps on 8 simulated CPU devices, for tests/test_distributed.py.

Run as ``python -m tests._sharded_steps`` with
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (the rest of the suite keeps one
device): each scenario trains the same tiny model with hooks for 5 AdamW steps, and the
last line printed is a JSON report comparing it with the single-device run.
"""
import json
import sys

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

import hookgrad
import hookgrad.nn as nn
from hookgrad.distributed.device_mesh import init_device_mesh
from hookgrad.distributed.fsdp import fsdp_rules, fully_shard
from hookgrad.nn.parallel import DistributedDataParallel
from hookgrad.utils.mod_tracker import ModTracker

STEPS = 5
BATCH = 16


def _data():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((BATCH, 4), dtype=np.float32),
             rng.standard_normal((BATCH, 4), dtype=np.float32)) for _ in range(STEPS)]


def _setup(log):
    """The model, its optimizer and the hooks; ``log`` collects what the hooks saw."""
    hookgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    opt = hookgrad.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    rec = hookgrad.compile.host_hook(lambda tag, g: log.append((tag, np.asarray(g))))
    # a gradient-clipping full backward hook
    model[2].register_full_backward_hook(lambda m, gin, gout: (gin[0].clamp(-0.02, 0.02),))

    def halve(g):      # a tensor hook on a parameter, changing its gradient
        rec("tensor_hook", g)
        return g * 0.5
    model[0].weight.register_hook(halve)
    model[2].weight.register_post_accumulate_grad_hook(lambda p: rec("post_acc", p.grad))
    names = {id(m): n for n, m in model.named_modules()}
    tracker = ModTracker()

    def pre_bw(m, gout):   # the model's modules (a wrapper around it is not in the log)
        if id(m) in names:
            rec("mt:" + names[id(m)], gout[0])
    tracker.register_user_hooks(pre_bw_hook=pre_bw)
    return model, opt, tracker


def _run(log, wrap=None, **compile_kw):
    model, opt, tracker = _setup(log)
    net = wrap(model) if wrap is not None else model

    def step(x, y):
        opt.zero_grad()
        with tracker:
            loss = ((net(x) - y) ** 2).mean()
            loss.backward()
        opt.step()
        return loss

    cstep = hookgrad.compile(step, **compile_kw)
    losses, moved = [], []
    for x, y in _data():
        losses.append(float(cstep(hookgrad.tensor(x), hookgrad.tensor(y))))
        moved.append(cstep.reshard_count)
    return model, opt, cstep, losses, moved


def _close(a, b):
    return bool(np.allclose(a, b, rtol=1e-5, atol=1e-5))


def _compare(ref, got):
    """Same parameters, losses and hook calls (tags in order, gradients within 1e-5)."""
    (rmodel, _, _, rloss, _), rlog = ref
    (model, _, _, loss, _), log = got
    params = all(_close(np.asarray(a.detach()), np.asarray(b.detach()))
                 for a, b in zip(rmodel.parameters(), model.parameters()))
    hooks = ([t for t, _ in rlog] == [t for t, _ in log] and
             all(_close(a, b) for (_, a), (_, b) in zip(rlog, log)))
    return {"params": params, "losses": _close(rloss, loss), "hooks": hooks,
            "n_hook_calls": len(log)}


def _shardings(model, opt, mesh, expected):
    """Whether each parameter, its .grad and its optimizer state are sharded as
    ``expected`` ({name: PartitionSpec}); mismatches listed."""
    bad = []
    for name, p in model.named_parameters():
        want = NamedSharding(mesh, expected.get(name, P()))
        arrays = {"param": p._data, "grad": p.grad._data}
        arrays.update({k: v._data for k, v in opt.state[p].items() if v.ndim})
        for what, a in arrays.items():
            if not a.sharding.is_equivalent_to(want, a.ndim):
                bad.append(f"{name} {what}: {a.sharding} != {want.spec}")
    return bad


def _scenario(ref, on, expected, wrap=None, **compile_kw):
    log = []
    model, opt, cstep, losses, moved = run = _run(log, wrap=wrap, **compile_kw)
    out = _compare(ref, (run, log))
    out["shardings"] = _shardings(model, opt, on, expected)
    # after the first call nothing moves, and the program is not traced again
    out["moved_first"] = moved[0]
    out["moved_after_first"] = moved[-1] - moved[0]
    out["trace_count"] = cstep.trace_count
    return out


def main():
    report = {"devices": len(jax.devices())}
    ref_log = []
    ref = (_run(ref_log), ref_log)
    dp = init_device_mesh("cpu", (8,), mesh_dim_names=("data",)).jax_mesh
    report["data_parallel"] = _scenario(ref, dp, {}, mesh=dp, in_shardings=P("data"))
    mesh2d = init_device_mesh("cpu", (2, 4), mesh_dim_names=("data", "model")).jax_mesh
    tp = {"0.weight": P("model", None), "0.bias": P("model"), "2.weight": P(None, "model")}
    report["data_model_2x4"] = _scenario(
        ref, mesh2d, tp, mesh=mesh2d, in_shardings=(P("data"), P("data")),
        param_shardings=[(r"^0\.weight$", P("model", None)), (r"^0\.bias$", P("model")),
                         (r"^2\.weight$", P(None, "model"))])
    fsdp = {"0.weight": P("data"), "0.bias": P("data"), "2.weight": P(None, "data")}
    report["fsdp"] = _scenario(ref, dp, fsdp, mesh=dp, in_shardings=P("data"),
                               param_shardings=fsdp_rules(dp, "data"))
    report["fully_shard"] = _scenario(
        ref, dp, fsdp, wrap=lambda m: fully_shard(m, mesh=dp, batch_axis="data"))
    ddp_mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("data",))
    report["ddp"] = _scenario(
        ref, ddp_mesh.jax_mesh, {}, wrap=lambda m: DistributedDataParallel(m, device_mesh=ddp_mesh))
    report["eager_ddp"] = _eager_ddp(ddp_mesh)
    report["indivisible_batch"] = _indivisible(dp)
    print(json.dumps(report))


def _eager_ddp(mesh):
    """Eager steps through DistributedDataParallel: its forward splits the batch over the
    mesh and JAX's computation follows it; the same parameters and tensor-hook gradients
    as without the wrapper."""
    runs = []
    for wrap in (None, lambda m: DistributedDataParallel(m, device_mesh=mesh)):
        model, opt, _ = _setup([])
        seen = []
        model[0].bias.register_hook(lambda g: seen.append(np.asarray(g)))
        net = wrap(model) if wrap is not None else model
        for x, y in _data()[:3]:
            opt.zero_grad()
            ((net(hookgrad.tensor(x)) - hookgrad.tensor(y)) ** 2).mean().backward()
            opt.step()
        runs.append(([np.asarray(p.detach()) for p in model.parameters()], seen, model))
    (pa, sa, _), (pb, sb, model) = runs
    rep = NamedSharding(mesh.jax_mesh, P())
    return {"params": all(map(_close, pa, pb)), "hooks": len(sa) == 3 and all(map(_close, sa, sb)),
            "replicated": all(p._data.sharding.is_equivalent_to(rep, p.ndim) and
                              p.grad._data.sharding.is_equivalent_to(rep, p.ndim)
                              for p in model.parameters())}


def _indivisible(mesh):
    """A batch of 12 over 8 devices: a ValueError naming the argument, nothing updated."""
    model, opt, _ = _setup([])
    before = [np.asarray(p.detach()) for p in model.parameters()]

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    cstep = hookgrad.compile(step, mesh=mesh, in_shardings=P("data"))
    try:
        cstep(hookgrad.randn(12, 4))
    except ValueError as e:
        msg = str(e)
    else:
        msg = None
    same = all(np.array_equal(a, np.asarray(p.detach()))
               for a, p in zip(before, model.parameters()))
    untouched = same and all(p.grad is None for p in model.parameters()) and not opt.state
    return {"message": msg, "untouched": untouched}


if __name__ == "__main__":
    sys.exit(main())
