"""``python -m hookgrad.distributed.run``: start a training script's processes as ``torchrun``
does.

::

    python -m hookgrad.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m hookgrad.distributed.run --nnodes 2 --node-rank 0 --nproc-per-node 4 \\
        --master-addr 10.0.0.1 --master-port 29500 train.py

Each process gets torchrun's environment (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``,
``TORCHELASTIC_RUN_ID``), so
``init_process_group()`` with no arguments joins them; rank 0 hosts JAX's coordinator on
``MASTER_ADDR:MASTER_PORT``. When a process fails, the others are stopped and the launcher
exits with its status. Under ``hookgrad.as_torch``, ``python -m torch.distributed.run`` is
this launcher, and the processes run with ``torch`` bound to hookgrad. Elastic restarts
and rendezvous backends other than a fixed address are not implemented.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time

__all__ = ["main", "get_args_parser"]


def get_args_parser() -> argparse.ArgumentParser:
    """The launcher's arguments (torchrun's names; ``-`` and ``_`` spellings both work)."""
    p = argparse.ArgumentParser(prog="python -m hookgrad.distributed.run",
                                description="Start a script's processes as torchrun does.")
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int,
                   default=29500)
    p.add_argument("--rdzv-id", "--rdzv_id", dest="rdzv_id", default="none",
                   help="the job's id (TORCHELASTIC_RUN_ID)")
    p.add_argument("--standalone", action="store_true",
                   help="one node: a free port on localhost")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a Python module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run the script argument as a program, not with Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _nproc(value: str) -> int:
    if value in ("gpu", "auto"):   # the launcher is no rank: asking JAX here is harmless
        from .. import cuda
        gpus = cuda.device_count()
        if gpus or value == "gpu":
            if not gpus:
                raise SystemExit("--nproc-per-node gpu: JAX sees no GPU on this machine")
            return gpus
    if value in ("cpu", "auto"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise SystemExit(f"--nproc-per-node: expected a number, 'gpu', 'cpu' or 'auto', "
                         f"got {value!r}") from None
    if n < 1:
        raise SystemExit(f"--nproc-per-node: expected at least 1 process, got {n}")
    return n


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _command(args) -> list[str]:
    if args.no_python:
        return [args.training_script, *args.training_script_args]
    cmd = [sys.executable]
    torch = sys.modules.get("torch")
    if torch is not None and torch.__name__ == "hookgrad":   # launched under as_torch
        cmd += ["-m", "hookgrad.as_torch"]
    cmd += (["-m"] if args.module else []) + [args.training_script]
    return cmd + args.training_script_args


def main(argv: list[str] | None = None) -> int:
    """Start ``--nproc-per-node`` processes of the script and wait for them."""
    args = get_args_parser().parse_args(sys.argv[1:] if argv is None else argv)
    nproc = _nproc(args.nproc_per_node)
    if not 0 <= args.node_rank < args.nnodes:
        raise SystemExit(f"--node-rank {args.node_rank} is out of range for --nnodes "
                         f"{args.nnodes}")
    addr, port = args.master_addr, args.master_port
    if args.standalone:
        addr, port = "127.0.0.1", _free_port()
    world = args.nnodes * nproc
    procs = []
    for local in range(nproc):
        env = dict(os.environ, RANK=str(args.node_rank * nproc + local), LOCAL_RANK=str(local),
                   WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(nproc),
                   GROUP_RANK=str(args.node_rank), MASTER_ADDR=addr, MASTER_PORT=str(port),
                   TORCHELASTIC_RUN_ID=args.rdzv_id)
        procs.append(subprocess.Popen(_command(args), env=env))
    return _wait(procs)


def _wait(procs) -> int:
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                rank, code = failed[0]
                print(f"hookgrad.distributed.run: local rank {rank} exited with status "
                      f"{code}; stopping the others", file=sys.stderr)
                _stop(procs)
                return code
            if all(c == 0 for c in codes):
                return 0
            time.sleep(0.1)
    except KeyboardInterrupt:
        _stop(procs)
        return 128 + signal.SIGINT


def _stop(procs) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
del _m

if __name__ == "__main__":
    sys.exit(main())
