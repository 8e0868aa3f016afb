"""Load a checkpoint written by ``torch.save`` and fine-tune it with hooks.

Ports the PyTorch transfer-learning recipe with only the import changed:
``model.load_state_dict(torch.load(path))``, freeze the backbone
(``requires_grad_(False)``), replace nothing, fine-tune the head with a gradient-clipping
tensor hook and a post-accumulate-grad hook that logs each update, then ``torch.save``
the result.

The checkpoint is written by PyTorch itself when torch is installed (a torch model of the
same architecture, ``torch.save(model.state_dict(), path)``); otherwise hookgrad writes
the same zip format with ``hookgrad.save``. hookgrad loads it without torch, and the
fine-tuned checkpoint it saves loads back (in PyTorch too, when installed).

The checkpoints go into ``--out DIR`` when it is given (and stay there); otherwise into a
temporary folder, named when the example starts and removed when it ends.

Run: python examples/finetune_checkpoint.py [--out DIR]
"""
import argparse
import os
import tempfile

import numpy as np

import hookgrad as torch
import hookgrad.nn as nn
import hookgrad.nn.functional as F


def build(nn_module):
    """The same architecture in torch.nn or hookgrad.nn."""
    return nn_module.Sequential(nn_module.Linear(8, 32), nn_module.ReLU(),
                                nn_module.Linear(32, 32), nn_module.ReLU(),
                                nn_module.Linear(32, 3))


def write_pretrained(path):
    """A "pretrained" checkpoint: torch.save of a torch model, or hookgrad.save without torch.
    Returns who wrote it and its values as NumPy arrays."""
    try:
        import torch as real_torch
    except ImportError:
        torch.manual_seed(0)
        state = build(nn).state_dict()
        torch.save(state, path)
        return "hookgrad.save", {k: v.numpy() for k, v in state.items()}
    real_torch.manual_seed(0)
    state = build(real_torch.nn).state_dict()
    real_torch.save(state, path)
    return "torch.save", {k: v.numpy() for k, v in state.items()}


def finetune(model, x, y, steps=40):
    backbone, head = model[:4], model[4]
    backbone.requires_grad_(False)
    updates = []
    head.weight.register_hook(lambda g: g.clamp(-0.5, 0.5))   # gradient clipping
    for p in head.parameters():
        p.register_post_accumulate_grad_hook(lambda p: updates.append(p.grad.norm()))
    opt = torch.optim.SGD(head.parameters(), lr=0.2)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, len(updates)


def main(directory=None, steps=40, verbose=True):
    """Fine-tune with the checkpoints in ``directory``; None: a temporary folder, removed
    at the end."""
    if directory is not None:
        os.makedirs(directory, exist_ok=True)
        return _main(directory, steps, verbose)
    with tempfile.TemporaryDirectory(prefix="hookgrad-ckpt-") as directory:
        if verbose:
            print(f"checkpoints go to {directory} (temporary, removed at the end; --out DIR "
                  "keeps them)")
        return _main(directory, steps, verbose)


def _main(directory, steps, verbose):
    pretrained = os.path.join(directory, "pretrained.pt")
    writer, written = write_pretrained(pretrained)
    model = build(nn)
    model.load_state_dict(torch.load(pretrained))   # weights_only by default, as torch 2.6+
    loaded_ok = all(np.array_equal(model.state_dict()[k].numpy(), v) for k, v in written.items())
    before = {k: v.clone() for k, v in model.state_dict().items()}

    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((128, 8)).astype(np.float32))
    y = torch.from_numpy((x.numpy() @ rng.standard_normal((8, 3))).argmax(1))   # learnable
    losses, n_updates = finetune(model, x, y, steps)
    changed = sorted(k for k, v in model.state_dict().items() if not torch.equal(v, before[k]))

    finetuned = os.path.join(directory, "finetuned.pt")
    torch.save(model.state_dict(), finetuned)
    again = torch.load(finetuned)
    round_trip = all(torch.equal(again[k], v) for k, v in model.state_dict().items())
    try:
        import torch as real_torch
    except ImportError:
        torch_reads = None
    else:
        theirs = real_torch.load(finetuned, weights_only=True)
        torch_reads = all(np.array_equal(theirs[k].numpy(), v.numpy())
                          for k, v in model.state_dict().items())
    if verbose:
        print(f"pretrained checkpoint written by {writer}: {pretrained}")
        if writer == "hookgrad.save":
            print("  (PyTorch is not installed here; a PyTorch checkpoint loads the same way: "
                  "torch.save(model.state_dict(),\n  'model.pt') in PyTorch, then "
                  "model.load_state_dict(hookgrad.load('model.pt')) here)")
        print(f"loaded into hookgrad, every value equal: {loaded_ok}")
        print(f"fine-tuned the head for {steps} steps: loss {losses[0]:.4f} -> {losses[-1]:.4f}"
              f" ({n_updates} post-accumulate-grad hook calls)")
        print(f"changed: {', '.join(changed)} (the frozen backbone did not move)")
        print(f"saved {finetuned}; hookgrad.load gives it back exactly: {round_trip}"
              + ("" if torch_reads is None else f"; torch.load reads it: {torch_reads}"))
    return {"writer": writer, "loaded_ok": loaded_ok, "losses": losses, "changed": changed,
            "round_trip": round_trip, "torch_reads": torch_reads, "updates": n_updates}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder to keep the checkpoints in (default: a temporary folder, "
                        "removed at the end)")
    main(p.parse_args().out)
