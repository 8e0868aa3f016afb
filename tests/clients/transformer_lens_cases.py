"""TransformerLens's ``HookPoint`` / ``HookedRootModule`` on a toy two-layer model.

TransformerLens 4's package ``__init__`` imports its whole model zoo (transformers,
datasets, huggingface_hub). Its hook machinery needs none of that, so ``_load`` imports
the released ``hook_points`` and ``HookedRootModule`` modules unmodified, with the
packages above them created empty instead of running their ``__init__``: the same in the
PyTorch and the hookgrad run.
"""
import functools
import importlib
import importlib.util
import os
import sys
import types

from tests.clients._models import load_weights


def _bare_package(name, path):
    mod = sys.modules.get(name)
    if mod is None:
        mod = types.ModuleType(name)
        mod.__path__ = [path]
        sys.modules[name] = mod
    return mod


@functools.lru_cache(maxsize=None)
def _load():
    root = os.path.dirname(importlib.util.find_spec("transformer_lens").origin)
    _bare_package("transformer_lens", root)
    conv = os.path.join(root, "conversion_utils")
    _bare_package("transformer_lens.conversion_utils", conv)
    _bare_package("transformer_lens.conversion_utils.conversion_steps",
                  os.path.join(conv, "conversion_steps"))
    utilities = _bare_package("transformer_lens.utilities", os.path.join(root, "utilities"))
    for sub, names in (("slice", ("Slice", "SliceInput")), ("tensors", ("remove_batch_dim",)),
                       ("devices", ("warn_if_mps",))):
        m = importlib.import_module("transformer_lens.utilities." + sub)
        for n in names:
            setattr(utilities, n, getattr(m, n))
    hook_points = importlib.import_module("transformer_lens.hook_points")
    root_module = importlib.import_module("transformer_lens.HookedRootModule")
    return hook_points.HookPoint, root_module.HookedRootModule


def _model():
    import torch
    import torch.nn as nn
    HookPoint, HookedRootModule = _load()

    class Toy(HookedRootModule):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(4, 6)
            self.hook_embed = HookPoint()
            self.mlp = nn.Linear(6, 6)
            self.hook_mlp_out = HookPoint()
            self.hook_resid = HookPoint()
            self.unembed = nn.Linear(6, 3)
            self.setup()

        def forward(self, x):
            h = self.hook_embed(self.embed(x))
            m = self.hook_mlp_out(torch.tanh(self.mlp(h)))
            return self.unembed(self.hook_resid(h + m))

    return load_weights(Toy(), 3)


def _inputs():
    import numpy as np
    import torch
    return torch.tensor(np.random.default_rng(4).normal(0, 1, (2, 5, 4)).astype(np.float32))


def run_with_hooks():
    """Zero-ablate the MLP output and record the residual stream through hooks."""
    model, x = _model(), _inputs()
    seen = {}

    def ablate(act, hook):
        seen["ablated"] = hook.name
        return act * 0

    def record(act, hook):
        seen["resid"] = act.detach().clone()

    out = model.run_with_hooks(x, fwd_hooks=[("hook_mlp_out", ablate), ("hook_resid", record)])
    clean = model(x)  # hooks are gone after the run
    return {"out": out, "clean": clean, "name": seen["ablated"], "resid": seen["resid"],
            "hook_names": sorted(model.hook_dict)}


def run_with_cache_backward():
    """Cache every activation and its gradient (``incl_bwd=True``)."""
    model, x = _model(), _inputs()
    out, cache = model.run_with_cache(x)
    _, cache_bwd = _scalar_run(model, x)
    return {"out": out, "cache": {k: cache[k] for k in sorted(cache)},
            "cache_bwd": {k: cache_bwd[k] for k in sorted(cache_bwd)},
            "grad": model.embed.weight.grad}


def _scalar_run(model, x):
    # run_with_cache(incl_bwd=True) calls backward() on the model's output, which must
    # then be a scalar
    orig = model.forward
    model.forward = lambda inp: orig(inp).pow(2).sum()
    try:
        return model.run_with_cache(x, incl_bwd=True)
    finally:
        del model.forward


def backward_hook_rewrites_gradient():
    """A backward hook on a HookPoint that doubles the gradient flowing through it."""
    model, x = _model(), _inputs()
    calls = []

    def double(grad, hook):
        calls.append(hook.name)
        return (grad * 2,)

    model.add_hook("hook_mlp_out", double, dir="bwd")
    model(x).pow(2).sum().backward()
    model.reset_hooks()
    doubled = model.mlp.weight.grad.clone()
    model.zero_grad()
    model(x).pow(2).sum().backward()
    return {"calls": calls, "doubled": doubled, "plain": model.mlp.weight.grad}
