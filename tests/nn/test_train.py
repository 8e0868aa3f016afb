"""Acceptance: a small CNN and a small transformer train on synthetic data with forward
hooks and full backward hooks attached, using a hand-written SGD step, and their loss
falls below a stated threshold. The hooks record and scale things the test checks."""
import numpy as np

import hookgrad
import hookgrad.nn as nn
import hookgrad.nn.functional as F


def _sgd(model, lr):
    with hookgrad.no_grad():
        for p in model.parameters():
            p.sub_(lr * p.grad)


def _grads(model, loss_fn):
    for p in model.parameters():
        p.grad = None
    loss = loss_fn()
    loss.backward()
    return loss, {n: p.grad.numpy().copy() for n, p in model.named_parameters()}


def _quadrant_images(n, rng):
    """``n`` 1x8x8 noisy images; the class (0-3) is the quadrant holding a bright blob."""
    x = rng.standard_normal((n, 1, 8, 8)).astype(np.float32) * 0.5
    y = rng.integers(0, 4, n)
    for i, c in enumerate(y):
        r0, c0 = 4 * (c // 2), 4 * (c % 2)
        x[i, 0, r0:r0 + 4, c0:c0 + 4] += 1.5
    return hookgrad.tensor(x), hookgrad.tensor(y)


def test_cnn_trains_with_module_hooks():
    hookgrad.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y = _quadrant_images(32, rng)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 4))

    # forward hooks on every layer record output shapes; one also records ReLU activity
    shapes, active = [], []
    for name, m in model.named_children():
        m.register_forward_hook(lambda m, i, o, name=name: shapes.append((name, tuple(o.shape))))
    model[2].register_forward_hook(lambda m, i, o: active.append(float((o > 0).float().mean())))
    # full backward hooks: the head's records its grad_output norms, Flatten's doubles the
    # gradient flowing back into the convolutional part
    head_grad_norms = []
    model[5].register_full_backward_hook(
        lambda m, gi, go: head_grad_norms.append(float(go[0].norm())))
    doubling = model[4].register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))

    def loss_fn():
        return F.cross_entropy(model(x), y)

    # the doubling hook is observable: conv and batch-norm gradients are exactly twice
    # those without it; the head's are unchanged (it is downstream of the hook)
    state = {k: v.numpy().copy() for k, v in model[1].named_buffers()}
    _, with_hook = _grads(model, loss_fn)
    doubling.remove()
    _, without = _grads(model, loss_fn)
    for n in with_hook:
        scale = 1.0 if n.startswith("5.") else 2.0
        np.testing.assert_allclose(with_hook[n], scale * without[n], rtol=1e-5, atol=1e-7,
                                   err_msg=n)
    assert state["num_batches_tracked"] == 0 and model[1].num_batches_tracked.item() == 2
    model[4].register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))
    shapes.clear()
    active.clear()
    head_grad_norms.clear()

    losses = []
    for _ in range(25):
        loss, _ = _grads(model, loss_fn)
        losses.append(loss.item())
        _sgd(model, 0.1)

    assert shapes[:6] == [("0", (32, 4, 8, 8)), ("1", (32, 4, 8, 8)), ("2", (32, 4, 8, 8)),
                          ("3", (32, 4, 4, 4)), ("4", (32, 64)), ("5", (32, 4))]
    assert len(shapes) == 6 * 25 and len(active) == 25 and len(head_grad_norms) == 25
    assert all(0.0 < a < 1.0 for a in active)
    assert head_grad_norms[-1] < head_grad_norms[0]
    assert losses[0] > 1.0
    assert losses[-1] < 0.15, losses
    # the running statistics were updated; eval mode uses them and still classifies
    assert model[1].num_batches_tracked.item() == 27
    assert not np.allclose(model[1].running_mean.numpy(), 0)
    model.eval()
    with hookgrad.no_grad():
        pred = model(x).argmax(1)
    assert (pred == y).float().mean().item() == 1.0


class _TinyTransformer(nn.Module):
    def __init__(self, vocab, length, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(hookgrad.tensor(
            np.random.default_rng(1).standard_normal((length, d_model)).astype(np.float32)))
        self.drop = nn.Dropout(0.1)
        self.encoder = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=2 * d_model,
                                                  dropout=0.0, batch_first=True)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.drop(self.embed(tokens) + self.pos)))


def test_transformer_trains_with_module_hooks():
    # task: at every position, predict the sequence's first token (needs attention)
    hookgrad.manual_seed(0)
    vocab, length, n, d = 6, 5, 24, 16
    tokens = np.random.default_rng(0).integers(0, vocab, (n, length))
    x = hookgrad.tensor(tokens)
    y = hookgrad.tensor(np.repeat(tokens[:, :1], length, 1).reshape(-1))
    model = _TinyTransformer(vocab, length, d)

    calls = []
    attn_shapes = []
    model.encoder.self_attn.register_forward_hook(
        lambda m, args, out: attn_shapes.append((tuple(args[0].shape), out[1])))
    model.encoder.register_forward_pre_hook(lambda m, args: calls.append("pre"))
    model.encoder.register_forward_hook(lambda m, args, out: calls.append("fwd"))
    enc_grad_norms = []
    model.encoder.register_full_backward_hook(
        lambda m, gi, go: (calls.append("bwd"), enc_grad_norms.append(float(gi[0].norm())))[0])
    # halves the gradient reaching the embeddings
    model.encoder.register_full_backward_pre_hook(lambda m, go: (go[0] * 1.0,))
    halving = model.head.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))

    def loss_fn():
        return F.cross_entropy(model(x).reshape(-1, vocab), y)

    model.eval()  # deterministic for the comparison
    _, with_hook = _grads(model, loss_fn)
    halving.remove()
    _, without = _grads(model, loss_fn)
    for name in with_hook:
        scale = 1.0 if name.startswith("head.") else 0.5
        np.testing.assert_allclose(with_hook[name], scale * without[name], rtol=1e-4,
                                   atol=1e-7, err_msg=name)
    model.train()
    calls.clear()
    enc_grad_norms.clear()

    losses = []
    for _ in range(40):
        loss, _ = _grads(model, loss_fn)
        losses.append(loss.item())
        _sgd(model, 0.5)

    assert calls[:3] == ["pre", "fwd", "bwd"] and calls.count("bwd") == 40
    assert attn_shapes[0] == ((n, length, d), None)  # need_weights=False inside the layer
    assert all(np.isfinite(enc_grad_norms)) and len(enc_grad_norms) == 40
    assert losses[0] > 1.5
    model.eval()
    with hookgrad.no_grad():
        final = loss_fn().item()
    assert final < 0.2, (losses[::10], final)
