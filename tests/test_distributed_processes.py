"""Several processes, launched as ``torchrun`` launches them: the same PyTorch script
(tests/_torchrun_ddp.py) run by hookgrad (``python -m hookgrad.as_torch -m
torch.distributed.run``) and, where it is installed, by PyTorch (``torchrun``, gloo).

Each launch starts its 2 processes once per module; the tests compare what every rank
wrote: the gradients its hooks saw, the metrics all-reduced in the (compiled) step, the
trained weights, and each collective's result.
"""
import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join("tests", "_torchrun_ddp.py")
HOOKGRAD_VARIANTS = ["eager", "compiled+fp16", "collectives", "unused", "fsdp", "limits"]
# the PyTorch run each is compared with (its compiled step is its eager one)
REFERENCE = {"eager": "eager", "compiled+fp16": "eager+fp16"}


def _loopback():
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
    except OSError as e:
        pytest.skip(f"this machine cannot open a loopback socket ({e}): the processes of a "
                    "job meet on 127.0.0.1")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
    env.pop("XLA_FLAGS", None)
    env.update(extra)
    return env


def _launch(cmd, env, results_dir):
    env["RESULTS_DIR"] = str(results_dir)
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stderr[-4000:]
    results = {}
    for path in results_dir.glob("rank*.jsonl"):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            results[(r["variant"], r["rank"])] = r
    return results, out.stderr


@pytest.fixture(scope="module")
def hookgrad_run(tmp_path_factory):
    _loopback()
    return _launch([sys.executable, "-m", "hookgrad.as_torch", "-m", "torch.distributed.run",
                    "--standalone", "--nproc-per-node", "2", SCRIPT, *HOOKGRAD_VARIANTS],
                   _env(), tmp_path_factory.mktemp("hookgrad_ranks"))


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory):
    _loopback()
    pytest.importorskip("torch")
    results, _ = _launch([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc-per-node", "2", SCRIPT, "eager", "eager+fp16", "collectives",
                          "unused", "fsdp"],
                         _env(OMP_NUM_THREADS="1"), tmp_path_factory.mktemp("torch_ranks"))
    return results


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("variant", sorted(REFERENCE))
def test_ddp_script_gives_pytorchs_hooks_metrics_and_weights(hookgrad_run, torch_run,
                                                             variant):
    got, _ = hookgrad_run
    for rank in (0, 1):
        mine, ref = got[(variant, rank)], torch_run[(REFERENCE[variant], rank)]
        assert len(mine["hooks"]) == len(ref["hooks"]) == 12   # 6 steps, 2 hooks each
        _close(mine["hooks"], ref["hooks"])        # this rank's own gradients
        _close(mine["gathered"], ref["gathered"])  # every rank's all-reduced step losses
        assert mine["loss"] == pytest.approx(ref["loss"], rel=1e-5)
        for a, b in zip(mine["weights"], ref["weights"]):
            _close(a, b)


@pytest.mark.parametrize("variant", sorted(REFERENCE))
def test_ddp_ranks_see_their_own_gradients_and_end_with_the_same_weights(hookgrad_run,
                                                                         variant):
    got, _ = hookgrad_run
    r0, r1 = got[(variant, 0)], got[(variant, 1)]
    assert not np.allclose(r0["hooks"], r1["hooks"])   # each its own batch
    assert r0["weights"] == r1["weights"]              # averaged gradients, rank 0's start
    assert r0["gathered"] == r1["gathered"]


def test_compiled_step_with_collectives_stays_compiled(hookgrad_run):
    _, err = hookgrad_run
    assert "runs eagerly" not in err


def _same_collectives(got, ref):
    for rank in (0, 1):
        mine, want = dict(got[("collectives", rank)]), dict(ref[("collectives", rank)])
        if rank != 0:   # reduce(dst=0) leaves the other ranks' tensors unspecified
            mine.pop("reduce"), want.pop("reduce")
        assert mine == want


def test_collectives_give_pytorchs_results(hookgrad_run, torch_run):
    _same_collectives(hookgrad_run[0], torch_run)


def test_collectives_with_two_devices_per_process_give_pytorchs_results(torch_run,
                                                                         tmp_path):
    # a process driving 2 devices exchanges from its first, where its Tensors live
    got, _ = _launch([sys.executable, "-m", "hookgrad.as_torch", "-m",
                      "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                      SCRIPT, "collectives"],
                     _env(XLA_FLAGS="--xla_force_host_platform_device_count=2"), tmp_path)
    _same_collectives(got, torch_run)


def test_unused_parameters_and_backwards_outside_ddp_match_pytorch(hookgrad_run, torch_run):
    # a head one rank's batch does not reach still gets the average (find_unused_parameters);
    # a backward whose forward bypassed DDP is not synchronized
    got, _ = hookgrad_run
    for rank in (0, 1):
        mine, ref = got[("unused", rank)], torch_run[("unused", rank)]
        assert [g is None for g in mine["grads"]] == [g is None for g in ref["grads"]]
        for a, b in zip(mine["grads"] + [mine["unsynced"]], ref["grads"] + [ref["unsynced"]]):
            _close(a, b)
    assert got[("unused", 0)]["unsynced"] != got[("unused", 1)]["unsynced"]


def _same_fsdp(got, torch_run, variant):
    for rank in (0, 1):
        mine, ref = got[(variant, rank)], torch_run[("fsdp", rank)]
        assert len(mine["hooks"]) == len(ref["hooks"]) == 12   # 6 steps, 2 hooks each
        _close(mine["hooks"], ref["hooks"])       # this rank's own forward and backward
        _close(mine["losses"], ref["losses"])     # all-reduced in the step
        assert mine["shards"] == ref["shards"]    # torch.chunk's rows: 2.weight 2 and 1
        for key in ("weights", "restored", "loaded"):
            assert sorted(mine[key]) == sorted(ref[key])
            for name in ref[key]:
                _close(mine[key][name], ref[key][name])
    assert got[(variant, 0)]["weights"] == got[(variant, 1)]["weights"]
    assert got[(variant, 0)]["hooks"] != got[(variant, 1)]["hooks"]


def test_fsdp_script_gives_pytorchs_hooks_losses_shards_and_weights(hookgrad_run, torch_run):
    # fully_shard on each Linear and the model, each rank its own start and batches; the
    # full state dict gathered, loaded into another sharded model and gathered again; a
    # distributed checkpoint saved and loaded into a third
    _same_fsdp(hookgrad_run[0], torch_run, "fsdp")


@pytest.mark.slow   # a launch of its own
def test_compiled_fsdp_step_gives_pytorchs_hooks_losses_and_weights(torch_run, tmp_path):
    got, err = _launch([sys.executable, "-m", "hookgrad.as_torch", "-m",
                        "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                        SCRIPT, "fsdp+compiled"], _env(), tmp_path)
    _same_fsdp(got, torch_run, "fsdp+compiled")
    assert "runs eagerly" not in err


def test_distributed_checkpoints_load_in_the_other_library(hookgrad_run, torch_run):
    # each library's 2-process FSDP checkpoint (a shard per rank and file), loaded whole in
    # one process by the other library
    import torch
    import torch.distributed.checkpoint as torch_dcp
    import hookgrad
    import hookgrad.distributed.checkpoint as hookgrad_dcp
    got, _ = hookgrad_run
    for mine, theirs, L, dcp in ((got[("fsdp", 0)], torch_run[("fsdp", 0)], torch, torch_dcp),
                                 (torch_run[("fsdp", 0)], got[("fsdp", 0)], hookgrad,
                                  hookgrad_dcp)):
        shapes = {"0.weight": (8, 4), "0.bias": (8,), "2.weight": (3, 8), "2.bias": (3,)}
        state = {k: L.zeros(*s) for k, s in shapes.items()}
        dcp.load(state, checkpoint_id=mine["checkpoint"], no_dist=True)
        for k, v in state.items():
            _close(v.reshape(-1).tolist(), theirs["weights"][k])


def test_what_does_not_work_across_processes_says_so(hookgrad_run):
    got, _ = hookgrad_run
    for rank in (0, 1):
        assert got[("limits", rank)]["recv"] == (
            "hookgrad does not implement torch.distributed.recv from any source yet: pass "
            "src= (the sender's rank)")


def test_the_launcher_sets_torchruns_environment(tmp_path):
    _loopback()
    pytest.importorskip("torch")
    script = tmp_path / "env.py"
    script.write_text(textwrap.dedent("""
        import json, os
        keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "TORCHELASTIC_RUN_ID",
                "MASTER_ADDR", "MASTER_PORT"]
        with open(os.path.join(os.environ["OUT"], os.environ["RANK"]), "w") as f:
            json.dump({k: os.environ.get(k) for k in keys}, f)
    """))
    runs, port = [], str(_free_port())
    for module in ("hookgrad.distributed.run", "torch.distributed.run"):
        out_dir = tmp_path / module
        out_dir.mkdir()
        out = subprocess.run([sys.executable, "-m", module, "--nproc-per-node", "2",
                              "--master-port", port, str(script)], cwd=ROOT,
                             env=_env(OUT=str(out_dir)), capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append([json.loads((out_dir / r).read_text()) for r in ("0", "1")])
    assert runs[0] == runs[1]
    assert runs[0][1]["RANK"] == "1" and runs[0][1]["MASTER_PORT"] == port


def test_pytorchs_torchrun_launches_hookgrad_processes(tmp_path):
    _loopback()
    pytest.importorskip("torch")
    script = tmp_path / "sum.py"
    script.write_text(textwrap.dedent("""
        import os, torch, torch.distributed as dist
        dist.init_process_group("gloo")
        t = torch.ones(2) * (dist.get_rank() + 1)
        dist.all_reduce(t)
        with open(os.path.join(os.environ["OUT"], str(dist.get_rank())), "w") as f:
            f.write(f"{torch.__name__} {t.tolist()}")
        dist.destroy_process_group()
    """))
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc-per-node", "2", "-m", "hookgrad.as_torch", str(script)],
                         cwd=ROOT, env=_env(OUT=str(tmp_path)), capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert [(tmp_path / r).read_text() for r in "01"] == ["hookgrad [3.0, 3.0]"] * 2


def test_a_coordinator_port_in_use_is_named():
    with socket.socket() as busy:
        busy.bind(("", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-c", "import hookgrad.distributed as d\n"
             f"d.init_process_group('gloo', init_method='tcp://127.0.0.1:{port}', "
             "world_size=2, rank=0)"],
            cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert (f"RuntimeError: init_process_group: rank 0 hosts the coordinator on port {port}, "
            "which is in use (Address already in use); set MASTER_PORT") in out.stderr


def test_the_launcher_stops_the_job_when_a_process_fails(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import os, sys, time\n"
                      "if os.environ['RANK'] == '1':\n    sys.exit(3)\n"
                      "time.sleep(120)\n")
    out = subprocess.run([sys.executable, "-m", "hookgrad.distributed.run", "--standalone",
                          "--nproc-per-node", "2", str(script)], cwd=ROOT, env=_env(),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3
    assert "local rank 1 exited with status 3; stopping the others" in out.stderr


_LATE = {
    # a tensor made first: the error names that line, through hookgrad's call
    "after hookgrad": ("import hookgrad\nx = hookgrad.ones(2) + 1\n",
                       "backends, and something did: {script}:2 in <module>: x = "
                       "hookgrad.ones(2) + 1 (through hookgrad/"),
    # JAX used before hookgrad was imported: not blamed on the import
    "before hookgrad": ("import jax.numpy as jnp\nx = jnp.ones(2) + 1\n",
                        "backends, and something did: a call made before hookgrad was "
                        "imported. Call init_process_group first"),
}


@pytest.mark.parametrize("case", sorted(_LATE))
def test_init_process_group_after_the_backend_started_names_what_did(tmp_path, case):
    prelude, message = _LATE[case]
    script = tmp_path / "late.py"
    script.write_text(prelude + textwrap.dedent("""
        import hookgrad.distributed as dist
        try:
            dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=2,
                                    rank=0)
        except RuntimeError as e:
            print(e)
        print(dist.is_initialized())
    """))
    out = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    error, initialized = out.stdout.strip().splitlines()
    assert error.startswith("init_process_group must run before anything starts JAX's ")
    assert message.format(script=script) in error and "Call init_process_group first" in error
    assert initialized == "False"


@pytest.mark.parametrize("args,message", [
    (["--nproc-per-node", "two"], "--nproc-per-node: expected a number, 'gpu', 'cpu' or "
                                  "'auto', got 'two'"),
    (["--nproc-per-node", "0"], "--nproc-per-node: expected at least 1 process, got 0"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank 2 is out of range for --nnodes 2"),
])
def test_the_launcher_refuses_bad_arguments(args, message):
    out = subprocess.run([sys.executable, "-m", "hookgrad.distributed.run", *args, "x.py"],
                         cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and message in out.stderr


def test_a_group_of_some_processes_exchanges_among_its_members(tmp_path):
    # 3 processes; new_group([0, 2]): the members reduce and gather, rank 1 takes no part
    _loopback()
    script = tmp_path / "group.py"
    script.write_text(textwrap.dedent("""
        import json, os
        import hookgrad as torch
        import hookgrad.distributed as dist
        dist.init_process_group("gloo")
        rank = dist.get_rank()
        group = dist.new_group([0, 2])
        t = torch.ones(2) * (rank + 1)
        objects = None
        if rank in (0, 2):
            dist.all_reduce(t, group=group)
            objects = [None, None]
            dist.all_gather_object(objects, f"r{rank}", group=group)
        dist.barrier()
        with open(os.path.join(os.environ["OUT"], str(rank)), "w") as f:
            json.dump([t.tolist(), objects, dist.get_rank(group),
                       dist.get_world_size(group)], f)
        dist.destroy_process_group()
    """))
    out = subprocess.run([sys.executable, "-m", "hookgrad.distributed.run", "--standalone",
                          "--nproc-per-node", "3", str(script)], cwd=ROOT,
                         env=_env(OUT=str(tmp_path)), capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    got = [json.loads((tmp_path / r).read_text()) for r in "012"]
    assert got == [[[4.0, 4.0], ["r0", "r2"], 0, 2], [[2.0, 2.0], None, -1, -1],
                   [[4.0, 4.0], ["r0", "r2"], 1, 2]]
