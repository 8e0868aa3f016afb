"""``DistributedDataParallel.no_sync()`` and ``register_comm_hook`` (PyTorch's default
hooks on ``jax.lax.psum``), and eager Tensors holding sharded arrays
(``hookgrad.distributed.tensor``).

The multi-device checks run once, in a subprocess with 8 simulated CPU devices
(:func:`_child`, the last line it prints is a JSON report), so the rest of the suite keeps
one device. Bad input is checked in-process. ``-k "distributed or shard or mesh"``
selects these tests.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import hookgrad
import hookgrad.nn as nn
from hookgrad.distributed.algorithms.ddp_comm_hooks import default_hooks
from hookgrad.nn.parallel import DistributedDataParallel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOKS = ("allreduce_hook", "fp16_compress_hook", "bf16_compress_hook")


def _model():
    hookgrad.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))


def _grads(model):
    return [np.asarray(p.grad) for p in model.parameters()]


def _max_err(a, b):
    """The largest difference of two lists of arrays, relative to each array's scale."""
    return max(float(np.max(np.abs(x - y)) / np.max(np.abs(y))) for x, y in zip(a, b))


def _all_reduce_dtypes(hlo):
    """The element types of the all-reduces in a lowered program's StableHLO text."""
    out = []
    for m in re.finditer(r"stablehlo\.all_reduce.*?\}\) : \(tensor<(?:\d+x)*(\w+)>\)", hlo,
                         re.S):
        out.append(m.group(1))
    return out


# --------------------------------------------------------------------------- 8 devices


def _batches():
    rng = np.random.default_rng(0)
    return [hookgrad.tensor(rng.standard_normal((16, 4), dtype=np.float32)) for _ in range(3)]


def _accumulate(net, model, xs, compiled, no_sync):
    """Three micro-batches' backwards into .grad (the first two inside ``no_sync()``);
    returns what a post-accumulate-grad hook saw."""
    seen = []
    rec = hookgrad.compile.host_hook(lambda g: seen.append(np.asarray(g)))
    model[2].weight.register_post_accumulate_grad_hook(lambda p: rec(p.grad))

    def micro(x):
        net(x).pow(2).mean().backward()
    run = hookgrad.compile(micro) if compiled else micro
    for i, x in enumerate(xs):
        if no_sync and i < 2:
            with net.no_sync():
                run(x)
        else:
            run(x)
    return seen


def _child_no_sync(mesh, xs):
    ref = _model()
    ref_seen = _accumulate(ref, ref, xs, False, False)
    out = {}
    for compiled in (False, True):
        model = _model()
        ddp = DistributedDataParallel(model, device_mesh=mesh)
        seen = _accumulate(ddp, model, xs, compiled, True)
        out["compiled" if compiled else "eager"] = {
            "grads": _max_err(_grads(model), _grads(ref)),
            "hook_calls": len(seen),
            "hooks": _max_err(seen, ref_seen),
            "replicated": all(p.grad._data.sharding.is_fully_replicated
                              for p in model.parameters())}
    return out


def _child_no_sync_comm_hook(mesh, xs):
    """no_sync() with a comm hook: each device accumulates its own gradient share, and
    the first backward outside reduces the total once, by the hook."""
    ref = _model()
    for x in xs:
        ref(x).pow(2).mean().backward()
    out = {}
    for compiled in (False, True):
        model = _model()
        ddp = DistributedDataParallel(model, device_mesh=mesh)
        calls = []

        def hook(state, bucket):
            state.append(1)
            return default_hooks.allreduce_hook(None, bucket)
        ddp.register_comm_hook(calls, hook)

        def micro(x):
            ddp(x).pow(2).mean().backward()
        run = hookgrad.compile(micro) if compiled else micro
        r = {"all_reduce": []}
        for i, x in enumerate(xs):
            if i < 2:
                with ddp.no_sync():
                    run(x)
                    if compiled:
                        r["all_reduce"].append(run.lower(x).as_text().count("all_reduce"))
                r.setdefault("grad_none", []).append(all(p.grad is None
                                                         for p in model.parameters()))
            else:
                n_calls = len(calls)
                run(x)
                r["hook_calls"] = len(calls) - n_calls
                if compiled:
                    r["all_reduce"].append(run.lower(x).as_text().count("all_reduce"))
        r["grads"] = _max_err(_grads(model), _grads(ref))
        r["local"] = [[str(b._data.sharding.spec), float(np.abs(np.asarray(b)).max())]
                      for n, b in ddp.named_buffers() if n.startswith("_ddp_local_grad_")]
        r["state_dict"] = sorted(ddp.state_dict()) == sorted(
            "module." + k for k in model.state_dict())
        out["compiled" if compiled else "eager"] = r
    return out


def _child_comm_hooks(mesh, xs):
    x = xs[0]
    ref = _model()
    ref(x).pow(2).mean().backward()
    out = {}
    for name in HOOKS + ("user_hook",):
        for compiled in (False, True):
            model = _model()
            ddp = DistributedDataParallel(model, device_mesh=mesh)
            calls = []
            ddp.register_comm_hook(calls, getattr(default_hooks, name, _user_hook))
            tensor_hook = []
            rec = hookgrad.compile.host_hook(lambda g: tensor_hook.append(np.asarray(g)))
            model[0].weight.register_hook(lambda g: rec(g))

            def step(x):
                ddp(x).pow(2).mean().backward()
            run = hookgrad.compile(step) if compiled else step
            run(x)
            r = {"grads": _max_err(_grads(model), _grads(ref)),
                 "tensor_hook": _max_err(tensor_hook, [np.asarray(ref[0].weight.grad)]),
                 "replicated": all(p.grad._data.sharding.is_fully_replicated
                                   for p in model.parameters())}
            if compiled:
                r["all_reduce"] = _all_reduce_dtypes(run.lower(x).as_text())
            else:
                r["user_calls"] = calls
            out[f"{name}/{'compiled' if compiled else 'eager'}"] = r
    return out


def _user_hook(state, bucket):
    """A hook as PyTorch users write it: all_reduce's future, then a division."""
    import hookgrad.distributed as dist
    state.append([bucket.index(), bool(bucket.is_last()), len(bucket.parameters()),
                  list(bucket.buffer().shape)])
    fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
    return fut.then(lambda f: f.value()[0] / dist.get_world_size())


def _child_eager_sharded():
    """An eager forward and backward on Tensors sharded over a 2x4 mesh, against the same
    on one device; the placements of what they compute."""
    from hookgrad.distributed import init_device_mesh
    from hookgrad.distributed.tensor import Replicate, Shard, distribute_tensor
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    hookgrad.manual_seed(0)
    x0 = hookgrad.randn(8, 4)
    w0, b0 = hookgrad.randn(4, 8, requires_grad=True), hookgrad.randn(8, requires_grad=True)
    x = distribute_tensor(x0, mesh, [Shard(0), Replicate()])
    w = distribute_tensor(w0, mesh, [Replicate(), Shard(1)])
    b = distribute_tensor(b0, mesh, [Replicate(), Shard(-1)])
    hooked = []
    rec = hookgrad.compile.host_hook(lambda g: hooked.append(np.asarray(g)))
    w.register_hook(lambda g: rec(g))
    y = (x @ w + b).tanh()
    y.pow(2).sum().backward()
    y0 = (x0 @ w0 + b0).tanh()
    y0.pow(2).sum().backward()
    return {"values": _max_err([np.asarray(y)], [np.asarray(y0)]),
            "grads": _max_err([np.asarray(w.grad), np.asarray(b.grad)],
                              [np.asarray(w0.grad), np.asarray(b0.grad)]),
            "hook": _max_err(hooked, [np.asarray(w0.grad)]),
            "leaf": [w.is_leaf, w.requires_grad, x.requires_grad],
            "device": str(y.device),
            "placements": {k: repr(t.placements) for k, t in
                           {"x": x, "w": w, "b": b, "y": y, "w.grad": w.grad,
                            "b.grad": b.grad}.items()}}


def _child():
    from hookgrad.distributed import init_device_mesh
    import jax
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("data",))
    xs = _batches()
    report = {"devices": len(jax.devices()), "no_sync": _child_no_sync(mesh, xs),
              "no_sync_comm_hook": _child_no_sync_comm_hook(mesh, xs),
              "comm_hooks": _child_comm_hooks(mesh, xs), "eager": _child_eager_sharded()}
    print(json.dumps(report))


@pytest.fixture(scope="module")
def report_8_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", "import tests.test_distributed_comm as t; "
                          "t._child()"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["devices"] == 8
    return report


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_distributed_no_sync_accumulates_as_one_device_on_8_devices(report_8_devices, mode):
    r = report_8_devices["no_sync"][mode]
    # two backwards inside no_sync() and one outside: .grad is the sum of the three
    # batch-reduced gradients, as PyTorch DDP's after its synchronizing backward, and
    # equal to accumulating on one device; the post-accumulate-grad hook fires per backward
    assert r["grads"] < 1e-5
    assert r["hook_calls"] == 3 and r["hooks"] < 1e-5
    assert r["replicated"]


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_distributed_no_sync_with_comm_hook_defers_the_reduction(report_8_devices, mode):
    r = report_8_devices["no_sync_comm_hook"][mode]
    # inside no_sync(): no reduction, .grad untouched (each device's share waits in a
    # buffer split over the data axis); the next backward reduces the total once
    assert r["grad_none"] == [True, True]
    assert r["hook_calls"] == 1
    assert r["grads"] < 1e-5
    assert r["local"] == [["P('data',)", 0.0]] * 4
    assert r["state_dict"]          # the accumulators are not in the state_dict
    if mode == "compiled":
        assert r["all_reduce"] == [0, 0, 1]


@pytest.mark.parametrize("mode", ["eager", "compiled"])
@pytest.mark.parametrize("hook", HOOKS + ("user_hook",))
def test_distributed_comm_hook_on_8_devices(report_8_devices, hook, mode):
    r = report_8_devices["comm_hooks"][f"{hook}/{mode}"]
    tol = {"fp16_compress_hook": 3e-3, "bf16_compress_hook": 2e-2}.get(hook, 1e-5)
    assert r["grads"] < tol and r["tensor_hook"] < tol
    assert r["replicated"]
    if hook in ("allreduce_hook", "user_hook"):
        assert r["grads"] < 1e-5
    else:      # compressed: close to, but not exactly, the float32 reduction
        assert r["grads"] > 1e-7
    if mode == "compiled":
        # the one reduction of the gradients is the hook's, in the hook's dtype
        want = {"fp16_compress_hook": "f16", "bf16_compress_hook": "bf16"}.get(hook, "f32")
        assert r["all_reduce"] == [want]
    if hook == "user_hook" and mode == "eager":
        # one bucket of all 4 parameters (8*4 + 8 + 4*8 + 4 values)
        assert r["user_calls"] == [[0, True, 4, [76]]]


def test_distributed_tensor_eager_forward_backward_on_a_2x4_mesh(report_8_devices):
    r = report_8_devices["eager"]
    # the same values, gradients and tensor-hook gradient as on one device
    assert r["values"] < 1e-6 and r["grads"] < 1e-5 and r["hook"] < 1e-5
    assert r["leaf"] == [True, True, False] and r["device"] == "cpu"
    # results stay sharded: JAX's computation follows the data
    assert r["placements"] == {
        "x": "(Shard(dim=0), Replicate())", "w": "(Replicate(), Shard(dim=1))",
        "b": "(Replicate(), Shard(dim=0))", "y": "(Shard(dim=0), Shard(dim=1))",
        "w.grad": "(Replicate(), Shard(dim=1))", "b.grad": "(Replicate(), Shard(dim=0))"}


# --------------------------------------------------------------------------- one device


def test_distributed_tensor_placements_and_bad_input():
    from hookgrad.distributed import init_device_mesh
    from hookgrad.distributed.tensor import Partial, Replicate, Shard, distribute_tensor
    mesh = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    t = hookgrad.randn(2, 3)
    assert t.placements is None           # not on a mesh
    d = distribute_tensor(t, mesh, [Shard(1), Shard(1)])
    assert d.placements == (Shard(1), Shard(1)) and np.array_equal(np.asarray(d), np.asarray(t))
    assert distribute_tensor(t, mesh).placements == (Replicate(), Replicate())
    assert (d * 2).placements is not None
    with pytest.raises(ValueError, match="`placements` must have the same length as "
                       r"`device_mesh.ndim`! Found placements length: 1, and "
                       r"device_mesh.ndim: 2."):
        distribute_tensor(t, mesh, [Shard(0)])
    with pytest.raises(IndexError, match=r"Shard\(2\) at placements\[1\]: dimension out of "
                       "range"):
        distribute_tensor(t, mesh, [Replicate(), Shard(2)])
    assert distribute_tensor(t, mesh, [Partial(), Replicate()]).placements == (
        Partial(), Replicate())
    with pytest.raises(RuntimeError, match="should be used to distribute leaf tensors"):
        distribute_tensor(hookgrad.randn(2, requires_grad=True) * 2, mesh)
    with pytest.raises(TypeError, match="argument 'tensor' must be a Tensor"):
        distribute_tensor(np.ones(2), mesh)


def test_distributed_comm_hook_on_one_device_matches_no_hook():
    x = hookgrad.randn(4, 4)
    ref = _model()
    ref(x).pow(2).mean().backward()
    model = _model()
    ddp = DistributedDataParallel(model)
    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    ddp(x).pow(2).mean().backward()
    assert _max_err(_grads(model), _grads(ref)) < 1e-5


def test_distributed_comm_hook_bad_input():
    ddp = DistributedDataParallel(_model())
    with pytest.raises(TypeError, match="Communication hook must be callable."):
        ddp.register_comm_hook(None, "allreduce")
    with pytest.raises(TypeError, match=r"must take two arguments, \(state, bucket\)"):
        ddp.register_comm_hook(None, lambda bucket: bucket)

    def bad_bucket(state, bucket: int):
        return bucket
    with pytest.raises(ValueError, match="bucket annotation should be dist.GradBucket."):
        ddp.register_comm_hook(None, bad_bucket)

    def bad_return(state, bucket) -> int:
        return 0
    with pytest.raises(ValueError, match="return annotation should be "
                       r"torch.futures.Future\[torch.Tensor\]."):
        ddp.register_comm_hook(None, bad_return)
    assert ddp._comm_hook is None      # nothing registered by the failed calls
    ddp.register_comm_hook(None, default_hooks.bf16_compress_hook)
    with pytest.raises(RuntimeError, match="register_comm_hook or register_builtin_comm_hook "
                       "can only be called once."):
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)


def test_distributed_comm_hook_must_return_a_future_of_the_bucket():
    model = _model()
    ddp = DistributedDataParallel(model)
    ddp.register_comm_hook(None, lambda state, bucket: bucket.buffer())
    with pytest.raises(TypeError, match=r"must return a hookgrad.futures.Future\[Tensor\], "
                       "got Tensor"):
        ddp(hookgrad.randn(4, 4)).sum().backward()
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(RuntimeError, match="DDP communication hooks run inside "
                       "DistributedDataParallel's backward"):
        default_hooks.allreduce_hook(None, None)


def test_distributed_comm_hook_registered_after_a_compiled_step_is_used():
    model = _model()
    ddp = DistributedDataParallel(model)
    calls = []

    @hookgrad.compile
    def step(x):
        ddp(x).pow(2).mean().backward()

    x = hookgrad.randn(4, 4)
    step(x)
    ddp.register_comm_hook(calls, lambda state, bucket: (
        state.append(1), default_hooks.allreduce_hook(state, bucket))[1])
    step(x)
    assert calls == [1] and step.trace_count == 2
    ref = _model()
    for _ in range(2):
        ref(x).pow(2).mean().backward()
    assert _max_err(_grads(model), _grads(ref)) < 1e-5
