"""The tour's dataset: small grey-scale pictures of shapes drawn with NumPy.

Nothing is downloaded. Each picture is a ``size x size`` canvas with one shape (a disk, a
square outline, a cross or a horizontal bar) at a random place and scale, plus noise; its
label is the shape. The same ``seed`` gives the same pictures.
"""
import numpy as np

CLASSES = ("disk", "square", "cross", "bar")


def _draw(kind, size, rng):
    r = rng.uniform(0.18, 0.3) * size                     # half-width of the shape
    cy, cx = rng.uniform(r + 1, size - r - 1, size=2)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    dy, dx = yy - cy, xx - cx
    if kind == "disk":
        mask = dy ** 2 + dx ** 2 <= r ** 2
    elif kind == "square":
        inside = (np.abs(dy) <= r) & (np.abs(dx) <= r)
        mask = inside & ~((np.abs(dy) <= r - 1.5) & (np.abs(dx) <= r - 1.5))
    elif kind == "cross":
        mask = ((np.abs(dy) <= 0.8) & (np.abs(dx) <= r)) | ((np.abs(dx) <= 0.8) & (np.abs(dy) <= r))
    else:
        mask = (np.abs(dy) <= 1.2) & (np.abs(dx) <= r * 1.3)
    return mask.astype(np.float32)


def make_shapes(n, size=16, seed=0, noise=0.25):
    """``n`` pictures ``(n, 1, size, size)`` float32, their labels ``(n,)`` int64 and the
    shapes' masks ``(n, size, size)`` bool (where each shape was drawn)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSES), size=n)
    masks = np.stack([_draw(CLASSES[k], size, rng) for k in labels])
    images = masks * rng.uniform(0.6, 1.0, size=(n, 1, 1)).astype(np.float32)
    images += noise * rng.standard_normal(images.shape).astype(np.float32)
    return images[:, None].astype(np.float32), labels.astype(np.int64), masks > 0
