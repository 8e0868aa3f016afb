"""``hookgrad.distributed.tensor.DTensor``: PyTorch's distributed Tensor class.

On one device the scenarios run against PyTorch's own DTensor (a gloo process group of one
process: hookgrad's world is one process too, whose local tensor is the whole tensor).
On a 2x4 mesh of 8 simulated CPU devices (one subprocess), DTensor ops, redistribution and
gradients are checked against the same computation on plain Tensors.
"""
import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import hookgrad
from hookgrad.distributed.device_mesh import init_device_mesh
from hookgrad.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from hookgrad.distributed.tensor.experimental import implicit_replication
from tests.differential import py, raises, same_as_torch, torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module", autouse=True)
def torch_world_of_one():
    """PyTorch's DTensor needs a process group: one gloo process, as hookgrad's world."""
    if torch is None:
        yield
        return
    import torch.distributed as tdist
    tdist.init_process_group("gloo", store=tdist.HashStore(), rank=0, world_size=1)
    yield
    tdist.destroy_process_group()


def _values(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32).tolist()


def _api(L):
    from importlib import import_module
    dt = import_module(f"{L.__name__}.distributed.tensor")
    mesh = import_module(f"{L.__name__}.distributed.device_mesh").init_device_mesh("cpu", (1,))
    return dt, mesh


def test_dtensor_is_a_tensor_class():
    assert issubclass(DTensor, hookgrad.Tensor)
    assert not isinstance(hookgrad.ones(2), DTensor)
    with pytest.raises(RuntimeError, match=r"does not implement torch.distributed.tensor."
                       r"DTensor\(local_tensor, spec\) yet"):
        DTensor(hookgrad.ones(2), None)


def test_dtensor_imports_under_as_torch():
    # Hugging Face transformers imports it at import time
    code = ("import hookgrad.as_torch as a; a.install()\n"
            "from torch.distributed.tensor import DTensor\n"
            "from torch.distributed.tensor.experimental import implicit_replication\n"
            "from torch.distributed.tensor.device_mesh import init_device_mesh\n"
            "import hookgrad.distributed.tensor as t, hookgrad.distributed.device_mesh as m\n"
            "assert DTensor is t.DTensor and init_device_mesh is m.init_device_mesh\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_placements_compare_hash_and_print_as_pytorchs():
    def fn(L):
        pt = importlib.import_module(f"{L.__name__}.distributed.tensor.placement_types")
        ps = [pt.Shard(0), pt.Shard(1), pt.Replicate(), pt.Partial(), pt.Partial("max")]
        again = [pt.Shard(0), pt.Shard(1), pt.Replicate(), pt.Partial("sum"), pt.Partial("max")]
        return {"repr": [repr(p) for p in ps], "str": [str(p) for p in ps],
                "eq": [[p == q for q in again] for p in ps],
                "hash": [hash(p) == hash(q) for p, q in zip(ps, again)],
                "set": len(set(ps + again)),
                "is": [[p.is_shard(), p.is_shard(0), p.is_shard(1), p.is_replicate(),
                        p.is_partial(), p.is_partial("sum"), p.is_partial("max")] for p in ps]}
    got = same_as_torch(fn)
    assert got["eq"] == [[i == j for j in range(5)] for i in range(5)]

    class MyShard(Shard):
        pass
    assert MyShard(1) == Shard(1) and Shard(1) == MyShard(1) and MyShard(1) != Shard(0)
    assert hash(MyShard(1)) == hash(Shard(1))
    assert got["str"] == ["S(0)", "S(1)", "R", "P(sum)", "P(max)"]


@pytest.mark.parametrize("placement", ["Shard(0)", "Shard(-1)", "Replicate()", "Partial()",
                                       "Partial('max')"])
def test_from_local_to_local_full_tensor(placement):
    def fn(L):
        dt, mesh = _api(L)
        local = L.tensor(_values(4, 3), requires_grad=True)
        d = dt.DTensor.from_local(local, mesh, [eval(placement, vars(dt))])
        full = (d.full_tensor() * 2).sum()
        full.backward()
        back = d.to_local()
        return {"type": type(d).__name__, "placements": repr(d.placements),
                "shape": list(d.shape), "grad_fn": type(d.grad_fn).__name__,
                "to_local": [type(back).__name__, type(back.grad_fn).__name__, py(back)],
                "full": py(full), "local.grad": py(local.grad),
                "requires_grad": d.requires_grad}
    r = same_as_torch(fn)
    assert r["type"] == "DTensor" and r["grad_fn"] == "_FromTorchTensorBackward"
    assert r["to_local"][:2] == ["Tensor", "_ToTorchTensorBackward"]
    assert r["local.grad"] == [[2.0] * 3] * 4


def test_redistribute_partial_to_replicate_and_its_gradient():
    def fn(L):
        dt, mesh = _api(L)
        local = L.arange(6.0).reshape(2, 3).requires_grad_()
        d = dt.DTensor.from_local(local, mesh, [dt.Partial()])
        r = d.redistribute(mesh, [dt.Replicate()])
        s = r.redistribute(placements=[dt.Shard(1)])
        (s * s).sum().backward()
        return {"r": [repr(r.placements), type(r.grad_fn).__name__, py(r.to_local())],
                "s": [repr(s.placements), type(s.grad_fn).__name__],
                "grad": py(local.grad)}
    r = same_as_torch(fn)
    assert r["r"][1] == "RedistributeBackward"
    assert r["grad"] == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_ops_on_dtensors_are_dtensors_and_gradients_flow():
    def fn(L):
        dt, mesh = _api(L)
        x0, w0 = L.tensor(_values(4, 3)), L.tensor(_values(3, 5), requires_grad=True)
        b0 = L.tensor(_values(5))
        x = dt.distribute_tensor(x0, mesh, [dt.Shard(0)])
        w = dt.distribute_tensor(w0, mesh, [dt.Replicate()])
        b = dt.distribute_tensor(b0, mesh, [dt.Replicate()])
        y = (x @ w + b).tanh()
        loss = y.pow(2).sum()
        loss.backward()
        # (PyTorch's w.grad is Partial(sum): hookgrad's computed arrays hold reduced values)
        return {"types": [type(t).__name__ for t in (x, w, y, loss, w.grad)],
                "leaf": [w.is_leaf, w.requires_grad, x.requires_grad],
                "y": py(y.full_tensor()), "placements": repr(y.placements),
                "w.grad": py(w.grad.full_tensor()),
                "scalar": type(y * L.tensor(2.0)).__name__,
                "detach": type(y.detach()).__name__}
    r = same_as_torch(fn)
    assert r["types"] == ["DTensor"] * 5 and r["leaf"] == [True, True, False]
    assert r["scalar"] == r["detach"] == "DTensor"


def test_to_local_grad_placements_lay_out_the_gradient():
    def fn(L):
        dt, mesh = _api(L)
        x = dt.distribute_tensor(L.ones(2, 2, requires_grad=True), mesh, [dt.Shard(0)])
        seen = []
        x.register_hook(lambda g: seen.append([type(g).__name__, repr(g.placements)]))
        x.to_local(grad_placements=[dt.Replicate()]).sum().backward()
        return {"seen": seen, "grad": py(x.grad.full_tensor())}
    r = same_as_torch(fn)
    assert r["seen"] == [["DTensor", "(Replicate(),)"]]


def test_bad_input_fails_as_pytorch():
    def fn(L):
        dt, mesh = _api(L)
        d = dt.DTensor.from_local(L.ones(2, 2), mesh, [dt.Shard(1)])
        cases = {
            "mixed": lambda: d + L.ones(2, 2),
            "local is a DTensor": lambda: dt.DTensor.from_local(d, mesh),
            "to Partial": lambda: d.redistribute(mesh, [dt.Partial()]),
            "no placements": lambda: d.redistribute(mesh),
            "shape without stride": lambda: dt.DTensor.from_local(L.ones(2), mesh, shape=(2,)),
            "placements length": lambda: dt.distribute_tensor(L.ones(2), mesh, []),
            "mixed Partial": lambda: d.redistribute(mesh, [dt.Partial("max")]),
        }
        return {k: raises(f) for k, f in cases.items()}  # the types compared with torch's
    r = same_as_torch(fn)
    r = {k: v["message"] for k, v in r.items()}
    assert r["mixed"].startswith("aten.add got mixed torch.Tensor and DTensor, need to "
                                    "convert all torch.Tensor to DTensor")
    assert r["local is a DTensor"] == (
        "the local_tensor argument only accepts torch.Tensor but got <class 'hookgrad."
        "distributed.tensor.DTensor'> value.")
    assert r["to Partial"] == ("Can not redistribute from S(1) to P(sum), redistributing "
                                  "to Partial is for internal use only!")
    assert r["no placements"] == "placements is needed for redistribute!"


def test_implicit_replication_admits_plain_tensors():
    mesh = init_device_mesh("cpu", (1,))
    d = distribute_tensor(hookgrad.ones(2, 2), mesh, [Shard(0)])
    with implicit_replication():
        y = d + hookgrad.ones(2, 2)
    assert isinstance(y, DTensor) and y.placements == (Shard(0),)
    assert np.array_equal(np.asarray(y.full_tensor()), np.full((2, 2), 2.0))
    with pytest.raises(RuntimeError, match="got mixed torch.Tensor and DTensor"):
        d + hookgrad.ones(2, 2)


def test_plain_tensors_keep_their_fast_paths_once_a_dtensor_exists():
    # DTensor's stage passes ops on plain Tensors through: a notebook loop of writes stays
    # on the host and a basic index read of a plain Tensor is a view, while an index
    # write into a DTensor still goes through its stage
    from hookgrad._host_value import Host
    mesh = init_device_mesh("cpu", (1,))
    d = distribute_tensor(hookgrad.zeros(4, 6), mesh, [Replicate()])
    x = hookgrad.zeros(4, 6)
    for i in range(4):
        x[i, i:i + 2] = float(i)
    assert type(x._arr) is Host and x[2, 2:4].tolist() == [2.0, 2.0]
    assert x[1]._base is x
    d[1, 1:3] = 5.0
    assert isinstance(d, DTensor) and isinstance(d[1], DTensor)
    assert d.full_tensor()[1].tolist() == [0.0, 5.0, 5.0, 0.0, 0.0, 0.0]


def test_dtensor_survives_pickle_and_deepcopy():
    import copy
    import pickle
    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))
    d = distribute_tensor(hookgrad.arange(4.0, requires_grad=True), mesh, [Partial()])
    p = hookgrad.nn.Parameter(distribute_tensor(hookgrad.ones(2), mesh, [Shard(0)]))
    for c in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d)):
        assert isinstance(c, DTensor) and c.placements == (Partial(),)
        assert c.device_mesh == mesh and c.requires_grad and c.is_leaf
        assert not isinstance(c, hookgrad.nn.Parameter)
        assert np.array_equal(np.asarray(c.to_local()), np.arange(4.0))
    for c in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert isinstance(c, DTensor) and isinstance(c, hookgrad.nn.Parameter)
        assert c.placements == (Shard(0),) and c.requires_grad


def test_dtensor_through_a_compiled_function():
    mesh = init_device_mesh("cpu", (1,))
    d = distribute_tensor(hookgrad.arange(4.0), mesh, [Shard(0)])
    step = hookgrad.compile(lambda t: (t * 3).sum())
    out = step(d)
    assert isinstance(out, DTensor) and out.item() == 18.0


# --------------------------------------------------------------------------- 8 devices


def _child():
    """Ops, redistribution and gradients of DTensors on a 2x4 mesh, and the same on plain
    Tensors on one device."""
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    hookgrad.manual_seed(0)
    x0, w0, b0 = hookgrad.randn(8, 4), hookgrad.randn(4, 8), hookgrad.randn(8)
    w0.requires_grad_()
    x = distribute_tensor(x0, mesh, [Shard(0), Replicate()])
    w = distribute_tensor(w0, mesh, [Replicate(), Shard(1)])
    b_local = b0.clone().requires_grad_()
    b = DTensor.from_local(b_local, mesh, [Replicate(), Shard(0)])
    y = hookgrad.nn.functional.gelu(x @ w + b).softmax(-1)
    loss = (y * y).mean()
    loss.backward()
    b0.requires_grad_()
    y_ref = hookgrad.nn.functional.gelu(x0 @ w0 + b0).softmax(-1)
    (y_ref * y_ref).mean().backward()

    r = y.redistribute(mesh, [Replicate(), Shard(0)])
    full = r.full_tensor()
    local = hookgrad.randn(8, 8, requires_grad=True)
    p = DTensor.from_local(local, mesh, [Partial(), Shard(1)])
    q = p.redistribute(mesh, [Replicate(), Replicate()]).to_local(grad_placements=[
        Shard(0), Replicate()])
    (q * q).sum().backward()
    errs = {}
    for k, f in {"mixed": lambda: x + hookgrad.ones(8, 4),
                 "cross-mesh": lambda: x + distribute_tensor(
                     x0, init_device_mesh("cpu", (8,)), [Shard(0)])}.items():
        try:
            f()
        except RuntimeError as e:
            errs[k] = str(e)

    def err(a, b):
        return float(np.abs(np.asarray(a) - np.asarray(b)).max())
    return {"devices": len(jax_devices()), "training": _train(mesh),
            "types": [type(t).__name__ for t in (x, y, loss, w.grad, r, full, p, q)],
            "y": err(y.full_tensor(), y_ref), "loss": err(loss.full_tensor(), (y_ref ** 2).mean()),
            "w.grad": err(w.grad.full_tensor(), w0.grad),
            "shards": [len(t._data.sharding.device_set) for t in (x, y, w.grad)],
            "placements": {k: repr(t.placements) for k, t in
                           {"x": x, "w": w, "b": b, "y": y, "w.grad": w.grad, "r": r,
                            "p": p}.items()},
            "b.grad": [err(b_local.grad, b0.grad), type(b_local.grad).__name__,
                       repr(b_local.grad.placements)],
            "full": [err(full, y_ref), full._data.sharding.is_fully_replicated],
            "local.grad": [err(local.grad, 2 * local.detach()),
                           repr(local.grad.placements)],
            "errors": errs}


def _train(mesh):
    """3 SGD and AdamW steps, eager and compiled, of a distribute_module'd model (first
    layer sharded over "tp", batch over "dp") against the same model on one device."""
    import copy
    from hookgrad.distributed.tensor import distribute_module
    nn = hookgrad.nn
    hookgrad.manual_seed(0)
    ref = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    model = copy.deepcopy(ref)

    def shard_first(name, mod, mesh):
        if name == "0":
            for k in ("weight", "bias"):
                setattr(mod, k, nn.Parameter(distribute_tensor(getattr(mod, k), mesh,
                                                               [Replicate(), Shard(0)])))
    distribute_module(model, mesh, shard_first, input_fn=lambda mod, inputs, mesh: tuple(
        distribute_tensor(t, mesh, [Shard(0), Replicate()]) for t in inputs))
    x = hookgrad.randn(8, 4)

    def step(mod, opt):
        opt.zero_grad()
        loss = mod(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    out = {}
    for mode in ("eager", "compiled"):
        for opt_cls in (hookgrad.optim.SGD, hookgrad.optim.AdamW):
            m, r = copy.deepcopy(model), copy.deepcopy(ref)
            om, o_ref = opt_cls(m.parameters(), lr=0.1), opt_cls(r.parameters(), lr=0.1)
            run = (lambda: step(m, om)) if mode == "eager" else \
                hookgrad.compile(lambda: step(m, om))
            losses = [[float(run()), float(step(r, o_ref))] for _ in range(3)]
            out[f"{mode}/{opt_cls.__name__}"] = {
                "losses": max(abs(a - b) for a, b in losses),
                "params": max(float(np.abs(np.asarray(p.full_tensor()) -
                                           np.asarray(q.detach())).max())
                              for p, q in zip(m.parameters(), r.parameters())),
                "placements": [repr(p.placements) for p in m.parameters()]}
    return out


def jax_devices():
    import jax
    return jax.devices()


@pytest.fixture(scope="module")
def report_8_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    code = "import json, tests.test_dtensor as t; print(json.dumps(t._child()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["devices"] == 8
    return report


def test_dtensor_ops_and_gradients_on_a_2x4_mesh_are_the_global_ones(report_8_devices):
    r = report_8_devices
    # full_tensor() and to_local() give plain Tensors
    assert r["types"] == ["DTensor"] * 5 + ["Tensor", "DTensor", "Tensor"]
    # the values and gradients of one device, with the arrays split over the mesh
    assert r["y"] < 1e-6 and r["loss"] < 1e-7 and r["w.grad"] < 1e-6
    assert r["shards"] == [8, 8, 8]
    assert r["placements"] == {
        "x": "(Shard(dim=0), Replicate())", "w": "(Replicate(), Shard(dim=1))",
        "b": "(Replicate(), Shard(dim=0))", "y": "(Shard(dim=0), Shard(dim=1))",
        "w.grad": "(Replicate(), Shard(dim=1))", "r": "(Replicate(), Shard(dim=0))",
        "p": "(Partial(sum), Shard(dim=1))"}
    # from_local's gradient comes back laid out as the forward placements
    assert r["b.grad"][0] < 1e-6
    assert r["b.grad"][1:] == ["Tensor", "(Replicate(), Shard(dim=0))"]
    assert r["full"][0] < 1e-6 and r["full"][1]
    # to_local's grad_placements, then Partial's gradient placement (Replicate)
    assert r["local.grad"] == [0.0, "(Replicate(), Shard(dim=1))"]


@pytest.mark.parametrize("case", ["eager/SGD", "eager/AdamW", "compiled/SGD",
                                  "compiled/AdamW"])
def test_distribute_module_trains_as_on_one_device(report_8_devices, case):
    r = report_8_devices["training"][case]
    assert r["losses"] < 1e-6 and r["params"] < 1e-5
    # the parameters stay DTensors where distribute_module put them
    assert r["placements"] == ["(Replicate(), Shard(dim=0))"] * 2 + ["(Replicate(), "
                                                                      "Replicate())"] * 2


def test_dtensor_bad_input_on_a_2x4_mesh(report_8_devices):
    errs = report_8_devices["errors"]
    assert errs["mixed"].startswith("aten.add got mixed torch.Tensor and DTensor")
    assert errs["cross-mesh"].startswith("DTensor does not support cross-mesh operation on "
                                         "aten.add! Got meshes: ")


def test_distribute_module_shards_parameters_and_lays_out_inputs_and_outputs():
    def fn(L):
        dt, mesh = _api(L)
        nn = L.nn
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        with L.no_grad():
            for p, v in zip(model.parameters(), ((4, 3), (4,), (2, 4), (2,))):
                p.copy_(L.tensor(_values(*v)))

        def shard_first(name, mod, mesh):
            if name == "0":
                mod.weight = nn.Parameter(dt.distribute_tensor(mod.weight, mesh,
                                                               [dt.Shard(0)]))

        dt.distribute_module(model, mesh, shard_first,
                             input_fn=lambda mod, inputs, mesh: tuple(
                                 dt.DTensor.from_local(t, mesh) for t in inputs),
                             output_fn=lambda mod, out, mesh: out.to_local())
        x = L.tensor(_values(5, 3))
        y = model(x)
        y.pow(2).sum().backward()
        params = dict(model.named_parameters())
        again = raises(dt.distribute_module, model, mesh)
        return {"y": [type(y).__name__, py(y)],
                "params": {k: [type(p).__name__, isinstance(p, nn.Parameter),
                               repr(p.placements), py(p.grad.full_tensor())]
                           for k, p in params.items()},
                "again": again}
    r = same_as_torch(fn)
    assert r["y"][0] == "Tensor"
    assert r["params"]["0.weight"][:3] == ["DTensor", True, "(Shard(dim=0),)"]
    assert r["params"]["2.bias"][:3] == ["DTensor", True, "(Replicate(),)"]
    assert r["again"]["message"].startswith("distribute_module should only be called once")


def test_dtensor_factories():
    def fn(L):
        dt, mesh = _api(L)
        made = {"ones": dt.ones(2, 3, device_mesh=mesh, placements=[dt.Shard(1)]),
                "zeros": dt.zeros((4,), dtype=L.float64, device_mesh=mesh),
                "full": dt.full((2, 2), 7.0, device_mesh=mesh, requires_grad=True),
                "empty": dt.empty(3, device_mesh=mesh)}
        out = {k: [type(t).__name__, list(t.shape), str(t.dtype).split(".")[1],
                   repr(t.placements),
                   t.requires_grad] for k, t in made.items()}
        out["values"] = py([made[k].full_tensor() for k in ("ones", "zeros", "full")])
        return out
    r = same_as_torch(fn)
    assert r["ones"] == ["DTensor", [2, 3], "float32", "(Shard(dim=1),)", False]
    assert r["full"][-1] is True
    # (PyTorch's rand/randn need its RNG tracker, which a CPU mesh lacks)
    from hookgrad.distributed import tensor as dt
    mesh = init_device_mesh("cpu", (1,))
    u = dt.rand(2, 50, device_mesh=mesh, placements=[Shard(0)])
    n = dt.randn((6,), device_mesh=mesh, requires_grad=True)
    assert isinstance(u, DTensor) and u.placements == (Shard(0),) and tuple(u.shape) == (2, 50)
    assert 0 <= float(u.min()) and float(u.max()) < 1 and len(set(u.to_local().tolist()[0])) > 1
    assert isinstance(n, DTensor) and n.requires_grad and n.is_leaf and tuple(n.shape) == (6,)


def test_dtensor_is_a_pytree_node_keeping_its_layout():
    import jax
    mesh = init_device_mesh("cpu", (1,))
    d = distribute_tensor(hookgrad.arange(4.0, requires_grad=True), mesh, [Partial()])
    leaves, spec = jax.tree_util.tree_flatten({"d": d})
    assert len(leaves) == 1 and isinstance(leaves[0], jax.Array)
    back = jax.tree_util.tree_unflatten(spec, [leaves[0] * 2])["d"]
    assert isinstance(back, DTensor) and back.placements == (Partial(),)
    assert back.device_mesh == mesh and back.requires_grad
    assert back.to_local().tolist() == [0.0, 2.0, 4.0, 6.0]


def test_grad_of_a_non_leaf_dtensor_warns_at_the_callers_line():
    mesh = init_device_mesh("cpu", (1,))
    y = distribute_tensor(hookgrad.ones(2, requires_grad=True), mesh) * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor") as rec:
        assert y.grad is None
    assert rec[0].filename == __file__
