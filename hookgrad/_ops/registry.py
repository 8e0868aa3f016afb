"""Where op wrappers are registered: the public function (``hookgrad.sin``), the Tensor
method (``x.sin()``) and the in-place method (``x.sin_()``)."""
import jax
import numpy as np

from .._tensor import Tensor
from .dispatch import ALL, Op, apply

FUNCTIONS = {}   # name -> function exported as hookgrad.<name>
METHODS = {}     # name -> function attached as Tensor.<name>
OPS = {}         # name -> Op, for tests parametrised over the table


def register(fn, name=None, method=True, function=True):
    name = name or fn.__name__
    if function:
        FUNCTIONS[name] = fn
    if method:
        METHODS[name] = fn
    return fn


def defop(name, fwd, node, save=ALL, bwd=None, **kw):
    op = Op(name, fwd, node, save, bwd, **kw)
    OPS[name] = op
    return op


def inplace_of(op, name):
    """``x.<name>_(*args)``: ``op`` applied with ``x`` as first argument, written into ``x``."""
    def method(self, *args, **statics):
        return apply(op, (self, *args), statics or None, out=self)
    method.__name__ = name + "_"
    METHODS[name + "_"] = method
    return method


def to_tensor_like(x):
    """Non-Tensor array operands (NumPy, JAX) as constants; Python numbers stay numbers."""
    if isinstance(x, (Tensor, int, float, bool, complex)):
        return x
    if isinstance(x, (np.ndarray, jax.Array, np.generic)):
        return Tensor._wrap(jax.numpy.asarray(x))
    if isinstance(x, (list, tuple)):
        from .._factory import tensor
        return tensor(x)
    raise TypeError(f"expected Tensor or number as operand, got {type(x).__name__}")


def norm_dim(dim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(int(d) for d in dim)
    return int(dim)
