"""The op table as test rows, shared by test_op_table.py and test_torch_differential.py.

A row is ``Row(id, call, ref, inputs, flags)``:

- ``call(L, *args)`` runs the op with the library module ``L`` (``hookgrad`` or ``torch``:
  the same code for both, function or method form);
- ``ref(*arrays)`` is the same computation in plain JAX (``jnp``), the reference for
  values and, through ``jax.grad``, for gradients (None: no JAX reference);
- ``inputs`` are specs built into Tensors (float inputs require grad);
- ``flags``: ``fd`` finite-difference check, ``gg`` grad-of-grad check (``fd*``, ``gg*``: in
  the slow tier only, see ``SAMPLE``), ``shallow`` only the
  top node name is compared with torch (torch records a chain of nodes where hookgrad
  records one), ``nonames`` no torch node comparison at all, ``slow`` only in the slow
  tier (HOOKGRAD_SLOW=1): ops beyond the required list and further variants, which cost
  a compilation each.

Shapes are shared between rows (mostly (3, 4)) so the jit caches are reused.
"""
import zlib
from collections import namedtuple

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

Row = namedtuple("Row", "id call ref inputs flags")


class F:
    """A float input: ``kind`` normal, pos (0.5..2), unit (-0.9..0.9), gt1 (1.1..3), or
    explicit ``values``."""

    def __init__(self, *shape, kind="normal", values=None):
        self.shape, self.kind, self.values = shape, kind, values

    def make(self, rng):
        if self.values is not None:
            return np.asarray(self.values, np.float32)
        if self.kind == "normal":
            a = rng.standard_normal(self.shape)
        elif self.kind == "pos":
            a = rng.uniform(0.5, 2.0, self.shape)
        elif self.kind == "unit":
            a = rng.uniform(-0.9, 0.9, self.shape)
        else:
            a = rng.uniform(1.1, 3.0, self.shape)
        return np.asarray(a, np.float32)


def P(*s):
    return F(*s, kind="pos")


def U(*s):
    return F(*s, kind="unit")


def G1(*s):
    return F(*s, kind="gt1")


def V(values):
    return F(values=values)


class I:
    """A constant integer tensor (indices)."""

    def __init__(self, values):
        self.values = values

    def make(self, rng):
        return np.asarray(self.values, np.int64)


class B:
    """A constant boolean tensor (masks)."""

    def __init__(self, values):
        self.values = values

    def make(self, rng):
        return np.asarray(self.values, bool)


def arrays_for(row):
    rng = np.random.default_rng(zlib.crc32(row.id.encode()))
    return [spec.make(rng) for spec in row.inputs]


def tensors(L, row, arrays=None):
    """The row's inputs as Tensors of library ``L`` (float ones require grad)."""
    arrays = arrays_for(row) if arrays is None else arrays
    out = []
    for spec, a in zip(row.inputs, arrays):
        if isinstance(spec, F):
            out.append(L.tensor(a, requires_grad=True))
        else:
            out.append(L.tensor(a))
    return out


def outputs(res):
    """A result (Tensor, tuple, named tuple) as a list of Tensors/arrays."""
    if isinstance(res, (tuple, list)):
        return list(res)
    return [res]


ROWS = []
# the rows whose ``fd`` / ``gg`` checks run by default; the other flagged rows get them in
# the slow tier (their flag becomes ``fd*`` / ``gg*``)
SAMPLE = {
    "gg": {"exp", "sigmoid", "tanh", "relu", "mul", "div", "pow.scalar", "where", "prod",
           "logsumexp", "norm", "softmax", "log_softmax", "matmul", "gather"},
    "fd": {"sin", "tanh", "mul", "clamp", "std", "norm", "softmax", "matmul", "gather",
           "getitem tensor", "logsumexp"},
}


def row(id, call, ref, inputs, flags=""):
    flags = [f + "*" if f in SAMPLE and id not in SAMPLE[f] else f for f in flags.split()]
    ROWS.append(Row(id, call, ref, tuple(inputs), frozenset(flags)))


X, Y, W = F(3, 4), F(3, 4), F(4)

# ---------------------------------------------------------------- unary pointwise
_UNARY = [
    # name, jnp reference, input, flags
    ("neg", jnp.negative, X, "fd"), ("exp", jnp.exp, X, "gg"), ("log", jnp.log, P(3, 4), "gg"),
    ("log1p", jnp.log1p, P(3, 4), ""), ("expm1", jnp.expm1, X, ""),
    ("sqrt", jnp.sqrt, P(3, 4), "fd"), ("rsqrt", jax.lax.rsqrt, P(3, 4), ""),
    ("reciprocal", jnp.reciprocal, P(3, 4), "gg"), ("abs", jnp.abs, X, ""),
    ("sign", jnp.sign, X, ""), ("sin", jnp.sin, X, "gg fd"), ("cos", jnp.cos, X, ""),
    ("tan", jnp.tan, U(3, 4), "gg"), ("tanh", jnp.tanh, X, "gg fd"),
    ("sigmoid", jax.nn.sigmoid, X, "gg"), ("relu", jax.nn.relu, X, "gg"),
    ("erf", jss.erf, X, "gg"), ("square", jnp.square, X, "gg"),
    # beyond the required list: slow tier
    ("log2", jnp.log2, P(3, 4), "slow"), ("log10", jnp.log10, P(3, 4), "slow"),
    ("exp2", jnp.exp2, X, "slow"), ("asin", jnp.arcsin, U(3, 4), "slow"),
    ("acos", jnp.arccos, U(3, 4), "slow"), ("atan", jnp.arctan, X, "slow"),
    ("sinh", jnp.sinh, X, "slow"), ("cosh", jnp.cosh, X, "slow"),
    ("asinh", jnp.arcsinh, X, "slow"), ("acosh", jnp.arccosh, G1(3, 4), "slow"),
    ("atanh", jnp.arctanh, U(3, 4), "slow"), ("erfc", jss.erfc, X, "slow"),
    ("erfinv", jss.erfinv, U(3, 4), "slow"), ("lgamma", jss.gammaln, P(3, 4), "slow"),
    ("digamma", jss.digamma, P(3, 4), "slow"), ("floor", jnp.floor, X, "slow"),
    ("ceil", jnp.ceil, X, "slow"), ("trunc", jnp.trunc, X, "slow"),
    ("frac", lambda x: x - jnp.trunc(x), X, "slow"), ("round", jnp.round, X, "slow"),
]
for _n, _ref, _in, _fl in _UNARY:
    row(_n, lambda L, x, n=_n: getattr(L, n)(x), _ref, [_in], _fl)
    row(_n + ".method", lambda L, x, n=_n: getattr(x, n)(), _ref, [_in], _fl.replace("gg", "")
        .replace("fd", ""))
row("neg.op", lambda L, x: -x, jnp.negative, [X])
row("abs.op", lambda L, x: abs(x), jnp.abs, [X])
row("round.decimals", lambda L, x: L.round(x, decimals=2), lambda x: jnp.round(x, 2), [X],
    "slow")

# ---------------------------------------------------------------- binary pointwise
_BINARY = [
    ("add", jnp.add, [X, Y], "fd"), ("sub", jnp.subtract, [X, Y], ""),
    ("mul", jnp.multiply, [X, Y], "gg fd"), ("div", jnp.divide, [X, P(3, 4)], "gg"),
    ("maximum", jnp.maximum, [X, Y], ""), ("minimum", jnp.minimum, [X, Y], ""),
    ("fmax", jnp.fmax, [X, Y], "slow"), ("fmin", jnp.fmin, [X, Y], "slow"),
    ("atan2", jnp.arctan2, [X, Y], "gg slow"), ("hypot", jnp.hypot, [X, Y], "slow"),
    ("xlogy", jss.xlogy, [P(3, 4), P(3, 4)], "slow"), ("pow", jnp.power, [P(3, 4), Y], "gg"),
]
for _n, _ref, _ins, _fl in _BINARY:
    row(_n, lambda L, x, y, n=_n: getattr(L, n)(x, y), _ref, _ins, _fl)
    row(_n + ".method", lambda L, x, y, n=_n: getattr(x, n)(y), _ref, _ins,
        "slow" if "slow" in _fl else "")
row("add.broadcast", lambda L, x, w: x + w, jnp.add, [X, W])
row("add.scalar", lambda L, x: x + 2.5, lambda x: x + 2.5, [X])
row("add.rscalar", lambda L, x: 2.5 + x, lambda x: 2.5 + x, [X])
row("add.alpha", lambda L, x, y: L.add(x, y, alpha=3), lambda x, y: x + 3 * y, [X, Y], "slow")
row("sub.op", lambda L, x, y: x - y, jnp.subtract, [X, Y])
row("sub.alpha", lambda L, x, y: x.sub(y, alpha=2), lambda x, y: x - 2 * y, [X, Y], "slow")
row("rsub.op", lambda L, x: 2.0 - x, lambda x: 2.0 - x, [X])
row("mul.op", lambda L, x, y: x * y, jnp.multiply, [X, Y], "gg")
row("mul.scalar", lambda L, x: x * 3, lambda x: x * 3, [X])
row("mul.rscalar", lambda L, x: 3 * x, lambda x: 3 * x, [X])
row("div.op", lambda L, x, y: x / y, jnp.divide, [X, P(3, 4)])
row("div.scalar", lambda L, x: x / 4, lambda x: x / 4, [X])
row("div.rscalar", lambda L, x: 2.0 / x, lambda x: 2.0 / x, [P(3, 4)], "gg")
row("div.floor", lambda L, x, y: L.div(x, y, rounding_mode="floor"), jnp.floor_divide,
    [X, P(3, 4)])
row("div.trunc", lambda L, x, y: x.div(y, rounding_mode="trunc"),
    lambda x, y: jnp.trunc(x / y), [X, P(3, 4)], "slow")
row("pow.scalar", lambda L, x: x ** 2, lambda x: x ** 2, [X], "gg fd")
row("pow.half", lambda L, x: L.pow(x, 0.5), jnp.sqrt, [P(3, 4)])
row("pow.negative", lambda L, x: x.pow(-1.5), lambda x: x ** -1.5, [P(3, 4)], "slow")
row("pow.tensor_op", lambda L, x, y: x ** y, jnp.power, [P(3, 4), Y])
row("pow.rscalar", lambda L, x: 2.0 ** x, lambda x: 2.0 ** x, [X], "gg")
row("fmod", lambda L, x: L.fmod(x, 0.7), lambda x: jnp.fmod(x, 0.7), [X], "slow")
row("remainder", lambda L, x: x.remainder(0.7), lambda x: jnp.remainder(x, 0.7), [X], "slow")
row("remainder.op", lambda L, x: x % 0.7, lambda x: jnp.remainder(x, 0.7), [X], "slow")
row("fmod.tensor", lambda L, x, y: L.fmod(x, y), jnp.fmod, [X, P(3, 4)])
row("remainder.tensor", lambda L, x, y: x.remainder(y), jnp.remainder, [X, P(3, 4)])
row("max.binary", lambda L, x, y: L.max(x, y), jnp.maximum, [X, Y])
row("min.binary", lambda L, x, y: x.min(y), jnp.minimum, [X, Y])

# ---------------------------------------------------------------- clamp, where, lerp
_clip = lambda lo, hi: lambda x: jnp.clip(x, lo, hi)  # noqa: E731
row("clamp", lambda L, x: L.clamp(x, -0.5, 0.5), _clip(-0.5, 0.5), [X], "fd")
row("clamp.method", lambda L, x: x.clamp(min=-0.5), _clip(-0.5, None), [X])
row("clamp.max", lambda L, x: x.clamp(max=0.5), _clip(None, 0.5), [X])
row("clip", lambda L, x: L.clip(x, -0.5, 0.5), _clip(-0.5, 0.5), [X])
row("clamp.tensor", lambda L, x, lo: L.clamp(x, lo), lambda x, lo: jnp.maximum(x, lo), [X, W])
row("clamp.tensor2", lambda L, x, lo, hi: x.clamp(lo, lo + hi.abs()),
    lambda x, lo, hi: jnp.minimum(jnp.maximum(x, lo), lo + jnp.abs(hi)), [X, W, W], "slow")
row("clamp_min", lambda L, x: L.clamp_min(x, 0.1), lambda x: jnp.maximum(x, 0.1), [X])
row("clamp_min.tensor", lambda L, x, lo: x.clamp_min(lo), jnp.maximum, [X, Y])
row("clamp_max", lambda L, x: x.clamp_max(0.1), lambda x: jnp.minimum(x, 0.1), [X])
row("clamp_max.tensor", lambda L, x, hi: L.clamp_max(x, hi), jnp.minimum, [X, Y], "slow")
row("where", lambda L, x, y: L.where(x > 0, x, y), lambda x, y: jnp.where(x > 0, x, y), [X, Y],
    "gg")
row("where.scalar", lambda L, x: L.where(x > 0, x, 0.0), lambda x: jnp.where(x > 0, x, 0.0), [X])
row("where.lscalar", lambda L, x: L.where(x > 0, 1.5, x), lambda x: jnp.where(x > 0, 1.5, x),
    [X], "slow")
row("where.method", lambda L, x, y: x.where(x > 0, y), lambda x, y: jnp.where(x > 0, x, y), [X, Y])
_M = B([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
row("masked_fill", lambda L, x, m: x.masked_fill(m, 2.0), lambda x, m: jnp.where(m, 2.0, x),
    [X, _M])
row("masked_fill.function", lambda L, x, m: L.masked_fill(x, m, -1.0),
    lambda x, m: jnp.where(m, -1.0, x), [X, _M], "slow")
row("masked_fill.tensor", lambda L, x, m, v: x.masked_fill(m, v.sum()),
    lambda x, m, v: jnp.where(m, v.sum(), x), [X, _M, W])
row("lerp", lambda L, x, y: L.lerp(x, y, 0.3), lambda x, y: x + 0.3 * (y - x), [X, Y])
row("lerp.tensor", lambda L, x, y, w: x.lerp(y, w), lambda x, y, w: x + w * (y - x), [X, Y, W],
    "gg")

# ---------------------------------------------------------------- reductions
row("sum", lambda L, x: L.sum(x), jnp.sum, [X], "fd")
row("sum.method", lambda L, x: x.sum(), jnp.sum, [X])
row("sum.dim", lambda L, x: x.sum(1), lambda x: x.sum(1), [X])
row("sum.dims_keepdim", lambda L, x: L.sum(x, (0, 1), keepdim=True),
    lambda x: x.sum((0, 1), keepdims=True), [X])
row("sum.empty_dims", lambda L, x: x.sum(()), jnp.sum, [X])
row("sum.negdim", lambda L, x: x.sum(dim=-1), lambda x: x.sum(-1), [X], "slow")
row("trace", lambda L, x: L.trace(x), jnp.trace, [X])
row("trace.method", lambda L, x: x.trace(), jnp.trace, [X], "slow")
row("mean", lambda L, x: L.mean(x), jnp.mean, [X])
row("mean.dim", lambda L, x: x.mean(0, keepdim=True), lambda x: x.mean(0, keepdims=True), [X])
row("prod", lambda L, x: L.prod(x), jnp.prod, [P(3, 4)], "gg")
row("prod.dim", lambda L, x: x.prod(1), lambda x: x.prod(1), [X], "fd")
row("var", lambda L, x: L.var(x), lambda x: jnp.var(x, ddof=1), [X], "gg")
row("var.dim", lambda L, x: x.var(1), lambda x: jnp.var(x, 1, ddof=1), [X])
row("var.correction", lambda L, x: x.var(0, correction=0, keepdim=True),
    lambda x: jnp.var(x, 0, keepdims=True), [X], "slow")
row("var.unbiased", lambda L, x: L.var(x, unbiased=False), jnp.var, [X], "slow")
row("std", lambda L, x: L.std(x), lambda x: jnp.std(x, ddof=1), [X], "fd")
row("std.dim", lambda L, x: x.std(1, keepdim=True), lambda x: jnp.std(x, 1, ddof=1,
                                                                      keepdims=True), [X])
row("max", lambda L, x: L.max(x), jnp.max, [X])
row("max.method", lambda L, x: x.max(), jnp.max, [X])
row("max.dim", lambda L, x: L.max(x, 1), lambda x: (x.max(1), x.argmax(1)), [X])
row("max.dim_keepdim", lambda L, x: x.max(0, keepdim=True),
    lambda x: (x.max(0, keepdims=True), x.argmax(0, keepdims=True)), [X], "slow")
row("min", lambda L, x: L.min(x), jnp.min, [X])
row("min.dim", lambda L, x: x.min(dim=0), lambda x: (x.min(0), x.argmin(0)), [X])
row("amax", lambda L, x: L.amax(x, 1), lambda x: x.max(1), [X])
row("amax.all", lambda L, x: x.amax((0, 1)), jnp.max, [X], "slow")
row("amin", lambda L, x: x.amin(0, keepdim=True), lambda x: x.min(0, keepdims=True), [X])
row("argmax", lambda L, x: L.argmax(x, 1), lambda x: x.argmax(1), [X])
row("argmax.all", lambda L, x: x.argmax(), lambda x: x.argmax(), [X], "slow")
row("argmin", lambda L, x: x.argmin(0, keepdim=True), lambda x: x.argmin(0, keepdims=True), [X])
row("logsumexp", lambda L, x: L.logsumexp(x, 1), lambda x: jax.nn.logsumexp(x, 1), [X], "gg fd")
row("logsumexp.dims", lambda L, x: x.logsumexp((0, 1)), jax.nn.logsumexp, [X], "slow")
row("cumsum", lambda L, x: L.cumsum(x, 1), lambda x: jnp.cumsum(x, 1), [X])
row("cumsum.method", lambda L, x: x.cumsum(dim=0), lambda x: jnp.cumsum(x, 0), [X], "slow")
row("cumprod", lambda L, x: x.cumprod(1), lambda x: jnp.cumprod(x, 1), [X], "slow")
_l2 = lambda x, **k: jnp.sqrt(jnp.sum(x * x, **k))  # noqa: E731
row("norm", lambda L, x: L.norm(x), _l2, [X], "gg fd")
row("norm.p1", lambda L, x: x.norm(p=1), lambda x: jnp.abs(x).sum(), [X])
row("norm.dim", lambda L, x: x.norm(dim=1), lambda x: _l2(x, axis=1), [X])
row("norm.inf", lambda L, x: x.norm(float("inf")), lambda x: jnp.abs(x).max(), [X], "slow")
row("norm.p3", lambda L, x: x.norm(3, 1, True),
    lambda x: (jnp.abs(x) ** 3).sum(1, keepdims=True) ** (1 / 3), [X], "slow")
row("softmax", lambda L, x: L.softmax(x, 1), lambda x: jax.nn.softmax(x, 1), [X], "gg fd")
row("softmax.method", lambda L, x: x.softmax(dim=0), lambda x: jax.nn.softmax(x, 0), [X], "slow")
row("log_softmax", lambda L, x: L.log_softmax(x, 1), lambda x: jax.nn.log_softmax(x, 1), [X],
    "gg fd")
row("log_softmax.method", lambda L, x: x.log_softmax(-1), lambda x: jax.nn.log_softmax(x, -1),
    [X], "slow")

# ---------------------------------------------------------------- matrix products
A, Bm, Bt = F(3, 4), F(4, 5), F(2, 3, 4)
row("matmul", lambda L, a, b: L.matmul(a, b), jnp.matmul, [A, Bm], "gg fd")
row("matmul.op", lambda L, a, b: a @ b, jnp.matmul, [A, Bm])
row("matmul.mv", lambda L, a, v: a @ v, jnp.matmul, [A, W])
row("matmul.vm", lambda L, v, b: v @ b, jnp.matmul, [W, Bm], "shallow")
row("matmul.dot", lambda L, v, w: v @ w, jnp.matmul, [W, W])
row("matmul.batch_batch", lambda L, a, b: a @ b, jnp.matmul, [Bt, F(2, 4, 5)], "shallow")
row("matmul.batch_mat", lambda L, a, b: a @ b, jnp.matmul, [Bt, Bm], "shallow")
row("matmul.mat_batch", lambda L, a, b: a.matmul(b), jnp.matmul, [A, F(2, 4, 5)], "shallow")
row("matmul.vec_batch", lambda L, v, b: v @ b, jnp.matmul, [W, F(2, 4, 5)], "shallow slow")
row("matmul.batch_vec", lambda L, a, v: a @ v, jnp.matmul, [Bt, W], "shallow slow")
row("matmul.broadcast", lambda L, a, b: a @ b, jnp.matmul, [F(2, 1, 3, 4), F(2, 4, 5)],
    "shallow slow")
row("mm", lambda L, a, b: L.mm(a, b), jnp.matmul, [A, Bm], "gg")
row("mm.method", lambda L, a, b: a.mm(b), jnp.matmul, [A, Bm], "slow")
row("bmm", lambda L, a, b: L.bmm(a, b), jnp.matmul, [Bt, F(2, 4, 5)], "gg")
row("mv", lambda L, a, v: L.mv(a, v), jnp.matmul, [A, W])
row("dot", lambda L, v, w: v.dot(w), jnp.dot, [W, W])
row("outer", lambda L, v, w: L.outer(v, w), jnp.outer, [W, F(3)], "gg")
row("outer.method", lambda L, v, w: v.outer(w), jnp.outer, [W, F(3)], "slow")
row("addmm", lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2.0),
    lambda c, a, b: 0.5 * c + 2.0 * (a @ b), [F(3, 5), A, Bm], "slow")
for _eq, _ins, _fl in [("ij,jk->ik", [A, Bm], ""), ("ij,kj->ik", [A, F(5, 4)], "slow"),
                       ("bij,bjk->bik", [Bt, F(2, 4, 5)], ""), ("i,i->", [W, W], "slow"),
                       ("i,j->ij", [W, F(3)], ""), ("ij->ji", [A], "slow"), ("ij->", [A], ""),
                       ("ij->j", [A], "slow"), ("ij,ij->ij", [A, A], "slow"),
                       ("ij,ij->i", [A, A], "slow"), ("ii->i", [F(3, 3)], "slow"),
                       ("ij,jk", [A, Bm], "slow"),
                       ("...ij,...jk->...ik", [Bt, F(2, 4, 5)], "slow")]:
    row("einsum " + _eq, lambda L, *xs, eq=_eq: L.einsum(eq, *xs),
        lambda *xs, eq=_eq: jnp.einsum(eq, *xs), _ins, "shallow " + _fl)
row("t", lambda L, a: L.t(a), lambda a: a.T, [A])
row("t.method", lambda L, a: a.t(), lambda a: a.T, [A])
row("t.vector", lambda L, v: v.t(), lambda v: v, [W], "slow")
row("transpose", lambda L, a: L.transpose(a, 0, 1), lambda a: a.T, [A])
row("transpose.neg", lambda L, a: a.transpose(-1, 0), lambda a: jnp.swapaxes(a, -1, 0), [Bt],
    "slow")
row("swapaxes", lambda L, a: a.swapaxes(0, 2), lambda a: jnp.swapaxes(a, 0, 2), [Bt], "slow")
row("permute", lambda L, a: L.permute(a, (2, 0, 1)), lambda a: a.transpose(2, 0, 1), [Bt])
row("permute.varargs", lambda L, a: a.permute(1, 2, 0), lambda a: a.transpose(1, 2, 0), [Bt],
    "slow")
row("T", lambda L, a: a.T, lambda a: a.T, [A])
row("mT", lambda L, a: a.mT, lambda a: jnp.swapaxes(a, -1, -2), [Bt])
row("movedim", lambda L, a: L.movedim(a, 0, 2), lambda a: jnp.moveaxis(a, 0, 2), [Bt], "slow")

# ---------------------------------------------------------------- shape ops
row("reshape", lambda L, x: L.reshape(x, (12,)), lambda x: x.reshape(12), [X], "fd")
row("reshape.infer", lambda L, x: x.reshape(-1, 2), lambda x: x.reshape(-1, 2), [X], "slow")
row("view", lambda L, x: x.view(2, 6), lambda x: x.reshape(2, 6), [X])
row("view.tuple", lambda L, x: x.view((4, 3)), lambda x: x.reshape(4, 3), [X], "slow")
row("view_as", lambda L, x, y: x.view_as(y.t()), lambda x, y: x.reshape(4, 3), [X, Y])
row("reshape_as", lambda L, x, y: x.reshape_as(y), lambda x, y: x.reshape(2, 6),
    [X, F(2, 6)], "slow")
row("flatten", lambda L, x: L.flatten(x), lambda x: x.reshape(-1), [Bt])
row("flatten.start", lambda L, x: x.flatten(1), lambda x: x.reshape(2, 12), [Bt])
row("flatten.range", lambda L, x: x.flatten(0, 1), lambda x: x.reshape(6, 4), [Bt], "slow")
row("unflatten", lambda L, x: L.unflatten(x, 1, (2, 2)), lambda x: x.reshape(3, 2, 2), [X])
row("unflatten.infer", lambda L, x: x.unflatten(-1, (2, -1)), lambda x: x.reshape(3, 2, 2),
    [X], "slow")
row("squeeze", lambda L, x: L.squeeze(x), lambda x: x.reshape(3, 4), [F(1, 3, 1, 4)])
row("squeeze.dim", lambda L, x: x.squeeze(0), lambda x: x.reshape(3, 1, 4), [F(1, 3, 1, 4)])
row("squeeze.noop", lambda L, x: x.squeeze(1), lambda x: x, [F(1, 3, 1, 4)], "slow")
row("squeeze.dims", lambda L, x: x.squeeze((0, 2)), lambda x: x.reshape(3, 4), [F(1, 3, 1, 4)])
row("unsqueeze", lambda L, x: L.unsqueeze(x, 1), lambda x: x[:, None], [X])
row("unsqueeze.neg", lambda L, x: x.unsqueeze(-1), lambda x: x[..., None], [X])
row("expand", lambda L, w: w.expand(3, 4), lambda w: jnp.broadcast_to(w, (3, 4)), [W], "fd")
row("expand.keep", lambda L, x: x.expand(2, -1, 4), lambda x: jnp.broadcast_to(x, (2, 3, 4)),
    [F(3, 1)])
row("expand.tuple", lambda L, w: w.expand((2, 3, 4)), lambda w: jnp.broadcast_to(w, (2, 3, 4)),
    [W], "slow")
row("expand_as", lambda L, w, x: w.expand_as(x), lambda w, x: jnp.broadcast_to(w, (3, 4)),
    [W, X])
row("broadcast_to", lambda L, w: L.broadcast_to(w, (3, 4)),
    lambda w: jnp.broadcast_to(w, (3, 4)), [W])
row("broadcast_tensors", lambda L, w, x: L.broadcast_tensors(w, x[:1]),
    lambda w, x: (jnp.broadcast_to(w, (1, 4)), x[:1]), [W, X])
row("repeat", lambda L, x: x.repeat(2, 1), lambda x: jnp.tile(x, (2, 1)), [X])
row("repeat.newdim", lambda L, x: x.repeat(2, 1, 2), lambda x: jnp.tile(x, (2, 1, 2)), [X], "slow")
row("split", lambda L, x: L.split(x, 2), lambda x: (x[:2], x[2:]), [X])
row("split.method_dim", lambda L, x: x.split(3, dim=1), lambda x: (x[:, :3], x[:, 3:]), [X], "slow")
row("split.sizes", lambda L, x: x.split([1, 3], 1), lambda x: (x[:, :1], x[:, 1:]), [X])
row("chunk", lambda L, x: L.chunk(x, 2), lambda x: (x[:2], x[2:]), [X])
row("chunk.dim", lambda L, x: x.chunk(3, 1), lambda x: (x[:, :2], x[:, 2:]), [X], "slow")
row("narrow", lambda L, x: L.narrow(x, 1, 1, 2), lambda x: x[:, 1:3], [X])
row("narrow.neg", lambda L, x: x.narrow(0, -2, 2), lambda x: x[1:], [X], "slow")
row("unbind", lambda L, x: L.unbind(x), lambda x: tuple(x), [X])
row("diagonal", lambda L, x: L.diagonal(x, 1), lambda x: jnp.diagonal(x, 1), [X])
row("diagonal.dims", lambda L, x: x.diagonal(-1, 1, 0), lambda x: jnp.diagonal(x, -1, 1, 0), [X],
    "slow")
row("as_strided", lambda L, x: L.as_strided(x, (2, 2), (1, 4), 1),
    lambda x: x.reshape(-1)[np.array([[1, 5], [2, 6]])], [X])
row("reshape.copy", lambda L, x: x.t().reshape(12), lambda x: x.T.reshape(12), [X])
row("reshape.alias", lambda L, x: x.t().reshape(4, 1, 3), lambda x: x.T.reshape(4, 1, 3), [X])
row("unbind.dim", lambda L, x: x.unbind(1), lambda x: tuple(x.T), [X], "slow")
row("flip", lambda L, x: L.flip(x, (0,)), lambda x: x[::-1], [X])
row("flip.dims", lambda L, x: x.flip((0, 1)), lambda x: x[::-1, ::-1], [X], "slow")
row("flip.varargs", lambda L, x: x.flip(0, 1), lambda x: x[::-1, ::-1], [X])
row("roll", lambda L, x: L.roll(x, 1, 0), lambda x: jnp.roll(x, 1, 0), [X])
row("roll.flat", lambda L, x: x.roll(5), lambda x: jnp.roll(x, 5), [X], "slow")
row("roll.dims", lambda L, x: x.roll((1, -1), (0, 1)), lambda x: jnp.roll(x, (1, -1), (0, 1)),
    [X], "slow")
row("tril", lambda L, x: L.tril(x), jnp.tril, [X])
row("tril.diag", lambda L, x: x.tril(-1), lambda x: jnp.tril(x, -1), [X], "slow")
row("triu", lambda L, x: L.triu(x, 1), lambda x: jnp.triu(x, 1), [X])
row("triu.batch", lambda L, x: x.triu(), jnp.triu, [Bt], "slow")
_GI = I([[0, 3], [1, 1], [2, 0]])
row("gather", lambda L, x, i: L.gather(x, 1, i), lambda x, i: jnp.take_along_axis(x, i, 1),
    [X, _GI], "gg fd")
row("gather.method", lambda L, x, i: x.gather(0, i), lambda x, i: jnp.take_along_axis(x, i, 0),
    [X, I([[0, 2, 1, 0]])], "slow")
row("index_select", lambda L, x, i: L.index_select(x, 0, i), lambda x, i: x[i], [X, I([2, 0, 2])])
row("index_select.method", lambda L, x, i: x.index_select(1, i), lambda x, i: x[:, i],
    [X, I([3, 1])], "slow")
row("take", lambda L, x, i: L.take(x, i), lambda x, i: x.reshape(-1)[i], [X, I([0, 5, 11, 5])],
    "slow")
# (PyTorch's backward needs ``src`` of the index's shape)
row("scatter_add", lambda L, x, i, s: L.scatter_add(x, 1, i, s),
    lambda x, i, s: x.at[jnp.arange(3)[:, None], i].add(s), [X, _GI, F(3, 2)], "fd")
row("scatter_add.method", lambda L, x, i, s: x.scatter_add(0, i, s),
    lambda x, i, s: x.at[i, jnp.arange(4)].add(s[0]), [X, I([[2, 0, 2, 1]]), F(1, 4)], "slow")
row("scatter", lambda L, x, i, s: L.scatter(x, 1, i, s),
    lambda x, i, s: x.at[jnp.arange(3)[:, None], i].set(s), [X, I([[0, 3], [1, 2], [2, 0]]),
                                                             F(3, 2)])
row("scatter.value", lambda L, x, i: x.scatter(1, i, 1.5),
    lambda x, i: x.at[jnp.arange(3)[:, None], i].set(1.5), [X, I([[0, 3], [1, 2], [2, 0]])], "slow")
row("index_copy", lambda L, x, i, s: x.index_copy(0, i, s), lambda x, i, s: x.at[i].set(s),
    [X, I([2, 0]), F(2, 4)])
row("index_fill", lambda L, x, i: L.index_fill(x, 1, i, 2.5),
    lambda x, i: x.at[:, i].set(2.5), [X, I([3, 0])])
row("index_fill.tensor", lambda L, x, i, v: x.index_fill(1, i, v),
    lambda x, i, v: x.at[:, i].set(v), [X, I([3, 0]), F()], "slow")
row("take_along_dim", lambda L, x, i: L.take_along_dim(x, i, 1),
    lambda x, i: jnp.take_along_axis(x, i, 1), [X, I([[3], [0], [1]])], "shallow")
_SR = I([[0, 1, 0, 1], [0, 0, 2, 1]])  # repeated targets: reductions of several values
_SR_AT = (lambda i: (i, jnp.broadcast_to(jnp.arange(4), i.shape)))
row("scatter_reduce.sum", lambda L, x, i, s: x.scatter_reduce(0, i, s, "sum"),
    lambda x, i, s: x.at[_SR_AT(i)].add(s), [X, _SR, F(2, 4)])
row("scatter_reduce.amax", lambda L, x, i, s: L.scatter_reduce(x, 0, i, s, "amax"),
    lambda x, i, s: x.at[_SR_AT(i)].max(s), [X, _SR, F(2, 4)])
row("scatter_reduce.amin_exclude_self",
    lambda L, x, i, s: x.scatter_reduce(0, i, s, "amin", include_self=False),
    lambda x, i, s: x.at[_SR_AT(i)].set(jnp.inf).at[_SR_AT(i)].min(s), [X, _SR, F(2, 4)],
    "slow")
row("scatter_reduce.mean", lambda L, x, i, s: x.scatter_reduce(0, i, s, "mean"),
    lambda x, i, s: x.at[_SR_AT(i)].add(s) / jnp.ones_like(x).at[_SR_AT(i)].add(1.0),
    [X, _SR, F(2, 4)], "slow")
row("scatter_reduce.prod", lambda L, x, i, s: x.scatter_reduce(0, i, s, "prod"), None,
    [X, _SR, F(2, 4)])
row("index_add", lambda L, x, i, s: x.index_add(0, i, s), lambda x, i, s: x.at[i].add(s),
    [X, I([0, 2, 0]), Y])
row("index_add.alpha", lambda L, x, i, s: L.index_add(x, 1, i, s, alpha=2.0),
    lambda x, i, s: x.at[:, i].add(2.0 * s), [X, I([3, 0]), F(3, 2)], "slow")
row("masked_select", lambda L, x, m: L.masked_select(x, m), lambda x, m: x[m], [X, _M])
row("masked_select.broadcast", lambda L, x, m: x.masked_select(m),
    lambda x, m: jnp.broadcast_to(x, (3, 4))[m], [W, _M], "slow")
row("cat", lambda L, x, y: L.cat([x, y]), lambda x, y: jnp.concatenate([x, y]), [X, Y], "fd")
row("cat.dim", lambda L, x, y: L.cat((x, y), dim=-1), lambda x, y: jnp.concatenate([x, y], 1),
    [X, F(3, 2)])
row("concat", lambda L, x, y: L.concat([x, y], 1), lambda x, y: jnp.concatenate([x, y], 1),
    [X, Y], "slow")
row("stack", lambda L, x, y: L.stack([x, y]), lambda x, y: jnp.stack([x, y]), [X, Y])
row("stack.dim", lambda L, x, y: L.stack([x, y], dim=2), lambda x, y: jnp.stack([x, y], 2),
    [X, Y], "slow")
row("clone", lambda L, x: L.clone(x), lambda x: x, [X])
row("clone.method", lambda L, x: x.clone(), lambda x: x, [X], "slow")
row("contiguous", lambda L, x: (x * 2).contiguous(), lambda x: x * 2, [X])

# ---------------------------------------------------------------- indexing
_IDX = [
    ("int", lambda x: x[1], lambda x: x[1]),
    ("negint", lambda x: x[-1], lambda x: x[-1]),
    ("slice", lambda x: x[1:], lambda x: x[1:]),
    ("slice2", lambda x: x[:, 1:3], lambda x: x[:, 1:3]),
    ("step", lambda x: x[::2], lambda x: x[::2]),
    ("full", lambda x: x[:], lambda x: x),
    ("none", lambda x: x[None], lambda x: x[None]),
    ("ellipsis", lambda x: x[...], lambda x: x),
    ("ellipsis_int", lambda x: x[..., 0], lambda x: x[..., 0]),
    ("int_none", lambda x: x[0, None], lambda x: x[0, None]),
    ("none_slice", lambda x: x[None, 1:], lambda x: x[None, 1:]),
    ("int_slice", lambda x: x[1, 1:], lambda x: x[1, 1:]),
    ("slice_int", lambda x: x[1:, 2], lambda x: x[1:, 2]),
    ("scalar", lambda x: x[1, 2], lambda x: x[1, 2]),
    ("true", lambda x: x[True], lambda x: x[None]),
    ("list", lambda x: x[[0, 2, 2]], lambda x: x[jnp.array([0, 2, 2])]),
    ("mask", lambda x: x[x > 0], None),
]
for _n, _f, _r in _IDX:
    row("getitem " + _n, lambda L, x, f=_f: f(x), _r, [X])
row("getitem tensor", lambda L, x, i: x[i], lambda x, i: x[i], [X, I([2, 0])], "fd")
row("getitem tensor0d", lambda L, x, i: x[i], lambda x, i: x[i], [X, I(1)])
row("getitem tensor2", lambda L, x, i, j: x[i, j], lambda x, i, j: x[i, j],
    [X, I([0, 1, 2]), I([3, 2, 1])])
row("getitem slice_tensor", lambda L, x, i: x[:, i], lambda x, i: x[:, i], [X, I([3, 0])])
row("getitem tensor2d", lambda L, x, i: x[i], lambda x, i: x[i], [X, I([[0, 1], [2, 2]])])
row("getitem boolmask", lambda L, x, m: x[m], lambda x, m: x[np.asarray(m)], [X, _M])
row("getitem rowmask", lambda L, x, m: x[m], lambda x, m: x[np.asarray(m)],
    [X, B([True, False, True])])

# ---------------------------------------------------------------- edge points (torch's choices)
def E(values):
    """Explicit values tiled into the shared (3, 4) shape (reusing the compiled ops)."""
    return V(np.resize(np.asarray(values, np.float32), (3, 4)))


row("edge abs0", lambda L, x: x.abs(), None, [E([0.0, 1.0, -2.0, 0.0])])
row("edge relu0", lambda L, x: L.relu(x), None, [E([0.0, 1.0, -2.0])])
row("edge clamp_bounds", lambda L, x: x.clamp(-0.5, 0.5), None, [E([-0.5, 0.5, 0.25, 2.0])])
row("edge clamp_min_bound", lambda L, x: x.clamp_min(0.1), None, [E([0.1, 0.0, 2.0])])
row("edge maximum_tie", lambda L, x, y: L.maximum(x, y), None, [E([1.0, 2.0]), E([1.0, 3.0])])
row("edge fmax_tie", lambda L, x, y: L.fmax(x, y), None, [E([1.0, 2.0]), E([1.0, 3.0])], "slow")
row("edge fmin_tie", lambda L, x, y: L.fmin(x, y), None, [E([1.0, 2.0]), E([1.0, 3.0])], "slow")
row("edge max_ties", lambda L, x: x.max(), None, [E([3.0, 1.0, 3.0])])
row("edge amax_ties", lambda L, x: L.amax(x, 1), None, [E([3.0, 1.0, 3.0, 0.0, 0.0])])
row("edge max_dim_ties", lambda L, x: L.max(x, 1).values, None, [E([3.0, 1.0, 3.0, 0.0])])
row("edge norm0", lambda L, x: L.norm(x), None, [E([0.0])])
row("edge norm_dim0", lambda L, x: x.norm(dim=1), None, [E([0.0] * 4 + [3.0, 4.0])])
row("edge norm_p1_0", lambda L, x: x.norm(p=1), None, [E([0.0, -2.0])])
row("edge std_const", lambda L, x: L.std(x), None, [E([2.0])])
row("edge pow0_at0", lambda L, x: x ** 0, None, [E([0.0, 2.0])])
row("edge powt0_at0", lambda L, x, y: x ** y, None, [E([0.0, 2.0, 0.0]), E([0.0, 0.0, 1.0])])
row("edge prod_zero", lambda L, x: L.prod(x), None, [E([0.0, 2.0, 1.5])])
row("edge prod_zeros", lambda L, x: x.prod(1), None, [E([0.0, 1.0, 0.0, 2.0, 0.0, 1.5, 2.0, 1.0])])
row("edge cumprod_zero", lambda L, x: x.cumprod(1), None, [E([2.0, 0.0, 3.0])])
row("edge sign0", lambda L, x: x.sign(), None, [E([0.0, -1.0])])
row("edge lerp_w1", lambda L, x, y: L.lerp(x, y, 1.0), None, [E([1.0, 2.0]), E([3.0, -1.0])])

# ---------------------------------------------------------------- no gradient
_C1, _C2 = F(3, 4), F(3, 4)
for _n, _op in [("eq", jnp.equal), ("ne", jnp.not_equal), ("lt", jnp.less),
                ("le", jnp.less_equal), ("gt", jnp.greater), ("ge", jnp.greater_equal)]:
    row("compare " + _n, lambda L, x, y, n=_n: getattr(L, n)(x, y.detach().round()), None,
        [_C1, _C2])
row("compare ops", lambda L, x, y: [x == y, x != y, x < y, x <= 0.5, x > y, x >= y], None,
    [_C1, _C2])
row("logical", lambda L, x, y: [L.logical_and(x > 0, y > 0), (x > 0).logical_or(y > 0),
                                L.logical_xor(x > 0, y > 0), L.logical_not(x > 0),
                                (x > 0) & (y > 0), (x > 0) | (y > 0), ~(x > 0)], None, [_C1, _C2])
row("isfinite", lambda L, x: [L.isnan(x / 0.0), (x / 0.0).isinf(), L.isfinite(x)], None, [_C1])
row("all_any", lambda L, x: [(x > 0).all(), L.any(x > 0, 1), (x > -5).all(0)], None, [_C1])
row("isin", lambda L, x, y: [L.isin(x, y), L.isin(x, y, invert=True), L.isin(x, 3),
                             L.isin(2, y)], None, [I([[1, 2], [3, 4]]), I([2, 3, 7])])
row("count_nonzero", lambda L, x: L.count_nonzero(x > 0, 1), None, [_C1])
row("floor_divide", lambda L, x, y: L.floor_divide(x.detach(), 0.3), None, [_C1, _C2],
    "nonames")

# ---------------------------------------------------------------- recurrent layers (nn_rnn)
def _rnn_layer(L, mode, x, h0, c0, *ws):
    """One layer of a recurrent network: hookgrad's op, torch's ``torch.gru``/``lstm``."""
    if L.__name__ == "torch":
        hx = h0 if c0 is None else (h0, c0)
        res = getattr(L, mode.lower())(x, hx, list(ws), True, 1, 0.0, False, False, False)
        return [res[0]] + [s[0] for s in res[1:]]
    from hookgrad._ops.dispatch import apply
    from hookgrad._ops.nn_rnn import RNN_LAYER
    return list(apply(RNN_LAYER, (x, *ws, h0[0], None if c0 is None else c0[0], None),
                      {"mode": mode, "reverse": False, "batch_first": False,
                       "batch_sizes": None}))


def _rnn_ref(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    """The recurrence as a Python loop over steps (independent of the op's scan)."""
    h, c, outs = h0[0], None if c0 is None else c0[0], []
    sig = jax.nn.sigmoid
    for t in range(x.shape[0]):
        gi, gh = x[t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        if mode == "GRU":
            n = gi.shape[-1] // 3
            r, z = sig(gi[:, :n] + gh[:, :n]), sig(gi[:, n:2 * n] + gh[:, n:2 * n])
            cand = jnp.tanh(gi[:, 2 * n:] + r * gh[:, 2 * n:])
            h = (1 - z) * cand + z * h
        else:
            n = gi.shape[-1] // 4
            g = gi + gh
            c = sig(g[:, n:2 * n]) * c + sig(g[:, :n]) * jnp.tanh(g[:, 2 * n:3 * n])
            h = sig(g[:, 3 * n:]) * jnp.tanh(c)
        outs.append(h)
    return [jnp.stack(outs), h] + ([] if c is None else [c])


row("rnn_layer gru", lambda L, x, h, *ws: _rnn_layer(L, "GRU", x, h, None, *ws),
    lambda x, h, *ws: _rnn_ref("GRU", x, h, None, *ws),
    [F(5, 2, 3), F(1, 2, 4), F(12, 3), F(12, 4), F(12), F(12)], "nonames")
row("rnn_layer lstm", lambda L, x, h, c, *ws: _rnn_layer(L, "LSTM", x, h, c, *ws),
    lambda x, h, c, *ws: _rnn_ref("LSTM", x, h, c, *ws),
    [F(5, 2, 3), F(1, 2, 4), F(1, 2, 4), F(16, 3), F(16, 4), F(16), F(16)], "nonames slow")
_PACK_T, _PACK_B = np.array([0, 0, 0, 1, 1, 2]), np.array([0, 1, 2, 0, 1, 0])
row("pack_padded_sequence", lambda L, x: L.nn.utils.rnn.pack_padded_sequence(x, [3, 2, 1]).data,
    lambda x: x[_PACK_T, _PACK_B], [F(3, 3, 2)])
row("pad_packed_sequence", lambda L, x: L.nn.utils.rnn.pad_packed_sequence(
    L.nn.utils.rnn.PackedSequence(x, L.tensor([3, 2, 1])), padding_value=0.5)[0],
    lambda x: jnp.full((3, 3, 2), 0.5).at[_PACK_T, _PACK_B].set(x), [F(6, 2)], "nonames")
# ---------------------------------------------------------------- sorting, selection (sorting.py)


def _by_order(x, dim, descending=False, start=0, stop=None, keepdim=True):
    """``(values, indices)`` of positions [start, stop) of x's stable order along dim."""
    idx = jnp.argsort(x, axis=dim, stable=True, descending=descending)
    idx = jnp.moveaxis(jnp.moveaxis(idx, dim, 0)[start:stop], 0, dim)
    vals = jnp.take_along_axis(x, idx, axis=dim)
    return (vals, idx) if keepdim else (vals.squeeze(dim), idx.squeeze(dim))


row("sort", lambda L, x: L.sort(x), lambda x: _by_order(x, -1), [X])
row("sort.desc_dim", lambda L, x: x.sort(0, descending=True),
    lambda x: _by_order(x, 0, descending=True), [X], "slow")
row("sort.stable", lambda L, x: L.sort(x, stable=True, dim=1), lambda x: _by_order(x, 1), [X])
row("argsort", lambda L, x: L.argsort(x, descending=True),
    lambda x: jnp.argsort(x, descending=True), [X])
row("msort", lambda L, x: L.msort(x), lambda x: jnp.sort(x, 0), [X], "slow")
row("topk", lambda L, x: L.topk(x, 2), lambda x: _by_order(x, -1, True, 0, 2), [X], "gg fd")
row("topk.smallest_dim", lambda L, x: x.topk(2, dim=0, largest=False),
    lambda x: _by_order(x, 0, False, 0, 2), [X], "slow")
row("kthvalue", lambda L, x: L.kthvalue(x, 2), lambda x: _by_order(x, -1, False, 1, 2, False),
    [X])
row("kthvalue.keepdim", lambda L, x: x.kthvalue(3, 0, True), lambda x: _by_order(x, 0, False, 2, 3),
    [X], "slow")
row("median", lambda L, x: L.median(x), lambda x: jnp.sort(x.reshape(-1))[5], [X], "gg fd")
row("median.dim", lambda L, x: x.median(1), lambda x: _by_order(x, 1, False, 1, 2, False), [X])
row("median.keepdim", lambda L, x: L.median(x, 0, keepdim=True), lambda x: _by_order(x, 0, False, 1, 2),
    [X], "slow")
# ties: sort keeps their order (as PyTorch's CPU sort); median() splits its gradient evenly
row("edge sort_ties", lambda L, x: L.sort(x, descending=True), None, [E([3.0, 1.0, 3.0, 0.0])])
row("edge median_ties", lambda L, x: L.median(x), None, [E([1.0, 2.0, 1.0])])

# ---------------------------------------------------------------- var_mean, std_mean
row("var_mean", lambda L, x: L.var_mean(x), lambda x: (jnp.var(x, ddof=1), jnp.mean(x)), [X])
row("var_mean.dim_unbiased", lambda L, x: L.var_mean(x, 1, False, True),
    lambda x: (jnp.var(x, 1, keepdims=True), jnp.mean(x, 1, keepdims=True)), [X], "slow")
row("std_mean", lambda L, x: L.std_mean(x, 0, correction=0),
    lambda x: (jnp.std(x, 0), jnp.mean(x, 0)), [X], "gg fd")
row("edge std_mean_const", lambda L, x: L.std_mean(x), None, [E([2.0])])

# ---------------------------------------------------------------- repeat_interleave, splits
row("repeat_interleave", lambda L, x: L.repeat_interleave(x, 2), lambda x: jnp.repeat(x, 2),
    [X], "shallow")
row("repeat_interleave.dim", lambda L, x: x.repeat_interleave(3, dim=1),
    lambda x: jnp.repeat(x, 3, axis=1), [X], "shallow slow")
row("repeat_interleave.tensor", lambda L, x, r: x.repeat_interleave(r, dim=0),
    lambda x, r: jnp.repeat(x, r, axis=0), [X, I([1, 2, 0])])
row("repeat_interleave.tensor_flat", lambda L, x, r: L.repeat_interleave(x, r),
    lambda x, r: jnp.repeat(x, 2), [X, I([2])], "slow")
row("split_with_sizes", lambda L, x: x.split_with_sizes([1, 2]), lambda x: (x[:1], x[1:]), [X])
row("split_with_sizes.function", lambda L, x: L.split_with_sizes(x, [3, 1], 1),
    lambda x: (x[:, :3], x[:, 3:]), [X], "slow")

# ---------------------------------------------------------------- isclose (no gradient)
row("isclose", lambda L, x, y: [L.isclose(x, x + 1e-6), x.isclose(y, atol=1.0),
                                L.isclose(x, x / 0.0, equal_nan=True)],
    lambda x, y: [jnp.isclose(x, x + 1e-6), jnp.isclose(x, y, atol=1.0),
                  jnp.isclose(x, x / 0.0, equal_nan=True)], [_C1, _C2])

# ---------------------------------------------------------------- nn layers: resampling, pooling
_S1, _S2, _S3 = F(1, 2, 5), F(1, 2, 3, 4), F(1, 1, 2, 3, 2)


def _interp(**kw):
    return lambda L, x: L.nn.functional.interpolate(x, **kw)


def _nearest_ref(out):
    """PyTorch's nearest: output i reads input floor(i * n / o)."""
    def ref(x):
        for k, o in enumerate(out):
            ax = x.ndim - len(out) + k
            x = jnp.take(x, (np.arange(o) * x.shape[ax]) // o, axis=ax)
        return x
    return ref


def _linear_ref(out, align_corners):
    """(Bi/tri)linear interpolation at PyTorch's source coordinates (map_coordinates)."""
    def ref(x):
        cs = []
        for n, o in zip(x.shape[2:], out):
            i = jnp.arange(o, dtype=jnp.float32)
            cs.append(i * (n - 1) / max(o - 1, 1) if align_corners else
                      jnp.maximum((i + 0.5) * n / o - 0.5, 0.0))
        grid = jnp.meshgrid(jnp.arange(x.shape[0]), jnp.arange(x.shape[1]), *cs,
                            indexing="ij")
        return jax.scipy.ndimage.map_coordinates(x, [g.astype(jnp.float32) for g in grid],
                                                 order=1, mode="nearest")
    return ref


def _resize_ref(out, method, antialias=False):
    return lambda x: jax.image.resize(x, x.shape[:2] + out, method, antialias=antialias)


row("interpolate nearest1d", _interp(size=7), _nearest_ref((7,)), [_S1])
row("interpolate nearest2d", _interp(scale_factor=2), _nearest_ref((6, 8)), [_S2])
row("interpolate nearest2d_down", _interp(size=(2, 3)), _nearest_ref((2, 3)), [_S2])
row("interpolate nearest3d", _interp(size=(3, 4, 3)), _nearest_ref((3, 4, 3)), [_S3])
row("interpolate nearest_exact1d", _interp(size=7, mode="nearest-exact"),
    _resize_ref((7,), "nearest"), [_S1])
row("interpolate nearest_exact2d", _interp(size=(5, 3), mode="nearest-exact"),
    _resize_ref((5, 3), "nearest"), [_S2])
row("interpolate nearest_exact3d", _interp(size=(3, 2, 4), mode="nearest-exact"),
    _resize_ref((3, 2, 4), "nearest"), [_S3])
row("interpolate linear1d", _interp(size=8, mode="linear"), _linear_ref((8,), False), [_S1])
row("interpolate linear1d_corners", _interp(size=3, mode="linear", align_corners=True),
    _linear_ref((3,), True), [_S1])
row("interpolate bilinear", _interp(scale_factor=2, mode="bilinear"),
    _resize_ref((6, 8), "linear"), [_S2], "fd")
row("interpolate bilinear_corners", _interp(size=(5, 7), mode="bilinear",
                                            align_corners=True),
    _linear_ref((5, 7), True), [_S2])
row("interpolate bilinear_down", _interp(size=(2, 3), mode="bilinear"),
    _linear_ref((2, 3), False), [_S2])
row("interpolate trilinear", _interp(size=(3, 5, 3), mode="trilinear"),
    _linear_ref((3, 5, 3), False), [_S3])
row("interpolate bicubic", _interp(scale_factor=1.5, mode="bicubic"), None, [_S2])
row("interpolate bicubic_corners", _interp(size=(2, 5), mode="bicubic", align_corners=True),
    None, [_S2])
row("interpolate bilinear_aa", _interp(size=(2, 3), mode="bilinear", antialias=True),
    _resize_ref((2, 3), "linear", True), [_S2])
row("interpolate bicubic_aa", _interp(size=(2, 3), mode="bicubic", antialias=True),
    _resize_ref((2, 3), "cubic", True), [_S2])


def _adaptive_ref(out, reduce=jnp.max):
    """Adaptive pooling with PyTorch's bins ``[floor(i n / o), ceil((i + 1) n / o))``."""
    def ref(x):
        h, w = x.shape[-2:]
        oh, ow = out
        rows = []
        for i in range(oh):
            a, b = (i * h) // oh, -((-(i + 1) * h) // oh)
            rows.append(jnp.stack([reduce(x[..., a:b, (j * w) // ow:-((-(j + 1) * w) // ow)],
                                          (-2, -1))
                                   for j in range(ow)], -1))
        return jnp.stack(rows, -2)
    return ref


row("adaptive_max_pool2d", lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (2, 3)),
    _adaptive_ref((2, 3)), [F(1, 2, 5, 4)])
row("interpolate area", _interp(size=(2, 2), mode="area"), _adaptive_ref((2, 2), jnp.mean),
    [_S2])
row("adaptive_max_pool2d indices", lambda L, x: L.nn.functional.adaptive_max_pool2d(
    x, (3, None), return_indices=True), None, [F(2, 5, 4)])
row("adaptive_max_pool3d", lambda L, x: L.nn.functional.adaptive_max_pool3d(
    x, (2, 1, 3), return_indices=True), None, [F(1, 2, 4, 3, 5)])
row("adaptive_max_pool1d", lambda L, x: L.nn.functional.adaptive_max_pool1d(x, 3),
    lambda x: _adaptive_ref((1, 3))(x[..., None, :])[..., 0, :], [_S1], "shallow")

# ---------------------------------------------------------------- nn layers: norms, bags


def _inorm_ref(x, w, b):
    m = x.mean((2, 3), keepdims=True)
    v = ((x - m) ** 2).mean((2, 3), keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * w[:, None, None] + b[:, None, None]


row("instance_norm", lambda L, x, w, b: L.nn.functional.instance_norm(x, weight=w, bias=b),
    _inorm_ref, [F(2, 3, 2, 4), F(3), F(3)], "shallow")
row("instance_norm eval", lambda L, x: L.nn.functional.instance_norm(
    x, L.tensor([0.5, -1.0, 0.0]), L.tensor([2.0, 1.0, 0.5]), use_input_stats=False),
    lambda x: (x - jnp.array([0.5, -1.0, 0.0])[:, None, None]) /
    jnp.sqrt(jnp.array([2.0, 1.0, 0.5])[:, None, None] + 1e-5), [F(2, 3, 2, 4)], "shallow")

_BAG_IDX, _BAG_OFF = [1, 2, 4, 5, 4, 3, 2, 9, 0], [0, 4, 4, 7]


def _bag_ref(mode, psw=False):
    """Bags from the constant offsets (empty bags give 0)."""
    bounds = _BAG_OFF + [len(_BAG_IDX)]

    def ref(w, idx, off, *p):
        rows = jnp.take(w, jnp.asarray(_BAG_IDX), axis=0)
        if psw:
            rows = rows * p[0][:, None]
        out = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            if a == b:
                out.append(jnp.zeros(w.shape[1], w.dtype))
            else:
                out.append({"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max}[mode](
                    rows[a:b], 0))
        return jnp.stack(out)
    return ref


for _mode in ("sum", "mean", "max"):
    row(f"embedding_bag {_mode}", lambda L, w, i, o, m=_mode: L.nn.functional.embedding_bag(
        i, w, o, mode=m), _bag_ref(_mode), [F(10, 3), I(_BAG_IDX), I(_BAG_OFF)], "shallow")
row("embedding_bag per_sample_weights", lambda L, w, i, o, p: L.nn.functional.embedding_bag(
    i, w, o, mode="sum", per_sample_weights=p), _bag_ref("sum", True),
    [F(10, 3), I(_BAG_IDX), I(_BAG_OFF), F(9)])
row("embedding_bag 2d", lambda L, w, i: L.nn.functional.embedding_bag(i, w),
    lambda w, i: jnp.take(w, i, axis=0).mean(1), [F(10, 3), I([[1, 2, 4], [4, 3, 9]])],
    "shallow")

# ---------------------------------------------------------------- _foreach_* (one node per list)
row("_foreach_exp", lambda L, a, b: L._foreach_exp([a, b]), lambda a, b: (jnp.exp(a), jnp.exp(b)),
    [X, W])
row("_foreach_neg", lambda L, a, b: L._foreach_neg([a, b]), lambda a, b: (-a, -b), [X, W])
row("_foreach_add.Scalar", lambda L, a, b: L._foreach_add([a, b], 2.0),
    lambda a, b: (a + 2.0, b + 2.0), [X, W])
row("_foreach_mul.List", lambda L, a, b, c, d: L._foreach_mul([a, b], [c, d]),
    lambda a, b, c, d: (a * c, b * d), [X, W, Y, F(4)])
row("_foreach_add.List alpha", lambda L, a, b, c, d: L._foreach_add([a, b], [c, d], alpha=2.0),
    lambda a, b, c, d: (a + 2.0 * c, b + 2.0 * d), [X, W, Y, F(4)], "slow")
row("_foreach_div.ScalarList", lambda L, a, b: L._foreach_div([a, b], [2.0, 4.0]),
    lambda a, b: (a / 2.0, b / 4.0), [X, W], "slow")
row("_foreach_addcmul.Scalar", lambda L, a, b, c, d, e, f: L._foreach_addcmul(
    [a, b], [c, d], [e, f], 0.5), lambda a, b, c, d, e, f: (a + 0.5 * c * e, b + 0.5 * d * f),
    [X, W, Y, F(4), F(3, 4), F(4)])
row("_foreach_addcdiv.ScalarList", lambda L, a, b, c, d, e, f: L._foreach_addcdiv(
    [a, b], [c, d], [e, f], [2.0, -1.0]),
    lambda a, b, c, d, e, f: (a + 2.0 * c / e, b - d / f), [X, W, Y, F(4), P(3, 4), P(4)])
row("_foreach_lerp.List", lambda L, a, b, c, d, e, f: L._foreach_lerp([a, b], [c, d], [e, f]),
    lambda a, b, c, d, e, f: (a + e * (c - a), b + f * (d - b)),
    [X, W, Y, F(4), U(3, 4), U(4)])

# ---------------------------------------------------------------- torch.linalg (linalg_*.py)
# Inputs are generic (normal) matrices; a symmetric positive-definite one is made in the
# call (``_spd``). Eigenvectors and singular vectors are unique up to sign (JAX's and
# LAPACK's choices differ), so rows show them through sign-free products.
M3, R43 = F(3, 3), F(4, 3)
_INF = float("inf")


def _spd(L, a):
    return a @ a.mT + 3 * L.eye(a.shape[-1])


def _spd_ref(a):
    return a @ jnp.swapaxes(a, -1, -2) + 3 * jnp.eye(a.shape[-1])


def _info(x):
    return jnp.zeros(x.shape[:-2], jnp.int32)


def _tri_ref(a, lower=True):
    """``a`` read through one triangle (as LAPACK reads it), with PyTorch's symmetric
    gradient: that of ``(a + a.T) / 2``."""
    tri = jnp.tril(a) + jnp.tril(a, -1).T if lower else jnp.triu(a) + jnp.triu(a, 1).T
    sym = (a + a.T) / 2
    return sym + jax.lax.stop_gradient(tri - sym)


def _usv(res):
    u, s, vh = res
    k = s.shape[-1]
    return s, u[..., :k] @ vh[..., :k, :]


row("linalg.det", lambda L, a: L.linalg.det(a), jnp.linalg.det, [M3], "fd gg")
row("det", lambda L, a: L.det(a), jnp.linalg.det, [F(2, 3, 3)])
row("det.method", lambda L, a: a.det(), jnp.linalg.det, [M3])
row("linalg.slogdet", lambda L, a: L.linalg.slogdet(a), lambda a: tuple(jnp.linalg.slogdet(a)),
    [M3], "gg")
row("slogdet.method", lambda L, a: a.slogdet(), lambda a: tuple(jnp.linalg.slogdet(a)), [M3])
row("logdet", lambda L, a: L.logdet(_spd(L, a)), lambda a: jnp.linalg.slogdet(_spd_ref(a))[1],
    [M3])
row("linalg.inv", lambda L, a: L.linalg.inv(a), jnp.linalg.inv, [M3], "fd gg")
row("inverse.method", lambda L, a: a.inverse(), jnp.linalg.inv, [F(2, 3, 3)])
row("linalg.inv_ex", lambda L, a: L.linalg.inv_ex(a), lambda a: (jnp.linalg.inv(a), _info(a)),
    [M3])
row("linalg.solve", lambda L, a, b: L.linalg.solve(a, b), jnp.linalg.solve, [M3, F(3, 2)],
    "fd gg")
row("linalg.solve vector", lambda L, a, b: L.linalg.solve(a, b),
    lambda a, b: jnp.linalg.solve(a, b[:, None])[:, 0], [M3, F(3)])
row("linalg.solve right", lambda L, a, b: L.linalg.solve(a, b, left=False),
    lambda a, b: jnp.linalg.solve(a.T, b.T).T, [M3, F(2, 3)])
row("linalg.solve broadcast", lambda L, a, b: L.linalg.solve(a, b),
    lambda a, b: jnp.linalg.solve(a, jnp.broadcast_to(b, (2, 3, 2))), [F(2, 3, 3), F(3, 2)])
row("linalg.solve_ex", lambda L, a, b: L.linalg.solve_ex(a, b),
    lambda a, b: (jnp.linalg.solve(a, b), _info(a)), [M3, F(3, 2)])
row("linalg.solve_triangular", lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
    lambda a, b: jax.scipy.linalg.solve_triangular(a, b, lower=False), [M3, F(3, 2)], "fd")
row("linalg.solve_triangular lower right unit", lambda L, a, b: L.linalg.solve_triangular(
    a, b, upper=False, left=False, unitriangular=True),
    lambda a, b: jax.scipy.linalg.solve_triangular(a, b.T, trans=1, lower=True,
                                                   unit_diagonal=True).T, [M3, F(2, 3)])
row("linalg.lu_factor", lambda L, a: L.linalg.lu_factor(a),
    lambda a: (lambda r: (r[0], r[1] + 1))(jax.scipy.linalg.lu_factor(a)), [M3], "fd")
row("linalg.lu_factor_ex", lambda L, a: L.linalg.lu_factor_ex(a),
    lambda a: (lambda r: (r[0], r[1] + 1, _info(a)))(jax.scipy.linalg.lu_factor(a)), [R43])
row("linalg.lu", lambda L, a: L.linalg.lu(a), lambda a: tuple(jax.scipy.linalg.lu(a)),
    [F(3, 4)])
row("linalg.lu_solve", lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b),
    jnp.linalg.solve, [M3, F(3, 2)])
row("linalg.lu_solve right adjoint", lambda L, a, b: L.linalg.lu_solve(
    *L.linalg.lu_factor(a), b, left=False, adjoint=True),
    lambda a, b: jnp.linalg.solve(a, b.T).T, [M3, F(2, 3)])
row("svd", lambda L, a: (lambda r: (r[1], r[0] @ r[2].mT))(L.svd(a)),
    lambda a: _usv(jnp.linalg.svd(a, full_matrices=False)), [R43])
row("svd.method no_uv", lambda L, a: a.svd(compute_uv=False),
    lambda a: (jnp.zeros((4, 4)), jnp.linalg.svd(a, compute_uv=False), jnp.zeros((3, 3))),
    [R43])
row("cholesky_solve", lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(_spd(L, a))),
    lambda a, b: jnp.linalg.solve(_spd_ref(a), b), [M3, F(3, 2)])
row("cholesky_solve.method upper", lambda L, a, b: b.cholesky_solve(
    L.linalg.cholesky(_spd(L, a), upper=True), upper=True),
    lambda a, b: jnp.linalg.solve(_spd_ref(a), b), [M3, F(3, 2)])
row("cholesky_inverse", lambda L, a: L.cholesky_inverse(L.linalg.cholesky(_spd(L, a))),
    lambda a: jnp.linalg.inv(_spd_ref(a)), [M3])
row("linalg.matrix_exp", lambda L, a: L.linalg.matrix_exp(a), jax.scipy.linalg.expm, [M3], "fd")
row("matrix_exp.method", lambda L, a: a.matrix_exp(), jax.scipy.linalg.expm, [F(2, 3, 3)])
row("linalg.diagonal", lambda L, a: L.linalg.diagonal(a, offset=1),
    lambda a: jnp.diagonal(a, 1, -2, -1), [F(2, 3, 4)])
row("cholesky", lambda L, a: L.cholesky(_spd(L, a)),
    lambda a: jnp.linalg.cholesky(_spd_ref(a)), [M3])
row("cholesky.method upper", lambda L, a: _spd(L, a).cholesky(upper=True),
    lambda a: jnp.linalg.cholesky(_spd_ref(a)).mT, [M3])
row("qr", lambda L, a: L.qr(a), lambda a: tuple(jnp.linalg.qr(a)), [R43])
row("qr.method complete", lambda L, a: a.qr(some=False),
    lambda a: tuple(jnp.linalg.qr(a, mode="complete")), [F(3, 4)])
row("linalg.cholesky", lambda L, a: L.linalg.cholesky(_spd(L, a)),
    lambda a: jnp.linalg.cholesky(_spd_ref(a)), [M3], "fd")
row("linalg.cholesky upper", lambda L, a: L.linalg.cholesky(_spd(L, a), upper=True),
    lambda a: jnp.linalg.cholesky(_spd_ref(a)).mT, [F(2, 3, 3)])
row("linalg.cholesky_ex", lambda L, a: L.linalg.cholesky_ex(_spd(L, a)),
    lambda a: (jnp.linalg.cholesky(_spd_ref(a)), _info(a)), [M3])
row("linalg.qr", lambda L, a: L.linalg.qr(a), lambda a: tuple(jnp.linalg.qr(a)), [R43], "fd")
row("linalg.qr wide", lambda L, a: L.linalg.qr(a), lambda a: tuple(jnp.linalg.qr(a)), [F(3, 4)])
row("linalg.qr complete", lambda L, a: L.linalg.qr(a, mode="complete"),
    lambda a: tuple(jnp.linalg.qr(a, mode="complete")), [F(3, 4)])
row("linalg.svd", lambda L, a: _usv(L.linalg.svd(a, full_matrices=False)),
    lambda a: _usv(jnp.linalg.svd(a, full_matrices=False)), [R43], "fd")
row("linalg.svd full", lambda L, a: _usv(L.linalg.svd(a)),
    lambda a: _usv(jnp.linalg.svd(a, full_matrices=False)), [F(3, 4)])
row("linalg.svdvals", lambda L, a: L.linalg.svdvals(a),
    lambda a: jnp.linalg.svd(a, compute_uv=False), [R43], "gg")
row("linalg.eigh", lambda L, a: (lambda r: (r[0], r[1] * r[1]))(L.linalg.eigh(a + a.mT)),
    lambda a: (lambda r: (r[0], r[1] * r[1]))(jnp.linalg.eigh(a + a.T)), [M3], "fd")
row("linalg.eigh upper", lambda L, a: (lambda r: (r[0], r[1] * r[1]))(L.linalg.eigh(a, "U")),
    lambda a: (lambda r: (r[0], r[1] * r[1]))(jnp.linalg.eigh(_tri_ref(a, False))), [M3])
row("linalg.eigvalsh", lambda L, a: L.linalg.eigvalsh(a),
    lambda a: jnp.linalg.eigvalsh(_tri_ref(a)), [M3], "gg")
# the eigenvalues' squared parts summed: free of LAPACK's order of a conjugate pair
row("linalg.eigvals", lambda L, a: L.view_as_real(L.linalg.eigvals(a)).pow(2).sum(0),
    lambda a: (lambda e: jnp.stack([e.real, e.imag], -1) ** 2)(jnp.linalg.eigvals(a)).sum(0),
    [M3])
# per eigenvector row: the squared moduli summed over the eigenvectors, free of each one's
# phase (LAPACK builds differ in it) and of the order of a conjugate pair
row("linalg.eig", lambda L, a: (lambda r: (L.view_as_real(r[0]).pow(2).sum(0),
                                           L.view_as_real(r[1]).pow(2).sum((-1, -2))))(
    L.linalg.eig(a)),
    lambda a: (lambda r: ((jnp.stack([r[0].real, r[0].imag], -1) ** 2).sum(0),
                          (jnp.abs(r[1]) ** 2).sum(-1)))(jax.lax.linalg.eig(
        a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)), [M3])
row("linalg.lstsq", lambda L, a, b: L.linalg.lstsq(a, b),
    lambda a, b: (jnp.linalg.pinv(a) @ b, jnp.zeros(0), jnp.asarray(3),
                  jnp.zeros(0)), [R43, F(4, 2)])
row("linalg.lstsq gelsd", lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd"),
    lambda a, b: (jnp.linalg.pinv(a) @ b, jnp.sum((a @ jnp.linalg.pinv(a) @ b - b) ** 2, 0),
                  jnp.asarray(3), jax.lax.stop_gradient(jnp.linalg.svd(a, compute_uv=False))),
    [R43, F(4, 2)])
row("linalg.pinv", lambda L, a: L.linalg.pinv(a), jnp.linalg.pinv, [R43], "fd")
row("linalg.pinv hermitian", lambda L, a: L.linalg.pinv(a + a.mT, hermitian=True),
    lambda a: jnp.linalg.pinv(a + a.T), [M3])
row("pinverse", lambda L, a: L.pinverse(a), jnp.linalg.pinv, [F(3, 4)])
row("linalg.matrix_rank", lambda L, a: L.linalg.matrix_rank(a[:, :2] @ a[:2]),
    lambda a: jnp.asarray(2), [R43])
for _n in (0, 1, 2, 3, 6, -1, -3):
    row(f"linalg.matrix_power {_n}", lambda L, a, n=_n: L.linalg.matrix_power(a, n),
        lambda a, n=_n: jnp.linalg.matrix_power(a, n), [M3])
row("matrix_power.method", lambda L, a: a.matrix_power(4),
    lambda a: jnp.linalg.matrix_power(a, 4), [F(2, 3, 3)])
row("linalg.cross", lambda L, a, b: L.linalg.cross(a, b), jnp.cross, [F(4, 3), F(4, 3)], "gg")
row("linalg.cross broadcast", lambda L, a, b: L.linalg.cross(a, b, dim=0),
    lambda a, b: jnp.cross(a, b, axis=0), [F(3, 4), F(3, 1)])
row("cross.method", lambda L, a, b: a.cross(b, dim=1), jnp.cross, [F(4, 3), F(4, 3)])
row("linalg.vecdot", lambda L, a, b: L.linalg.vecdot(a, b), jnp.vdot, [W, F(4)])
row("linalg.vecdot batch", lambda L, a, b: L.linalg.vecdot(a, b, dim=0),
    lambda a, b: jnp.sum(a * b, 0), [X, Y])
row("vdot", lambda L, a, b: L.vdot(a, b), jnp.vdot, [W, F(4)])
row("linalg.multi_dot", lambda L, a, b, c: L.linalg.multi_dot([a, b, c]),
    lambda a, b, c: a @ b @ c, [R43, M3, F(3, 5)])
row("linalg.multi_dot vectors", lambda L, v, a, b, w: L.linalg.multi_dot([v, a, b, w]),
    lambda v, a, b, w: v @ a @ b @ w, [F(4), R43, F(3, 2), F(2)])
row("linalg.vector_norm", lambda L, x: L.linalg.vector_norm(x), lambda x: jnp.linalg.norm(
    x.ravel()), [X], "fd gg")
row("linalg.vector_norm inf", lambda L, x: L.linalg.vector_norm(x, _INF, dim=1, keepdim=True),
    lambda x: jnp.abs(x).max(1, keepdims=True), [X])
row("linalg.vector_norm ord3", lambda L, x: L.linalg.vector_norm(x, 3, dim=(0, 1)),
    lambda x: (jnp.abs(x) ** 3).sum() ** (1 / 3), [X])
row("linalg.norm", lambda L, x: L.linalg.norm(x), lambda x: jnp.linalg.norm(x), [X])
row("linalg.norm vector", lambda L, x: L.linalg.norm(x, 1), lambda x: jnp.abs(x).sum(), [W])
row("linalg.norm dim", lambda L, x: L.linalg.norm(x, dim=1), lambda x: jnp.linalg.norm(x, axis=1),
    [X])
row("linalg.norm nuc", lambda L, x: L.linalg.norm(x, "nuc"), lambda x: jnp.linalg.norm(x, "nuc"),
    [X])
for _ord, _name in (("fro", "fro"), ("nuc", "nuc"), (2, "2"), (-2, "-2"), (1, "1"), (-1, "-1"),
                    (_INF, "inf"), (-_INF, "-inf")):
    row(f"linalg.matrix_norm {_name}", lambda L, x, o=_ord: L.linalg.matrix_norm(x, o),
        lambda x, o=_ord: jnp.linalg.norm(x, o, axis=(-2, -1)), [R43])
    row(f"linalg.matrix_norm {_name} dims", lambda L, x, o=_ord: L.linalg.matrix_norm(
        x, o, dim=(2, 0), keepdim=True), lambda x, o=_ord: jnp.linalg.norm(
        x, o, axis=(2, 0), keepdims=True), [F(3, 2, 4)], "slow")

# ---------------------------------------------------------------- breadth by use (issue 30):
# pointwise_math.py, set_ops.py
for _n, _ref, _in, _fl in [
    ("deg2rad", jnp.deg2rad, X, ""), ("rad2deg", jnp.rad2deg, X, ""), ("sinc", jnp.sinc, X, ""),
    ("i0", jss.i0, X, ""), ("signbit", jnp.signbit, X, ""),
    ("absolute", jnp.abs, X, ""), ("fix", jnp.trunc, X, "slow"),
    ("arccos", jnp.arccos, U(3, 4), "slow"), ("arcsinh", jnp.arcsinh, X, "slow"),
    ("isneginf", jnp.isneginf, V([[1.0, -np.inf, np.inf, 0.0]]), ""),
    ("isposinf", jnp.isposinf, V([[1.0, -np.inf, np.inf, 0.0]]), "slow"),
    ("isreal", lambda x: jnp.ones(x.shape, bool), X, "slow"),
]:
    row(_n, lambda L, x, n=_n: getattr(L, n)(x), _ref, [_in], _fl)
# sgn's own gradient is PyTorch's ZeroTensor (not comparable alone): through a product
row("sgn", lambda L, x: L.sgn(x) * x, lambda x: jnp.sign(x) * x, [X])
row("sinc.method", lambda L, x: x.sinc(), jnp.sinc, [X], "slow")
row("logaddexp", lambda L, x, y: L.logaddexp(x, y), jnp.logaddexp, [X, Y])
row("logaddexp2", lambda L, x, y: x.logaddexp2(y), jnp.logaddexp2, [X, Y])
# non-negative exponents: PyTorch's gradient for an integer negative one is 0 (2 ** -2 in ints)
row("ldexp", lambda L, x, e: L.ldexp(x, e), lambda x, e: x * 2.0 ** e, [X, I([1, 2, 0, 3])])
row("copysign", lambda L, x, y: L.copysign(x, y), jnp.copysign, [X, Y])
row("copysign.scalar", lambda L, x: x.copysign(-1.0), lambda x: -jnp.abs(x), [X])
row("heaviside", lambda L, x, y: L.heaviside(x.detach(), y.detach()), jnp.heaviside, [X, Y])
row("logit", lambda L, x: L.logit(x.sigmoid()), lambda x: x, [X])
row("logit.eps", lambda L, x: x.sigmoid().logit(0.3),
    lambda x: jss.logit(jnp.clip(jax.nn.sigmoid(x), 0.3, 0.7)), [X])
row("nan_to_num", lambda L, x: L.nan_to_num(L.log(x), posinf=9.0),
    lambda x: jnp.nan_to_num(jnp.log(x), posinf=9.0), [X])
row("addcmul", lambda L, x, y, w: L.addcmul(x, y, w, value=0.5), lambda x, y, w: x + 0.5 * y * w,
    [X, Y, W])
row("addcmul.method", lambda L, x, y, z: x.addcmul(y, z), lambda x, y, z: x + y * z, [X, Y, Y],
    "slow")
row("addcdiv", lambda L, x, y, z: L.addcdiv(x, y, z, value=2), lambda x, y, z: x + 2 * y / z,
    [X, Y, P(3, 4)])
_IDS = I([3, 1, 2, 3, 1, 1])
row("unique", lambda L, i: L.unique(i), jnp.unique, [_IDS])
row("unique.inverse_counts", lambda L, i: i.unique(return_inverse=True, return_counts=True),
    lambda i: jnp.unique(i, return_inverse=True, return_counts=True), [_IDS])
row("unique.dim", lambda L, i: L.unique(i, dim=0, return_inverse=True),
    lambda i: jnp.unique(i, axis=0, return_inverse=True),
    [I([[1, 2], [0, 5], [1, 2]])])
row("unique_consecutive", lambda L, i: L.unique_consecutive(i, return_counts=True),
    lambda i: (jnp.array([3, 1, 2, 3, 1]), jnp.array([1, 1, 1, 1, 2])), [_IDS])
row("isin ids", lambda L, i, t: L.isin(i, t), jnp.isin, [_IDS, I([2, 3])])
row("isin.invert", lambda L, x, y: L.isin(x, y[0], invert=True),
    lambda x, y: ~jnp.isin(x, y[0]), [X, Y])
row("bincount", lambda L, i: L.bincount(i), jnp.bincount, [_IDS])
row("bincount.weights", lambda L, i, w: i.bincount(w.detach(), minlength=6),
    lambda i, w: jnp.bincount(i, w, length=6), [_IDS, F(6)])
row("histc", lambda L, x: L.histc(x, bins=5, min=-1, max=1),
    lambda x: jnp.histogram(x, 5, (-1, 1))[0].astype(jnp.float32), [X])
row("bucketize", lambda L, x, b: L.bucketize(x, b),
    lambda x, b: jnp.searchsorted(b, x), [X, V([-1.0, 0.0, 0.5])])
row("bucketize.right", lambda L, i, b: L.bucketize(i, b, right=True, out_int32=True),
    lambda i, b: jnp.searchsorted(b, i, side="right").astype(jnp.int32), [_IDS, I([1, 2, 3])])
row("searchsorted", lambda L, s, v: L.searchsorted(s, v),
    lambda s, v: jnp.stack([jnp.searchsorted(s[k], v[k]) for k in range(2)]),
    [V([[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0]]), F(2, 5)])
# stacking.py, statistics.py: the ops PyTorch records as one node
row("diag_embed", lambda L, x: L.diag_embed(x), lambda x: jax.vmap(jnp.diag)(x), [X])
row("diag_embed.offset_dims", lambda L, x: x.diag_embed(-1, 0, 2),
    lambda x: jnp.moveaxis(jax.vmap(lambda r: jnp.diag(r, -1))(x), 1, 0), [X], "slow")
row("diag", lambda L, w: L.diag(w, 1), lambda w: jnp.diag(w, 1), [W])
row("diagflat", lambda L, x: L.diagflat(x), lambda x: jnp.diag(x.reshape(-1)), [F(2, 2)],
    "shallow")
row("rot90", lambda L, x: L.rot90(x), jnp.rot90, [X])
row("rot90.k3", lambda L, x: x.rot90(3, (1, 0)), lambda x: jnp.rot90(x, 3, (1, 0)), [X], "slow")
row("nansum", lambda L, x: L.nansum(L.log(x), 1), lambda x: jnp.nansum(jnp.log(x), 1), [X])
row("nansum.all", lambda L, x: x.nansum(), jnp.nansum, [X])
row("aminmax", lambda L, x: L.aminmax(x, dim=1), lambda x: (x.min(1), x.max(1)), [X])
row("aminmax.all", lambda L, x: x.aminmax(), lambda x: (x.min(), x.max()), [X], "slow")
_TIES = V([[1.0, 3.0, 3.0, 2.0], [0.5, 0.5, 4.0, -1.0], [2.0, 1.0, 2.0, 5.0]])
_CMAX = jnp.array([[0, 1, 2, 2], [0, 1, 2, 2], [0, 0, 2, 3]])  # ties: the last index
_CMIN = jnp.array([[0, 0, 0, 0], [1, 1, 0, 1], [1, 1, 2, 1]])
row("cummax", lambda L, x: L.cummax(x, 1),
    lambda x: (jnp.take_along_axis(x, _CMAX, 1), _CMAX), [_TIES])
row("cummin", lambda L, x: x.cummin(0),
    lambda x: (jnp.take_along_axis(x, _CMIN, 0), _CMIN), [_TIES])
row("logcumsumexp", lambda L, x: L.logcumsumexp(x, 1),
    lambda x: jax.lax.cumlogsumexp(x, axis=1), [X])
row("dist", lambda L, x, y: L.dist(x, y), lambda x, y: jnp.linalg.norm((x - y).reshape(-1)),
    [X, Y])
row("dist.p3", lambda L, x, y: x.dist(y, 3),
    lambda x, y: (jnp.abs(x - y) ** 3).sum() ** (1 / 3), [X, W], "slow")
row("cdist", lambda L, a, b: L.cdist(a, b),
    lambda a, b: jnp.linalg.norm(a[:, None] - b[None], axis=-1), [X, F(2, 4)])
row("quantile", lambda L, x: L.quantile(x, 0.3, dim=1), lambda x: jnp.quantile(x, 0.3, 1), [X],
    "shallow")
row("nanquantile", lambda L, x: x.nanquantile(L.tensor([0.2, 0.9])),
    lambda x: jnp.nanquantile(x, jnp.array([0.2, 0.9])), [X], "shallow")
# products.py
row("baddbmm", lambda L, c, a, b: L.baddbmm(c, a, b, beta=0.5, alpha=2),
    lambda c, a, b: 0.5 * c + 2 * (a @ b), [F(2, 3, 5), Bt, F(2, 4, 5)])
row("addbmm", lambda L, c, a, b: c.addbmm(a, b), lambda c, a, b: c + (a @ b).sum(0),
    [F(3, 5), Bt, F(2, 4, 5)], "shallow")
row("addmv", lambda L, c, m, v: L.addmv(c, m, v, alpha=0.5), lambda c, m, v: c + 0.5 * (m @ v),
    [F(3), A, W])
row("addr", lambda L, c, u, v: c.addr(u, v, beta=2), lambda c, u, v: 2 * c + jnp.outer(u, v),
    [X, F(3), W])
row("tensordot", lambda L, a, b: L.tensordot(a, b, ([1, 0], [0, 1])),
    lambda a, b: jnp.tensordot(a, b, ([1, 0], [0, 1])), [X, F(4, 3, 2)])
row("inner", lambda L, a, b: L.inner(a, b), jnp.inner, [X, F(2, 4)])
row("kron", lambda L, a, b: L.kron(a, b), jnp.kron, [F(2, 3), F(3, 2)], "shallow")
# placement.py
row("masked_scatter", lambda L, x, m, s: x.masked_scatter(m, s),
    lambda x, m, s: jnp.where(m, s.reshape(-1)[jnp.clip(jnp.cumsum(m.reshape(-1)) - 1, 0)]
                              .reshape(m.shape), x), [X, _M, F(12)])
row("put", lambda L, x, i, s: x.put(i, s), lambda x, i, s: x.reshape(-1).at[
    jnp.array([1, 11, 6])].set(s).reshape(x.shape), [X, I([1, -1, 6]), F(3)])
row("put.accumulate", lambda L, x, i, s: L.Tensor.put(x, i, s, True), lambda x, i, s: x.reshape(
    -1).at[jnp.array([1, 1, 6])].add(s).reshape(x.shape), [X, I([1, 1, 6]), F(3)], "slow")
row("unfold", lambda L, x: x.unfold(1, 2, 1),
    lambda x: jnp.stack([x[:, k:k + 2] for k in range(3)], 1), [X])
# pointwise_math.py: more
_INTS = I([12, 18, 7, 5])
row("gcd", lambda L, a, b: L.gcd(a, b), jnp.gcd, [_INTS, I([8, 12, 21, 0])])
row("lcm", lambda L, a, b: a.lcm(b), jnp.lcm, [_INTS, I([8, 12, 21, 3])])
row("bitwise_left_shift", lambda L, a: L.bitwise_left_shift(a, 2), lambda a: a << 2, [_INTS])
row("bitwise_right_shift", lambda L, a, b: a.bitwise_right_shift(b), jnp.right_shift,
    [_INTS, I([1, 2, 0, 1])], "slow")
row("angle", lambda L, x: L.angle(x), lambda x: jnp.where(x < 0, jnp.pi, 0.0), [X])
row("polygamma", lambda L, x: L.polygamma(1, x), lambda x: jss.polygamma(1, x), [P(3, 4)])
row("polygamma.method", lambda L, x: x.polygamma(2), lambda x: jss.polygamma(2, x), [P(3, 4)],
    "slow")
row("mvlgamma", lambda L, x: x.mvlgamma(2), lambda x: jss.multigammaln(x, 2), [G1(3, 4)])
# back to float32: a float32 cotangent for a float64 output is refused by hookgrad's engine
# (PyTorch casts it), which is not this op's concern
row("float_power", lambda L, x, y: L.float_power(x, y).float(),
    lambda x, y: jnp.power(x.astype(jnp.float64), y.astype(jnp.float64)).astype(jnp.float32),
    [P(3, 4), Y])
row("renorm", lambda L, x: L.renorm(x, 2, 0, 1.5), lambda x: x * jnp.where(
    jnp.linalg.norm(x, axis=1, keepdims=True) > 1.5,
    1.5 / (jnp.linalg.norm(x, axis=1, keepdims=True) + 1e-7), 1.0), [X])
row("constant_pad_nd", lambda L, x: L.constant_pad_nd(x, (1, 2, 0, 1), 0.5),
    lambda x: jnp.pad(x, ((0, 1), (1, 2)), constant_values=0.5), [X])
row("frexp", lambda L, x: L.frexp(x), lambda x: (jnp.frexp(x)[0], jnp.frexp(x)[1]), [X])

# ---------------------------------------------------------------- branch breadth-torch2
# view_copies.py: the *_copy functions, a view op's result as a fresh tensor
row("view_copy", lambda L, x: L.view_copy(x, (4, 3)), lambda x: x.reshape(4, 3), [X])
row("permute_copy", lambda L, x: L.permute_copy(x, (1, 0)), lambda x: x.T, [X])
row("transpose_copy", lambda L, x: L.transpose_copy(x, 0, -1), lambda x: x.T, [X])
row("t_copy", lambda L, x: L.t_copy(x), lambda x: x.T, [X])
row("squeeze_copy", lambda L, x: L.squeeze_copy(x), lambda x: x.reshape(3, 4), [F(3, 1, 4)])
row("squeeze_copy.dim", lambda L, x: L.squeeze_copy(x, 1), lambda x: x.reshape(3, 4),
    [F(3, 1, 4)])
row("squeeze_copy.dims", lambda L, x: L.squeeze_copy(x, (1, 2)), lambda x: x.reshape(3, 4),
    [F(3, 1, 4)])
row("unsqueeze_copy", lambda L, x: L.unsqueeze_copy(x, -1), lambda x: x[..., None], [X])
row("diagonal_copy", lambda L, x: L.diagonal_copy(x, 1), lambda x: jnp.diagonal(x, 1), [X])
row("select_copy", lambda L, x: L.select_copy(x, 1, -1), lambda x: x[:, -1], [X])
row("slice_copy", lambda L, x: L.slice_copy(x, 1, 1, None, 2), lambda x: x[:, 1::2], [X])
row("narrow_copy", lambda L, x: L.narrow_copy(x, 1, 1, 2), lambda x: x[:, 1:3], [X])
row("narrow_copy.method", lambda L, x: x.narrow_copy(0, 1, 2), lambda x: x[1:], [X])
row("alias_copy", lambda L, x: L.alias_copy(x), lambda x: x, [X])
# in-place forms of ops that have rows above
row("cumprod_", lambda L, x: x.clone().cumprod_(1), lambda x: jnp.cumprod(x, 1), [X])
row("addmm_", lambda L, c, a, b: c.clone().addmm_(a, b, beta=0.5, alpha=2),
    lambda c, a, b: 0.5 * c + 2 * a @ b, [F(3, 3), X, F(4, 3)])
# view_scatters.py: a copy of input with src written where the view looks
row("select_scatter", lambda L, x, s: L.select_scatter(x, s, 0, -1),
    lambda x, s: x.at[-1].set(s), [X, W])
row("slice_scatter", lambda L, x, s: x.slice_scatter(s, 1, 1, None, 2),
    lambda x, s: x.at[:, 1::2].set(s), [X, F(3, 2)])
row("diagonal_scatter", lambda L, x, s: L.diagonal_scatter(x, s, 1),
    lambda x, s: x.at[jnp.arange(3), jnp.arange(3) + 1].set(s), [X, F(3)])
row("diagonal_scatter.dims", lambda L, x, s: x.diagonal_scatter(s, 0, -2, -1),
    lambda x, s: x.at[:, jnp.arange(3), jnp.arange(3)].set(s), [F(2, 3, 3), F(2, 3)])
# --- branch tmisc ---
row("fill", lambda L, x: L.fill(x, 2.5), lambda x: jnp.full_like(x, 2.5), [X])
row("fill.tensor", lambda L, x, v: L.fill(x, v), lambda x, v: jnp.full_like(x, v), [X, F()])
# inplace_views.py: the in-place view ops (on a copy: a leaf cannot change in place)
row("unsqueeze_", lambda L, x: x.clone().unsqueeze_(1), lambda x: x[:, None], [X])
row("squeeze_", lambda L, x: x.clone().squeeze_(), lambda x: x.reshape(3, 4), [F(3, 1, 4)])
row("squeeze_.dim", lambda L, x: x.clone().squeeze_(-2), lambda x: x.reshape(3, 4),
    [F(3, 1, 4)])
row("squeeze_.dims", lambda L, x: x.clone().squeeze_((0, 1)), lambda x: x.reshape(3, 4),
    [F(3, 1, 4)])
row("transpose_", lambda L, x: x.clone().transpose_(0, 1), lambda x: x.T, [X])
row("swapaxes_", lambda L, x: x.clone().swapaxes_(1, 0), lambda x: x.T, [X])
row("swapdims_", lambda L, x: x.clone().swapdims_(-1, 0), lambda x: x.T, [X])
row("t_", lambda L, x: x.clone().t_(), lambda x: x.T, [X])
row("as_strided_", lambda L, x: x.clone().as_strided_((2, 2), (1, 4), 1),
    lambda x: x.reshape(-1)[np.array([[1, 5], [2, 6]])], [X])
row("resize_as", lambda L, x, t: x.resize_as(t), lambda x, t: x.reshape(4, 3), [X, F(4, 3)])
# view_copies.py: the copies of expand, split, unbind, unfold, as_strided
row("expand_copy", lambda L, w: L.expand_copy(w, (3, 4)), lambda w: jnp.broadcast_to(w, (3, 4)),
    [W])
row("split_copy", lambda L, x: L.split_copy(x, 2), lambda x: (x[:2], x[2:]), [X])
row("split_with_sizes_copy", lambda L, x: L.split_with_sizes_copy(x, [1, 3], 1),
    lambda x: (x[:, :1], x[:, 1:]), [X])
row("unbind_copy", lambda L, x: L.unbind_copy(x, 1), lambda x: tuple(x.T), [X])
row("unfold_copy", lambda L, x: L.unfold_copy(x, 1, 2, 1),
    lambda x: jnp.stack([x[:, i:i + 2] for i in range(3)], 1), [X])
row("as_strided_copy", lambda L, x: L.as_strided_copy(x, (2, 2), (1, 4), 1),
    lambda x: x.reshape(-1)[np.array([[1, 5], [2, 6]])], [X])
# (as_strided_scatter: tests/test_view_copies_more.py; PyTorch's input gradient is wrong)


# --- branch backends ---
def _fake_quantize_ref(x, scale, zero_point, quant_min, quant_max, axis=None):
    # PyTorch's straight-through gradient: 1 where round(x / scale) + zero_point is in range
    scale, zero_point = jnp.asarray(scale, jnp.float32), jnp.asarray(zero_point, jnp.float32)
    if axis is not None:
        scale, zero_point = scale[None, :], zero_point[None, :]
    q = jnp.round(x * (1.0 / scale)) + zero_point
    grid = (jnp.clip(q, quant_min, quant_max) - zero_point) * scale
    keep = (q >= quant_min) & (q <= quant_max)
    return jax.lax.stop_gradient(grid) + (x - jax.lax.stop_gradient(x)) * keep


row("fake_quantize_per_tensor_affine",
    lambda L, x: L.fake_quantize_per_tensor_affine(x, 0.25, 1, -8, 8),
    lambda x: _fake_quantize_ref(x, 0.25, 1, -8, 8), [X])
row("fake_quantize_per_tensor_affine.tensor_qparams",
    lambda L, x: L.fake_quantize_per_tensor_affine(
        x, L.tensor(0.25), L.tensor(1, dtype=L.int32), -8, 8),
    lambda x: _fake_quantize_ref(x, 0.25, 1, -8, 8), [X])
row("fake_quantize_per_channel_affine",
    lambda L, x: L.fake_quantize_per_channel_affine(
        x, L.tensor([0.2, 0.3, 0.4, 0.5]), L.tensor([0, 1, -1, 2], dtype=L.int32), 1, -8, 8),
    lambda x: _fake_quantize_ref(x, [0.2, 0.3, 0.4, 0.5], [0, 1, -1, 2], -8, 8, axis=1), [X])

# --- branch complex ---
# complex_numbers.py, spectral.py, stft.py: complex results are compared through
# view_as_real (or a real part of them), so every row is real in, real out: the gradients
# are then the same in PyTorch's convention and JAX's (test_complex.py checks complex
# leaves' .grad, which differ by a conjugate)
Z2 = F(3, 4, 2)  # a complex (3, 4) tensor as pairs of reals


def _vr(z):
    return jnp.stack([z.real, z.imag], -1)


def _cz(x):
    return jax.lax.complex(x[..., 0], x[..., 1])


def _set_part(L, x, y, v, part):
    z = L.complex(x, y) * 1  # not a leaf: its part may be written
    setattr(z, part, v)
    return L.view_as_real(z)


row("complex", lambda L, x, y: L.view_as_real(L.complex(x, y)),
    lambda x, y: jnp.stack([x, y], -1), [X, Y])
row("polar", lambda L, r, t: L.view_as_real(L.polar(r, t)),
    lambda r, t: jnp.stack([r * jnp.cos(t), r * jnp.sin(t)], -1), [P(3, 4), X])
row("view_as_complex", lambda L, x: L.view_as_complex(x).abs(), lambda x: jnp.abs(_cz(x)),
    [Z2])
row("view_as_real_copy", lambda L, x: L.view_as_real_copy(L.view_as_complex(x) * 2),
    lambda x: 2 * x, [Z2])
row("view_as_complex_copy", lambda L, x: L.view_as_complex_copy(x.detach()).abs(),
    lambda x: jnp.abs(_cz(x)), [Z2])
# (the node above conj saves nothing: PyTorch's saved value would carry the conjugate bit)
row("conj", lambda L, x: L.view_as_real(L.view_as_complex(x).conj() + 1j),
    lambda x: _vr(jnp.conj(_cz(x)) + 1j), [Z2])
row("conj_physical", lambda L, x: L.conj_physical(L.view_as_complex(x)).angle(),
    lambda x: jnp.angle(jnp.conj(_cz(x))), [Z2])
row("conj_physical_", lambda L, x: L.view_as_real((L.view_as_complex(x) * 2).conj_physical_()),
    lambda x: _vr(jnp.conj(2 * _cz(x))), [Z2])
row("real", lambda L, x: (L.view_as_complex(x) ** 2).real, lambda x: (_cz(x) ** 2).real,
    [Z2])
row("imag", lambda L, x: L.imag(L.view_as_complex(x) ** 2), lambda x: (_cz(x) ** 2).imag,
    [Z2])
row("real.set", lambda L, x, y, v: _set_part(L, x, y, v, "real"),
    lambda x, y, v: jnp.stack([jnp.broadcast_to(v, x.shape), y], -1), [X, Y, W])
row("imag.set", lambda L, x, y, v: _set_part(L, x, y, v, "imag"),
    lambda x, y, v: jnp.stack([x, jnp.broadcast_to(v, x.shape)], -1), [X, Y, W])
row("abs.complex", lambda L, x: L.view_as_complex(x).abs(), lambda x: jnp.abs(_cz(x)), [Z2])
row("angle.complex", lambda L, x: L.view_as_complex(x).angle(), lambda x: jnp.angle(_cz(x)),
    [Z2])
row("sgn.complex", lambda L, x: L.view_as_real(L.view_as_complex(x).sgn()),
    lambda x: _vr(_cz(x) / jnp.abs(_cz(x))), [Z2])
row("fft.fft", lambda L, x: L.view_as_real(L.fft.fft(L.view_as_complex(x))),
    lambda x: _vr(jnp.fft.fft(_cz(x))), [Z2])
row("fft.fft.real_n", lambda L, x: L.view_as_real(L.fft.fft(x, n=6, norm="ortho")),
    lambda x: _vr(jnp.fft.fft(x, n=6, norm="ortho")), [X])
row("fft.ifft", lambda L, x: L.view_as_real(L.fft.ifft(L.view_as_complex(x), n=3, dim=0)),
    lambda x: _vr(jnp.fft.ifft(_cz(x), n=3, axis=0)), [Z2])
row("fft.fft2", lambda L, x: L.view_as_real(L.fft.fft2(L.view_as_complex(x), norm="forward")),
    lambda x: _vr(jnp.fft.fft2(_cz(x), norm="forward")), [Z2])
row("fft.ifft2", lambda L, x: L.view_as_real(L.fft.ifft2(L.view_as_complex(x), s=(4, 4))),
    lambda x: _vr(jnp.fft.ifft2(_cz(x), s=(4, 4))), [Z2])
row("fft.fftn", lambda L, x: L.view_as_real(L.fft.fftn(L.view_as_complex(x), dim=(1,))),
    lambda x: _vr(jnp.fft.fftn(_cz(x), axes=(1,))), [Z2])
row("fft.ifftn", lambda L, x: L.view_as_real(L.fft.ifftn(L.view_as_complex(x))),
    lambda x: _vr(jnp.fft.ifftn(_cz(x))), [Z2])
row("fft.rfft", lambda L, x: L.view_as_real(L.fft.rfft(x)), lambda x: _vr(jnp.fft.rfft(x)),
    [X])
row("fft.irfft", lambda L, x: L.fft.irfft(L.view_as_complex(x), n=5),
    lambda x: jnp.fft.irfft(_cz(x), n=5), [Z2])
row("fft.rfft2", lambda L, x: L.view_as_real(L.fft.rfft2(x, norm="ortho")),
    lambda x: _vr(jnp.fft.rfft2(x, norm="ortho")), [X])
row("fft.irfft2", lambda L, x: L.fft.irfft2(L.view_as_complex(x)),
    lambda x: jnp.fft.irfft2(_cz(x)), [Z2])
row("fft.rfftn", lambda L, x: L.view_as_real(L.fft.rfftn(x, s=(2, 6))),
    lambda x: _vr(jnp.fft.rfftn(x, s=(2, 6))), [X])
row("fft.irfftn", lambda L, x: L.fft.irfftn(L.view_as_complex(x), dim=(0, 1)),
    lambda x: jnp.fft.irfftn(_cz(x)), [Z2])
row("fft.hfft", lambda L, x: L.fft.hfft(L.view_as_complex(x)),
    lambda x: jnp.fft.hfft(_cz(x)), [Z2])
# PyTorch's ihfft is a lazy conjugate, which view_as_real refuses: a product resolves it
row("fft.ihfft", lambda L, x: L.view_as_real(L.fft.ihfft(x, norm="forward") * 1j),
    lambda x: _vr(jnp.fft.ihfft(x, norm="forward") * 1j), [X])
row("fft.hfft2", lambda L, x: L.fft.hfft2(L.view_as_complex(x), norm="ortho"),
    lambda x: jnp.fft.irfft2(jnp.conj(_cz(x)), norm="ortho") * 1, [Z2])
row("fft.ihfft2", lambda L, x: L.view_as_real(L.fft.ihfft2(x)),
    lambda x: _vr(jnp.conj(jnp.fft.rfft2(x, norm="forward"))), [X])
row("fft.hfftn", lambda L, x: L.fft.hfftn(L.view_as_complex(x)),
    lambda x: jnp.fft.irfftn(jnp.conj(_cz(x)), norm="forward"), [Z2])
row("fft.ihfftn", lambda L, x: L.view_as_real(L.fft.ihfftn(x) * 1j),
    lambda x: _vr(jnp.conj(jnp.fft.rfftn(x, norm="forward")) * 1j), [X])
row("fft.fftshift", lambda L, x: L.fft.fftshift(x), lambda x: jnp.fft.fftshift(x), [X])
row("fft.ifftshift", lambda L, x: L.fft.ifftshift(x, dim=1),
    lambda x: jnp.fft.ifftshift(x, axes=1), [X])
row("fft.fftfreq", lambda L: L.fft.fftfreq(5, d=0.5), lambda: jnp.fft.fftfreq(5, d=0.5), [])
row("fft.rfftfreq", lambda L: L.fft.rfftfreq(6), lambda: jnp.fft.rfftfreq(6), [])
row("stft", lambda L, x: L.view_as_real(L.stft(x, 4, hop_length=2, window=L.hann_window(4),
                                                return_complex=True)), None, [F(2, 12)])
row("istft", lambda L, x: L.istft(L.view_as_complex(x), 4, hop_length=1, center=False,
                                  window=L.ones(4)), None, [F(3, 5, 2)])


# --- branch legacy ---
# torch.special (special.py): its own ops, then the names that are torch.<name>'s
for _n, _ref, _in in [
    ("entr", jss.entr, P(3, 4)), ("erfcx", jss.erfcx, X), ("i0e", jss.i0e, X),
    ("i1", jss.i1, X), ("i1e", jss.i1e, X), ("log_ndtr", jss.log_ndtr, X),
    ("ndtr", jss.ndtr, X), ("psi", jss.digamma, P(3, 4)), ("gammaln", jss.gammaln, P(3, 4)),
    ("expit", jax.nn.sigmoid, X), ("erfcx.negative", jss.erfcx, V([[-2.0, -0.5, 0.0, 3.0]])),
]:
    row(f"special.{_n}", lambda L, x, n=_n.split(".")[0]: getattr(L.special, n)(x), _ref, [_in],
        "slow" if _n in ("psi", "gammaln", "expit", "erfcx.negative") else "")
row("special.ndtri", lambda L, x: L.special.ndtri(x.sigmoid()),
    lambda x: jss.ndtri(jax.nn.sigmoid(x)), [X])
row("special.xlog1py", lambda L, x, y: L.special.xlog1py(x, y), jss.xlog1py, [X, P(3, 4)])
row("special.xlog1py.self_scalar", lambda L, y: L.special.xlog1py(2.0, y),
    lambda y: jss.xlog1py(2.0, y), [P(3, 4)])
row("special.xlog1py.other_scalar", lambda L, x: L.special.xlog1py(x, 3.0),
    lambda x: jss.xlog1py(x, 3.0), [X])
# zeta has no derivative (tests/test_special.py): its values, on detached inputs
row("special.zeta", lambda L, x, q: L.special.zeta(x.detach() + 1.5, q.detach()),
    lambda x, q: jss.zeta(x + 1.5, q), [P(3, 4), P(3, 4)])
row("special.softmax", lambda L, x: L.special.softmax(x, 1), lambda x: jax.nn.softmax(x, 1), [X])
row("special.log_softmax", lambda L, x: L.special.log_softmax(x, 0, dtype=L.float32),
    lambda x: jax.nn.log_softmax(x, 0), [X])
row("special.multigammaln", lambda L, x: L.special.multigammaln(x, 3),
    lambda x: jss.multigammaln(x, 3), [G1(3, 4)])
# igamma / igammac: differentiable in ``other`` only (the input's derivative raises, as
# PyTorch's: tests/test_special.py), so ``input`` is detached
_SG = jax.lax.stop_gradient
row("igamma", lambda L, a, x: L.igamma(a.detach(), x),
    lambda a, x: jss.gammainc(_SG(a), x), [P(3, 4), P(3, 4)])
row("igammac.method", lambda L, a, x: a.detach().igammac(x),
    lambda a, x: jss.gammaincc(_SG(a), x), [P(3, 4), P(3, 4)])
row("igamma_", lambda L, a, x: a.detach().clone().igamma_(x),
    lambda a, x: jss.gammainc(_SG(a), x), [P(3, 4), P(3, 4)])
row("special.gammaincc", lambda L, a, x: L.special.gammaincc(a.detach(), x),
    lambda a, x: jss.gammaincc(_SG(a), x), [P(3, 4), P(3, 4)], "slow")
# the orthogonal polynomials (no derivative), degree 3 in closed form
_POLY3 = {
    "chebyshev_polynomial_t": lambda x: 4 * x ** 3 - 3 * x,
    "chebyshev_polynomial_u": lambda x: 8 * x ** 3 - 4 * x,
    "chebyshev_polynomial_v": lambda x: 8 * x ** 3 - 4 * x ** 2 - 4 * x + 1,
    "chebyshev_polynomial_w": lambda x: 8 * x ** 3 + 4 * x ** 2 - 4 * x - 1,
    "hermite_polynomial_h": lambda x: 8 * x ** 3 - 12 * x,
    "hermite_polynomial_he": lambda x: x ** 3 - 3 * x,
    "laguerre_polynomial_l": lambda x: 1 - 3 * x + 1.5 * x ** 2 - x ** 3 / 6,
    "legendre_polynomial_p": lambda x: 2.5 * x ** 3 - 1.5 * x,
}
for _n, _ref in _POLY3.items():
    row(f"special.{_n}", lambda L, x, n=_n: getattr(L.special, n)(x, 3), _ref, [X])
    if _n.startswith("chebyshev"):
        row(f"special.shifted_{_n}", lambda L, x, n=_n: getattr(L.special, "shifted_" + n)(x, 3),
            lambda x, r=_ref: r(2 * x - 1), [X])
# a Tensor of degrees (negative: 0), broadcast against the points; a number for the points
row("special.chebyshev_polynomial_t.tensor_n",
    lambda L, x, n: L.special.chebyshev_polynomial_t(x, n),
    lambda x, n: jnp.where(n < 0, 0.0, jnp.cos(n * jnp.arccos(x))), [U(3, 4), I([0, 1, 5, -1])])
row("special.legendre_polynomial_p.scalar_x", lambda L, n: L.special.legendre_polynomial_p(
    0.5, n), lambda n: jnp.array([1.0, 0.5, -0.125, -0.4375])[n], [I([0, 1, 2, 3])])
# nextafter.py: PyTorch's formula: input's gradient passes where input != other, other's is 0
def _nextafter_ref(x, y):
    # the gradient reaches x where it differs from y (PyTorch's formula), y never
    step = jnp.nextafter(_SG(x), _SG(y)) - _SG(x)
    return jnp.where(_SG(x) != _SG(y), x, _SG(x)) + step + 0 * y


row("nextafter", lambda L, x, y: L.nextafter(x, y), _nextafter_ref, [X, Y])
row("nextafter_", lambda L, x, y: x.clone().nextafter_(y), _nextafter_ref, [X, Y], "slow")
# linalg_legacy.py: the deprecated forms of torch.linalg's LU and triangular solvers
_LU = lambda a: (lambda r: (r[0], r[1] + 1))(jax.scipy.linalg.lu_factor(a))  # noqa: E731
row("lu", lambda L, a: L.lu(a), _LU, [M3])
row("lu.method_infos", lambda L, a: a.lu(get_infos=True), lambda a: (*_LU(a), jnp.int32(0)),
    [M3], "slow")
row("lu_unpack", lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a)),
    lambda a: tuple(jax.scipy.linalg.lu(a)), [M3])
row("lu_unpack wide", lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a))[1:],
    lambda a: tuple(jax.scipy.linalg.lu(a))[1:], [F(3, 4)])
row("lu_solve", lambda L, b, a: L.lu_solve(b, *L.lu(a)), lambda b, a: jnp.linalg.solve(a, b),
    [F(3, 2), M3])
row("lu_solve.method", lambda L, b, a: b.lu_solve(*L.linalg.lu_factor(a)),
    lambda b, a: jnp.linalg.solve(a, b), [F(3, 2), M3], "slow")
_TRI = jnp.eye(3) * 4
row("triangular_solve", lambda L, b, a: L.triangular_solve(b, a + 4 * L.eye(3)),
    lambda b, a: (jax.scipy.linalg.solve_triangular(a + _TRI, b), a + _TRI), [F(3, 2), F(3, 3)])
row("triangular_solve lower_transpose_unit", lambda L, b, a: b.triangular_solve(
    a, upper=False, transpose=True, unitriangular=True).solution,
    lambda b, a: jax.scipy.linalg.solve_triangular(a, b, lower=True, trans=1,
                                                   unit_diagonal=True), [F(2, 3, 2), F(3, 3)])
row("chain_matmul", lambda L, a, b, c: L.chain_matmul(a, b, c), lambda a, b, c: a @ b @ c,
    [F(2, 3), F(3, 4), F(4, 2)])
row("chain_matmul.one", lambda L, a: L.chain_matmul(a), lambda a: a, [X], "slow")
# selection.py: mode (counted pairwise here, a different route from the op's runs) and
# nanmedian (the lower quantile of the non-NaN values)


def _mode_ref(x):
    cnt = (x[..., :, None] == x[..., None, :]).sum(-1)
    val = jnp.where(cnt == cnt.max(-1, keepdims=True), x, jnp.inf).min(-1)
    idx = jnp.where(x == val[..., None], jnp.arange(x.shape[-1]), -1).max(-1)
    return jnp.take_along_axis(x, idx[..., None], -1)[..., 0], idx


_TIES = V([[1.0, 3.0, 3.0, 1.0, 2.0], [5.0, 5.0, 5.0, 0.0, 0.0], [0.5, -1.0, 2.0, 4.0, 3.0]])
row("mode", lambda L, x: L.mode(x), _mode_ref, [_TIES])
row("mode.dim0_keepdim", lambda L, x: x.mode(0, keepdim=True),
    lambda x: tuple(r[None] for r in _mode_ref(x.T)), [_TIES], "slow")
_NANS = V([[np.nan, 1.0, 3.0, 2.0], [4.0, np.nan, 2.5, 5.0], [0.5, 1.5, -1.0, np.nan]])
row("nanmedian", lambda L, x: L.nanmedian(x), lambda x: jnp.nanquantile(x, 0.5, method="lower"),
    [_NANS])
row("nanmedian.dim", lambda L, x: x.nanmedian(1).values,
    lambda x: jnp.nanquantile(x, 0.5, axis=1, method="lower"), [_NANS])
row("nanmedian.dim_keepdim", lambda L, x: L.nanmedian(x, 0, True),
    lambda x: (jnp.nanquantile(x, 0.5, axis=0, method="lower", keepdims=True),
               jnp.nanargmin(jnp.abs(x - jnp.nanquantile(x, 0.5, axis=0, method="lower")), 0,
                             keepdims=True)), [_NANS], "slow")
# vander.py, calculus.py: compositions recorded as PyTorch's kernels compose them
# (vander's backward raises PyTorch's version error, as PyTorch's: tests/test_calculus.py)
row("vander", lambda L, x: L.vander(x.detach()), lambda x: jnp.vander(x), [W])
row("vander.increasing", lambda L, x: L.vander(x.detach(), N=3, increasing=True),
    lambda x: jnp.vander(x, 3, increasing=True), [W], "slow")
row("cumulative_trapezoid", lambda L, y: L.cumulative_trapezoid(y),
    lambda y: jnp.cumsum((y[:, 1:] + y[:, :-1]) / 2, 1), [X])
row("cumulative_trapezoid.dx_dim", lambda L, y: L.cumulative_trapezoid(y, dx=0.5, dim=0),
    lambda y: jnp.cumsum((y[1:] + y[:-1]) * 0.25, 0), [X], "slow")
_XS = np.array([0.0, 1.0, 3.0, 4.5], np.float32)
row("cumulative_trapezoid.x", lambda L, y: L.cumulative_trapezoid(y, L.tensor(_XS.tolist())),
    lambda y: jnp.cumsum((y[:, 1:] + y[:, :-1]) * jnp.diff(_XS) / 2, 1), [X])
# NumPy's gradient (the same formulas, written independently) is the reference
row("gradient", lambda L, f: L.gradient(f, dim=0), lambda f: (jnp.gradient(f, axis=0),), [X])


def _gradient_edge2(f, h):
    # jnp.gradient has no edge_order=2: the second-order one-sided edges by hand
    inner = jnp.gradient(f, h, axis=1)[:, 1:-1]
    first = (-3 * f[:, :1] + 4 * f[:, 1:2] - f[:, 2:3]) / (2 * h)
    last = (3 * f[:, -1:] - 4 * f[:, -2:-1] + f[:, -3:-2]) / (2 * h)
    return jnp.concatenate([first, inner, last], 1)


row("gradient.edge2_spacing", lambda L, f: L.gradient(f, spacing=[2.0], dim=1, edge_order=2),
    lambda f: (_gradient_edge2(f, 2.0),), [X])
row("gradient.coordinates", lambda L, f: L.gradient(f, spacing=(L.tensor(_XS.tolist()),),
                                                   dim=-1),
    lambda f: (jnp.gradient(f, _XS, axis=1),), [X])
# index_reduce.py: per output slice, the masked reduction of the sources aimed at it
_IDX = np.array([0, 0, 2, 1])


def _index_reduce_ref(x, s, reduce, include_self):
    outs = []
    for i in range(x.shape[0]):
        pool = [s[j] for j in range(len(_IDX)) if _IDX[j] == i]
        pool = ([x[i]] if include_self else []) + pool
        if not pool:
            outs.append(x[i])
            continue
        st = jnp.stack(pool)
        outs.append({"prod": jnp.prod, "mean": jnp.mean, "amax": jnp.max,
                     "amin": jnp.min}[reduce](st, 0))
    return jnp.stack(outs)


for _r in ("prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        row(f"index_reduce.{_r}{'' if _inc else '.exclude_self'}",
            lambda L, x, i, s, r=_r, inc=_inc: x.index_reduce(0, i, s, r, include_self=inc),
            lambda x, i, s, r=_r, inc=_inc: _index_reduce_ref(x, s, r, inc),
            [F(3, 4), I(_IDX), F(4, 4)], "" if _inc else "slow")
row("index_reduce_.dim1", lambda L, x, i, s: x.clone().index_reduce_(1, i, s, "amax"),
    lambda x, i, s: _index_reduce_ref(x.T, s.T, "amax", True).T, [F(4, 3), I(_IDX), F(4, 4)])
# linalg_householder.py: geqrf (no derivative: its values, against PyTorch's LAPACK) and the
# products with Q = H_1 ... H_k (differentiable), against the reflections multiplied out


def _householder_q(a, tau):
    m = a.shape[0]
    q = jnp.eye(m)
    for i in range(tau.shape[0]):
        v = jnp.where(jnp.arange(m) > i, a[:, i], 0.0) + (jnp.arange(m) == i)
        q = q @ (jnp.eye(m) - tau[i] * jnp.outer(v, v))
    return q


row("geqrf", lambda L, a: L.geqrf(a.detach()), None, [F(4, 3)])
row("geqrf wide_batched", lambda L, a: a.detach().geqrf(), None, [F(2, 3, 4)], "slow")
row("orgqr", lambda L, a, t: L.orgqr(a, t), lambda a, t: _householder_q(a, t)[:, :3],
    [F(4, 3), F(2)])
row("orgqr.method", lambda L, a, t: a.orgqr(t), lambda a, t: _householder_q(a, t)[:, :3],
    [F(4, 3), F(3)], "slow")
row("ormqr", lambda L, a, t, c: L.ormqr(a, t, c), lambda a, t, c: _householder_q(a, t) @ c,
    [F(4, 3), F(3), F(4, 2)])
row("ormqr.right_transpose", lambda L, a, t, c: a.ormqr(t, c, left=False, transpose=True),
    lambda a, t, c: c @ _householder_q(a, t).T, [F(4, 3), F(3), F(2, 4)])
# bessel.py (no derivative): against PyTorch (and JAX where it has the function), on points
# either side of the switch to Hankel's expansion at 25
_BESSEL_X = V([[-30.0, -24.9, -3.5, -0.2], [0.0, 1e-3, 0.7, 2.4], [5.5, 24.9, 25.1, 80.0]])
for _n, _ref, _in in [
    ("bessel_j0", None, _BESSEL_X), ("bessel_j1", None, _BESSEL_X),
    ("bessel_y0", None, _BESSEL_X), ("bessel_y1", None, _BESSEL_X),
    ("modified_bessel_i0", jss.i0, X), ("modified_bessel_i1", jss.i1, X),
    ("modified_bessel_k0", None, P(3, 4)), ("modified_bessel_k1", None, _BESSEL_X),
    ("scaled_modified_bessel_k0", None, _BESSEL_X), ("scaled_modified_bessel_k1", None, P(3, 4)),
    ("spherical_bessel_j0", lambda x: jnp.sinc(x / jnp.pi), _BESSEL_X),
    ("airy_ai", None, V([[-30.0, -17.0, -5.5, -0.3], [0.0, 1e-3, 0.7, 2.4], [4.0, 6.5, 9.0, 12.0]])),
]:
    row(f"special.{_n}", lambda L, x, n=_n: getattr(L.special, n)(x), _ref, [_in])
