"""A stand-in for torchvision, whose wheel is built against one PyTorch build: it holds only
the names pytorch-grad-cam imports at module level, none of which the tested CAMs call.
Used alike in the PyTorch run and the hookgrad run."""
from . import ops, transforms  # noqa: F401
