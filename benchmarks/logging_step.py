"""A training step whose hooks log a value per layer: eager vs compiled vs host hooks.

The step: an MLP of 4 Linear(256, 256) + ReLU, batch 64, MSE, AdamW, with a tensor hook on
each Linear's weight logging ``grad.norm().item()`` into a list, as PyTorch users write
it. Variants, timed interleaved (best of rounds, each step synced):

  eager      hookgrad eager
  compiled   ``hookgrad.compile`` of the same step: one program, its hooks run on the host
             after each run with its values (host calls, docs/modes.md "Side effects"),
             each computing its norm eagerly
  host_hook  the same hooks marked ``@hookgrad.compile.host_hook``, logging the norm the
             program computes: one program, the hooks after each run with its values
  split      ``compiled``, its step also skipping the update when ``loss.item()`` is
             above a limit: a program per branch, the value checked after each run
  torch      PyTorch eager with the plain hooks (when torch is installed)

Each variant's logged norms are checked equal to eager's.

    python benchmarks/logging_step.py [--quick]

The last line is ``logging_step: compiled_vs_eager X host_hook_vs_eager Y split_vs_eager Z``.
"""
import argparse
import time
import warnings

import numpy as np

import hookgrad as hg

D, B, LAYERS = 256, 64, 4


def _model(L, log, host):
    L.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [L.nn.Linear(D, D), L.nn.ReLU()]
    model = L.nn.Sequential(*layers[:-1])
    if host:
        record = hg.compile.host_hook(lambda n: log.append(n.item()))
        hook = lambda g: record(g.norm())   # noqa: E731 - the norm in the program
    else:
        hook = lambda g: log.append(g.norm().item())   # noqa: E731
    for m in model:
        if isinstance(m, L.nn.Linear):
            m.weight.register_hook(hook)
    return model


def variant(L, name):
    log = []
    model = _model(L, log, host=name == "host_hook")
    if L is not hg:   # the same weights as hookgrad's
        ref = _model(hg, [], host=False)
        with L.no_grad():
            for p, q in zip(model.parameters(), ref.parameters()):
                p.copy_(L.tensor(np.asarray(q.detach())))
    opt = L.optim.AdamW(model.parameters(), lr=1e-3)
    x = L.tensor(np.random.default_rng(0).standard_normal((B, D)).astype(np.float32))

    def step():
        loss = ((model(x) - 1.0) ** 2).mean()
        loss.backward()
        if name == "split" and loss.item() > 1e6:   # a diverging step: no update
            opt.zero_grad()
            return loss
        opt.step()
        opt.zero_grad()
        return loss
    if name in ("compiled", "host_hook", "split"):
        step = hg.compile(step)
    return step, log


def _time(step, steps):
    start = time.perf_counter()
    for _ in range(steps):
        float(step())
    return (time.perf_counter() - start) / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and steps")
    args = parser.parse_args()
    rounds, steps = (3, 5) if args.quick else (7, 20)
    names = ["eager", "compiled", "host_hook", "split"]
    libs = {n: hg for n in names}
    try:
        import torch
        names.append("torch")
        libs["torch"] = torch
    except ImportError:
        pass
    runs = {n: variant(libs[n], n) for n in names}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in names:
            for _ in range(3):   # warm-up: compilation
                float(runs[n][0]())
        best = {n: min(_time(runs[n][0], steps) for _ in range(rounds)) for n in names}
    ran = [str(w.message) for w in caught if "runs eagerly" in str(w.message)]
    if ran:   # the compiled variants must stay one program
        raise SystemExit(ran[0])
    logs = {n: np.asarray(runs[n][1][:3 * LAYERS]) for n in names}
    for n in names:
        np.testing.assert_allclose(logs[n], logs["eager"], rtol=2e-3, err_msg=n)
    for n in names:
        print(f"  {n:10s} {best[n] * 1e3:8.2f} ms/step   x{best[n] / best['eager']:.2f} vs eager")
    print(f"logging_step: compiled_vs_eager {best['compiled'] / best['eager']:.2f} "
          f"host_hook_vs_eager {best['host_hook'] / best['eager']:.2f} "
          f"split_vs_eager {best['split'] / best['eager']:.2f}")


if __name__ == "__main__":
    main()
