"""torchvision's model code: ResNet-18, EfficientNet-B0 and a Vision Transformer built by
torchvision's own builders, weights from NumPy, with a forward hook and a full backward
hook on a block.

Under hookgrad, ``import torchvision`` runs as released (its ``_C`` extension's operators
are hookgrad's, ``hookgrad.ops.load_library``). PyTorch's CPU build here cannot import
this torchvision wheel (its ``_C`` is built for another PyTorch: "operator torchvision::nms
does not exist"), so the PyTorch run loads the same model files through empty package
shells (:func:`_models`), which skip torchvision's ``__init__``; the model source is the
same file either way.
"""
import functools
import importlib
import importlib.util
import os
import sys
import types

import numpy as np


def _is_hookgrad(torch):
    return torch.__name__ == "hookgrad" or "hookgrad" in getattr(torch, "__file__", "")


@functools.lru_cache(None)
def _models():
    """``torchvision.models`` under the current ``torch``."""
    import torch
    if _is_hookgrad(torch):
        import torchvision
        return torchvision.models
    try:
        import torchvision
        return torchvision.models
    except (RuntimeError, ImportError):  # this PyTorch cannot load torchvision's _C
        for name in [k for k in sys.modules if k.split(".")[0] == "torchvision"]:
            del sys.modules[name]
    root = os.path.dirname(importlib.util.find_spec("torchvision").origin)
    for name in ("torchvision", "torchvision.models", "torchvision.ops"):
        shell = types.ModuleType(name)
        shell.__path__ = [os.path.join(root, *name.split(".")[1:])]
        sys.modules[name] = shell
    depth = importlib.import_module("torchvision.ops.stochastic_depth")
    sys.modules["torchvision.ops"].StochasticDepth = depth.StochasticDepth
    models = sys.modules["torchvision.models"]
    for file in ("resnet", "efficientnet", "vision_transformer"):
        mod = importlib.import_module(f"torchvision.models.{file}")
        for name in mod.__all__:
            setattr(models, name, getattr(mod, name))
    return models


def _load_weights(model, seed):
    """Every parameter from NumPy: N(0, 1/fan_in) for weights of 2 or more dimensions,
    1 + N(0, 0.1) for norm scales, N(0, 0.1) for biases and embeddings."""
    import torch
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if len(shape) >= 2 and not name.endswith(("pos_embedding", "class_token")):
                v = rng.normal(0, 1 / np.sqrt(np.prod(shape[1:])), shape)
            elif name.endswith("weight"):
                v = 1 + rng.normal(0, 0.1, shape)
            else:
                v = rng.normal(0, 0.1, shape)
            p.copy_(torch.tensor(v.astype(np.float32)))
    return model


def _run(model, block_fwd, block_bwd, size, params, seed=1):
    """Forward and backward of a fixed projection of the logits, with a forward hook on
    ``block_fwd`` and a full backward hook on ``block_bwd``; returns logits, hook records
    and the gradients of ``params``."""
    import torch
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.normal(0, 1, (2, 3, size, size)).astype(np.float32))
    calls = []

    def fwd_hook(module, args, output):
        calls.append(["forward", type(module).__name__, list(output.shape),
                      float(output.double().sum()), float(output.double().abs().sum())])

    def bwd_hook(module, grad_input, grad_output):
        calls.append(["backward", type(module).__name__,
                      [float(g.double().abs().sum()) for g in grad_input if g is not None],
                      [float(g.double().abs().sum()) for g in grad_output]])

    h1 = block_fwd.register_forward_hook(fwd_hook)
    h2 = block_bwd.register_full_backward_hook(bwd_hook)
    logits = model(x)
    w = torch.tensor(rng.normal(0, 1, tuple(logits.shape)).astype(np.float32))
    (logits * w).sum().backward()
    h1.remove()
    h2.remove()
    named = dict(model.named_parameters())
    grads = {n: named[n].grad.flatten()[:6].tolist() for n in params}
    norms = {n: float(named[n].grad.double().norm()) for n in params}
    return {"logits": logits[:, :8].tolist(), "calls": calls, "grads": grads, "norms": norms}


def resnet18():
    """ResNet-18 in training mode (batch-norm statistics), 64x64 images (at 32x32 the last
    stage is 1x1: its batch statistics over 2 values amplify float32 rounding)."""
    m = _load_weights(_models().resnet18(weights=None), 0).train()
    out = _run(m, m.layer2[0], m.layer3[1], 64, ["conv1.weight", "layer1.0.bn1.weight",
                                                 "layer4.1.conv2.weight", "fc.bias"])
    out["running_mean"] = m.layer1[0].bn1.running_mean[:4].tolist()
    return out


def efficientnet_b0():
    """EfficientNet-B0 in eval mode (stochastic depth and dropout are random in training),
    32x32 images; the backward hook is on an MBConv block."""
    m = _load_weights(_models().efficientnet_b0(weights=None), 0).eval()
    return _run(m, m.features[2], m.features[4][0], 32,
                ["features.0.0.weight", "features.4.0.block.2.fc1.weight",
                 "classifier.1.bias"])


def vit_small():
    """torchvision's VisionTransformer with vit_b_16's structure at a small size."""
    m = _models().VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                    hidden_dim=32, mlp_dim=64, num_classes=10)
    m = _load_weights(m, 0).train()
    return _run(m, m.encoder.layers[0], m.encoder.layers[1].mlp, 32,
                ["conv_proj.weight", "encoder.pos_embedding",
                 "encoder.layers.encoder_layer_0.self_attention.in_proj_weight",
                 "heads.head.bias"])


def vit_b_16():
    """vit_b_16 at its full size (224x224 images, 86M parameters)."""
    m = _load_weights(_models().vit_b_16(weights=None), 0).train()
    return _run(m, m.encoder.layers[0], m.encoder.layers[11].mlp, 224,
                ["conv_proj.weight", "encoder.layers.encoder_layer_0.self_attention."
                 "in_proj_weight", "heads.head.bias"])


def ops():
    """torchvision.ops.nms and roi_align (which call torch.ops.torchvision.*), and the
    gradient of roi_align through the backward torchvision registers."""
    import torch
    import torchvision
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 20, (12, 2))
    boxes = torch.tensor(np.concatenate([xy, xy + rng.uniform(2, 10, (12, 2))], 1)
                         .astype(np.float32))
    scores = torch.tensor(rng.uniform(0, 1, 12).astype(np.float32))
    keep = torchvision.ops.nms(boxes, scores, 0.3)
    feats = torch.tensor(rng.normal(0, 1, (2, 3, 10, 12)).astype(np.float32),
                         requires_grad=True)
    rois = torch.tensor([[0, 1.2, 0.5, 7.3, 6.1], [1, 0, 0, 11, 9], [1, 3.3, 2.2, 4.1, 8.8]],
                        dtype=torch.float32)
    pooled = torchvision.ops.roi_align(feats, rois, (3, 2), spatial_scale=0.9,
                                       sampling_ratio=-1, aligned=True)
    pooled.square().sum().backward()
    return {"keep": keep.tolist(), "pooled": pooled.tolist(), "grad": feats.grad.tolist(),
            "node": type(pooled.grad_fn).__name__, "boxes": boxes.tolist(),
            "scores": scores.tolist(), "feats": feats.tolist(), "rois": rois.tolist()}
