"""``hookgrad.nn.functional``: the functional forms of layers, each an op of the table."""
from .._ops.nn import (cross_entropy, gelu, layer_norm, linear, log_softmax, mse_loss,
                       nll_loss, relu, silu, softmax)

__all__ = ["linear", "relu", "gelu", "silu", "softmax", "log_softmax", "layer_norm", "mse_loss",
           "nll_loss", "cross_entropy"]
