"""Activation patching: record a layer's activation on a clean input with a forward hook,
then patch it into a run on a corrupted input and measure the effect on the output.

Run: python examples/activation_patching.py
"""
import hookgrad as torch
import hookgrad.nn as nn


def main(verbose=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                          nn.Linear(8, 2))
    clean, corrupt = torch.randn(1, 6), torch.randn(1, 6)
    cache = {}
    effects = {}
    with torch.no_grad():
        hs = [m.register_forward_hook(lambda m, i, o, k=k: cache.__setitem__(k, o))
              for k, m in enumerate(model) if isinstance(m, nn.ReLU)]
        clean_out = model(clean)
        for h in hs:
            h.remove()
        corrupt_out = model(corrupt)
        for k in cache:
            h = model[k].register_forward_hook(lambda m, i, o, k=k: cache[k])  # patch
            patched = model(corrupt)
            h.remove()
            effects[k] = ((patched - corrupt_out).norm() / (clean_out - corrupt_out).norm()).item()
    if verbose:
        for k, e in effects.items():
            print(f"patching layer {k} ({type(model[k]).__name__}) restores {e:.0%} of the gap")
    return effects


if __name__ == "__main__":
    main()
