"""Sharded compiled steps (``hookgrad.compile(step, mesh=...)``), ``hookgrad.distributed``
and ``DistributedDataParallel`` on a mesh.

The training scenarios need several devices: they run once, in one subprocess with 8
simulated CPU devices (``tests/_sharded_steps.py``), so the rest of the suite keeps one
device. Bad input is checked here, on one-device meshes. ``-k "distributed or shard or
mesh"`` selects these tests.
"""
import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import hookgrad
import hookgrad.distributed as dist
import hookgrad.nn as nn
from hookgrad.distributed.device_mesh import DeviceMesh, init_device_mesh
from hookgrad.nn.parallel import DistributedDataParallel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def sharded_report():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-m", "tests._sharded_steps"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["devices"] == 8
    return report


@pytest.mark.parametrize("scenario", ["data_parallel", "data_model_2x4", "fsdp", "fully_shard",
                                      "ddp"])
def test_sharded_step_on_8_devices_matches_one_device(sharded_report, scenario):
    r = sharded_report[scenario]
    # 5 AdamW steps: the same parameters and losses (1e-5) as on one device, the hooks
    # (clipping full backward hook, tensor hook, post-accumulate-grad hook, ModTracker)
    # called in the same order with the same gradients
    assert r["params"] and r["losses"]
    assert r["hooks"] and r["n_hook_calls"] == 30
    # parameters, .grad and optimizer state sharded as asked
    assert r["shardings"] == []
    # what the program wrote back stays where it is: the first call moves the parameters
    # to their shardings (DistributedDataParallel replicated them already), later calls
    # move nothing, and nothing is retraced beyond the one retrace for the optimizer state
    # the first call created
    assert r["moved_first"] == (0 if scenario == "ddp" else 4)
    assert r["moved_after_first"] == 0
    assert r["trace_count"] == 2


def test_eager_ddp_on_8_devices_matches_one_device(sharded_report):
    # eagerly, DistributedDataParallel splits the batch over the mesh; parameters, .grad
    # and a tensor hook's gradients are those of the unwrapped model
    assert sharded_report["eager_ddp"] == {"params": True, "hooks": True, "replicated": True}


def test_mesh_batch_not_divisible_by_data_axis_names_the_argument(sharded_report):
    r = sharded_report["indivisible_batch"]
    assert r["message"].startswith("argument 'x' (position 0) of shape (12, 4): dimension 0 "
                                   "(size 12) is not divisible by mesh axis 'data' (8)")
    assert r["untouched"]


# --------------------------------------------------------------------------- one device


def _mesh(*names):
    return Mesh(np.array(jax.devices()[:1]).reshape((1,) * len(names)), names)


def _model_and_step():
    hookgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = hookgrad.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    return model, opt, step


def _snapshot(model, opt):
    return ([np.asarray(p.detach()) for p in model.parameters()],
            [p.grad is None for p in model.parameters()], len(opt.state))


def _same(before, model, opt):
    now = _snapshot(model, opt)
    return (all(np.array_equal(a, b) for a, b in zip(before[0], now[0]))
            and before[1:] == now[1:])


def test_sharded_step_on_a_one_device_mesh_matches_unsharded():
    x, y = hookgrad.randn(4, 3), hookgrad.randn(4, 2)
    results = []
    for kw in ({}, {"mesh": _mesh("data", "model"), "in_shardings": P("data"),
                    "param_shardings": {r"0\.weight": P("model", None)}}):
        model, opt, step = _model_and_step()
        cstep = hookgrad.compile(step, **kw)
        losses = [cstep(x, y).item() for _ in range(3)]
        results.append((losses, [np.asarray(p.detach()) for p in model.parameters()]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert model[0].weight._data.sharding.spec == P("model", None)


def test_shard_rule_naming_a_missing_mesh_axis_raises_at_compile():
    _, _, step = _model_and_step()
    with pytest.raises(ValueError, match=r"param_shardings rule '0\\.weight': "
                       r"P\('model',\) names mesh axis 'model', but the mesh has "
                       r"axes \('data',\)"):
        hookgrad.compile(step, mesh=_mesh("data"), param_shardings={r"0\.weight": P("model")})
    with pytest.raises(ValueError, match=r"in_shardings\[1\]: .* names mesh axis 'batch'"):
        hookgrad.compile(step, mesh=_mesh("data"), in_shardings=(P("data"), P("batch")))


def test_shard_rule_that_does_not_fit_the_parameter_names_it():
    model, opt, step = _model_and_step()
    before = _snapshot(model, opt)
    cstep = hookgrad.compile(step, mesh=_mesh("data"),
                             param_shardings=[(r"weight$", P(None, None, "data"))])
    with pytest.raises(ValueError, match=r"parameter '0\.weight' \(compile: param_shardings "
                       r"rule 'weight\$'\) of shape \(4, 3\): sharding .* has 3 entries but "
                       r"the array has 2 dimension\(s\)"):
        cstep(hookgrad.randn(4, 3), hookgrad.randn(4, 2))
    assert _same(before, model, opt) and cstep.trace_count == 0


def test_mismatched_meshes_between_arguments_raise_naming_them():
    _, _, step = _model_and_step()
    other = _mesh("batch")
    with pytest.raises(ValueError, match=r"in_shardings\[1\]: its NamedSharding is on a mesh "
                       r"\{'batch': 1\} but the step's mesh is \{'data': 1\}"):
        hookgrad.compile(step, mesh=_mesh("data"),
                         in_shardings=(P("data"), NamedSharding(other, P("batch"))))
    # an argument arriving sharded over another mesh: nothing is updated
    model, opt, step = _model_and_step()
    before = _snapshot(model, opt)
    cstep = hookgrad.compile(step, mesh=_mesh("data"), in_shardings=P("data"))
    y = hookgrad.Tensor._wrap(jax.device_put(hookgrad.randn(4, 2)._data,
                                             NamedSharding(other, P("batch"))))
    with pytest.raises(ValueError, match=r"argument 'y' \(position 1\) is sharded over the "
                       r"mesh \{'batch': 1\} but the step runs on \{'data': 1\}: mismatched "
                       "meshes"):
        cstep(hookgrad.randn(4, 3), y)
    assert _same(before, model, opt)


def test_ddp_mesh_and_compile_mesh_must_agree():
    model, opt, _ = _model_and_step()
    ddp = DistributedDataParallel(model, device_mesh=_mesh("data"))

    def step(x):
        ddp(x).sum().backward()

    cstep = hookgrad.compile(step, mesh=_mesh("batch"))
    with pytest.raises(ValueError, match=r"DistributedDataParallel asks for the mesh "
                       r"\{'data': 1\} but compile for \{'batch': 1\}: one step runs on one "
                       "mesh"):
        cstep(hookgrad.randn(4, 3))
    assert all(p.grad is None for p in model.parameters())


def test_shard_arguments_of_compile_are_checked():
    _, _, step = _model_and_step()
    with pytest.raises(ValueError, match="need a mesh"):
        hookgrad.compile(step, in_shardings=P("data"))
    with pytest.raises(TypeError, match="must be a jax.sharding.Mesh"):
        hookgrad.compile(step, mesh="data")
    with pytest.raises(TypeError, match=r"\(name regex, PartitionSpec\) pairs"):
        hookgrad.compile(step, mesh=_mesh("data"), param_shardings=[P("data")])
    with pytest.raises(ValueError, match="sharding applies to compiled steps"):
        hookgrad.compile(nn.Linear(2, 2), mesh=_mesh("data"))
    cstep = hookgrad.compile(step, mesh=_mesh("data"), in_shardings=(P("data"),))
    with pytest.raises(ValueError, match=r"in_shardings has 1 entries but the step got an "
                       r"argument at position 1 \(argument 'y' \(position 1\)\)"):
        cstep(hookgrad.randn(4, 3), hookgrad.randn(4, 2))


def test_ddp_on_a_mesh_shards_compiled_steps_and_keeps_no_sync():
    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("data",))
    model, opt, _ = _model_and_step()
    ddp = DistributedDataParallel(model, device_mesh=mesh)
    with pytest.raises(RuntimeError, match="only a 1-D device_mesh"):
        DistributedDataParallel(model, device_mesh=_mesh("data", "model"))

    @hookgrad.compile
    def micro(x):
        ddp(x).sum().backward()

    x = hookgrad.randn(4, 3)
    with ddp.no_sync():
        micro(x)
    micro(x)
    ref = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    ref.load_state_dict(model.state_dict())
    (2 * ref(x).sum()).backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(np.asarray(p.grad), np.asarray(q.grad), rtol=1e-5)
        assert p._data.sharding.is_equivalent_to(NamedSharding(mesh.jax_mesh, P()), p.ndim)


# --------------------------------------------------------------------------- helpers


def test_distributed_process_group_on_one_process():
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        assert dist.is_initialized()
        assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
        dist.barrier()
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group()
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="init_method 'file:///x' is not supported"):
        dist.init_process_group(init_method="file:///x")
    assert not dist.is_initialized()


def test_device_mesh_builds_a_jax_mesh():
    mesh = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    assert isinstance(mesh.jax_mesh, Mesh) and mesh.jax_mesh.axis_names == ("dp", "tp")
    assert (mesh.shape, mesh.ndim, mesh.size(), mesh.mesh_dim_names) == ((1, 1), 2, 1,
                                                                        ("dp", "tp"))
    assert mesh.mesh.tolist() == [[jax.devices()[0].id]]
    assert mesh["tp"] == DeviceMesh("cpu", [jax.devices()[0].id], mesh_dim_names=("tp",))
    with pytest.raises(KeyError, match="Invalid mesh_dim_name 'pp'"):
        mesh["pp"]
    with pytest.raises(RuntimeError, match="Each mesh_dim_name must be unique"):
        init_device_mesh("cpu", (1, 1), mesh_dim_names=("a", "a"))
    with pytest.raises(RuntimeError, match="mesh_shape and mesh_dim_names should have same "
                       "length"):
        init_device_mesh("cpu", (1,), mesh_dim_names=("a", "b"))
    with pytest.raises(RuntimeError, match=r"mesh_shape \(2,\) holds 2 devices but JAX has 1"):
        init_device_mesh("cpu", (2,))
    with pytest.raises(RuntimeError, match="Device type with index is not supported"):
        init_device_mesh("cpu:0", (1,))


# --------------------------------------------------------------------------- two processes


def _free_port():
    import socket
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    except OSError as e:
        pytest.skip(f"this machine cannot open a loopback socket ({e}): the two processes "
                    "meet on 127.0.0.1")


@pytest.fixture(scope="module")
def one_process_step():
    from tests._two_process_step import run
    return run()


@pytest.mark.parametrize("devices_per_process", [1, 2])
def test_distributed_two_processes_on_localhost_match_one_process(one_process_step,
                                                                  devices_per_process):
    # one compiled DistributedDataParallel step over the mesh of both processes' devices
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    if devices_per_process > 1:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices_per_process}"
    port = str(_free_port())
    procs = [subprocess.Popen([sys.executable, "-m", "tests._two_process_step", str(r), port],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for r in range(2)]
    try:
        outs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert not any(p.returncode for p in procs), "\n".join(e[-2000:] for _, e in outs)
    reports = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert sorted(r["rank"] for r in reports) == [0, 1]
    assert all(r["world"] == 2 and r["devices"] == 2 * devices_per_process for r in reports)
    loss, params = one_process_step
    for r in reports:
        assert abs(r["loss"] - loss) < 1e-5
        for a, b in zip(r["params"], params):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
