"""One data-parallel step in two processes on localhost, for tests/test_distributed.py.

``python -m tests._two_process_step RANK PORT``: joins the other process through
``hookgrad.distributed.init_process_group`` (``jax.distributed`` with gloo CPU
collectives, loopback only), runs one compiled ``DistributedDataParallel`` step over the
mesh of both processes' devices and prints a JSON line with its loss and parameters.
:func:`run` is the same step, unsharded, for the single-process reference.
"""
import json
import sys

import numpy as np

import hookgrad
import hookgrad.nn as nn


def run(wrap=lambda m: m):
    hookgrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    opt = hookgrad.optim.AdamW(model.parameters(), lr=1e-2)
    net = wrap(model)
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((8, 4), dtype=np.float32) for _ in range(2))

    @hookgrad.compile
    def step(x, y):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    loss = step(hookgrad.tensor(x), hookgrad.tensor(y))
    return float(loss), [np.asarray(p.detach()).tolist() for p in model.parameters()]


def main(rank, port):
    import jax
    import hookgrad.distributed as dist
    from hookgrad.distributed.device_mesh import init_device_mesh
    from hookgrad.nn.parallel import DistributedDataParallel
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=2,
                            rank=rank)
    print("joined", flush=True)   # past this point a failure is hookgrad's
    mesh = init_device_mesh("cpu", (len(jax.devices()),), mesh_dim_names=("data",))
    loss, params = run(lambda m: DistributedDataParallel(m, device_mesh=mesh))
    dist.barrier()
    print(json.dumps({"rank": dist.get_rank(), "world": dist.get_world_size(),
                      "devices": len(jax.devices()), "loss": loss, "params": params}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
