"""Device memory that ``save_on_cpu`` saves: the bytes a graph holds between forward and backward.

The model is an MLP (6 Linear(2048, 2048) + ReLU, batch 2048; 16 MiB per activation) on
the GPU. For each library (hookgrad, and PyTorch on CUDA when
installed) and each variant (plain forward; forward under
``autograd.graph.save_on_cpu()``; the same with ``pin_memory=True``), one process measures
``L.cuda.memory_allocated()`` before the forward and after it (the output's loss
computed, nothing freed yet): the difference is what the graph keeps on the device for
backward. It then runs backward and checks the gradients equal the plain variant's.

    python benchmarks/save_on_cpu_memory.py

On a machine without a GPU there is nothing to move (the saved tensors already live in
host memory): it prints so and measures nothing. Last line:
``save_on_cpu_memory: hookgrad_held_ratio X torch_held_ratio Y`` (device bytes held by the
graph under ``save_on_cpu`` over the plain forward's; lower is better, torch's where
PyTorch has CUDA).
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = ("plain", "save_on_cpu", "save_on_cpu_pinned")


def _sync(L):
    if L.cuda.is_available():  # the worker also runs on a CPU, as a smoke test
        L.cuda.synchronize()


def worker(lib, variant, width):
    if lib == "torch":
        import torch as L
        L.set_default_device("cuda")
    else:
        import hookgrad as L
    import numpy as np
    rng = np.random.default_rng(0)
    layers = [L.nn.Linear(width, width) for _ in range(6)]
    with L.no_grad():
        for lin in layers:
            lin.weight.copy_(L.tensor(rng.standard_normal((width, width), np.float32)
                                      / width ** 0.5))
            lin.bias.copy_(L.tensor(rng.standard_normal(width, np.float32) * 0.1))
    x = L.tensor(rng.standard_normal((width, width), np.float32))
    _sync(L)
    before = L.cuda.memory_allocated()
    ctx = (L.autograd.graph.save_on_cpu(pin_memory=variant.endswith("pinned"))
           if variant != "plain" else None)
    if ctx is not None:
        ctx.__enter__()
    h = x
    for lin in layers:
        h = L.relu(lin(h))
    loss = (h * h).mean()
    loss.item()  # the forward has run (hookgrad may defer it until a value is read)
    if ctx is not None:
        ctx.__exit__(None, None, None)
    _sync(L)
    held = L.cuda.memory_allocated() - before
    loss.backward()
    grads = [float(lin.weight.grad.norm()) for lin in layers]
    print(json.dumps({"held": held, "grads": grads}))


def _run(lib, variant, width):
    """The worker's figures, or ``{"error": its last line}``: one variant failing does not
    hide the others."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, __file__, "--worker", lib, variant, str(width)],
                         env=env, capture_output=True, text=True)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["(no output)"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    # NOTE: this process only asks whether there is a GPU: JAX would otherwise take 75% of
    # its memory and the workers' JAX could not allocate theirs
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    import hookgrad
    if not hookgrad.cuda.is_available():
        print("no GPU: saved tensors already live in host memory, nothing to measure")
        print("save_on_cpu_memory: hookgrad_held_ratio n/a torch_held_ratio n/a")
        return
    libs = ["hookgrad"]
    try:
        import torch
        if torch.cuda.is_available():
            libs.append("torch")
    except ImportError:
        pass
    width = 2048
    ratios = {}
    for lib in libs:
        res = {v: _run(lib, v, width) for v in VARIANTS}
        plain = res["plain"]
        for v in VARIANTS:
            r = res[v]
            if "error" in r or "error" in plain:
                print(f"{lib:8s} {v:19s} failed: {r.get('error', plain.get('error'))}")
                continue
            same = all(abs(a - b) <= 1e-3 * abs(b) for a, b in zip(r["grads"], plain["grads"]))
            print(f"{lib:8s} {v:19s} held {r['held'] / 2**20:8.1f} MiB"
                  f"   grads {'equal' if same else 'DIFFER'} to plain")
        if "held" in res["save_on_cpu"] and "held" in plain:
            ratios[lib] = f"{res['save_on_cpu']['held'] / max(plain['held'], 1):.3f}"
    print(f"save_on_cpu_memory: hookgrad_held_ratio {ratios.get('hookgrad', 'n/a')} "
          f"torch_held_ratio {ratios.get('torch', 'n/a')}")


if __name__ == "__main__":
    main()
