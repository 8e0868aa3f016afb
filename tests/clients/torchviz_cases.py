"""torchviz's ``make_dot``: the graph it draws from ``grad_fn``, ``next_functions`` and the
nodes' ``_saved_*`` attributes (no Graphviz binary needed: the DOT source is compared)."""
import re

from tests.clients._models import images, tiny_cnn


def _dot_shape(dot):
    """The DOT source without addresses: node labels and the edges between them."""
    src = dot.source
    ids = {}
    for node_id, label in re.findall(r"^\s*(\d+) \[label=\"?([^\]\"]*)", src, re.M):
        ids[node_id] = label.split("\n")[0]
    edges = sorted((ids.get(a, a), ids.get(b, b)) for a, b in re.findall(r"(\d+) -> (\d+)", src))
    return {"labels": sorted(ids.values()), "edges": edges}


def make_dot_conv():
    """Convolutions, ReLUs and a reduction, named by their parameters."""
    import torch.nn as nn
    from torchviz import make_dot
    from tests.clients._models import load_weights
    model = load_weights(nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Conv2d(2, 2, 3)), 5)
    y = model(images()).relu().mean()
    return _dot_shape(make_dot(y, params=dict(model.named_parameters())))


def make_dot_params():
    from torchviz import make_dot
    model, x = tiny_cnn(), images()
    y = model(x).sum()
    return _dot_shape(make_dot(y, params=dict(model.named_parameters())))


def make_dot_show_saved():
    import torch
    from torchviz import make_dot
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (a * b).exp().sum()
    return _dot_shape(make_dot(y, params={"a": a, "b": b}, show_saved=True))
