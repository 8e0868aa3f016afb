"""Grad-CAM on a small CNN with a forward hook (activations) and a full backward hook
(gradients w.r.t. the activations), as in the PyTorch recipe.

Run: python examples/grad_cam.py
"""
import hookgrad as torch
import hookgrad.nn as nn
import hookgrad.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        f = self.features(x)
        return self.head(f.mean(dim=(2, 3)))


def grad_cam(model, layer, image, target_class):
    store = {}
    h1 = layer.register_forward_hook(lambda m, inp, out: store.__setitem__("act", out))
    h2 = layer.register_full_backward_hook(
        lambda m, gin, gout: store.__setitem__("grad", gout[0]))
    try:
        logits = model(image)
        model.zero_grad()
        logits[0, target_class].backward()
    finally:
        h1.remove()
        h2.remove()
    weights = store["grad"].mean(dim=(2, 3), keepdim=True)      # channel importance
    cam = F.relu((weights * store["act"]).sum(dim=1))           # (1, H, W)
    return cam / (cam.max() + 1e-8)


def main(verbose=True):
    torch.manual_seed(0)
    model = SmallCNN()
    image = torch.randn(1, 1, 8, 8, requires_grad=True)
    cam = grad_cam(model, model.features[2], image, target_class=1)
    if verbose:
        print("Grad-CAM map (8x8), max-normalised:")
        for row in cam[0].tolist():
            print(" ".join(f"{v:4.2f}" for v in row))
    return cam


if __name__ == "__main__":
    main()
