"""A DDP (and FSDP) training script written for PyTorch and launched as ``torchrun``
launches it, for tests/test_distributed_processes.py.

``torchrun --nproc-per-node 2 tests/_torchrun_ddp.py VARIANT...`` with PyTorch, and
``python -m hookgrad.as_torch -m torch.distributed.run --nproc-per-node 2
tests/_torchrun_ddp.py VARIANT...`` with hookgrad. A variant is ``eager`` or ``compiled``
(the step through ``torch.compile``), optionally with ``+hook`` (the default all-reduce
communication hook) or ``+fp16`` (the float16 compression hook); ``collectives`` (each
collective once); ``unused`` (a parameter a rank's batch does not reach); ``fsdp`` or
``fsdp+compiled`` (FSDP2's ``fully_shard``, the full state dict and a distributed checkpoint); or ``limits``
(hookgrad's not-implemented errors across processes). Each rank appends one JSON line per
variant to ``$RESULTS_DIR/rank<RANK>.jsonl``. A training variant writes the rank, the
gradients its hooks saw (its own, before averaging), the losses all-reduced in the step
(all-gathered) and the trained weights. The weights start different on each rank (DDP
copies rank 0's), ``DistributedSampler`` shuffles and splits the data, and the second
epoch accumulates one micro-batch inside ``no_sync()``.
"""
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def _values(n, shift):
    return torch.sin(torch.arange(n, dtype=torch.float32) * 0.7 + shift)


def train(variant, rank, world):
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):   # a different start on every rank
            p.copy_(_values(p.numel(), i + 10 * rank).reshape(p.shape) * 0.5)
    seen = []
    # hookgrad runs a hook that only observes on the host, and the step stays one program
    observe = getattr(torch.compile, "host_hook", lambda hook: hook)
    model[0].weight.register_hook(observe(lambda g: seen.append(float(g.sum()))))
    model[2].bias.register_hook(observe(lambda g: seen.append(float(g.sum()))))
    ddp = DistributedDataParallel(model)
    if "+hook" in variant:
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    elif "+fp16" in variant:
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    x, y = _values(24 * 4, 0.0).reshape(24, 4), _values(24 * 3, 1.0).reshape(24, 3)
    sampler = DistributedSampler(TensorDataset(x, y), seed=3)   # PyTorch's order
    loader = DataLoader(TensorDataset(x, y), batch_size=4, sampler=sampler)

    def step(xb, yb, sync):
        if sync:
            loss = ((ddp(xb) - yb) ** 2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
        else:
            with ddp.no_sync():
                loss = ((ddp(xb) - yb) ** 2).mean()
                loss.backward()
        metric = loss.detach().clone()
        dist.all_reduce(metric)          # inside the (compiled) step
        return metric

    if variant.startswith("compiled"):
        step = torch.compile(step)
    losses = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for i, (xb, yb) in enumerate(loader):
            losses.append(step(xb, yb, not (epoch == 1 and i == 0)))
    total = torch.stack(losses).sum()
    dist.broadcast(total, src=1)
    gathered = [torch.zeros(len(losses)) for _ in range(world)]
    dist.all_gather(gathered, torch.stack(losses))
    return {"variant": variant, "rank": rank, "hooks": seen,
            "loss": float(total) / world / len(losses),   # gloo has no AVG: sum, divide
            "gathered": [t.tolist() for t in gathered],
            "weights": [p.detach().reshape(-1).tolist() for p in model.parameters()]}


def fsdp(variant, rank, world):
    """FSDP2 (``fully_shard`` on each Linear and on the model) trained on each rank's own
    batches; the weights start different on each rank and each keeps its own rows."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (StateDictOptions,
                                                         get_model_state_dict,
                                                         set_model_state_dict)
    from torch.distributed.fsdp import fully_shard

    def build(shift):
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        with torch.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(_values(p.numel(), i + shift).reshape(p.shape) * 0.5)
        for layer in (model[0], model[2]):
            fully_shard(layer)
        return fully_shard(model)

    model = build(10 * rank)
    seen = []
    observe = getattr(torch.compile, "host_hook", lambda hook: hook)
    model[0].register_forward_hook(observe(lambda m, i, o: seen.append(float(o.sum()))))
    model[2].register_full_backward_hook(
        observe(lambda m, gin, gout: seen.append(float(gout[0].sum()))))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = _values(24 * 4, 0.0).reshape(24, 4), _values(24 * 3, 1.0).reshape(24, 3)
    sampler = DistributedSampler(TensorDataset(x, y), seed=3)
    loader = DataLoader(TensorDataset(x, y), batch_size=4, sampler=sampler)

    def step(xb, yb):
        loss = ((model(xb) - yb) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        metric = loss.detach().clone()
        dist.all_reduce(metric)
        return metric

    if variant == "fsdp+compiled":
        step = torch.compile(step)
    losses = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            losses.append(step(xb, yb))
    full = StateDictOptions(full_state_dict=True)
    weights = get_model_state_dict(model, options=full)
    listed = {k: v.reshape(-1).tolist() for k, v in weights.items()}
    restored = build(100)                 # another start, then the trained weights loaded
    set_model_state_dict(restored, weights, options=full)   # PyTorch's shards `weights`
    again = get_model_state_dict(restored, options=full)
    shards = get_model_state_dict(model)
    checkpoint = os.path.join(os.environ["RESULTS_DIR"], "checkpoint-" + variant)
    dcp.save(shards, checkpoint_id=checkpoint)   # each rank its shards
    fresh = build(200)
    state = get_model_state_dict(fresh)
    dcp.load(state, checkpoint_id=checkpoint)
    set_model_state_dict(fresh, state)
    loaded = get_model_state_dict(fresh, options=full)
    return {"variant": variant, "rank": rank, "hooks": seen, "checkpoint": checkpoint,
            "loaded": {k: v.reshape(-1).tolist() for k, v in loaded.items()},
            "losses": [float(v) for v in losses], "weights": listed,
            "restored": {k: v.reshape(-1).tolist() for k, v in again.items()},
            "shards": {k: list(getattr(v, "to_local", lambda: v)().shape)
                       for k, v in shards.items()}}


def collectives(rank, world):
    """Each collective once, on tensors that differ by rank."""
    out = {}
    x = torch.arange(4, dtype=torch.float32) + 10 * rank - 3
    for op in ("SUM", "PRODUCT", "MIN", "MAX"):
        t = x.clone()
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out[op] = t.tolist()
    for op in ("BAND", "BOR", "BXOR"):
        t = torch.tensor([5, 12, 7], dtype=torch.int32) + rank * 3
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out[op] = t.tolist()
    t = torch.zeros(world * 4)
    dist.all_gather_into_tensor(t, x)
    out["all_gather_into_tensor"] = t.tolist()
    t = x.clone()
    dist.broadcast(t, src=1)
    out["broadcast"] = t.tolist()
    t = x.clone()
    dist.reduce(t, dst=0)
    out["reduce"] = t.tolist()
    t = torch.zeros(2)
    dist.reduce_scatter_tensor(t, x)
    out["reduce_scatter_tensor"] = t.tolist()
    solo, both = dist.new_group([1]), dist.new_group([0, 1])
    t = x.clone()
    dist.all_reduce(t, group=both)
    out["group"] = [t.tolist(), dist.get_rank(solo), dist.get_world_size(both),
                    dist.get_process_group_ranks(both)]
    if rank == 1:                      # only the members of a group call its collectives
        t = x.clone()
        dist.all_reduce(t, group=solo)
        out["solo"] = t.tolist()
    out.update(exchanges(rank, world, x))
    objects = [None] * world
    dist.all_gather_object(objects, {"rank": rank, "name": "r" * (rank + 1)})
    sent = [("from", rank), [rank] * 3] if rank == 1 else [None, None]
    dist.broadcast_object_list(sent, src=1)
    into = [None] * world if rank == 1 else None
    dist.gather_object({"from": rank}, into, dst=1)
    got = [None]
    dist.scatter_object_list(got, [("to", r) for r in range(world)] if rank == 0 else None)
    out["objects"] = [objects, sent, into, got]
    out["queries"] = [dist.is_gloo_available(), dist.is_nccl_available(),
                      dist.is_mpi_available(), dist.is_torchelastic_launched(),
                      dist.get_node_local_rank(), dist.get_backend()]
    return {"variant": "collectives", "rank": rank, "world": world, **out}


def exchanges(rank, world, x):
    """Rooted, all-to-all and point-to-point exchanges, eagerly and in a compiled step
    (hookgrad's; PyTorch's inductor needs a C compiler: its run is eager)."""
    out = {}
    listed = [torch.zeros(4) for _ in range(world)] if rank == 1 else None
    dist.gather(x, listed, dst=1)
    out["gather"] = None if listed is None else [t.tolist() for t in listed]
    t = torch.zeros(2)
    dist.scatter(t, [torch.full((2,), 7.0 + i) for i in range(world)] if rank == 0 else None)
    out["scatter"] = t.tolist()
    t = torch.zeros(4)
    dist.all_to_all_single(t, x)
    out["all_to_all_single"] = t.tolist()
    sends, receives = ([1, 2], [1, 3]) if rank == 0 else ([3, 0], [2, 0])
    t = torch.zeros(sum(receives))
    dist.all_to_all_single(t, x[:sum(sends)] * 2, receives, sends)
    out["all_to_all_uneven"] = t.tolist()
    got = [torch.zeros(2, 2, dtype=torch.int64) for i in range(world)]   # gloo: one shape
    dist.all_to_all(got, [torch.full((2, 2), 10 * rank + j) for j in range(world)])
    out["all_to_all"] = [g.tolist() for g in got]
    t = x.clone() if rank == 0 else torch.zeros(4)
    if rank == 0:
        dist.send(x * 3, dst=1)
    else:
        out["recv_from"] = dist.recv(t, src=0)
    out["send_recv"] = t.tolist()
    peer, t = 1 - rank, torch.zeros(3, dtype=torch.int32)
    works = [dist.isend(torch.arange(3, dtype=torch.int32) + rank, dst=peer),
             dist.irecv(t, src=peer)]                 # a ring: both send first
    for w in works:
        w.wait()
    out["ring"] = t.tolist()
    compiled = torch.compile if hasattr(torch.compile, "host_hook") else (lambda f: f)

    @compiled
    def step(v):
        a = torch.zeros(4)
        dist.all_to_all_single(a, v + 1)
        b = torch.zeros(4)
        if rank == 0:
            dist.send(a * 2, dst=1)
            dist.recv(b, src=1)
        else:
            dist.recv(b, src=0)
            dist.send(a * 2, dst=0)
        return a + b
    out["compiled"] = [step(x).tolist(), step(x * 2).tolist()]
    return out


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 2)])

    def forward(self, x, which):
        return self.heads[which](x)


def unused(rank, world):
    """Each rank's batch reaches one of two heads (find_unused_parameters=True); then a
    backward outside DDP's forward, which PyTorch does not synchronize."""
    model = TwoHeads()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(_values(p.numel(), i).reshape(p.shape))
    ddp = DistributedDataParallel(model, find_unused_parameters=True)
    x = _values(12, rank).reshape(4, 3)
    ddp(x, rank % 2).sum().backward()
    grads = [None if p.grad is None else p.grad.reshape(-1).tolist()
             for p in model.parameters()]
    model.zero_grad()
    model(x, 0).sum().backward()       # not through DDP: each rank keeps its own
    return {"variant": "unused", "rank": rank, "grads": grads,
            "unsynced": model.heads[0].weight.grad.reshape(-1).tolist()}


def limits(rank, world):
    """What hookgrad does not do across processes yet says so."""
    try:
        dist.recv(torch.zeros(2))       # from any sender
        message = None
    except NotImplementedError as e:
        message = str(e)
    return {"variant": "limits", "rank": rank, "recv": message}


def main(variants):
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    for variant in variants:
        run = {"collectives": collectives, "limits": limits, "unused": unused}.get(
            variant, lambda rank, world: (fsdp if variant.startswith("fsdp") else train)(
                variant, rank, world))
        result = run(rank, world)
        dist.barrier()
        # one file per rank: the ranks' printed lines would interleave
        with open(os.path.join(os.environ["RESULTS_DIR"], f"rank{rank}.jsonl"), "a") as f:
            f.write(json.dumps(result) + "\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:] or ["eager"])
