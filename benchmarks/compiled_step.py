"""One training step with hooks: hookgrad compiled vs pure JAX vs eager (hookgrad, PyTorch).

The step is forward, backward and an AdamW update, with the hooks of the three-modes test
matrix (tests/test_three_modes.py):

- a tensor hook on a hidden activation that scales its gradient (x0.5);
- a Node pre-hook on that activation's ``grad_fn`` (x2);
- a full backward hook clipping ``grad_input`` of the second layer to [-1, 1];
- a forward hook recording an activation statistic on the host (a ``host_hook``: one
  scalar sent to the host per step, in every variant);
- a saved-tensor pack/unpack pair around the forward;
- ``ModTracker`` with user hooks counting module calls (through a host hook, so that,
  compiled, they count on every call, as eagerly).

Models: an MLP (4 Linear 512x512, batch 256) and a transformer (2 pre-LN blocks, d=128,
4 heads, seq 64, batch 16), both with the hooks above; and "narrow", the dispatch-bound
case of issue 16: 8 Linear(64, 64), batch 64, a no-op full backward hook on every Linear
and nothing else (its floor has no hooks: a no-op hook should cost nothing;
``benchmarks/step_floor.py`` times issue 32's dispatch-bound step, with ReLUs, batch 32,
MSE, with and without such hooks, pipelined and synced). Variants,
timed interleaved, best of several rounds, every result ``block_until_ready``:

  compiled   hookgrad.compile of the eager-style step
  compiled_autotune  the same with mode="max-autotune" (XLA:CPU's matmul library chosen
             by timing; a pure-JAX program compiled with the same option gains alike, so
             the compiled/pure-JAX ratio compares the defaults)
  pure_jax   the same model and hooks hand-written in JAX (custom_vjp identities, the
             recorded statistic as an aux output) + optax.adamw under
             jax.jit(jax.value_and_grad): the floor
  pure_jax_donate  the floor with its parameter/optimizer buffers donated (hookgrad.compile
             donates the buffers it replaces; shown for a like-for-like comparison)
  eager      hookgrad eager
  torch      PyTorch eager with the same hooks (when torch is installed)

    python benchmarks/compiled_step.py [--quick]

The compiled/pure-JAX ratio of each model is the median over 200 back-to-back pairs of
single steps (2000 for the narrow model; one pair's ratio scatters by +-6% on a shared
2-core VM: the median of 200 is good to about +-1%); the last line is
``compiled_vs_pure_jax: X``, the largest of the three models' ratios.

Beside the times: the number of fused kernels (``fusion`` instructions of the entry
computation of the optimized HLO, as ``.compile().as_text()`` prints it, and ``copy``
instructions besides) of the compiled program and of the floor's; and the Python time of
a cached compiled call outside XLA: the time from the call until the executable is
invoked ("before dispatch", with jax.jit's own C++ dispatch excluded), and from its
return until the call returns ("after": writing back, and the host hooks, which wait for
the program), the best of three medians over timed calls whose executable is wrapped in
a timer. Then the same with the executable stubbed (it returns its last outputs at once):
the Python with nothing evicting it from the processor's caches between calls. Right
after a large program's run on a CPU the same Python takes several times as long (MLP:
~12 µs in cache, ~115 µs after the step).
"""
import argparse
import functools
import math
import re
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad.autograd.graph import saved_tensors_hooks
from hookgrad._ops import tiered
from hookgrad.utils.mod_tracker import ModTracker

try:
    import torch
except ImportError:  # the PyTorch column is left out
    torch = None

LR, WD = 1e-3, 1e-2
CLIP = 1.0


# --------------------------------------------------------------------------- models (hookgrad)


class MLP(nn.Module):
    def __init__(self, width=512, depth=4):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x


class Narrow(nn.Module):
    """The dispatch-bound model: many small layers, each with a no-op full backward hook."""

    def __init__(self, width=64, depth=8):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        for layer in self.layers:
            layer.register_full_backward_hook(lambda mod, gi, go: None)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class LayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(hg.ones(d))
        self.bias = nn.Parameter(hg.zeros(d))
        self.d = d

    def forward(self, x):
        return F.layer_norm(x, (self.d,), self.weight, self.bias)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = LayerNorm(d), LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, D = x.shape
        hd = D // self.heads
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        att = F.softmax((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd)), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, d=128, heads=4, layers=2):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.head = nn.Linear(d, d)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


# --------------------------------------------------------------------------- hooks


def hook_spots(kind, model):
    """(module whose output gets the tensor hook + pre-hook and is recorded, clipped)"""
    if kind == "mlp":
        return model.layers[0], model.layers[1]
    return model.blocks[0].fc1, model.blocks[0].fc2


def install_hookgrad(kind, model, record):
    first, clipped = hook_spots(kind, model)

    def fwd(mod, args, out):
        out.register_hook(lambda g: g * 0.5)
        out.grad_fn.register_prehook(lambda go: (go[0] * 2.0,))
    first.register_forward_hook(fwd)
    log_scalar = hg.compile.host_hook(lambda s: record.append(s.item()))
    # the reduction is traced; only the scalar goes to the host
    first.register_forward_hook(lambda mod, args, out: log_scalar(out.abs().mean()))
    clipped.register_full_backward_hook(
        lambda mod, gi, go: tuple(None if g is None else g.clamp(-CLIP, CLIP) for g in gi))
    tracker = ModTracker()
    counts = {"fw": 0, "bw": 0}
    # counting is a Python side effect: a host hook (no Tensor arguments) keeps the step
    # one program and counts on every call, as eagerly
    count = hg.compile.host_hook(lambda k: counts.__setitem__(k, counts[k] + 1))
    tracker.register_user_hooks(pre_fw_hook=lambda m, i: count("fw"),
                                pre_bw_hook=lambda m, g: count("bw"))
    return tracker


def _pack(t):
    return t


def _unpack(t):
    return t


def hookgrad_step(kind, model, opt, tracker):
    if kind == "narrow":   # the model's own no-op hooks only
        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step

    def step(x, y):
        with tracker, saved_tensors_hooks(_pack, _unpack):
            out = model(x)
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


# --------------------------------------------------------------------------- pure JAX


def _scale_grad(s):
    @jax.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (g * s,))
    return f


_half, _double = _scale_grad(0.5), _scale_grad(2.0)


@jax.custom_vjp
def _clip_input(x):
    return x


_clip_input.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -CLIP, CLIP),))


def _linear(p, name, x):
    return x @ p[name + ".weight"].T + p[name + ".bias"]


def _after_first(h, stats):
    stats.append(jnp.mean(jnp.abs(h)))   # returned as an aux output, logged on the host
    return _double(_half(h))   # tensor hook then node pre-hook, as the engine orders them


def pure_forward(kind):
    if kind == "narrow":
        def fwd(p, x, stats):
            for i in range(8):
                x = _linear(p, f"layers.{i}", x)
            return x
        return fwd

    if kind == "mlp":
        def fwd(p, x, stats):
            h = _after_first(_linear(p, "layers.0", x), stats)
            h = jax.nn.relu(h)
            h = jax.nn.relu(_linear(p, "layers.1", _clip_input(h)))
            h = jax.nn.relu(_linear(p, "layers.2", h))
            return _linear(p, "layers.3", h)
        return fwd

    def ln(p, name, x):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * p[name + ".weight"] + p[name + ".bias"]

    def block(p, i, x, stats):
        pre = f"blocks.{i}."
        B, T, D = x.shape
        hd = D // 4
        q, k, v = jnp.split(_linear(p, pre + "qkv", ln(p, pre + "ln1", x)), 3, axis=-1)
        q, k, v = (t.reshape(B, T, 4, hd).transpose(0, 2, 1, 3) for t in (q, k, v))
        att = jax.nn.softmax((q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(hd)), axis=-1)
        x = x + _linear(p, pre + "proj", (att @ v).transpose(0, 2, 1, 3).reshape(B, T, D))
        h = _linear(p, pre + "fc1", ln(p, pre + "ln2", x))
        if i == 0:
            h = _after_first(h, stats)
        h = jax.nn.gelu(h, approximate=False)
        if i == 0:
            h = _clip_input(h)
        return x + _linear(p, pre + "fc2", h)

    def fwd(p, x, stats):
        for i in range(2):
            x = block(p, i, x, stats)
        return _linear(p, "head", x)
    return fwd


def pure_step(kind, record, donate=False):
    """The jitted step and the optax transformation; the recorded statistic is an aux
    output that the Python wrapper logs after each step (a host callback inside the
    program would take JAX's slower dispatch path)."""
    fwd = pure_forward(kind)
    tx = optax.adamw(LR, b1=0.9, b2=0.999, eps=1e-8, weight_decay=WD)

    def loss_fn(p, x, y):
        stats = []
        out = fwd(p, x, stats)
        logits = out.reshape(-1, out.shape[-1])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, y.reshape(-1)).mean()
        return loss, (stats[0] if stats else None)

    @functools.partial(jax.jit, donate_argnums=(0, 1) if donate else ())
    def jstep(p, s, x, y):
        (loss, stat), g = jax.value_and_grad(loss_fn, has_aux=True)(p, x, y)
        updates, s = tx.update(g, s, p)
        return optax.apply_updates(p, updates), s, loss, stat

    def step(p, s, x, y):
        p, s, loss, stat = jstep(p, s, x, y)
        if stat is not None:
            record.append(stat.item())
        return p, s, loss
    step.lower = jstep.lower
    return step, tx


# --------------------------------------------------------------------------- PyTorch


def torch_narrow(params):
    model = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(8)])
    with torch.no_grad():
        for k, p in model.named_parameters():
            p.copy_(torch.tensor(np.asarray(params["layers." + k])))
    for layer in model:
        layer.register_full_backward_hook(lambda m, gi, go: None)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)

    def step(x, y):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def torch_setup(kind, params, record):
    if kind == "narrow":
        return torch_narrow(params)
    tt = {k: torch.tensor(np.asarray(v)) for k, v in params.items()}
    if kind == "mlp":
        model = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(4)])
        names = {f"{i}.{w}": f"layers.{i}.{w}" for i in range(4) for w in ("weight", "bias")}
        first, clipped = model[0], model[1]

        def forward(x):
            for i, layer in enumerate(model):
                x = layer(x)
                if i < 3:
                    x = torch.relu(x)
            return x
    else:
        class TBlock(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1, self.ln2 = torch.nn.LayerNorm(128), torch.nn.LayerNorm(128)
                self.qkv, self.proj = torch.nn.Linear(128, 384), torch.nn.Linear(128, 128)
                self.fc1, self.fc2 = torch.nn.Linear(128, 512), torch.nn.Linear(512, 128)

            def forward(self, x):
                B, T, D = x.shape
                q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
                q, k, v = (t.reshape(B, T, 4, 32).transpose(1, 2) for t in (q, k, v))
                att = torch.softmax((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(32)), dim=-1)
                x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, D))
                return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

        class TModel(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = torch.nn.ModuleList([TBlock(), TBlock()])
                self.head = torch.nn.Linear(128, 128)

            def forward(self, x):
                for b in self.blocks:
                    x = b(x)
                return self.head(x)

        model = TModel()
        names = {k: k for k in params}
        first, clipped = model.blocks[0].fc1, model.blocks[0].fc2
        forward = model
    with torch.no_grad():
        for k, p in model.named_parameters():
            p.copy_(tt[names[k]])

    def fwd_hook(mod, args, out):
        out.register_hook(lambda g: g * 0.5)
        out.grad_fn.register_prehook(lambda go: (go[0] * 2.0,))
    first.register_forward_hook(fwd_hook)
    first.register_forward_hook(lambda m, a, o: record.append(o.abs().mean().item()))
    clipped.register_full_backward_hook(
        lambda m, gi, go: tuple(None if g is None else g.clamp(-CLIP, CLIP) for g in gi))
    from torch.distributed._tools.mod_tracker import ModTracker as TorchModTracker
    tracker = TorchModTracker()
    counts = {"fw": 0, "bw": 0}
    tracker.register_user_hooks(
        pre_fw_hook=lambda m, i: counts.__setitem__("fw", counts["fw"] + 1),
        pre_bw_hook=lambda m, g: counts.__setitem__("bw", counts["bw"] + 1))
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)

    def step(x, y):
        with tracker, torch.autograd.graph.saved_tensors_hooks(_pack, _unpack):
            out = forward(x)
            loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]),
                                                     y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


# --------------------------------------------------------------------------- timing


MODELS = {"mlp": MLP, "transformer": Transformer, "narrow": Narrow}


def hookgrad_variant(kind, params, compile_kw=None):
    """A fresh model holding ``params``, its hooks and AdamW: the eager step, or the
    compiled one with ``compile_kw``."""
    model = MODELS[kind]()
    hg.func.load_state(model, params)
    tracker = install_hookgrad(kind, model, []) if kind != "narrow" else None
    opt = hg.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    step = hookgrad_step(kind, model, opt, tracker)
    return step if compile_kw is None else hg.compile(step, **compile_kw)


def build(kind, autotune=True):
    hg.manual_seed(0)
    model = MODELS[kind]()
    if kind == "mlp":
        x, y = hg.randn(256, 512), hg.randint(0, 512, (256,))
    elif kind == "narrow":
        x, y = hg.randn(64, 64), hg.randint(0, 64, (64,))
    else:
        x, y = hg.randn(16, 64, 128), hg.randint(0, 128, (16, 64))
    params = hg.func.state(model)
    variants = {}

    compiled = hookgrad_variant(kind, params, {})
    variants["compiled"] = lambda: compiled(x, y)._data
    variants["compiled"].program = compiled
    variants["compiled"].args = (x, y)
    if autotune:
        tuned = hookgrad_variant(kind, params, {"mode": "max-autotune"})
        variants["compiled_autotune"] = lambda: tuned(x, y)._data
        # what max-autotune picked, read after the warm-up call tuned it
        variants["compiled_autotune"].options = lambda: tuned.compiler_options(x, y)

    rec_j = []
    jstep, tx = pure_step(kind, rec_j)
    state = {"p": dict(params), "s": tx.init(params)}
    xa, ya = x._data, y._data

    def run_pure():
        state["p"], state["s"], loss = jstep(state["p"], state["s"], xa, ya)
        return loss
    variants["pure_jax"] = run_pure
    run_pure.lower = lambda: jstep.lower(state["p"], state["s"], xa, ya)

    # the same with the parameter and optimizer buffers donated, as hookgrad.compile does
    jstep_d, _ = pure_step(kind, [], donate=True)
    state_d = {"p": jax.tree_util.tree_map(jnp.copy, params), "s": tx.init(params)}

    def run_pure_donated():
        state_d["p"], state_d["s"], loss = jstep_d(state_d["p"], state_d["s"], xa, ya)
        return loss
    variants["pure_jax_donate"] = run_pure_donated

    eager = hookgrad_variant(kind, params)
    variants["eager"] = lambda: eager(x, y)._data

    if torch is not None:
        rec_t = []
        tstep = torch_setup(kind, params, rec_t)
        xt, yt = torch.tensor(np.asarray(xa)), torch.tensor(np.asarray(ya)).long()
        threads = torch.get_num_threads()

        def run_torch(n):
            torch.set_num_threads(n)
            try:
                return tstep(xt, yt)
            finally:
                torch.set_num_threads(threads)
        # on a loaded machine PyTorch's spinning OpenMP threads can lose to one thread:
        # both are timed and the faster is reported
        variants["torch"] = lambda: run_torch(threads)
        if threads > 1:
            variants["torch_1thread"] = lambda: run_torch(1)
    return variants


def _block(out):
    if torch is not None and isinstance(out, torch.Tensor):
        return out.item()
    return jax.block_until_ready(out)


def kernels(lowered):
    """(fusions, copies) in the entry computation of a lowered program's optimized HLO: the
    fused kernels it launches per step, and the buffer copies besides."""
    txt = lowered.compile().as_text()
    entry = txt[txt.index("\nENTRY"):]
    entry = entry[:entry.index("\n}")]
    return len(re.findall(r" fusion\(", entry)), len(re.findall(r" copy\(", entry))


def python_overhead(f, calls, rounds=3):
    """µs of Python per cached compiled call (``f``: the ``compiled`` variant) before its
    executable is invoked, and after it returns: the median over ``calls`` timed calls, the
    best of ``rounds`` such medians (as the step times are best-of-rounds: another tenant's
    load on a shared machine only adds time); measured by wrapping the executables of its
    cached programs in a timer (jax.jit's C++ dispatch itself is excluded). Then the same
    with the executables stubbed (each returns the outputs of one real run at once): the
    Python alone, in cache, without the program's work evicting it between calls."""
    marks = {"stub": None, "keep": False}
    wrapped = []
    for entry in f.program._cache.values():
        for attr in ("exe", "exe_plain"):
            exe = getattr(entry, attr)

            def timed(*a, _exe=exe):
                marks["in"] = time.perf_counter()
                out = marks["stub"]
                if out is None:
                    if _exe is None:   # holding no outputs, a real call donates its inputs
                        raise RuntimeError("a timed call ran the program that donates nothing")
                    out = _exe(*a)
                    if marks["keep"]:
                        marks["last"] = out
                marks["out"] = time.perf_counter()
                return out
            wrapped.append((entry, attr, exe))
            setattr(entry, attr, timed)
    figures = []
    try:
        for stub in (False, True):
            if stub:   # one real run's outputs (holding them, the calls run exe_plain)
                marks["keep"] = True
                _block(f())
                marks["keep"], marks["stub"] = False, marks.pop("last")
            best = [math.inf, math.inf]
            for _ in range(rounds):
                before, after = [], []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    out = f()
                    t1 = time.perf_counter()
                    before.append(marks["in"] - t0)
                    after.append(t1 - marks["out"])
                    _block(out)
                best = [min(best[0], float(np.median(before)) * 1e6),
                        min(best[1], float(np.median(after)) * 1e6)]
            figures += best
    finally:
        marks.clear()
        for entry, attr, exe in wrapped:
            setattr(entry, attr, exe)
    return figures


def measure(kind, rounds, steps, pairs, autotune=True):
    """Best-of-rounds ms per step for every variant, and the median ratio compiled/pure_jax
    over ``pairs`` back-to-back pairs of single steps (alternating which goes first), which
    cancels the drift of a shared machine's load better than separate best-ofs."""
    variants = build(kind, autotune)
    for name, f in variants.items():   # warm-up: traces, compiles, per-op caches
        # max-autotune tunes on the calls after the first: 4 candidates x at most 21 rounds
        for _ in range(90 if name == "compiled_autotune" else 5):
            _block(f())
    tiered.wait()  # eager's programs compiled in the background: the steady state is timed
    for f in variants.values():
        _block(f())
    tuned = variants["compiled_autotune"].options() if "compiled_autotune" in variants else None
    best = {k: float("inf") for k in variants}
    for _ in range(rounds):
        for name, f in variants.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                out = f()
            _block(out)
            best[name] = min(best[name], (time.perf_counter() - t0) / steps)
    ratios = []
    comp, pure = variants["compiled"], variants["pure_jax"]
    for i in range(pairs):
        times = {}
        for name, f in ((("compiled", comp), ("pure_jax", pure)) if i % 2 == 0 else
                        (("pure_jax", pure), ("compiled", comp))):
            t0 = time.perf_counter()
            _block(f())
            times[name] = time.perf_counter() - t0
        ratios.append(times["compiled"] / times["pure_jax"])
    extra = {"kernels": (kernels(comp.program.lower(*comp.args)), kernels(pure.lower())),
             "python_us": python_overhead(comp, max(pairs, 50))}
    return best, float(np.median(ratios)), tuned, extra


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer rounds and steps, no max-autotune variant")
    args = parser.parse_args()
    rounds, steps, pairs = (3, 2, 10) if args.quick else (7, 5, 200)
    print(f"jax {jax.__version__} on {jax.default_backend()}, "
          f"torch {torch.__version__ if torch is not None else 'not installed'}")
    # PyTorch warns alike: the first layer's input does not require grad
    warnings.filterwarnings("ignore", message="Full backward hook is firing")
    worst = 0.0
    for kind in ("mlp", "transformer", "narrow"):
        # a narrow step takes ~0.1 ms: more pairs for the same time
        n_pairs = max(10 * pairs, 300) if kind == "narrow" else pairs
        best, ratio, tuned, extra = measure(kind, rounds, steps, n_pairs,
                                            autotune=not args.quick)
        floor = best["pure_jax"]
        print(f"\n{kind}: ms per step (best of {rounds} rounds x {steps} steps)")
        for name, t in best.items():
            print(f"  {name:13s} {t * 1e3:9.2f} ms   x{t / floor:6.2f} vs pure_jax")
        (cf, cc), (pf, pc) = extra["kernels"]
        print(f"  fused kernels (copies): compiled {cf} ({cc}), pure_jax {pf} ({pc})")
        print("  Python per cached compiled call, before dispatch / after: "
              "{:.1f} / {:.1f} us (in cache, the program stubbed: {:.1f} / {:.1f} us)".format(
                  *extra["python_us"]))
        print(f"  {kind}_compiled_vs_pure_jax (median of {n_pairs} paired steps): {ratio:.3f}")
        print(f"  {kind}_compiled_vs_pure_jax_donate (best-of): "
              f"{best['compiled'] / best['pure_jax_donate']:.3f}")
        if "torch" in best:
            t = min(v for k, v in best.items() if k.startswith("torch"))
            print(f"  {kind}_torch_eager_vs_compiled: {t / best['compiled']:.2f}")
            if "compiled_autotune" in best:
                print(f"  {kind}_torch_eager_vs_compiled_autotune: "
                      f"{t / best['compiled_autotune']:.2f}")
        if tuned is not None:
            print(f"  max-autotune picked XLA options {tuned or '{} (the default)'}")
        print(f"  {kind}_eager_vs_compiled: {best['eager'] / best['compiled']:.2f}")
        worst = max(worst, ratio)
    print(f"compiled_vs_pure_jax: {worst:.3f}")


if __name__ == "__main__":
    main()
