"""The two models of ``benchmarks/models.py``, written once for PyTorch's API (``L`` is
``hookgrad`` or ``torch``) and once by hand in JAX, computing the same function from the
same parameter names.

  resnet  ResNet-18's shape: a 7x7/2 stem, BatchNorm, ReLU, a 3x3/2 max-pool, four stages
          of two BasicBlocks (widths w, 2w, 4w, 8w; strides 1, 2, 2, 2), average pool and a
          Linear to 10 classes; cross-entropy. Full: w = 64, batch 32 of 3x64x64.
  gpt     GPT-2 small's width: token and position embeddings, pre-LayerNorm blocks
          (causal attention with 12 heads, a tanh-GELU MLP of 4x width), a final
          LayerNorm, logits from the tied embedding; next-token cross-entropy.

A "block" (a BasicBlock, a transformer block) carries a gradient-norm hook: a full
backward hook keeping ``grad_output[0].norm()``. Hand-written JAX computes the same norms
as the gradient of a zero added to each block's output.
"""
import zlib

import numpy as np

CONFIGS = {
    # name: (full, quick)
    "resnet": (dict(width=64, batch=32, size=64), dict(width=8, batch=4, size=32)),
    "gpt": (dict(width=768, heads=12, layers=2, seq=128, batch=2, vocab=8192),
            dict(width=64, heads=4, layers=1, seq=16, batch=2, vocab=128)),
}
STAGES = ((1, 1), (2, 2), (4, 2), (8, 2))   # (width multiple, stride) of ResNet-18's stages


def build(L, name, cfg):
    """``(model, blocks)`` in library ``L``, its weights drawn from NumPy by name."""
    model = (_resnet if name == "resnet" else _gpt)(L, cfg)
    with L.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(L.tensor(init(pname, tuple(p.shape))))
    return model, list(model.blocks)


def n_blocks(name, cfg):
    """How many blocks (hooked) the model has."""
    return 2 * len(STAGES) if name == "resnet" else cfg["layers"]


def init(name, shape):
    """A parameter's initial value, seeded by its name: norms' weights 1, biases 0."""
    if name.endswith("bias"):
        return np.zeros(shape, np.float32)
    if len(shape) == 1:
        return np.ones(shape, np.float32)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def batch(name, cfg):
    """The batch (NumPy): images and labels, or token ids."""
    rng = np.random.default_rng(0)
    if name == "resnet":
        b, s = cfg["batch"], cfg["size"]
        return (rng.standard_normal((b, 3, s, s)).astype(np.float32),
                rng.integers(0, 10, b).astype(np.int64))
    ids = rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["seq"])).astype(np.int64)
    return (ids,)


def loss_fn(L, name, model, data):
    F = L.nn.functional
    if name == "resnet":
        x, y = data
        return F.cross_entropy(model(x), y)
    (ids,) = data
    logits = model(ids)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                           ids[:, 1:].reshape(-1))


def _resnet(L, cfg):
    nn, F = L.nn, L.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
            return F.relu(out + (x if self.down is None else self.down(x)))

    class ResNet(nn.Module):
        def __init__(self, w):
            super().__init__()
            self.stem = nn.Conv2d(3, w, 7, 2, 3, bias=False)
            self.bn = nn.BatchNorm2d(w)
            blocks, cin = [], w
            for mult, stride in STAGES:
                blocks += [BasicBlock(cin, w * mult, stride), BasicBlock(w * mult, w * mult, 1)]
                cin = w * mult
            self.blocks = nn.ModuleList(blocks)
            self.fc = nn.Linear(cin, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.stem(x))), 3, 2, 1)
            for b in self.blocks:
                x = b(x)
            return self.fc(x.mean((2, 3)))

    return ResNet(cfg["width"])


def _gpt(L, cfg):
    nn, F = L.nn, L.nn.functional
    d, heads = cfg["width"], cfg["heads"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(1, 2)
                       for z in self.qkv(self.ln1(x)).split(d, dim=-1))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocab"], d)
            self.wpe = nn.Embedding(cfg["seq"], d)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg["layers"]))
            self.ln_f = nn.LayerNorm(d)

        def forward(self, ids):
            x = self.wte(ids) + self.wpe.weight[:ids.shape[1]]
            for b in self.blocks:
                x = b(x)
            return self.ln_f(x) @ self.wte.weight.T

    return GPT()


# --------------------------------------------------------------------------- JAX by hand


def jax_loss(name, cfg):
    """``loss(params, buffers, probes, data) -> (loss, new buffers)``: the model in JAX;
    ``probes`` are zeros added to each block's output (their gradient is its grad_output)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def layer_norm(p, pre, x):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * p[pre + ".weight"] + p[pre + ".bias"]

    def linear(p, pre, x):
        return x @ p[pre + ".weight"].T + p[pre + ".bias"]

    def xent(logits, labels):
        logp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, labels[:, None], 1).mean()

    def conv(x, w, stride, pad):
        return lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2,
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def bn(p, buf, new, pre, x):
        mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
        n = x.size // x.shape[1]
        new[pre + ".running_mean"] = 0.9 * buf[pre + ".running_mean"] + 0.1 * mean
        new[pre + ".running_var"] = 0.9 * buf[pre + ".running_var"] + 0.1 * var * n / (n - 1)
        new[pre + ".num_batches_tracked"] = buf[pre + ".num_batches_tracked"] + 1
        y = (x - mean[:, None, None]) / jnp.sqrt(var[:, None, None] + 1e-5)
        return y * p[pre + ".weight"][:, None, None] + p[pre + ".bias"][:, None, None]

    def resnet(p, buf, probes, data):
        x, labels = data
        new = {}
        x = jax.nn.relu(bn(p, buf, new, "bn", conv(x, p["stem.weight"], 2, 3)))
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                              [(0, 0), (0, 0), (1, 1), (1, 1)])
        i = 0
        for _, stride in STAGES:
            for s in (stride, 1):
                pre = f"blocks.{i}"
                out = jax.nn.relu(bn(p, buf, new, pre + ".bn1",
                                     conv(x, p[pre + ".conv1.weight"], s, 1)))
                out = bn(p, buf, new, pre + ".bn2", conv(out, p[pre + ".conv2.weight"], 1, 1))
                if pre + ".down.0.weight" in p:
                    x = bn(p, buf, new, pre + ".down.1", conv(x, p[pre + ".down.0.weight"], s, 0))
                x = _probe(probes, i, jax.nn.relu(out + x))
                i += 1
        return xent(linear(p, "fc", x.mean((2, 3))), labels), new

    def gpt(p, buf, probes, data):
        (ids,) = data
        d, heads = cfg["width"], cfg["heads"]
        b, t = ids.shape
        x = p["wte.weight"][ids] + p["wpe.weight"][:t]
        mask = jnp.tril(jnp.ones((t, t), bool))
        for i in range(cfg["layers"]):
            pre = f"blocks.{i}"
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3) for z in
                       jnp.split(linear(p, pre + ".qkv", layer_norm(p, pre + ".ln1", x)), 3, -1))
            s = jnp.where(mask, q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads), -jnp.inf)
            a = (jax.nn.softmax(s) @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
            x = x + linear(p, pre + ".proj", a)
            h = jax.nn.gelu(linear(p, pre + ".fc", layer_norm(p, pre + ".ln2", x)),
                            approximate=True)
            x = _probe(probes, i, x + linear(p, pre + ".out", h))
        logits = layer_norm(p, "ln_f", x) @ p["wte.weight"].T
        return xent(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)), buf

    return resnet if name == "resnet" else gpt


class Shapes(list):
    """Passed as ``probes`` under ``jax.eval_shape``: collects each block's output shape."""


def _probe(probes, i, x):
    if type(probes) is Shapes:
        probes.append(x.shape)
        return x
    return x + probes[i]
