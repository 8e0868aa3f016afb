"""A torch-like module over ``jax.numpy``: the fuzz programs' ops, written with jnp.

Only what ``tests/fuzz/_programs.py`` emits is here. A program's pure-op part (forward
ops, the loss, the leaves' gradients) run with ``L`` this module is the program written
in jnp, differentiated by ``jax.grad`` (``tests/fuzz/_modes.py``, mode ``jnp``): the
fuzz tier's reference when PyTorch is not installed. Each op follows PyTorch's
documented definition (unbiased ``std``/``var``, exact ``gelu``, clamp passing the
gradient at its bounds, ``scatter_add`` reading ``src`` where ``index`` is).
"""
import types

import jax
import jax.numpy as jnp
from jax.scipy.special import xlogy
import numpy as np

float32 = jnp.float32


class Tensor:
    """A jnp array with the methods the programs call."""

    def __init__(self, a, data=None):
        self.a = jnp.asarray(a)
        self.data = data  # the values it was made from (``tensor``), known while tracing
        self.grad = None
        self.grad_fn = None

    shape = property(lambda self: tuple(self.a.shape))
    dtype = property(lambda self: self.a.dtype)
    mT = property(lambda self: Tensor(jnp.swapaxes(self.a, -1, -2)))

    def detach(self):
        return Tensor(jax.lax.stop_gradient(self.a))

    def tolist(self):
        return np.asarray(self.a).tolist()

    def __getitem__(self, i):
        if not isinstance(i, tuple):  # an index into dim 0: PyTorch checks its range
            idx = getattr(i, "data", None) if isinstance(i, Tensor) else i
            if isinstance(idx, int) or (idx is not None and idx.dtype.kind in "iu"):
                n = self.a.shape[0]
                bad = [int(v) for v in np.ravel(np.asarray(idx)) if not -n <= int(v) < n]
                if bad:
                    raise IndexError(f"index {bad[0]} is out of bounds for dimension 0 with "
                                     f"size {n}")
        i = tuple(_a(v) for v in i) if isinstance(i, tuple) else _a(i)
        return Tensor(self.a[i])

    # unary
    def tanh(self): return Tensor(jnp.tanh(self.a))
    def sigmoid(self): return Tensor(jax.nn.sigmoid(self.a))
    def exp(self): return Tensor(jnp.exp(self.a))
    def sin(self): return Tensor(jnp.sin(self.a))
    def relu(self): return Tensor(jnp.where(self.a > 0, self.a, 0.0))
    def abs(self): return Tensor(jnp.abs(self.a))
    def neg(self): return Tensor(-self.a)
    def pow(self, e): return Tensor(self.a ** _a(e))
    def sqrt(self): return Tensor(jnp.sqrt(self.a))
    def log(self): return Tensor(jnp.log(self.a))
    def reciprocal(self): return Tensor(1 / self.a)
    def rsqrt(self): return Tensor(jax.lax.rsqrt(self.a))
    def square(self): return Tensor(self.a * self.a)
    def cumsum(self, d): return Tensor(jnp.cumsum(self.a, d))
    def cumprod(self, d): return Tensor(jnp.cumprod(self.a, d))
    def contiguous(self): return self

    def clamp(self, min=None, max=None):  # noqa: A002 - PyTorch's names
        x = self.a
        inside = (x >= min) & (x <= max)  # PyTorch passes the gradient at the bounds
        return Tensor(jnp.where(inside, x, jax.lax.stop_gradient(jnp.clip(x, min, max))))

    # binary
    def __add__(self, o): return Tensor(self.a + _a(o))
    def __radd__(self, o): return Tensor(_a(o) + self.a)
    def __sub__(self, o): return Tensor(self.a - _a(o))
    def __mul__(self, o): return Tensor(self.a * _a(o))
    def __rmul__(self, o): return Tensor(_a(o) * self.a)
    def __truediv__(self, o): return Tensor(self.a / _a(o))
    def __matmul__(self, o): return Tensor(self.a @ _a(o))
    def __gt__(self, o): return Tensor(self.a > _a(o))

    # reductions
    def _red(self, f, dim, keepdim, **kw):
        return Tensor(f(self.a, axis=dim, keepdims=keepdim, **kw))

    def sum(self, dim=None, keepdim=False): return self._red(jnp.sum, dim, keepdim)
    def mean(self, dim=None, keepdim=False): return self._red(jnp.mean, dim, keepdim)
    def amax(self, dim=None, keepdim=False): return self._red(jnp.max, dim, keepdim)
    def amin(self, dim=None, keepdim=False): return self._red(jnp.min, dim, keepdim)
    def prod(self, dim=None, keepdim=False): return self._red(jnp.prod, dim, keepdim)
    def std(self, dim=None, keepdim=False): return self._red(jnp.std, dim, keepdim, ddof=1)
    def var(self, dim=None, keepdim=False): return self._red(jnp.var, dim, keepdim, ddof=1)

    def logsumexp(self, dim, keepdim=False):
        return Tensor(jax.scipy.special.logsumexp(self.a, axis=dim, keepdims=keepdim))

    def norm(self, dim=None, keepdim=False):
        return Tensor(jnp.sqrt(jnp.sum(self.a * self.a, axis=dim, keepdims=keepdim)))

    def _minmax(self, f, arg, dim, keepdim):
        if dim is None:
            return Tensor(f(self.a))
        return (Tensor(f(self.a, axis=dim, keepdims=keepdim)),
                Tensor(arg(self.a, axis=dim, keepdims=keepdim)))

    def max(self, dim=None, keepdim=False): return self._minmax(jnp.max, jnp.argmax, dim, keepdim)
    def min(self, dim=None, keepdim=False): return self._minmax(jnp.min, jnp.argmin, dim, keepdim)
    def softmax(self, d): return Tensor(jax.nn.softmax(self.a, axis=d))
    def log_softmax(self, d): return Tensor(jax.nn.log_softmax(self.a, axis=d))

    # indexing
    def gather(self, d, idx):
        grid = list(jnp.indices(idx.shape, sparse=True))
        grid[d] = idx.a
        return Tensor(self.a[tuple(grid)])

    def index_select(self, d, idx): return Tensor(jnp.take(self.a, idx.a, axis=d))
    def take(self, idx): return Tensor(self.a.reshape(-1)[idx.a])

    def _scatter(self, d, idx, how):
        grid = list(jnp.indices(idx.shape, sparse=True))
        grid[d] = idx.a
        return tuple(grid)

    def scatter_add(self, d, idx, src):
        part = src.a[tuple(slice(0, s) for s in idx.shape)]
        return Tensor(self.a.at[self._scatter(d, idx, "add")].add(part))

    def scatter(self, d, idx, value):
        return Tensor(self.a.at[self._scatter(d, idx, "set")].set(value))

    # shapes
    def reshape(self, *s): return Tensor(self.a.reshape(s))
    view = reshape
    def transpose(self, a, b): return Tensor(jnp.swapaxes(self.a, a, b))
    def t(self): return Tensor(self.a.T)
    def movedim(self, a, b): return Tensor(jnp.moveaxis(self.a, a, b))
    def permute(self, *p): return Tensor(jnp.transpose(self.a, p))
    def flatten(self): return Tensor(self.a.reshape(-1))
    def unsqueeze(self, d): return Tensor(jnp.expand_dims(self.a, d))
    def squeeze(self, d): return Tensor(jnp.squeeze(self.a, d))
    def expand(self, *s): return Tensor(jnp.broadcast_to(self.a, s))
    def flip(self, *dims): return Tensor(jnp.flip(self.a, dims))
    def narrow(self, d, start, n): return Tensor(jax.lax.slice_in_dim(self.a, start, start + n, axis=d))
    def repeat(self, *r): return Tensor(jnp.tile(self.a, r))

    def split(self, size, d):
        n = self.a.shape[d]
        return [Tensor(jax.lax.slice_in_dim(self.a, i, min(i + size, n), axis=d))
                for i in range(0, n, size)]

    def chunk(self, k, d):
        n = self.a.shape[d]
        return self.split(-(-n // k), d)


def _a(x):
    return x.a if isinstance(x, Tensor) else x


def tensor(data, requires_grad=False):
    arr = np.asarray(data)
    return Tensor(jnp.asarray(arr, jnp.float32 if arr.dtype.kind == "f" else jnp.int32), arr)


def zeros(shape): return Tensor(jnp.zeros(shape, jnp.float32))
def full_like(t, v): return Tensor(jnp.full_like(_a(t), v))
def maximum(a, b): return Tensor(jnp.maximum(_a(a), _a(b)))
def minimum(a, b): return Tensor(jnp.minimum(_a(a), _a(b)))
def atan2(a, b): return Tensor(jnp.arctan2(_a(a), _a(b)))
def lerp(a, b, w): return Tensor(_a(a) + _a(w) * (_a(b) - _a(a)))
def where(c, a, b): return Tensor(jnp.where(_a(c), _a(a), _a(b)))
def matmul(a, b): return Tensor(jnp.matmul(_a(a), _a(b)))
def bmm(a, b): return Tensor(jnp.matmul(_a(a), _a(b)))
def outer(a, b): return Tensor(jnp.outer(_a(a), _a(b)))
def einsum(spec, *ts): return Tensor(jnp.einsum(spec, *[_a(t) for t in ts]))
def cat(ts, d): return Tensor(jnp.concatenate([_a(t) for t in ts], d))
def stack(ts, d=0): return Tensor(jnp.stack([_a(t) for t in ts], d))


class Linear:
    """``lin(i, o)`` of the programs' prelude: the same deterministic weights."""

    def __init__(self, i, o):
        self.weight = Tensor(jnp.sin(jnp.arange(i * o, dtype=jnp.float32).reshape(o, i) * 0.7))
        self.bias = Tensor(jnp.cos(jnp.arange(o, dtype=jnp.float32) * 0.3))

    def __call__(self, x):
        return functional.linear(x, self.weight, self.bias)


def _linear(x, w, b=None):
    y = _a(x) @ _a(w).T
    return Tensor(y if b is None else y + _a(b))


def _conv1d(x, w, b=None):
    y = jax.lax.conv_general_dilated(_a(x), _a(w), (1,), "VALID",
                                     dimension_numbers=("NCH", "OIH", "NCH"))
    return Tensor(y if b is None else y + _a(b)[:, None])


def _layer_norm(x, shape, w=None, b=None):
    a = _a(x)
    mu = a.mean(-1, keepdims=True)
    var = ((a - mu) ** 2).mean(-1, keepdims=True)
    y = (a - mu) / jnp.sqrt(var + 1e-5)
    if w is not None:
        y = y * _a(w)
    if b is not None:
        y = y + _a(b)
    return Tensor(y)


def _nll_loss(x, t, reduction="mean"):
    a, t = _a(x), _a(t)
    picked = -jnp.take_along_axis(a, t[..., None], -1)[..., 0] if a.ndim > 1 else -a[t]
    return Tensor({"mean": jnp.mean, "sum": jnp.sum}.get(reduction, lambda v: v)(picked))


def _cross_entropy(x, t, reduction="mean"):
    return _nll_loss(Tensor(jax.nn.log_softmax(_a(x), -1)), t, reduction)


def _pointwise_loss(f):
    """A loss of elementwise terms ``f(input, target)``, reduced as ``reduction`` says."""
    def loss(x, t, reduction="mean"):
        terms = f(_a(x), _a(t))
        return Tensor({"mean": jnp.mean, "sum": jnp.sum}.get(reduction, lambda v: v)(terms))
    return loss


# value checks met on traced values, ``(all_ok, message)``: ``run_jnp`` returns each from
# the run and raises the first that fails, on its line (the library's compiled check
# raises after the run too: ``gather.check_traced_values``)
TRACED_CHECKS = []


def _check_values(ok, message):
    if isinstance(ok, jax.core.Tracer):
        TRACED_CHECKS.append((jnp.all(ok), message))
    elif not bool(jnp.all(ok)):
        raise RuntimeError(message)


def _bce(x, t, reduction="mean"):
    for name, v in (("input", _a(x)), ("target", _a(t))):   # PyTorch's kernel checks both
        _check_values((v >= 0) & (v <= 1), f"all elements of {name} should be between 0 and 1")
    return _pointwise_loss(lambda x, t: -(t * jnp.maximum(jnp.log(x), -100.0) +
                                          (1 - t) * jnp.maximum(jnp.log1p(-x), -100.0)))(
        x, t, reduction)


def _smooth_l1(x, t):
    d = jnp.abs(x - t)
    return jnp.where(d < 1.0, 0.5 * d * d, d - 0.5)


functional = types.SimpleNamespace(
    linear=_linear, conv1d=_conv1d, layer_norm=_layer_norm, nll_loss=_nll_loss,
    cross_entropy=_cross_entropy,
    mse_loss=_pointwise_loss(lambda x, t: (x - t) ** 2),
    l1_loss=_pointwise_loss(lambda x, t: jnp.abs(x - t)),
    smooth_l1_loss=_pointwise_loss(_smooth_l1), huber_loss=_pointwise_loss(_smooth_l1),
    binary_cross_entropy=_bce,
    kl_div=_pointwise_loss(lambda x, t: xlogy(t, t) - t * x),
    soft_margin_loss=_pointwise_loss(lambda x, t: jnp.log1p(jnp.exp(-t * x))),
    gelu=lambda x: Tensor(jax.nn.gelu(_a(x), approximate=False)),
    softplus=lambda x: Tensor(jax.nn.softplus(_a(x))))
nn = types.SimpleNamespace(functional=functional, Linear=Linear)
