"""torchvision's operators on hookgrad (``torch.ops.torchvision.*``, defined when
``torch.ops.load_library`` is given torchvision's ``_C``), against NumPy transcriptions of
torchvision's documented CPU kernels: greedy NMS and RoIAlign's bilinear bin averages.

PyTorch cannot run them here (its CPU build cannot load this torchvision's ``_C``), so
the reference is NumPy, written loop by loop as torchvision's kernels read.
"""
import math
import os

import numpy as np
import pytest

import hookgrad as torch
from hookgrad._extensions import supplier

TV_C = os.path.join("site-packages", "torchvision", "_C.so")


@pytest.fixture(scope="module")
def tv():
    torch.ops.load_library(TV_C)
    return torch.ops.torchvision


def nms_reference(boxes, scores, thr):
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: ties by index
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    removed, keep = set(), []
    for a, i in enumerate(order):
        if i in removed:
            continue
        keep.append(i)
        for j in order[a + 1:]:
            w = max(0.0, min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]))
            h = max(0.0, min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]))
            if w * h / (area[i] + area[j] - w * h) > thr:
                removed.add(j)
    return keep


def bilinear(h, w, y, x):
    """[(row, col, weight)] of one sample, or [] outside (torchvision's rule)."""
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    yh, xh = yl + 1, xl + 1
    if yl >= h - 1:
        yh = yl = h - 1
        y = float(yl)
    if xl >= w - 1:
        xh = xl = w - 1
        x = float(xl)
    ly, lx = y - yl, x - xl
    return [(yl, xl, (1 - ly) * (1 - lx)), (yl, xh, (1 - ly) * lx),
            (yh, xl, ly * (1 - lx)), (yh, xh, ly * lx)]


def roi_align_reference(feat, rois, scale, ph, pw, ratio, aligned, grad=None):
    """RoIAlign of ``feat``; with ``grad`` (of the output), the gradient of the input."""
    n, c, h, w = feat.shape
    out = np.zeros((len(rois), c, ph, pw))
    gin = np.zeros_like(feat, dtype=np.float64)
    off = 0.5 if aligned else 0.0
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        b = int(b)
        x1, y1, x2, y2 = (v * scale - off for v in (x1, y1, x2, y2))
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else math.ceil(rh / ph)
        gw = ratio if ratio > 0 else math.ceil(rw / pw)
        count = max(gh * gw, 1)
        for p in range(ph):
            for q in range(pw):
                for iy in range(gh):
                    y = y1 + p * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        x = x1 + q * bw + (ix + 0.5) * bw / gw
                        for r, s, wt in bilinear(h, w, y, x):
                            out[k, :, p, q] += wt * feat[b, :, r, s] / count
                            if grad is not None:
                                gin[b, :, r, s] += wt * grad[k, :, p, q] / count
    return out if grad is None else gin


def _boxes(rng, n):
    xy = rng.uniform(0, 20, (n, 2))
    return np.concatenate([xy, xy + rng.uniform(1, 10, (n, 2))], 1).astype(np.float32)


def test_load_library_defines_torchvisions_operators_only_for_its_extension(tv):
    assert supplier("/x/torchvision/_C.cpython-311-x86_64-linux-gnu.so") is not None
    assert tv.nms.default.name() == "torchvision::nms"
    assert tv._cuda_version() == -1
    with pytest.raises(OSError, match="Could not load this library: .*libmine.so: hookgrad "
                                      "cannot load a C\\+\\+ extension built for PyTorch"):
        torch.ops.load_library("/tmp/libmine.so")


@pytest.mark.parametrize("thr", [0.0, 0.3, 0.7])
def test_nms_keeps_the_boxes_torchvisions_greedy_suppression_keeps(tv, thr):
    rng = np.random.default_rng(0)
    boxes = _boxes(rng, 30)
    scores = rng.uniform(0, 1, 30).astype(np.float32)
    scores[[3, 7]] = scores[5]  # ties keep index order
    keep = tv.nms(torch.tensor(boxes), torch.tensor(scores), thr)
    assert keep.dtype == torch.int64
    assert keep.tolist() == nms_reference(boxes.astype(np.float64), scores, thr)


def test_nms_of_no_boxes_and_bad_shapes(tv):
    assert tv.nms(torch.zeros(0, 4), torch.zeros(0), 0.5).tolist() == []
    with pytest.raises(RuntimeError, match="boxes should be a 2d tensor with 4 elements"):
        tv.nms(torch.zeros(3, 5), torch.zeros(3), 0.5)
    with pytest.raises(RuntimeError, match="boxes and scores should have same number"):
        tv.nms(torch.zeros(3, 4), torch.zeros(2), 0.5)


@pytest.mark.parametrize("ratio, aligned, scale", [(-1, True, 0.9), (2, False, 0.5),
                                                   (0, False, 1.0), (3, True, 0.25)])
def test_roi_align_and_its_gradient_match_torchvisions_kernels(tv, ratio, aligned, scale):
    rng = np.random.default_rng(1)
    feat = rng.normal(0, 1, (2, 3, 9, 11)).astype(np.float32)
    rois = np.array([[0, 1.2, 0.5, 7.3, 6.1], [1, 0, 0, 13, 11], [1, 3.3, 2.2, 4.1, 8.8],
                     [0, -3, -2, 2, 25], [1, 5, 5, 5, 5]], np.float32)
    x = torch.tensor(feat, requires_grad=True)
    out = tv.roi_align(x, torch.tensor(rois), scale, 3, 2, ratio, aligned)
    np.testing.assert_allclose(out.detach().numpy(),
                               roi_align_reference(feat, rois, scale, 3, 2, ratio, aligned),
                               rtol=1e-5, atol=1e-5)
    g = rng.normal(0, 1, out.shape).astype(np.float32)
    grad = tv._roi_align_backward(torch.tensor(g), torch.tensor(rois), scale, 3, 2, 2, 3, 9,
                                  11, ratio, aligned)
    np.testing.assert_allclose(grad.numpy(), roi_align_reference(feat, rois, scale, 3, 2, ratio,
                                                                 aligned, grad=g),
                               rtol=1e-5, atol=1e-5)


def test_roi_align_checks_its_arguments(tv):
    with pytest.raises(RuntimeError, match=r"rois must have shape as Tensor\[K, 5\]"):
        tv.roi_align(torch.zeros(1, 1, 4, 4), torch.zeros(2, 4), 1.0, 2, 2, 2, True)
    with pytest.raises(RuntimeError, match="Expected tensor for input to have the same type"):
        tv.roi_align(torch.zeros(1, 1, 4, 4), torch.zeros(2, 5, dtype=torch.float64), 1.0, 2,
                     2, 2, True)


def test_the_kernels_torchvision_has_and_hookgrad_not_say_so(tv):
    with pytest.raises(NotImplementedError, match="hookgrad does not implement "
                                                  "torch.ops.torchvision.roi_pool yet"):
        tv.roi_pool(torch.zeros(1, 1, 4, 4), torch.zeros(1, 5), 1.0, 2, 2)


def test_under_compile_roi_align_with_a_fixed_grid_traces_and_nms_says_it_cannot(tv):
    rng = np.random.default_rng(2)
    feat = torch.tensor(rng.normal(0, 1, (1, 2, 6, 6)).astype(np.float32))
    rois = torch.tensor([[0, 0.5, 1.0, 4.5, 5.0], [0, 2, 2, 3, 6]])
    step = torch.compile(lambda f, r: tv.roi_align(f, r, 1.0, 2, 2, 2, True) * 2)
    np.testing.assert_allclose(step(feat, rois).numpy(),
                               2 * tv.roi_align(feat, rois, 1.0, 2, 2, 2, True).numpy(),
                               rtol=1e-6)
    # fullgraph=True: by default such a step runs eagerly
    adaptive = torch.compile(lambda f, r: tv.roi_align(f, r, 1.0, 2, 2, -1, True),
                             fullgraph=True)
    with pytest.raises(RuntimeError, match="pass sampling_ratio > 0, or call it eagerly"):
        adaptive(feat, rois)
    boxes = torch.tensor(_boxes(rng, 4))
    with pytest.raises(RuntimeError, match="nms: the number of kept boxes depends on the data"):
        torch.compile(lambda b, s: tv.nms(b, s, 0.5), fullgraph=True)(boxes, torch.ones(4))
