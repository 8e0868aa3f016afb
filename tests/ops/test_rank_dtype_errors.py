"""PyTorch's errors, type and wording, for a 0-d tensor where an op needs dimensions and
for dtypes a kernel has no version of: the calls the raw-JAX sweep
(tests/ops/test_raw_jax_errors.py) found raising another exception type than PyTorch's."""
import re
import warnings

import numpy as np
import pytest

import hookgrad

from tests._calls import watch
from tests.differential import py, raises, raises_as_torch, same_as_torch, torch


def _s(L):
    return L.tensor(1.5)


def _i(L, *idx):
    return L.tensor(list(idx))


ZERO_D = [
    ("split", lambda L: _s(L).split(1, dim=1), RuntimeError,
     r"^split expects at least a 1-dimensional tensor$"),
    ("split sizes", lambda L: L.split_with_sizes(_s(L), [1]), RuntimeError,
     r"^split expects at least a 1-dimensional tensor$"),
    ("chunk", lambda L: _s(L).chunk(0), RuntimeError,
     r"^chunk expects at least a 1-dimensional tensor$"),
    ("narrow", lambda L: _s(L).narrow(1, 0, 1), RuntimeError,
     r"^narrow\(\) cannot be applied to a 0-dim tensor\.$"),
    ("cat", lambda L: L.cat([L.ones(3, 4), _s(L)], 5), RuntimeError,
     r"^zero-dimensional tensor \(at position 1\) cannot be concatenated$"),
    ("stack dim first", lambda L: L.stack([_s(L), L.ones(3, 4)], dim=2), IndexError,
     r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got 2\)$"),
    ("unflatten", lambda L: _s(L).unflatten(-1, (2, -1)), RuntimeError,
     r"^unflatten got an unexpected error:\nDimension specified as 0 but tensor has no "
     r"dimensions"),
    ("mv", lambda L: L.mv(_s(L), L.ones(3)), IndexError,
     r"^Dimension specified as 0 but tensor has no dimensions$"),
    ("tensordot", lambda L: L.tensordot(_s(L), L.ones(3, 4), ([1, 0], [0, 1])), IndexError,
     r"^Dimension specified as 1 but tensor has no dimensions$"),
    ("repeat_interleave", lambda L: _s(L).repeat_interleave(_i(L, 1), dim=0), IndexError,
     r"^Dimension specified as 0 but tensor has no dimensions$"),
    ("rot90", lambda L: L.rot90(_s(L)), RuntimeError,
     r"^expected total dims >= 2, but got total dims = 0$"),
    ("linalg.cross", lambda L: L.linalg.cross(L.ones(4, 3), _s(L)), RuntimeError,
     r"^linalg.cross: inputs must have the same number of dimensions\.$"),
    ("index_select", lambda L: _s(L).index_select(0, _i(L, 2, 0, 2)), RuntimeError,
     r"^index_select\(\): Index to scalar can have only 1 value, got 3 value\(s\)$"),
    ("index_copy", lambda L: _s(L).index_copy(0, _i(L, 2, 0, 1), L.ones(3, 4)), RuntimeError,
     r"^index_copy_\(\): Source/destination tensor must have same slice shapes\. Destination "
     r"slice shape:  at dimension 0 and source slice shape: 4 at dimension 0\.$"),
    ("index_copy slices", lambda L: L.ones(5, 2, 3).index_copy(1, _i(L, 0), L.ones(5, 1, 4)),
     RuntimeError, r"Destination slice shape: 5 3 at dimension 1 and source slice shape: 5 4 "
                   r"at dimension 0\.$"),
    ("index_add", lambda L: _s(L).index_add(0, _i(L, 0), L.ones(1)), RuntimeError,
     r"^source tensor shape must match self tensor shape, excluding the specified dimension\. "
     r"Got self.shape = \[\] source.shape = \[1\]$"),
    ("index_add count", lambda L: L.ones(3, 4).index_add(0, _i(L, 0, 1), L.ones(3, 5)),
     RuntimeError, r"^index_add_\(\): Number of indices \(2\) should be equal to "
                   r"source.size\(dim\): \(3\), for dim: 0$"),
    ("index_reduce", lambda L: L.ones(3, 4).index_reduce(0, _i(L, 0, 1), L.ones(2, 5), "prod"),
     RuntimeError, r"Got self.shape = \[3, 4\] source.shape = \[2, 5\]$"),
    ("adaptive_max_pool2d", lambda L: L.nn.functional.adaptive_max_pool2d(_s(L), (2, 3)),
     ValueError, r"^Input dimension should be at least 3$"),
    ("adaptive_avg_pool3d", lambda L: L.nn.functional.adaptive_avg_pool3d(L.ones(2, 2), (1, 1, 1)),
     ValueError, r"^Input dimension should be at least 4$"),
    ("cholesky of a.mT", lambda L: L.linalg.cholesky(_s(L) @ _s(L).mT), RuntimeError,
     r"^both arguments to matmul need to be at least 1D, but they are 0D and 0D$"),
    ("eigh", lambda L: L.linalg.eigh(_s(L)), RuntimeError,
     r"^linalg.eigh: The input tensor A must have at least 2 dimensions\.$"),
]


@pytest.mark.parametrize("call,exc,match", [z[1:] for z in ZERO_D], ids=[z[0] for z in ZERO_D])
def test_zero_d_input_error(call, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .mT of a 0-d tensor is deprecated
        raises_as_torch(call, exc, match)


def _ints(L):
    return L.ones(2, 2, dtype=L.long)


def _bools(L, *shape):
    return L.ones(*shape, dtype=L.bool)


KERNELS = [
    ("eigh", lambda L: L.linalg.eigh(_ints(L)), '"linalg_eigh_cpu" not implemented for \'Long\''),
    ("eigvalsh", lambda L: L.linalg.eigvalsh(_bools(L, 2, 2)),
     '"linalg_eigh_cpu" not implemented for \'Bool\''),
    ("solve_triangular", lambda L: L.linalg.solve_triangular(_ints(L), L.eye(2), upper=True),
     '"triangular_solve_cpu" not implemented for \'Long\''),
    ("mm", lambda L: _bools(L, 2, 2) @ _bools(L, 2, 2),
     '"addmm_impl_cpu_" not implemented for \'Bool\''),
    ("mv", lambda L: _bools(L, 2, 2) @ _bools(L, 2), '"addmv_impl_cpu" not implemented for \'Bool\''),
    ("dot", lambda L: L.dot(_bools(L, 2), _bools(L, 2)), '"dot" not implemented for \'Bool\''),
    ("bmm", lambda L: _bools(L, 2, 2) @ _bools(L, 2, 2, 2), '"bmm" not implemented for \'Bool\''),
    # gcd and lcm take integers only (their operands' common dtype), on the host and on XLA
    ("gcd of floats", lambda L: L.gcd(L.ones(2), L.ones(2)),
     '"gcd_cpu" not implemented for \'Float\''),
    ("gcd of an int and a float", lambda L: L.gcd(_ints(L), L.ones(2, 2)),
     '"gcd_cpu" not implemented for \'Float\''),
    ("gcd of bools", lambda L: L.gcd(_bools(L, 2), _bools(L, 2)),
     '"gcd_cpu" not implemented for \'Bool\''),
    ("lcm of many floats", lambda L: L.lcm(L.ones(5000), L.ones(5000)),
     '"lcm_cpu" not implemented for \'Float\''),
]


@pytest.mark.parametrize("call,message", [k[1:] for k in KERNELS], ids=[k[0] for k in KERNELS])
def test_dtype_without_a_kernel(call, message):
    raises_as_torch(call, NotImplementedError, "^" + message.replace("(", r"\(") + "$")


def test_solve_triangular_promotes_an_integer_right_hand_side():
    same_as_torch(lambda L: L.linalg.solve_triangular(
        2 * L.eye(2), L.ones(2, 2, dtype=L.long), upper=True).tolist())


DEPRECATED = {
    "T": "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
    "mT": "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these "
          "cases.",
    "mH": "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
    "H": "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
}


@pytest.mark.parametrize("prop", sorted(DEPRECATED))
def test_matrix_transposes_of_a_0d_tensor_are_it_with_a_deprecation(prop):
    # PyTorch warns once per process, so only its value is compared
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_as_torch(lambda L: getattr(L.tensor(1.5), prop).item())
    with pytest.warns(UserWarning, match=f"^{re.escape(DEPRECATED[prop])}$") as w:
        getattr(hookgrad.tensor(1.5), prop)
    assert w[0].filename == __file__


def test_mT_of_a_vector_raises():
    raises_as_torch(lambda L: L.ones(3).mT, RuntimeError,
                    r"^tensor.mT is only supported on matrices or batches of matrices\. Got "
                    r"1-D tensor\.$")


def _out(t):
    if isinstance(t, (tuple, list)):
        return [_out(x) for x in t]
    return [str(t.dtype).rsplit(".", 1)[-1], py(t)]


def _b(L):
    return L.tensor([[True, False], [True, True]])


RUNS = [  # calls PyTorch runs (the raw-JAX sweep's differential half found each refused)
    ("sigmoid of ints", lambda L: L.sigmoid(L.tensor([1, 2]))),
    ("rsqrt of bools", lambda L: L.rsqrt(_b(L))),
    ("expit of ints", lambda L: L.special.expit(L.tensor([0, 3]))),
    ("log_ndtr of ints", lambda L: L.special.log_ndtr(L.tensor([0, 1]))),
    ("sign of bools", lambda L: _b(L).sign()),
    ("sgn of bools", lambda L: L.sgn(_b(L))),
    ("square of bools", lambda L: L.square(_b(L))),
    ("sum of a 0-d over -1", lambda L: _s(L).sum(-1, keepdim=True)),
    ("mean of a 0-d over (0,)", lambda L: _s(L).mean((0,))),
    ("var of a 0-d", lambda L: _s(L).var(0, correction=0)),
    ("std_mean of a 0-d", lambda L: L.std_mean(_s(L), 0)),
    ("amin of a 0-d", lambda L: _s(L).amin(0)),
    ("argmin of a 0-d", lambda L: _s(L).argmin(0, keepdim=True)),
    ("softmax of a 0-d", lambda L: _s(L).softmax(0)),
    ("log_softmax of a 0-d", lambda L: L.special.log_softmax(_s(L), -1, dtype=L.float32)),
    ("flip of a 0-d", lambda L: _s(L).flip(0)),
    ("bincount of bool weights", lambda L: L.bincount(_i(L, 0, 1, 1), L.tensor([True, False, True]))),
    ("bincount of int weights", lambda L: L.bincount(_i(L, 0, 1, 1), _i(L, 1, 2, 3))),
    ("einsum summing bools", lambda L: [L.einsum(eq, _b(L)) for eq in ("ij->j", "ii", "ij->ji")]),
    ("complex of broadcast ranks", lambda L: L.view_as_real(L.complex(L.ones(2, 1, 2), _s(L)))),
    ("masked_scatter into a 0-d", lambda L: _s(L).masked_scatter(_b(L), L.arange(4.0))),
    ("nextafter of ints towards floats", lambda L: L.nextafter(_i(L, 1, 2), L.tensor([3.0, 0.0]))),
    ("batched lu", lambda L: L.linalg.lu(L.arange(24.0).reshape(2, 3, 4) % 5)),
    ("a False over 0 or times inf is NaN", lambda L: [
        L.tensor([True, False]) / 0.0, L.tensor([True, False]) * float("inf")]),
]


@pytest.mark.parametrize("call", [r[1] for r in RUNS], ids=[r[0] for r in RUNS])
def test_runs_as_pytorch(call):
    same_as_torch(lambda L: _out(call(L)))


def test_neg_of_bools_raises_pytorchs_error():
    raises_as_torch(lambda L: -_b(L), RuntimeError,
                    r"^Negation, the `-` operator, on a bool tensor is not supported\. If you are "
                    r"trying to invert a mask, use the `~` or `logical_not\(\)` operator instead\.$")
    raises_as_torch(lambda L: _b(L).neg_(), RuntimeError, "^Negation, the `-` operator")
    raises_as_torch(lambda L: L.nextafter(_i(L, 1), _i(L, 2)), NotImplementedError,
                    "^\"nextafter_cpu\" not implemented for 'Long'$")


SEQUENCES = [("generator", lambda L: (t for t in [L.ones(2), L.ones(2)]), "generator"),
             ("iterator", lambda L: iter([L.ones(2), L.ones(2)]), "list_iterator"),
             ("a tensor", lambda L: L.ones(2, 2), "Tensor"),
             ("range", lambda L: range(2), "range")]


@pytest.mark.parametrize("op", ["cat", "stack", "hstack", "vstack"])
@pytest.mark.parametrize("make,kind", [s[1:] for s in SEQUENCES], ids=[s[0] for s in SEQUENCES])
def test_joining_ops_take_a_list_or_tuple_alone(op, make, kind):
    # PyTorch's parser takes a list or tuple of Tensors and no other iterable
    match = rf"^{op}\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not {kind}$"
    raises_as_torch(lambda L: getattr(L, op)(make(L)), TypeError, match)
    assert getattr(hookgrad, op)((hookgrad.ones(2, 2), hookgrad.ones(2, 2))).numel() == 8


CAT_CASES = {
    "empty 1-d parts skipped": lambda L: py(L.cat([L.zeros(0), L.ones(2, 3), L.zeros(0),
                                                   L.ones(1, 3) * 2])),
    "only empty 1-d parts": lambda L: list(L.cat([L.zeros(0), L.zeros(0)]).shape),
    "an empty 1-d part with a 1-d part": lambda L: py(L.cat([L.zeros(0), L.arange(3.0)], -1)),
    "negative dim": lambda L: py(L.cat((L.ones(2, 1), L.zeros(2, 2)), dim=-1)),
    "a 0-d part": lambda L: raises(lambda: L.cat([L.ones(2), L.tensor(1.0)])),
    "ranks differ": lambda L: raises(lambda: L.cat([L.ones(2, 3), L.ones(3)])),
    "sizes differ": lambda L: raises(lambda: L.cat([L.ones(2, 3), L.ones(2, 4), L.ones(3, 3)])),
    "dim out of range": lambda L: raises(lambda: L.cat([L.ones(2, 3), L.ones(2, 3)], 2)),
    "empty list": lambda L: raises(lambda: L.cat([])),
}


@pytest.mark.parametrize("case", list(CAT_CASES))
def test_cat_checks_as_pytorch(case):
    # cat reads each part's shape once: its skips and errors stay PyTorch's
    same_as_torch(CAT_CASES[case])


def test_a_repeated_cat_is_checked_once_and_other_shapes_still_raise(monkeypatch):
    # a KV cache joins the same shapes per layer per step: the check of the parts' shapes
    # and dim runs once for them; new shapes, empty 1-d parts and bad dims are checked
    from hookgrad._ops import stacking
    checks = watch(monkeypatch, stacking, "wrap_dim", "_JOINS")

    def steps(L):
        out = []
        for n in (3, 3, 3, 4, 4):  # a cache of length n, grown by one each time
            cache = L.arange(2.0 * n).reshape(2, 1, n)
            out.append(py(L.cat((cache, L.full((2, 1, 1), float(n))), dim=-1)))
        out.append(py(L.cat([L.zeros(0), L.arange(2.0)])))
        out.append(py(L.cat([L.zeros(0), L.arange(2.0)])))
        out.append(raises(lambda: L.cat((L.ones(2, 1, 3), L.ones(2, 2, 1)), dim=-1)))
        out.append(raises(lambda: L.cat((L.ones(2, 1, 3), L.ones(2, 1, 1)), dim=3)))
        out.append(raises(lambda: L.cat((L.ones(2, 1, 3), L.ones(2, 1, 1)), dim=-4)))
        return out

    same_as_torch(steps)
    # hookgrad's run: the two shapes of the cache once each, the empty part's cat each time
    # (nothing remembered for it) and the three errors
    assert len(checks) == 2 + 2 + 3


def test_repeated_views_resolve_their_shape_once_and_refuse_what_pytorch_refuses(monkeypatch):
    # a model reshapes the same shapes per layer per step: a shape of plain ints is
    # resolved (-1 filled in, checked) once per Tensor shape; other sizes take the parser
    from hookgrad._ops import view_shape
    resolved = watch(monkeypatch, view_shape, "resolve_shape", "_RESOLVED")

    def steps(L):
        out = []
        for _ in range(3):
            x = L.arange(24.0).reshape(2, 3, 4)
            y = x.transpose(1, 2)
            out += [list(x.view(2, 12).shape), list(x.view(-1, 4).shape),
                    list(x.view((6, -1)).shape), list(x.view(x.size()[:-1] + (2, 2)).shape),
                    list(y.reshape(2, -1).shape), list(x.view([4, 6]).shape)]
        out += [raises(lambda: x.view(5, -1)), raises(lambda: x.view(-1, -1)),
                raises(lambda: x.view(2, 13)), raises(lambda: x.view(2.0, 12))["raises"]]
        return out

    same_as_torch(steps)
    # per run: 2 reshapes of arange, 4 views, 1 reshape and the list, which is no key
    # (resolved each time): 6 shapes once, the list 3 times; then the 3 errors (a float
    # size is refused by the parser before)
    assert len(resolved) == 6 + 3 + 3


VIEW_DIM_CASES = {
    "transpose, negative dims": lambda L: [list((y := L.ones(2, 3, 4).transpose(-1, 0)).shape),
                                           y.grad_fn is None, y.stride()],
    "transpose of a grad-requiring input": lambda L: (
        y := L.ones(2, 3, requires_grad=True).transpose(1, -2)).grad_fn.name(),
    "saved dims": lambda L: [getattr(L.ones(2, 3, requires_grad=True).transpose(1, 0)
                                     .grad_fn, "_saved_" + n) for n in ("dim0", "dim1")],
    "unsqueeze at the end": lambda L: list(L.ones(2, 3).unsqueeze(-1).shape),
    "unsqueeze of a 0-d": lambda L: [list(L.tensor(1.0).unsqueeze(0).shape),
                                     list(L.tensor(1.0).unsqueeze(-1).shape)],
    "transpose of a 0-d": lambda L: list(L.tensor(1.0).transpose(0, -1).shape),
    "a NumPy int dim": lambda L: list(L.ones(2, 3).transpose(np.int64(0), 1).shape),
    "dim out of range": lambda L: raises(lambda: L.ones(2, 3).transpose(0, 2)),
    "negative dim out of range": lambda L: raises(lambda: L.ones(2, 3).unsqueeze(-4)),
}


@pytest.mark.parametrize("case", list(VIEW_DIM_CASES))
def test_view_dims_as_pytorch(case):
    # plain int dims in range take a short way: what is kept and raised stays PyTorch's
    same_as_torch(VIEW_DIM_CASES[case])


def _c(L, n=4):
    """A complex Tensor: 4 elements held on the host (a small value's view, as an stft's
    frames), or ``n`` in XLA."""
    z = L.tensor(np.array([1.5 + 0.5j, -2 + 1j, 0.25 - 2j, 3j] * (n // 4)).astype(np.complex64))
    return z.unsqueeze(0) if n == 4 else z


_KERNEL = "^\"{}\" not implemented for 'ComplexFloat'$"
_CLAMP = r"^clamp is not supported for complex types$"
# ops PyTorch has no complex form of: (call over L and a complex Tensor, exception, message)
COMPLEX_REFUSED = {
    "lt": (lambda L, z: z < z, NotImplementedError, _KERNEL.format("lt_cpu")),
    "le with a number": (lambda L, z: z <= 1, NotImplementedError, _KERNEL.format("le_cpu")),
    "gt of a real and a complex": (lambda L, z: z.real > z, NotImplementedError,
                                   _KERNEL.format("gt_cpu")),
    "ge of complex128": (lambda L, z: z.to(L.complex128) >= 0, NotImplementedError,
                         "^\"ge_cpu\" not implemented for 'ComplexDouble'$"),
    "maximum": (lambda L, z: L.maximum(z, z), RuntimeError,
                r"^maximum not implemented for complex tensors\.$"),
    "minimum of a real and a complex": (lambda L, z: L.minimum(z.real, z), RuntimeError,
                                        r"^minimum not implemented for complex tensors\.$"),
    "fmax": (lambda L, z: L.fmax(z, z), RuntimeError,
             r"^fmax not implemented for complex tensors\.$"),
    "max": (lambda L, z: z.max(), NotImplementedError, _KERNEL.format("max_all")),
    "min over a dim": (lambda L, z: z.min(-1), RuntimeError,
                       r"^min\(\): does not support complex input$"),
    "max of two": (lambda L, z: z.max(z), RuntimeError,
                   r"^maximum not implemented for complex tensors\.$"),
    "amax": (lambda L, z: z.amax(), NotImplementedError, _KERNEL.format("max_values_cpu")),
    "aminmax": (lambda L, z: z.aminmax(), NotImplementedError, _KERNEL.format("aminmax_cpu")),
    "argmax": (lambda L, z: z.argmax(), RuntimeError,
               r"^argmax\(\): does not support complex input$"),
    "clamp": (lambda L, z: z.clamp(0, 1), NotImplementedError, _CLAMP),
    "clamp of a Tensor": (lambda L, z: z.clamp(max=z), NotImplementedError, _CLAMP),
    "clamp_min of a number": (lambda L, z: z.clamp_min(1), NotImplementedError, _CLAMP),
    "clamp_min of a Tensor": (lambda L, z: z.clamp_min(z), NotImplementedError,
                              _KERNEL.format("maximum_cpu")),
    "clamp_max of a Tensor": (lambda L, z: z.clamp_max(z), NotImplementedError,
                              _KERNEL.format("minimum_cpu")),
    "relu": (lambda L, z: L.relu(z), NotImplementedError, _CLAMP),
    "sort": (lambda L, z: z.sort(), RuntimeError,
             r"^ Sort does not support complex dtypes on CPU$"),
    "argsort": (lambda L, z: z.argsort(), RuntimeError, r"^ Sort does not support complex"),
    "topk": (lambda L, z: z.topk(1), RuntimeError,
             r"^ topk does not support complex dtypes on CPU$"),
    "kthvalue": (lambda L, z: z.kthvalue(1), NotImplementedError,
                 _KERNEL.format("kthvalue_cpu")),
    "median": (lambda L, z: z.median(), NotImplementedError, _KERNEL.format("median_cpu")),
    "median over a dim": (lambda L, z: z.median(-1), NotImplementedError,
                          _KERNEL.format("median_out")),
    "mode": (lambda L, z: z.mode(), NotImplementedError, _KERNEL.format("mode_cpu")),
    "cummax": (lambda L, z: z.cummax(-1), NotImplementedError, _KERNEL.format("cummax_cpu")),
    "floor": (lambda L, z: z.floor(), NotImplementedError,
              r"^floor is not supported for complex inputs$"),
    "round": (lambda L, z: z.round(), NotImplementedError, _KERNEL.format("round_vml_cpu")),
    "sign": (lambda L, z: z.sign(), NotImplementedError,
             r"^Unlike NumPy, torch\.sign is not intended to support complex numbers"),
    "remainder": (lambda L, z: z % 2, NotImplementedError, _KERNEL.format("remainder_cpu")),
    "floor division": (lambda L, z: z // z, NotImplementedError,
                       _KERNEL.format("div_floor_cpu")),
    "atan2": (lambda L, z: L.atan2(z, z), NotImplementedError, _KERNEL.format("atan2_cpu")),
    "copysign": (lambda L, z: L.copysign(z, z), NotImplementedError,
                 _KERNEL.format("copysign_cpu")),
    "heaviside": (lambda L, z: L.heaviside(z, z), RuntimeError,
                  r"^heaviside is not yet implemented for complex tensors\.$"),
    "searchsorted of complex values": (lambda L, z: L.searchsorted(L.arange(3.0), z),
                                       NotImplementedError,
                                       _KERNEL.format("searchsorted_out_cpu")),
    "bucketize": (lambda L, z: L.bucketize(z, L.arange(3.0)), NotImplementedError,
                  _KERNEL.format("searchsorted_out_cpu")),
    "unique": (lambda L, z: z.unique(), NotImplementedError, _KERNEL.format("unique")),
    "unique over a dim": (lambda L, z: z.unique(dim=-1), NotImplementedError,
                          _KERNEL.format("unique_dim")),
    "unique_consecutive": (lambda L, z: L.unique_consecutive(z), NotImplementedError,
                           _KERNEL.format("unique")),
    "isin": (lambda L, z: L.isin(z, z), RuntimeError,
             r"^Unsupported input type encountered for isin\(\): ComplexFloat$"),
    "isin of real elements": (lambda L, z: L.isin(z.real, z), RuntimeError,
                              r"^Unsupported input type encountered for isin\(\): ComplexFloat$"),
    "nansum": (lambda L, z: z.nansum(), RuntimeError,
               r"^nansum on CPU does not support complex inputs$"),
    "nanmean": (lambda L, z: z.nanmean(), RuntimeError,
                r"^nansum on CPU does not support complex inputs$"),
    "signbit": (lambda L, z: z.signbit(), NotImplementedError,
                r"^signbit is not implemented for complex tensors\.$"),
    "isposinf": (lambda L, z: z.isposinf(), RuntimeError,
                 r"^isposinf does not support complex inputs\.$"),
    "isneginf": (lambda L, z: L.isneginf(z), RuntimeError,
                 r"^isneginf does not support complex inputs\.$"),
    "deg2rad": (lambda L, z: z.deg2rad(), RuntimeError,
                r"^deg2rad is not supported for complex tensors\.$"),
    "rad2deg": (lambda L, z: L.rad2deg(z), RuntimeError,
                r"^rad2deg is not supported for complex tensors\.$"),
    "logit": (lambda L, z: z.logit(), NotImplementedError, _KERNEL.format("logit_cpu")),
    "xlogy": (lambda L, z: L.xlogy(z, z), NotImplementedError, _KERNEL.format("xlogy_cpu")),
    "erf": (lambda L, z: z.erf(), NotImplementedError, _KERNEL.format("erf_vml_cpu")),
    "erfc": (lambda L, z: L.erfc(z), NotImplementedError, _KERNEL.format("erfc_vml_cpu")),
    "erfinv": (lambda L, z: z.erfinv(), NotImplementedError, _KERNEL.format("erfinv_vml_cpu")),
    "lgamma": (lambda L, z: z.lgamma(), NotImplementedError, _KERNEL.format("lgamma_vml_cpu")),
    "frac": (lambda L, z: z.frac(), NotImplementedError, _KERNEL.format("frac_cpu")),
    "i0": (lambda L, z: L.i0(z), NotImplementedError, _KERNEL.format("i0_vml_cpu")),
    "histc": (lambda L, z: L.histc(z, 3), NotImplementedError, _KERNEL.format("aminmax_cpu")),
    "histc over a range": (lambda L, z: L.histc(z, 3, 0, 1), NotImplementedError,
                           _KERNEL.format("histogram_cpu")),
    "nanquantile": (lambda L, z: L.nanquantile(z, 0.5), RuntimeError,
                    r"^quantile\(\) input tensor must be either float or double dtype$"),
    "cdist": (lambda L, z: L.cdist(z.reshape(-1, 2), z.reshape(-1, 2)), RuntimeError,
              r"^cdist only supports floating-point dtypes, X1 got: ComplexFloat$"),
    "cdist of a real and a complex": (lambda L, z: L.cdist(z.real.reshape(-1, 2),
                                                           z.reshape(-1, 2)), RuntimeError,
                                      r"^cdist only supports floating-point dtypes, X2 got: "
                                      r"ComplexFloat$"),
    "histogram": (lambda L, z: L.histogram(z, 3), NotImplementedError,
                  _KERNEL.format("histogramdd")),
    "histogram of real bins": (lambda L, z: L.histogram(z, L.arange(3.0)), RuntimeError,
                               r"^torch\.histogramdd: input tensor and bins tensors should "
                               r"have the same dtype, but got input with dtype "
                               r"c10::complex<float> and bins for dimension 0 with dtype "
                               r"float$"),
    # polygamma runs digamma's kernel for n = 0, trigamma's for 1
    "polygamma 0": (lambda L, z: L.polygamma(0, z), NotImplementedError,
                    _KERNEL.format("digamma")),
    "polygamma 1": (lambda L, z: z.polygamma(1), NotImplementedError,
                    _KERNEL.format("trigamma")),
    "polygamma 3": (lambda L, z: L.special.polygamma(3, z), NotImplementedError,
                    _KERNEL.format("polygamma")),
    "mvlgamma": (lambda L, z: L.mvlgamma(z, 2), NotImplementedError, _KERNEL.format("arange_cpu")),
}


@pytest.mark.parametrize("n", [4, 5000], ids=["host", "xla"])
@pytest.mark.parametrize("case", list(COMPLEX_REFUSED))
def test_ops_without_a_complex_form_refuse_complex_input(case, n):
    call, exc, match = COMPLEX_REFUSED[case]
    raises_as_torch(lambda L: call(L, _c(L, n)), exc, match)


def test_what_complex_input_does_take_still_runs():
    same_as_torch(lambda L: [py((z := _c(L)) == z), py(z.sgn().real), py(z != 1j),
                             py((z * 2).imag), py(z.abs())])


def test_logdet_of_a_complex_matrix_is_the_complex_log_of_its_determinant():
    got = same_as_torch(lambda L: [py(v) for v in (lambda d: (d.real, d.imag, str(d.dtype)[-9:]))(
        L.logdet(L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.complex64)))])
    assert abs(got[1] - np.pi) < 1e-6 and got[2] == "complex64"  # det -2: log 2 + i pi


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_histogram_of_integers_has_no_kernel(dtype):
    kind = {"int64": "Long", "bool": "Bool"}[dtype]
    raises_as_torch(lambda L: L.histogram(L.ones(3, dtype=getattr(L, dtype)), 3),
                    NotImplementedError, _KERNEL.replace("{}", "histogramdd").replace(
                        "ComplexFloat", kind))


def test_cdist_takes_one_floating_dtype():
    raises_as_torch(lambda L: L.cdist(L.ones(2, 3, dtype=L.long), L.ones(2, 3)), RuntimeError,
                    r"^cdist only supports floating-point dtypes, X1 got: Long$")
    raises_as_torch(lambda L: L.cdist(L.ones(2, 3, dtype=L.float64), L.ones(2, 3)),
                    RuntimeError, r"^expected scalar type Double but found Float$")


_BOOL_SUB = (r"^Subtraction, the `-` operator, with a bool tensor is not supported\. If you "
             r"are trying to invert a mask, use the `~` or `logical_not\(\)` operator "
             r"instead\.$")


@pytest.mark.parametrize("call", [
    lambda L: _b(L) - _c(L).reshape(2, 2), lambda L: _c(L, 5000) - L.ones(5000, dtype=L.bool),
    lambda L: _b(L) - 1j, lambda L: L.ones(2) - True, lambda L: 1 - _b(L),
    lambda L: L.rsub(_b(L), 2), lambda L: L.sub(L.ones(2, 2), _b(L), alpha=2),
    lambda L: L.tensor(True) - L.ones(3)],
    ids=["bool - complex", "complex - bool", "bool - number", "float - True", "1 - bool",
         "rsub", "sub with alpha", "0-d bool - float"])
def test_subtracting_a_bool_raises_pytorchs_error(call):
    raises_as_torch(call, RuntimeError, _BOOL_SUB)


def test_subtracting_two_bools_raises_pytorchs_error():
    raises_as_torch(lambda L: _b(L) - _b(L), RuntimeError,
                    r"^Subtraction, the `-` operator, with two bool tensors is not supported\. "
                    r"Use the `\^` or `logical_xor\(\)` operator instead\.$")
    raises_as_torch(lambda L: _b(L).sub_(_b(L)), RuntimeError, "with two bool tensors")


def _message(call, L):
    try:
        call(L)
    except TypeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("sizes", [(True, 24), ((True, 24),), ([True, 24],), (True,),
                                   (2.0, 12), ((2.0, 12),), (2.5,)])
def test_view_refuses_a_bool_or_float_first_size_as_pytorchs_parser(sizes):
    # PyTorch's parser takes ``tuple of ints`` by its first element's type: a bool or a
    # float there matches no signature (a later bool passes as an int); before, hookgrad
    # read True as 1 and returned a view, and a float got another message
    call = lambda L: L.zeros(2, 3, 4).view(*sizes)  # noqa: E731
    got = _message(call, hookgrad)
    assert got is not None and got.startswith(
        "view() received an invalid combination of arguments - got (")
    if torch is not None:
        assert got == _message(call, torch)
    # a later bool is an int to both
    same_as_torch(lambda L: list(L.zeros(2, 3, 4).view(2, True, 12).shape))


@pytest.mark.parametrize("old, sizes", [((0, 3), (0, -1)), ((0, 3), (-1, 0)), ((0,), (-1, 0, 5)),
                                        ((2, 3), (0, -1))])
def test_a_minus_one_beside_a_zero_size_is_refused_in_pytorchs_words(old, sizes):
    # with no elements, -1 beside a 0 could be any size: PyTorch names the ambiguity (before,
    # hookgrad said the shape is invalid for input of size 0); with elements, no size fits
    def message(L):
        try:
            L.zeros(*old).view(*sizes)
        except RuntimeError as e:
            return str(e)
    got = same_as_torch(message)
    if old[0] == 0:
        assert got == (f"cannot reshape tensor of 0 elements into shape {list(sizes)} because "
                       "the unspecified dimension size -1 can be any value and is ambiguous")
    if torch is not None:
        assert got == message(torch)
