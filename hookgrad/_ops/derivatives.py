"""A node's backward while a dispatch mode is entered: the ATen ops PyTorch's runs.

Without a mode a node's backward is JAX's vjp, one jitted call (``op_node.OpNode``). With
one, the modes see what PyTorch's node runs: a saved output is unpacked through
``aten.detach``; a backward PyTorch runs as one ATen op (``threshold_backward``,
``convolution_backward``, ``native_layer_norm_backward``, ...) is JAX's vjp run as that op
(``overloads._BACKWARD_NAMES`` names it); and the nodes whose PyTorch formula is a few
view, product or sum ops (``FORMULAS``: ``SumBackward0`` expands, ``AddmmBackward0``
runs ``t`` and ``mm``) run that formula in hookgrad's ops, each a call through the modes
whose result is used. Then, as PyTorch's engine validates a node's outputs, a gradient
whose shape is not its input's is summed to it (``sum_to``). ``accumulated`` is what
``AccumulateGrad`` runs.

Why formulas, not JAX's vjp program run equation by equation: PyTorch's choice of ops
follows its strides (``mm_mat2_backward`` of a transposed weight runs ``t``, ``mm``,
``t``; ``reshape`` of a non-contiguous gradient runs ``clone`` and ``_unsafe_view``), and
its engine sums broadcast gradients after the node, where JAX's vjp has one
``dot_general`` with dimension numbers and reduces inside. The formulas are PyTorch's
(its ``derivatives.yaml``), for real values: a complex gradient takes JAX's vjp, which
conjugates as PyTorch's (``op_node._conj``). tests/test_interception.py checks each row's
values against JAX's vjp.
"""
import math

import jax
import jax.numpy as jnp

from .. import _dtype, _tensor
from .._factory import scalar_tensor, zeros_like
from .._tensor import Tensor
from .._autograd import grad_mode
from . import dispatch, op_node, statistics
from .op_node import _CONST, OUT
from .indexing import SLICE
from .pointwise import where
from .stacking import cat
from .views import view_apply
from .stages import modes

__all__ = ["FORMULAS", "accumulated", "run"]


class _Inputs:
    """A node's arguments as its formula reads them: ``values[i]`` the saved Tensor or
    constant, or, where nothing was saved, the argument's aval (its ``shape``)."""

    __slots__ = ("node", "values", "statics", "want", "result")

    def __init__(self, node, values, statics, want, result):
        self.node, self.values, self.statics, self.want = node, values, statics, want
        self.result = result  # the saved output, unpacked through ``aten.detach``

    def column_major(self, i):
        """Whether argument ``i`` (a matrix) was column-major (a transposed one)."""
        s = self.node._stored[i]
        t = s[1] if s.__class__ is tuple else None
        return t is not None and t.dim() == 2 and t.stride() == (1, t.shape[0]) and \
            t.shape[0] != 1 != t.shape[1]


def _sum(a, g):
    def expanded():
        dim, keepdim, out = a.statics.get("dim"), a.statics.get("keepdim"), g[0]
        if dim is not None and not keepdim:
            out = _unsqueezed_at(out, dim if isinstance(dim, (tuple, list)) else (dim,),
                                 len(a.values[0].shape))
        return out.expand(a.values[0].shape)
    return {0: expanded}


def _unsqueezed_at(t, dims, ndim):
    """``t`` with the reduced dimensions ``dims`` (of a result of ``ndim``) back, size 1:
    PyTorch's ``unsqueeze_multiple``."""
    for d in sorted(d % ndim for d in dims):
        t = t.unsqueeze(d)
    return t


def _mul(a, g):
    x, y = a.values
    return {0: lambda: g[0] * y, 1: lambda: g[0] * x}


def _div(a, g):
    x, y = a.values
    def other():  # PyTorch's div_tensor_other_backward, in its order of ops
        q = x / y
        return -g[0] * q / y
    return {0: lambda: g[0] / y, 1: other}


def _add(a, g):
    alpha = a.statics.get("alpha", 1)
    return {0: lambda: g[0], 1: lambda: g[0] if alpha == 1 else g[0] * alpha}


def _mm(a, g, first=0):
    """``mm``'s (``first`` 0) or ``addmm``'s (1, after ``self``) matrix gradients:
    PyTorch's ``mm_mat1_backward`` and ``mm_mat2_backward``, whose ops follow the layout
    of the matrix differentiated (a column-major one gets a column-major gradient)."""
    mat1, mat2 = a.values[first], a.values[first + 1]

    def mat1_grad():
        if a.column_major(first):
            return mat2.mm(g[0].t()).t()
        return g[0].mm(mat2.t())

    def mat2_grad():
        if a.column_major(first + 1):
            return g[0].t().mm(mat1).t()
        return mat1.t().mm(g[0])
    return {first: mat1_grad, first + 1: mat2_grad}


def _addmm(a, g):
    beta, alpha = a.statics.get("beta", 1), a.statics.get("alpha", 1)
    out = {0: lambda: g[0] if beta == 1 else g[0] * beta}
    for i, grad in _mm(a, g, 1).items():
        out[i] = grad if alpha == 1 else (lambda grad=grad: grad() * alpha)
    return out


def _bmm(a, g):
    x, y = a.values
    return {0: lambda: g[0].bmm(y.transpose(1, 2)), 1: lambda: x.transpose(1, 2).bmm(g[0])}


def _permute(a, g):
    dims = a.statics["dims"]
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d % len(dims)] = i
    return {0: lambda: g[0].permute(inverse)}


def _same(a, g):
    return {0: lambda: g[0]}  # the engine sums it to the input's shape


def _reshape(a, g):
    return {0: lambda: g[0].reshape(a.values[0].shape)}


def _mean(a, g):
    def scaled():
        shape, dim = a.values[0].shape, a.statics.get("dim")
        if dim is None:
            n = math.prod(shape)
        else:
            n = math.prod(shape[d] for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
        return _div_scalar(_sum(a, g)[0](), n)
    return {0: scaled}


def _pow(a, g):
    x, e = a.values
    if e == 0:
        return {0: lambda: zeros_like(x)}
    return {0: lambda: g[0] * _mul_scalar(x.pow(e - 1), e)}


def _rsqrt(a, g):
    def grad():
        cubed = a.result.pow(3)
        return _mul_scalar(g[0], -0.5) * cubed
    return {0: grad}


def _unsqueezed(a, g):
    """``squeeze``'s: the squeezed dimensions back (of size 1), in order."""
    def grad():
        shape, dims, out = a.values[0].shape, a.statics.get("dim"), g[0]
        if dims is None:
            dims = [d for d, n in enumerate(shape) if n == 1]
        for d in sorted(d % len(shape) for d in (dims if isinstance(dims, (tuple, list))
                                                 else (dims,))):
            if shape[d] == 1:
                out = out.unsqueeze(d)
        return out
    return {0: grad}


def _zero(g):
    """The ``0`` of ``where(condition, grad, 0)``, a Tensor as ATen makes it."""
    return scalar_tensor(0, dtype=g.dtype)


def _cat(a, g):
    dim, out, start = a.statics["dim"] % g[0].dim(), {}, 0
    for i, v in enumerate(a.values):  # each input's part, sliced (PyTorch's narrow)
        size = v.shape[dim] if len(v.shape) == g[0].dim() else 0
        out[i] = lambda start=start, size=size: view_apply(SLICE, g[0], {
            "dim": dim, "start": start, "stop": start + size, "step": 1})
        start += size
    return out


def _var(a, g):
    def grad():
        x, dim = a.values[0], a.statics.get("dim")
        dims = None if dim is None else dim if isinstance(dim, (tuple, list)) else (dim,)
        out = g[0]
        if dims is not None and not a.statics.get("keepdim") and x.dim():
            out = _unsqueezed_at(out, dims, x.dim())
        mean = x.mean() if dims is None else x.mean(dims, keepdim=True)
        n = x.numel() if dims is None else math.prod(x.shape[d] for d in dims)
        centered = x - mean
        return _mul_scalar(out, 2.0 / (n - a.statics.get("correction", 1))) * centered
    return {0: grad}


def _clamp(a, g):
    def grad():
        x, lo, hi = a.values
        has_lo, has_hi = a.statics.get("has_lo"), a.statics.get("has_hi")
        if not (has_lo or has_hi):
            return g[0]
        zero = _zero(g[0])
        if has_lo and has_hi:
            inside = (x >= lo).logical_and_(x <= hi)
        else:
            inside = x >= lo if has_lo else x <= hi
        return where(inside, g[0], zero)
    return {0: grad}


def _cumsum(a, g):
    def grad():
        dim = a.statics["dim"]
        if g[0].dim() == 0 or g[0].numel() == 0:
            return g[0]
        return g[0].flip(dim).cumsum(dim).flip(dim)
    return {0: grad}


# a row's PyTorch formula: ``(inputs, grads) -> {argument position: its gradient, lazily}``
FORMULAS = {
    "sum": _sum, "sum_dim": _sum, "mul": _mul, "div": _div, "add": _add, "add_alpha": _add,
    "sub": lambda a, g: {0: lambda: g[0], 1: lambda: -g[0]},
    "neg": lambda a, g: {0: lambda: -g[0]},
    "unsqueeze": lambda a, g: {0: lambda: g[0].squeeze(a.statics["dim"])},
    "view": _reshape, "reshape": _reshape, "_reshape_alias": _reshape,
    "_unsafe_view": _reshape, "clone": _same, "expand": _same,
    "t": lambda a, g: {0: lambda: g[0].t()},
    "transpose": lambda a, g: {0: lambda: g[0].transpose(a.statics["d0"], a.statics["d1"])},
    "permute": _permute, "mm": _mm, "addmm": _addmm, "bmm": _bmm,
    "split": lambda a, g: {0: lambda: cat(g, a.statics["dim"])},
    "mean": _mean, "mean_dim": _mean, "pow": _pow, "rsqrt": _rsqrt, "cat": _cat,
    "exp": lambda a, g: {0: lambda: g[0] * a.result},
    "sqrt": lambda a, g: {0: lambda: g[0] / _mul_scalar(a.result, 2)},
    "sin": lambda a, g: {0: lambda: g[0] * a.values[0].cos()},
    "cos": lambda a, g: {0: lambda: g[0] * -a.values[0].sin()},
    "abs": lambda a, g: {0: lambda: g[0] * a.values[0].sgn()},
    "log": lambda a, g: {0: lambda: g[0].div(a.values[0])},
    "rsub": lambda a, g: {0: lambda: -g[0]},
    "squeeze": _unsqueezed, "squeeze_dim": _unsqueezed, "squeeze_dims": _unsqueezed,
    "var": _var, "clamp": _clamp, "cumsum": _cumsum,
    "where": lambda a, g: {0: lambda: where(a.values[2], g[0], _zero(g[0])),
                           1: lambda: where(a.values[2], _zero(g[0]), g[0])},
    "masked_fill": lambda a, g: {0: lambda: g[0].masked_fill(a.values[1], 0)},
    "stack": lambda a, g: {i: lambda i=i: g[0].select(a.statics["dim"], i)
                           for i in range(len(a.values))},
}
# the formulas reading the saved output (``_Inputs.result``)
_READ_RESULT = frozenset({"exp", "sqrt", "rsqrt"})


def _mul_scalar(t, s):
    return dispatch.apply(statistics._MUL_SCALAR, (t,), {"other": s})


def _div_scalar(t, s):
    return dispatch.apply(statistics._DIV_SCALAR, (t,), {"other": s})


def run(node, vals, grads, vop):
    """The gradients ``node`` computes (for ``node._site.want``) from its unpacked values
    ``vals`` and incoming ``grads``, through the entered dispatch modes."""
    args = [Tensor._wrap(v) if isinstance(v, jax.Array) else v for v in vals]
    op = node._site.op
    formula = FORMULAS.get(op.name)
    saved = node._out_saved
    if formula is not None and (op.name in _READ_RESULT and saved.__class__ is not tuple
                                or any(g._data.dtype.kind == "c" for g in grads)):
        formula = None  # the output saved through hooks, or complex values: JAX's vjp
    with grad_mode.no_grad():
        if op.save is OUT:  # a saved output is unpacked as a detached alias, as PyTorch's
            args[0] = _detach(args[0])
        if formula is None:  # one op: JAX's vjp, named as PyTorch's backward op
            res = dispatch.apply(vop, (*args, *grads))
            return list(res) if res.__class__ is tuple else [res]
        result = None
        if op.name in _READ_RESULT:
            result = args[0] if op.save is OUT else _detach(Tensor._wrap(saved[0]))
        inputs = _arguments(node, args, result)
        found = formula(inputs, grads)
        res = [found[i]() for i in inputs.want]  # in PyTorch's order: by position
        return [_sum_to(r, inputs.values[i]) for r, i in zip(res, inputs.want)]


op_node.DERIVATIVES[0] = run


def accumulated(grad, var):
    """What ``AccumulateGrad`` makes ``var.grad`` of ``grad`` while a mode is entered, as
    PyTorch's: ``grad`` detached where its layout is ``var``'s (strides equal where a size
    is not 1), else a copy in ``var``'s layout (``new_empty_strided``, then ``copy_``)."""
    if all(n == 1 or a == b for n, a, b in zip(var.shape, grad.stride(), var.stride())):
        return _detach(grad)
    made = modes.call("new_empty_strided.default", new_empty_strided,
                      (grad, list(var.shape), list(var.stride())), {})
    return made.copy_(grad)


def new_empty_strided(t, size, stride):
    """``t.new_empty_strided(size, stride)`` as ``aten.new_empty_strided`` runs it."""
    return Tensor._wrap(jnp.empty(size, t._data.dtype))  # C order: hookgrad's only layout


def _detach(t):
    return modes.call("detach.default", _tensor._detached, (t,), {})


def _arguments(node, args, result):
    """The node's arguments by position: what was saved or constant, else the aval."""
    if node._site.op.save is OUT:  # ``args`` holds the output only
        return _Inputs(node, list(node._stored), dict(node._site.key), node._site.want, result)
    it = iter(args)
    values = [next(it) if s.__class__ is tuple or s is _CONST or
              s.__class__ is op_node.SavedTensor else s for s in node._stored]
    return _Inputs(node, values, dict(node._site.key), node._site.want, result)


def _sum_to(g, arg):
    """``g`` summed to the shape of the argument ``arg`` (over its broadcast dimensions)
    and cast to its dtype, as PyTorch's engine checks a node's outputs."""
    shape = tuple(arg.shape)
    if tuple(g.shape) != shape:
        lead = g.dim() - len(shape)
        dims = list(range(lead)) + [lead + i for i, n in enumerate(shape)
                                    if n == 1 and g.shape[lead + i] != 1]
        if dims:
            g = g.sum(dims, keepdim=True)
        if lead > 0:
            g = g.view(shape)
    dtype = arg._data.dtype if isinstance(arg, Tensor) else arg.dtype
    return g if g._data.dtype == dtype else g.to(_dtype.from_jax(dtype))
