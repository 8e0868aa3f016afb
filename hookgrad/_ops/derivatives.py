"""A node's backward while a dispatch mode is entered: the ATen ops PyTorch's runs.

Without a mode a node's backward is JAX's vjp, one jitted call (``op_node.OpNode``). With
one, the modes see what PyTorch's node runs: a saved output is unpacked through
``aten.detach``; a backward PyTorch runs as one ATen op (``threshold_backward``,
``convolution_backward``, ``native_layer_norm_backward``, ...) is JAX's vjp run as that op
(``overloads._BACKWARD_NAMES`` names it); and the nodes whose PyTorch formula is a few
view, product or sum ops (``FORMULAS``: ``SumBackward0`` expands, ``AddmmBackward0``
runs ``t`` and ``mm``) run that formula in hookgrad's ops, each a call through the modes
whose result is used. Then, as PyTorch's engine validates a node's outputs, a gradient
whose shape is not its input's is summed to it (``sum_to``).

Why formulas, not JAX's vjp program run equation by equation: PyTorch's choice of ops
follows its strides (``mm_mat2_backward`` of a transposed weight runs ``t``, ``mm``,
``t``; ``reshape`` of a non-contiguous gradient runs ``clone`` and ``_unsafe_view``), and
its engine sums broadcast gradients after the node, where JAX's vjp has one
``dot_general`` with dimension numbers and reduces inside. These formulas are only
view, product and sum ops on the incoming gradient; tests/test_interception.py checks
each row's values against JAX's vjp.
"""
import jax

from .. import _dtype
from .._tensor import Tensor
from .._autograd import grad_mode
from . import op_node
from .op_node import _CONST, OUT
from .shape import cat
from .stages import modes

__all__ = ["FORMULAS", "run"]


class _Inputs:
    """A node's arguments as its formula reads them: ``values[i]`` the saved Tensor or
    constant, or, where nothing was saved, the argument's aval (its ``shape``)."""

    __slots__ = ("node", "values", "statics", "want")

    def __init__(self, node, values, statics, want):
        self.node, self.values, self.statics, self.want = node, values, statics, want

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
            n = len(a.values[0].shape)
            for d in sorted(d % n for d in (dim if isinstance(dim, (tuple, list)) else (dim,))):
                out = out.unsqueeze(d)
        return out.expand(a.values[0].shape)
    return {0: expanded}


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
}


def run(node, vals, grads, vop):
    """The gradients ``node`` computes (for ``node._want``) from its unpacked values
    ``vals`` and incoming ``grads``, through the entered dispatch modes."""
    args = [Tensor._wrap(v) if isinstance(v, jax.Array) else v for v in vals]
    op = node._op
    with grad_mode.no_grad():
        if op.save is OUT:  # a saved output is unpacked as a detached alias, as PyTorch's
            args[0] = modes.call("detach.default", Tensor.detach, (args[0],), {})
        formula = FORMULAS.get(op.name)
        if formula is None:  # one op: JAX's vjp, named as PyTorch's backward op
            res = op_node.APPLY[0](vop, (*args, *grads))
            return list(res) if res.__class__ is tuple else [res]
        inputs = _arguments(node, args)
        found = formula(inputs, grads)
        res = [found[i]() for i in inputs.want]  # in PyTorch's order: by position
        return [_sum_to(r, inputs.values[i]) for r, i in zip(res, inputs.want)]


op_node.DERIVATIVES[0] = run


def _arguments(node, args):
    """The node's arguments by position: what was saved or constant, else the aval."""
    it = iter(args)
    values = [next(it) if s.__class__ is tuple or s is _CONST or
              s.__class__ is op_node.SavedTensor else s for s in node._stored]
    return _Inputs(node, values, dict(node._key), node._want)


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
