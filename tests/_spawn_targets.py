"""Functions ``hookgrad.multiprocessing.spawn`` runs in its tests (no heavy imports: each
spawned process imports this module)."""
import os


def write_rank(rank, folder):
    with open(os.path.join(folder, str(rank)), "w") as f:
        f.write(str(rank * 10))


def fail_on_one(rank):
    if rank == 1:
        raise ValueError("rank one failed")
