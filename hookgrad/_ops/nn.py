"""Neural-network ops behind ``hookgrad.nn.functional``: one row per op, math from jax.nn."""
import jax
import jax.numpy as jnp

from .dispatch import apply
from .reduction import LOG_SOFTMAX, SOFTMAX
from .registry import defop, register

_REDUCE = {"mean": jnp.mean, "sum": jnp.sum, "none": lambda x: x}


def _linear(x, w, b=None):
    y = jnp.matmul(x, w.T)
    return y if b is None else y + b


def _layer_norm(x, w, b, shape, eps):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), axis=axes, keepdims=True)
    y = (x - mu) * jax.lax.rsqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def _nll(logp, target, weight, reduction, ignore_index):
    # logp: (N, C, ...) ; target: (N, ...)
    t = jnp.where(target == ignore_index, 0, target)
    picked = -jnp.take_along_axis(logp, jnp.expand_dims(t, 1), axis=1).squeeze(1)
    w = jnp.ones_like(picked) if weight is None else weight[t]
    w = jnp.where(target == ignore_index, 0.0, w).astype(logp.dtype)
    loss = picked * w
    if reduction == "mean":
        return jnp.sum(loss) / jnp.sum(w)
    return _REDUCE[reduction](loss)


def _nll_weighted(logp, target, weight, reduction, ignore_index):
    return _nll(logp, target, weight, reduction, ignore_index)


def _nll_unweighted(logp, target, reduction, ignore_index):
    return _nll(logp, target, None, reduction, ignore_index)


LINEAR = defop("linear", _linear, "AddmmBackward0", {0: (1,), 1: (0,)})
LINEAR_ND = defop("linear_nd", _linear, "ViewBackward0", {0: (1,), 1: (0,)})
LINEAR_NOBIAS = defop("linear_nobias", _linear, "MmBackward0", {0: (1,), 1: (0,)})
LINEAR_NOBIAS_ND = defop("linear_nobias_nd", _linear, "UnsafeViewBackward0", {0: (1,), 1: (0,)})
GELU = defop("gelu", lambda x, approximate: jax.nn.gelu(x, approximate=approximate == "tanh"),
             "GeluBackward0")
SILU = defop("silu", jax.nn.silu, "SiluBackward0")
LAYER_NORM = defop("layer_norm", _layer_norm, "NativeLayerNormBackward0")
MSE = defop("mse_loss", lambda x, y, reduction: _REDUCE[reduction](jnp.square(x - y)),
            "MseLossBackward0")
NLL = defop("nll_loss", _nll_unweighted, "NllLossBackward0")
NLL_W = defop("nll_loss_weighted", _nll_weighted, "NllLossBackward0")
NLL2D = defop("nll_loss2d", _nll_unweighted, "NllLoss2DBackward0")
SOFT_CE = defop("soft_cross_entropy", lambda logp, p, reduction: _REDUCE[reduction](
    -jnp.sum(logp * p, axis=1)), "SumBackward1")


def linear(input, weight, bias=None):
    """``y = x W^T + b``."""
    if bias is None:
        op = LINEAR_NOBIAS if input.ndim <= 2 else LINEAR_NOBIAS_ND
        return apply(op, (input, weight))
    op = LINEAR if input.ndim == 2 else LINEAR_ND
    return apply(op, (input, weight, bias))


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def gelu(input, approximate="none"):
    return apply(GELU, (input,), {"approximate": approximate})


def silu(input, inplace=False):
    return apply(SILU, (input,))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    from .reduction import softmax as sm
    return sm(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    from .reduction import log_softmax as lsm
    return lsm(input, dim, dtype)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    return apply(LAYER_NORM, (input, weight, bias), {"shape": shape, "eps": eps})


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return ("mean" if size_average else "sum") if reduce else "none"
    return reduction


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if input.shape != target.shape:
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=2)
    return apply(MSE, (input, target), {"reduction": _reduction(size_average, reduce, reduction)})


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    red = _reduction(size_average, reduce, reduction)
    x, t = input, target
    if x.ndim == 1:  # unbatched
        x, t = x.unsqueeze(0), t.unsqueeze(0)
    op = NLL if x.ndim == 2 else NLL2D
    if weight is not None:
        out = apply(NLL_W, (x, t, weight), {"reduction": red, "ignore_index": ignore_index})
    else:
        out = apply(op, (x, t), {"reduction": red, "ignore_index": ignore_index})
    if input.ndim == 1 and red == "none":
        out = out.squeeze(0)
    return out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 followed by nll_loss (class indices) or the soft-target sum."""
    red = _reduction(size_average, reduce, reduction)
    dim = 0 if input.ndim == 1 else 1
    logp = apply(LOG_SOFTMAX, (input,), {"dim": dim})
    if target.dtype.is_floating_point:  # class probabilities
        p = target
        if label_smoothing:
            p = p * (1 - label_smoothing) + label_smoothing / input.shape[dim]
        x = logp if input.ndim > 1 else logp.unsqueeze(0)
        p = p if input.ndim > 1 else p.unsqueeze(0)
        return apply(SOFT_CE, (x, p), {"reduction": red})
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=red)
    if label_smoothing:
        n = input.shape[dim]
        smooth = -(logp.sum(dim) if weight is None else (logp * _bcast(weight, logp, dim)).sum(dim))
        mask = (target != ignore_index)
        smooth = smooth * mask
        if red == "mean":
            denom = mask.sum() if weight is None else (weight[target] * mask).sum() \
                if hasattr(weight, "__getitem__") else mask.sum()
            smooth = smooth.sum() / denom
        elif red == "sum":
            smooth = smooth.sum()
        loss = loss * (1 - label_smoothing) + smooth * (label_smoothing / n)
    return loss


def _bcast(weight, logp, dim):
    shape = [1] * logp.ndim
    shape[dim] = -1
    return weight.reshape(shape)


_SOFTMAX_OPS = (SOFTMAX, LOG_SOFTMAX)  # re-exported for nn.functional
for _f in (gelu, silu, layer_norm, mse_loss, nll_loss, cross_entropy, linear):
    register(_f, method=False)
