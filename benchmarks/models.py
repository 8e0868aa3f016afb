"""Hugging Face transformers models, unmodified: hookgrad (eager and ``hookgrad.compile``)
against PyTorch eager, milliseconds per forward+backward step.

Each row builds the model from transformers' own source with ``torch`` bound to hookgrad
(``hookgrad.as_torch``) or to PyTorch, each library in its own process. A step is
``model(ids, labels=ids).loss.backward()`` then ``zero_grad``; the time is the best of
several rounds after three warm-up steps. Rows:

  gpt2     GPT2LMHeadModel, 2 layers, 4 heads, width 64, vocabulary 256, batch 4 x 32

PyTorch runs with its default intra-op threads; on a machine whose cores are busy they
oversubscribe and its times grow many-fold (``OMP_NUM_THREADS=1`` shows the difference).

The last line is ``models_vs_torch: X``, the geometric mean over rows of PyTorch's time
over hookgrad's compiled time (above 1: hookgrad is faster).

    python benchmarks/models.py [--quick]
"""
import json
import math
import subprocess
import sys
import time

MODELS = {"gpt2": dict(n_layer=2, n_head=4, n_embd=64, vocab_size=256, n_positions=64)}
BATCH, LENGTH = 4, 32


def _measure(lib, model_name, rounds, n):
    """ms per step in this process: ``lib`` is torch, hookgrad or hookgrad-compiled."""
    sys.modules.setdefault("torchvision", None)  # image processors only; not used here
    if lib.startswith("hookgrad"):
        import hookgrad.as_torch
        hookgrad.as_torch.install()
    import numpy as np
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(**MODELS[model_name]))
    ids = torch.tensor(np.random.default_rng(0).integers(0, 256, (BATCH, LENGTH)))

    def step(ids):
        loss = model(ids, labels=ids).loss
        loss.backward()
        model.zero_grad()
        return loss
    if lib == "hookgrad-compiled":
        step = torch.compile(step)
    for _ in range(3):
        step(ids).item()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            loss = step(ids)
        loss.item()  # waits for the device
        best = min(best, (time.perf_counter() - t0) / n * 1e3)
    return best


def _run(lib, model_name, quick):
    proc = subprocess.run([sys.executable, __file__, "--worker", lib, model_name]
                          + (["--quick"] if quick else []), capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("MS ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{lib} {model_name} failed:\n{proc.stderr[-2000:]}")
    return json.loads(lines[-1][3:])


def main(argv):
    quick = "--quick" in argv
    rounds, n = (2, 3) if quick else (5, 10)
    if argv and argv[0] == "--worker":
        print("MS " + json.dumps(_measure(argv[1], argv[2], rounds, n)))
        return
    print(f"{'model':8} {'torch ms':>10} {'hookgrad ms':>12} {'compiled ms':>12} "
          f"{'eager x':>8} {'compiled x':>11}")
    ratios = []
    for name in MODELS:
        t, h, c = (_run(lib, name, quick) for lib in ("torch", "hookgrad", "hookgrad-compiled"))
        ratios.append(t / c)
        print(f"{name:8} {t:10.2f} {h:12.2f} {c:12.2f} {t / h:8.2f} {t / c:11.2f}")
    print(f"models_vs_torch: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
