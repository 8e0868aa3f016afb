"""Real models side by side: a training step of a ResNet-18-shaped CNN and a GPT-2-small-
shaped transformer under hookgrad (eager and ``hookgrad.compile``), PyTorch (eager and
``torch.compile``) and hand-written JAX (``jax.jit(value_and_grad)`` + optax); then
Hugging Face transformers' GPT-2, BERT and Llama at tiny configs, unmodified, under
hookgrad and PyTorch.

The models are in ``benchmarks/_models_nets.py``. A step is forward, cross-entropy,
backward, AdamW and ``zero_grad``, with a gradient-norm hook on every block (a full
backward hook keeping ``grad_output[0].norm()``; JAX computes the same norms). Every
runner starts from the same weights; their first losses are checked equal.

Each runner runs in its own process: ms/step is the median of synced steps after
warm-up (hookgrad eager's also once its steps compile nothing more: "steady"); "peak MB"
is the process's peak resident memory during those steps over its memory before the
model was built (the CPU backend's buffers included, and what the
allocator kept from compiling in warm-up: a coarse, host-side figure). PyTorch runs with its
default intra-op threads; on a machine whose cores are busy they oversubscribe.

The Hugging Face rows (2 layers, width 32, batch 2 x 12 tokens; nothing downloaded) time
``forward`` (no grad), ``forward+backward`` (``loss.backward()``) and ``generate``
(greedy, 5 new tokens), eagerly and compiled (``torch.compile``: hookgrad's, and
PyTorch's Inductor where it runs here). Each row has two figures: the median step right
after warm-up, and the median once a step compiles nothing more (hookgrad compiles a
repeated forward segment or backward chain in the background, running its ops one by one
meanwhile; PyTorch runs as many steps).

``--quick`` runs small sizes, few steps and no Inductor (a test runs it); so does
``--no-inductor`` at full size. The last line is ``models_worst_ratio: X``: the largest
ratio of hookgrad's time over its reference (eager over PyTorch eager, compiled over
hand-written JAX and over ``torch.compile``, the HF rows over PyTorch's).

    python benchmarks/models.py [--quick] [--no-inductor]
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _models_nets as nets   # noqa: E402 - beside this file

RUNNERS = ("hookgrad", "hookgrad.compile", "torch", "torch.compile", "jax")
HF_MODELS = ("gpt2", "bert", "llama")
HF_TASKS = ("forward", "forward+backward", "generate")


# --------------------------------------------------------------------------- memory


def _rss():
    """(current, peak) resident memory in MB (Linux's /proc; None elsewhere)."""
    try:
        with open("/proc/self/status") as f:
            status = dict(line.split(":", 1) for line in f)
        return tuple(int(status[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))
    except OSError:
        return None, None


def _reset_peak():
    """Count the peak from now on."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


# --------------------------------------------------------------------------- runners


def _library(runner):
    if runner.startswith("hookgrad"):
        import hookgrad
        return hookgrad
    import torch
    torch.manual_seed(0)
    return torch


def _start(runner):
    """Import the runner's library and start its backend (not counted as the model's)."""
    if runner.startswith("torch"):
        import torch
        torch.zeros(1).sum().item()
    else:
        import jax
        import hookgrad
        hookgrad.zeros(1).sum().item()
        jax.numpy.zeros(1).block_until_ready()


def _torch_style(runner, name, cfg):
    """A step of the model in PyTorch's API: ``(step, data, norms)``."""
    L = _library(runner)
    model, blocks = nets.build(L, name, cfg)
    norms = dict.fromkeys(blocks)   # every key now: Dynamo guards on the dict's length

    def keep_norm(module, grad_input, grad_output):   # one function: Dynamo compiles it once
        norms[module] = grad_output[0].norm()
    for b in blocks:
        b.register_full_backward_hook(keep_norm)
    opt = L.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    def step(*data):
        loss = nets.loss_fn(L, name, model, data)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    if runner.endswith(".compile"):
        step = L.compile(step)
    data = tuple(L.tensor(a) for a in nets.batch(name, cfg))
    return (lambda: step(*data).item()), norms


def _jax(name, cfg):
    """The same step hand-written in JAX (the weights and buffers from hookgrad's model)."""
    import hookgrad
    import jax
    import jax.numpy as jnp
    import optax
    model, _ = nets.build(hookgrad, name, cfg)
    params = {k: jnp.asarray(v.detach().numpy()) for k, v in model.named_parameters()}
    buffers = {k: jnp.asarray(v.numpy()) for k, v in model.named_buffers()}
    del model
    loss = nets.jax_loss(name, cfg)
    data = tuple(jnp.asarray(a) for a in nets.batch(name, cfg))
    shapes = nets.Shapes()
    jax.eval_shape(lambda p, b, d: loss(p, b, shapes, d), params, buffers, data)
    probes = [jnp.zeros(s, jnp.float32) for s in shapes]
    tx = optax.adamw(1e-3, weight_decay=0.01)

    @jax.jit
    def step(params, buffers, opt_state, data):
        (value, buffers), (grads, grad_out) = jax.value_and_grad(
            loss, argnums=(0, 2), has_aux=True)(params, buffers, probes, data)
        norms = [jnp.linalg.norm(g) for g in grad_out]
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), buffers, opt_state, value, norms
    state = [params, buffers, tx.init(params)]

    def run():
        state[0], state[1], state[2], value, norms[:] = step(*state, data)
        return float(value)
    norms = []
    return run, norms


def measure(runner, name, cfg, warmup, steps):
    """``{"ms", "first_loss", "peak_mb", "hooks"}`` of one runner on one model."""
    base = _rss()[0]
    run, norms = _jax(name, cfg) if runner == "jax" else _torch_style(runner, name, cfg)
    first = run()
    for _ in range(warmup - 1):
        run()
    _reset_peak()   # the steps' peak, not the compiler's
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    peak = _rss()[1]
    steady = None
    if runner == "hookgrad":   # once its steps compile nothing more (``_settle``)
        _settle(run, max(4 * steps, 40))
        steady = _median_ms(run, steps)
    kept = norms.values() if isinstance(norms, dict) else norms
    return {"ms": statistics.median(times), "steady_ms": steady, "first_loss": first,
            "hooks": sum(v is not None for v in kept),
            "peak_mb": None if base is None else peak - base}


# --------------------------------------------------------------------------- HF rows


def _hf_model(name):
    import torch
    import transformers as tf
    torch.manual_seed(0)
    if name == "gpt2":
        cfg = tf.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=128, n_positions=32)
        return tf.GPT2LMHeadModel(cfg)
    if name == "bert":
        cfg = tf.BertConfig(num_hidden_layers=2, num_attention_heads=2, hidden_size=32,
                            intermediate_size=64, vocab_size=128, max_position_embeddings=32)
        return tf.BertForSequenceClassification(cfg)
    cfg = tf.LlamaConfig(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         hidden_size=32, intermediate_size=64, vocab_size=128,
                         max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
                         eos_token_id=127)
    return tf.LlamaForCausalLM(cfg)


def _hf_task(model, name, task, compiled):
    import torch
    ids = torch.tensor(np.random.default_rng(0).integers(2, 120, (2, 12)))
    labels = torch.tensor([0, 1]) if name == "bert" else ids
    if task == "generate":
        model.eval()
        if compiled:
            model.forward = torch.compile(model.forward)
        return lambda: model.generate(ids, max_new_tokens=5, do_sample=False,
                                      pad_token_id=0)[0, -1].item()
    if task == "forward":
        model.eval()

        def fn():
            with torch.no_grad():
                return model(ids).logits
    else:
        model.train()

        def fn():
            loss = model(ids, labels=labels).loss
            loss.backward()
            model.zero_grad()
            return loss
    fn = torch.compile(fn) if compiled else fn
    return lambda: fn().sum().item()


def _median_ms(run, steps):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _settle(run, rounds):
    """Run until the steps compile nothing more (at most ``rounds`` steps): under hookgrad,
    waiting each time for the background compiles the step started, until
    ``COMPILE_AT + 1`` steps in a row compiled nothing. NOTE: one such step says nothing:
    a forward segment runs op by op on its first sightings and is compiled only from its
    ``lazy_segment.COMPILE_AT``-th (a fused backward chain from its second), so the steps
    between compile nothing either; stopping at the first of them timed the op-by-op
    regime (2-3x the steady step of an HF forward). A step must also split no PRNG key
    on the host: a process's first ``_random.HOST_SPLITS`` splits (dropout's) run there,
    then compiled programs take over (a key split in sequence: 16 splits a program), so a
    training row with dropout changes regime ~35 steps in; timing across that step mixed
    two costs (and one compilation) into the median."""
    if "hookgrad" not in sys.modules:
        for _ in range(rounds):
            run()
        return
    import hookgrad
    from hookgrad import _random   # NOTE: private; the benchmark's only window on the budget
    from hookgrad._ops import tiered
    from hookgrad._ops.lazy_segment import COMPILE_AT   # NOTE: private, likewise
    flat = 0
    for _ in range(rounds):
        before = hookgrad.compile_count(), _random._host["splits"]
        run()
        tiered.wait()
        flat = flat + 1 if (hookgrad.compile_count(), _random._host["splits"]) == before else 0
        if flat > COMPILE_AT:
            return


def measure_hf(name, task, compiled, warmup, steps):
    """``{"ms", "steady_ms"}``: the median step right after ``warmup`` steps (what a
    notebook's first runs cost), and once the steps compile nothing more."""
    if name == "bert" and task == "generate":   # an encoder: nothing to generate
        return None
    run = _hf_task(_hf_model(name), name, task, compiled)
    for _ in range(warmup):
        run()
    first = _median_ms(run, steps)
    _settle(run, max(4 * steps, 80))   # 80: past the host splits of 7-8 dropouts a step
    return {"ms": first, "steady_ms": _median_ms(run, steps)}


# --------------------------------------------------------------------------- workers


def _guarded(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - reported in the table, not fatal
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"}


def worker(kind, runner, quick, inductor):
    warmup, steps = (2, 3) if quick else (3, 10)
    out = {}
    if kind == "nets":
        _start(runner)
        for name, (full, small) in nets.CONFIGS.items():
            out[name] = _guarded(measure, runner, name, small if quick else full, warmup, steps)
        return out
    sys.modules.setdefault("torchvision", None)   # image processors only; unused
    if runner == "hookgrad":
        import hookgrad.as_torch
        hookgrad.as_torch.install()
    for name in HF_MODELS:
        for task in HF_TASKS:
            for compiled in (False, True):
                if compiled and runner == "torch" and not inductor:
                    continue
                key = f"{name} {task} {'compiled' if compiled else 'eager'}"
                out[key] = _guarded(measure_hf, name, task, compiled, warmup, steps)
    return out


def _spawn(kind, runner, quick, inductor):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, runner]
    cmd += ["--quick"] if quick else []
    cmd += [] if inductor else ["--no-inductor"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{kind} {runner} failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _cell(r, key="ms"):
    if r is None:
        return "-"
    if "error" in r:
        return "error"
    return "?" if r[key] is None else f"{r[key]:.2f}"


def _check(name, rows, quick):
    """Fail unless the runners that ran start from the same loss and kept every norm."""
    losses = [row["first_loss"] for row in rows.values()]
    if losses and max(losses) - min(losses) > 1e-3 * max(1.0, abs(losses[0])):
        raise AssertionError(f"{name}: first losses differ: "
                             f"{ {r: row['first_loss'] for r, row in rows.items()} }")
    blocks = nets.n_blocks(name, nets.CONFIGS[name][1 if quick else 0])
    hooked = {r: row["hooks"] for r, row in rows.items() if row["hooks"] != blocks}
    if hooked:
        raise AssertionError(f"{name}: {blocks} blocks, norms kept: {hooked}")


def _nets_table(res, runners, quick):
    """Print the training-step table; the ratios of hookgrad over its references."""
    print(f"training step, ms (median) / peak MB{' (--quick sizes)' if quick else ''}")
    print(f"{'model':8}" + "".join(f"{r:>22}" for r in runners))
    for name in nets.CONFIGS:
        cells = [f"{_cell(res[r][name])} / {_cell(res[r][name], 'peak_mb')}" for r in runners]
        print(f"{name:8}" + "".join(f"{c:>22}" for c in cells))
    ratios = []
    for name in nets.CONFIGS:
        ok = {}
        for r in runners:
            if "error" in res[r][name]:
                print(f"  {name} {r}: {res[r][name]['error']}")
            else:
                ok[r] = res[r][name]
        _check(name, ok, quick)
        for a, b in (("hookgrad", "torch"), ("hookgrad.compile", "jax"),
                     ("hookgrad.compile", "torch.compile")):
            if a in ok and b in ok:
                ratios.append(ok[a]["ms"] / ok[b]["ms"])
                line = f"  {name}: {a} / {b} {ratios[-1]:.2f}"
                if ok[a]["steady_ms"] is not None:   # hookgrad eager, steady
                    ratios.append(ok[a]["steady_ms"] / ok[b]["ms"])
                    line += f" (steady {ok[a]['steady_ms']:.2f} ms: {ratios[-1]:.2f})"
                print(line)
    return ratios


def _hf_table(hf):
    """Print the Hugging Face rows; their ratios of hookgrad over PyTorch, after warm-up
    and steady."""
    print("\nHugging Face, tiny configs, ms (median): hookgrad / PyTorch = ratio, right "
          "after warm-up | steady (once a step compiles nothing more)")
    ratios = []
    for key, h in hf["hookgrad"].items():
        if h is None:   # BERT has no generate
            continue
        # without Inductor, compiled rows are against PyTorch eager
        t = hf["torch"].get(key) or hf["torch"].get(key.replace("compiled", "eager"))
        if "error" in h or "error" in t:
            print(f"  {key:34} hookgrad {_cell(h)} torch {_cell(t)} "
                  f"{h.get('error') or t.get('error')}")
            continue
        ref = "" if key in hf["torch"] else " (vs PyTorch eager)"
        ratios.append(h["ms"] / t["ms"])
        ratios.append(h["steady_ms"] / t["steady_ms"])
        print(f"  {key:34} {h['ms']:8.2f} / {t['ms']:8.2f} = {ratios[-2]:6.2f} | "
              f"{h['steady_ms']:8.2f} / {t['steady_ms']:8.2f} = {ratios[-1]:6.2f}{ref}")
    return ratios


def main(argv):
    quick, inductor = "--quick" in argv, "--quick" not in argv and "--no-inductor" not in argv
    if argv and argv[0] == "--worker":
        print("RESULT " + json.dumps(worker(argv[1], argv[2], quick, inductor)))
        return
    runners = [r for r in RUNNERS if inductor or r != "torch.compile"]
    ratios = _nets_table({r: _spawn("nets", r, quick, inductor) for r in runners},
                         runners, quick)
    ratios += _hf_table({lib: _spawn("hf", lib, quick, inductor)
                         for lib in ("hookgrad", "torch")})
    print(f"models_worst_ratio: {max(ratios):.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
