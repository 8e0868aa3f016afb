"""Every row of the op table (tests/ops/_op_table.py): forward values and gradients against
JAX (``jax.grad`` of the same computation in ``jnp``) and PyTorch, node names and edges
against PyTorch, finite differences and gradients of gradients for a sample of rows.

Adding an op to hookgrad/_ops without a row fails ``test_every_op_has_a_row``.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad._engine import fusion
from hookgrad._ops import (clamp, dispatch, fills, indexing, linalg, linalg_decomp, linalg_lu,
                           linalg_products, linalg_solve, nn_pool, nn_resample, nn_rnn, op_node,
                           nn_sparse, pieces, pointwise, reduction, shape, sorting)
from hookgrad.testing import check_grads

from tests.ops._op_table import ROWS, F, arrays_for, outputs, tensors

try:
    import torch
except ImportError:  # the JAX comparisons still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
RTOL, ATOL = 1e-4, 1e-5


def _rows(flag=None):
    """Parametrise over the rows (with ``flag`` or ``flag*``); slow-tier ones marked slow."""
    sel = [pytest.param(r, id=r.id, marks=[pytest.mark.slow] if "slow" in r.flags or
                        (flag and flag + "*" in r.flags) else [])
           for r in ROWS if flag is None or flag in r.flags or flag + "*" in r.flags]
    return pytest.mark.parametrize("row", sel)


def to_np(t):
    if torch is not None and isinstance(t, torch.Tensor):
        return t.detach().numpy()
    if isinstance(t, hg.Tensor):
        return np.asarray(t._data)
    return np.asarray(t)


def is_float(t):
    return np.issubdtype(to_np(t).dtype, np.floating)


def dtype_name(t):
    if torch is not None and isinstance(t, torch.Tensor):
        name = str(t.dtype).replace("torch.", "")
        if name == "int64" and not jax.config.read("jax_enable_x64"):
            name = "int32"  # hookgrad's int64 is JAX's int32 without x64 (docs/differences.md)
        return name
    return t.dtype.name


def weights(row, outs):
    """Fixed cotangents (one per output), so that gradients are not those of a plain sum
    (which vanish for softmax, for instance)."""
    rng = np.random.default_rng(len(row.id))
    return [rng.standard_normal(to_np(o).shape).astype(np.float32) if is_float(o) else None
            for o in outs]


def live(outs, ws):
    """(output, cotangent) pairs of the outputs gradients flow from."""
    return [(o, w) for o, w in zip(outs, ws) if w is not None and o.requires_grad]


def float_positions(row):
    return [i for i, s in enumerate(row.inputs) if isinstance(s, F)]


def grads(L, row, arrays, create_graph=False):
    """Vector-Jacobian products of the row's outputs with the fixed cotangents, w.r.t. its
    float inputs (the gradients of ``sum(out * w)``, without recording that sum)."""
    xs = tensors(L, row, arrays)
    outs = outputs(row.call(L, *xs))
    pairs = live(outs, weights(row, outs))
    if not pairs:
        return xs, None, None
    fx = [xs[i] for i in float_positions(row)]
    gs = L.autograd.grad([o for o, _ in pairs], fx, [L.tensor(w) for _, w in pairs],
                         allow_unused=True, create_graph=create_graph)
    gs = [g if g is not None else L.zeros_like(x) for g, x in zip(gs, fx)]
    return xs, fx, gs


def ref_loss(row, arrays):
    """``sum(out * w)`` over the outputs in JAX, as a function of the float inputs."""
    pos = float_positions(row)
    try:
        shapes = jax.eval_shape(lambda *a: outputs(row.ref(*a)), *arrays)
    except Exception:  # noqa: BLE001 - data-dependent shapes: evaluate
        shapes = outputs(row.ref(*arrays))
    ws = weights(row, [np.zeros(o.shape, o.dtype) for o in shapes])

    def loss(*fs):
        args = [jnp.asarray(a) for a in arrays]
        for i, f in zip(pos, fs):
            args[i] = f
        outs = outputs(row.ref(*args))
        return sum(jnp.vdot(o, w) for o, w in zip(outs, ws)
                   if w is not None and jnp.issubdtype(o.dtype, jnp.floating))
    return loss, [jnp.asarray(arrays[i]) for i in pos]


def _ref_both(row, arrays):
    """The row's JAX outputs and the gradients of the weighted loss (None: no float
    output)."""
    loss, fs = ref_loss(row, arrays)

    def both(arrs, fs):
        outs = outputs(row.ref(*arrs))
        if not fs or not any(jnp.issubdtype(o.dtype, jnp.floating) for o in outs):
            return outs, None
        return outs, list(jax.grad(loss, argnums=tuple(range(len(fs))))(*fs))
    return both, ([jnp.asarray(a) for a in arrays], fs)


_REFERENCE = {}


def _traceable(fns, args):
    """``{id: fns[id](*args[id])}`` of the rows that trace; a data-dependent reference
    (a boolean mask's shape) raises under the trace and is left to run eagerly. Each row is
    traced once, here (a separate ``jax.eval_shape`` first would trace every row twice)."""
    out = {}
    for k, fn in fns.items():
        try:
            out[k] = fn(*args[k])
        except Exception:  # noqa: BLE001 - data-dependent reference: eager in reference()
            continue
    return out


def reference(row):
    """``(outputs, grads)`` of ``row.ref``. The JAX references of all the rows that run are
    computed together in one ``jax.jit`` (one compilation instead of hundreds of small ones
    in eager JAX); rows that cannot be traced (boolean masks) run eagerly."""
    if not _REFERENCE:
        slow = os.environ.get("HOOKGRAD_SLOW") == "1"
        fns, args = {}, {}
        for r in ROWS:
            if r.ref is None or ("slow" in r.flags and not slow):
                continue
            try:
                fns[r.id], args[r.id] = _ref_both(r, arrays_for(r))
            except Exception:  # noqa: BLE001 - fails again, alone, in reference(r)
                continue
        _REFERENCE.update(jax.jit(lambda a: _traceable(fns, a))(args))
        _REFERENCE.setdefault(None, None)
    if row.id not in _REFERENCE:
        fn, a = _ref_both(row, arrays_for(row))
        _REFERENCE[row.id] = fn(*a)
    return _REFERENCE[row.id]


def assert_close(got, want, what):
    got, want = to_np(got), to_np(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=RTOL,
                               atol=ATOL, equal_nan=True, err_msg=what)


# --------------------------------------------------------------------------- forward


@_rows()
def test_forward_matches_jax_and_torch(row):
    arrays = arrays_for(row)
    got = outputs(row.call(hg, *tensors(hg, row, arrays)))
    if row.ref is not None:
        want = reference(row)[0]
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{row.id} output {k} vs jnp")
    if torch is not None:
        want = outputs(row.call(torch, *tensors(torch, row, arrays)))
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert dtype_name(g) == dtype_name(w), f"{row.id} output {k} dtype"
            assert_close(g, w, f"{row.id} output {k} vs torch")


# --------------------------------------------------------------------------- gradients


@_rows()
def test_gradients_match_jax_and_torch(row):
    arrays = arrays_for(row)
    _, _, got = grads(hg, row, arrays)
    if got is None:
        pytest.skip("no differentiable output")
    if row.ref is not None:
        want = reference(row)[1]
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{row.id} grad {k} vs jax.grad")
    if torch is not None:
        _, _, want = grads(torch, row, arrays)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{row.id} grad {k} vs torch")


@_rows()
def test_gradients_through_a_fused_backward(row):
    """Between hook-free neighbours the op's node runs inside one compiled backward (from
    the second backward of a graph shape on): the gradients are node-by-node execution's."""
    arrays = arrays_for(row)

    def run(fused):
        xs = tensors(hg, row, arrays)
        fx = [xs[i] for i in float_positions(row)]
        ins = [x * 1.5 if isinstance(s, F) else x for x, s in zip(xs, row.inputs)]
        outs = outputs(row.call(hg, *ins))
        pairs = live(outs, weights(row, outs))
        if not pairs:
            pytest.skip("no differentiable output")
        losses = [(o.sin() * hg.tensor(w)).sum() for o, w in pairs]
        with hg.autograd.set_backward_fusion(fused):
            gs = hg.autograd.grad(losses, fx, allow_unused=True)
        return [None if g is None else to_np(g) for g in gs], pairs[0][0].grad_fn

    want, _ = run(False)
    for _ in range(3):  # node by node, compiled, cached
        got, node = run(True)
        for k, (g, w) in enumerate(zip(got, want)):
            assert (g is None) == (w is None), f"{row.id} grad {k}"
            if g is not None:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=row.id)
    if isinstance(node, op_node.OpNode) and node._site.op.jit and len(node._out_meta()) == 1:
        vop = node._site.op._vjp_cache.get(node._site.vkey)
        assert any(p[0] is vop for key in fusion._compiled for p in key[2]), \
            f"{row.id}: its node never ran in a compiled chain"


def _node_info(t, deep):
    fn = t.grad_fn
    if fn is None:
        return None
    if not deep:
        return fn.name()
    return fn.name(), [(n.name() if n is not None else None, nr)
                       for n, nr in fn.next_functions]


@needs_torch
@_rows()
def test_node_names_and_edges_match_torch(row):
    if "nonames" in row.flags:
        pytest.skip("torch records a NotImplemented node here")
    arrays = arrays_for(row)
    got = outputs(row.call(hg, *tensors(hg, row, arrays)))
    want = outputs(row.call(torch, *tensors(torch, row, arrays)))
    deep = "shallow" not in row.flags
    for k, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, torch.Tensor):
            continue
        assert g.requires_grad == w.requires_grad, f"{row.id} output {k} requires_grad"
        assert _node_info(g, deep) == _node_info(w, deep), f"{row.id} output {k}"


# --------------------------------------------------------------------------- samples


@_rows("fd")
def test_finite_differences(row):
    arrays = arrays_for(row)
    pos = float_positions(row)
    consts = tensors(hg, row, arrays)

    def fn(*fs):
        args = list(consts)
        for i, f in zip(pos, fs):
            args[i] = f
        return tuple(outputs(row.call(hg, *args)))
    order = 2 if "gg" in row.flags or "gg*" in row.flags else 1
    check_grads(fn, tuple(consts[i] for i in pos), order=order)


@_rows("gg")
def test_grad_of_grad_matches_jax_and_torch(row):
    arrays = arrays_for(row)
    rng = np.random.default_rng(7)
    us = [rng.standard_normal(arrays[i].shape).astype(np.float32) for i in float_positions(row)]

    def second(L):
        _, fx, gs = grads(L, row, arrays, create_graph=True)
        pairs = [(g, L.tensor(u)) for g, u in zip(gs, us) if g.requires_grad]
        out = L.autograd.grad([g for g, _ in pairs], fx, [u for _, u in pairs],
                              allow_unused=True)
        return [o if o is not None else L.zeros_like(x) for o, x in zip(out, fx)]
    got = second(hg)
    loss, fs = ref_loss(row, arrays)
    argn = tuple(range(len(fs)))

    def first(*fs):
        return sum(jnp.sum(g * u) for g, u in zip(jax.grad(loss, argnums=argn)(*fs), us))
    want = jax.grad(first, argnums=argn)(*fs)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, f"{row.id} grad-of-grad {k} vs jax")
    if torch is not None:
        for k, (g, w) in enumerate(zip(got, second(torch))):
            assert_close(g, w, f"{row.id} grad-of-grad {k} vs torch")


# --------------------------------------------------------------------------- coverage

# Ops of the table exercised elsewhere (in-place only, or not reachable from a row).
ELSEWHERE = {
    "zero": "test_inplace.py", "fill": "test_inplace.py", "fill_tensor": "test_inplace.py",
    "copy": "test_inplace.py", "setitem": "test_indexing.py", "index_put": "test_indexing.py",
    "index_put_acc": "test_indexing.py", "setitem_fill": "test_indexing.py",
    "to_dtype": "test_tensor_api.py",
    "to_device": "test_tensor_api.py (device moves)", "alias": "not used by any public op",
    "rsub_tensor": "test_rsub_with_tensor_and_alpha",
    "remainder.Scalar_Tensor": "test_fuzz_classes.py (no derivative, as PyTorch's overload)",
    "floor_divide": "test_fuzz_classes.py (no derivative; its row runs on detached values)",
    "matmul": "never records (the fused product when nothing does): test_graph_shapes.py and "
              "test_forward_ad.py",
}


def _table_ops():
    ops = {}
    for mod in (pointwise, clamp, fills, reduction, shape, pieces, linalg, indexing, sorting,
                nn_resample, nn_pool, nn_sparse, nn_rnn, linalg_decomp, linalg_lu,
                linalg_products, linalg_solve):
        for v in vars(mod).values():
            cands = v.values() if isinstance(v, dict) else [v]
            for op in cands:
                if isinstance(op, dispatch.Op) and op.node is not None:
                    ops[op.name] = op
    return ops


def _reached(res, seen):
    stack = [t.grad_fn for t in outputs(res) if isinstance(t, hg.Tensor) and t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(m for m, _ in n.next_functions)


def _trace_row(r, seen):
    """Run the row on tracers (jax.eval_shape: nothing is compiled); rows that need
    concrete values (boolean masks) run eagerly."""
    def f(*arrs):
        ts = [hg.tensor(a, requires_grad=isinstance(spec, F)) if isinstance(spec, F) else
              hg.tensor(a) for spec, a in zip(r.inputs, arrs)]
        _reached(r.call(hg, *ts), seen)
        return 0
    try:
        jax.eval_shape(f, *arrays_for(r))
    except Exception:  # noqa: BLE001 - data-dependent rows
        _reached(r.call(hg, *tensors(hg, r)), seen)


def test_every_op_has_a_row():
    seen = {}
    for r in ROWS:
        _trace_row(r, seen)
    covered = {n._site.op.name for n in seen.values() if isinstance(n, op_node.OpNode)}
    missing = set(_table_ops()) - covered - set(ELSEWHERE)
    assert not missing, f"ops with no row in tests/ops/_op_table.py: {sorted(missing)}"


def test_rsub_with_tensor_and_alpha():
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    y = hg.tensor([5.0, 7.0], requires_grad=True)
    z = hg.rsub(x, y, alpha=2)
    assert z.tolist() == [3.0, 3.0] and z.grad_fn.name() == "RsubBackward0"
    z.sum().backward()
    assert x.grad.tolist() == [-2.0, -2.0] and y.grad.tolist() == [1.0, 1.0]


REQUIRED = (
    "add sub mul div neg pow exp log log1p expm1 sqrt rsqrt reciprocal abs sign sin cos tan tanh "
    "sigmoid relu erf clamp clip maximum minimum where masked_fill lerp sum mean prod var std max "
    "min amax amin argmax argmin logsumexp cumsum norm softmax log_softmax matmul mm bmm einsum t "
    "transpose permute outer reshape view flatten unflatten squeeze unsqueeze expand expand_as "
    "repeat broadcast_to split chunk narrow unbind flip roll tril triu gather index_select "
    "scatter_add eq ne lt le gt ge logical_and logical_or logical_not logical_xor add_ sub_ mul_ "
    "div_ zero_ fill_ copy_ clamp_ sin_ exp_ relu_ sigmoid_ tanh_ neg_ pow_ masked_fill_ "
    "scatter_add_ index_put_ index_add clamp_min clamp_max clamp_min_ clamp_max_ lerp_ "
    "cat stack movedim swapaxes take masked_select broadcast_tensors").split()


@needs_torch
@pytest.mark.parametrize("name", REQUIRED)
def test_function_and_method_forms_exist_where_torch_has_them(name):
    assert hasattr(hg, name) == hasattr(torch, name), f"hookgrad.{name}"
    assert hasattr(hg.Tensor, name) == hasattr(torch.Tensor, name), f"Tensor.{name}"


def test_max_with_dim_returns_named_tuple():
    x = hg.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    r = hg.max(x, 1)
    assert isinstance(r, tuple) and type(r).__name__ == "max"
    assert r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    values, indices = x.min(dim=1, keepdim=True)
    assert values.shape == (2, 1) and indices.tolist() == [[0], [1]]
    assert repr(r).startswith("hookgrad.return_types.max(\nvalues=tensor([5., 7.])")


@needs_torch
def test_return_type_repr_matches_torch():
    got = repr(hg.tensor([1.0, 3.0, 2.0]).max(0))
    want = repr(torch.tensor([1.0, 3.0, 2.0]).max(0))
    assert got.replace("hookgrad", "torch") == want


@pytest.mark.parametrize("call, exc, match", [
    (lambda L, x: x.sum(3), IndexError, r"Dimension out of range \(expected to be in range of "
                                        r"\[-2, 1\], but got 3\)"),
    (lambda L, x: x.softmax(-3), IndexError, "Dimension out of range"),
    (lambda L, x: x.view(5), RuntimeError, r"shape '\[5\]' is invalid for input of size 12"),
    (lambda L, x: x.reshape(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda L, x: x.expand(3, 5), RuntimeError, r"The expanded size of the tensor \(5\) must "
                                                r"match the existing size \(4\) at "
                                                r"non-singleton dimension 1"),
    (lambda L, x: x.expand(4), RuntimeError, "must be greater or equal to the number of "
                                             "dimensions"),
    (lambda L, x: x.repeat(2), RuntimeError, "Number of dimensions of repeat dims can not be "
                                             "smaller"),
    (lambda L, x: L.cat([x, x.t()]), RuntimeError, "Sizes of tensors must match except in "
                                                   "dimension 0. Expected size 4 but got size 3"),
    (lambda L, x: L.stack([x, x[0]]), RuntimeError, "stack expects each tensor to be equal size"),
    (lambda L, x: x.permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda L, x: x.narrow(0, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds"),
    (lambda L, x: x.mm(x), RuntimeError, r"mat1 and mat2 shapes cannot be multiplied \(3x4 and "
                                         r"3x4\)"),
    (lambda L, x: x @ L.ones(5), RuntimeError, "size mismatch"),
    (lambda L, x: L.ones(3) @ L.ones(4), RuntimeError, "inconsistent tensor size"),
    (lambda L, x: L.bmm(x, x), RuntimeError, "batch1 must be a 3D tensor"),
    (lambda L, x: x.unflatten(1, (3, 2)), RuntimeError, r"unflatten: Provided sizes \[3, 2\] "
                                                        "don't multiply up"),
    (lambda L, x: x.flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda L, x: x.split(0), RuntimeError, "split_size can only be 0"),
    (lambda L, x: x.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0"),
    (lambda L, x: x.index_select(0, L.tensor([[0]])), IndexError, "Index is supposed to be a "
                                                                  "vector"),
    (lambda L, x: L.where(x, x, x), RuntimeError, "where expected condition to be a boolean "
                                                   "tensor"),
    (lambda L, x: x.masked_fill(x, 1.0), RuntimeError, "masked_fill_ only supports boolean "
                                                       "masks"),
    (lambda L, x: x.clamp(), RuntimeError, "At least one of 'min' or 'max' must not be None"),
    (lambda L, x: L.div(x, x, rounding_mode="round"), RuntimeError, "rounding_mode"),
    (lambda L, x: L.cat([]), ValueError, r"torch.cat\(\): expected a non-empty list of "
                                         "Tensors"),
    (lambda L, x: L.ones(2, dtype=L.int32).mean(), RuntimeError, "Got: Int"),
    (lambda L, x: x[3], IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda L, x: x[:, -5], IndexError, "index -5 is out of bounds for dimension 1 with size 4"),
    (lambda L, x: x[L.tensor([0, 7])], IndexError, "index 7 is out of bounds for dimension 0 "
                                                   "with size 3"),
    (lambda L, x: x[0, 0, 0], IndexError, "too many indices for tensor of dimension 2"),
    (lambda L, x: x[x], IndexError, "tensors used as indices must be long, int, byte or bool "
                                    "tensors"),
    (lambda L, x: x + L.ones(2), RuntimeError, r"The size of tensor a \(4\) must match the size "
                                               r"of tensor b \(2\) at non-singleton dimension 1"),
    (lambda L, x: L.maximum(x, L.ones(2, 1)), RuntimeError, r"The size of tensor a \(3\) must "
                                                            r"match the size of tensor b \(2\) "
                                                            "at non-singleton dimension 0"),
    (lambda L, x: L.logical_or(x, 0), TypeError, r"logical_or\(\): argument 'other' \(position "
                                                 r"2\) must be Tensor, not int"),
])
def test_errors_match_torch(call, exc, match):
    with pytest.raises(exc, match=match):
        call(hg, hg.zeros(3, 4))
    if torch is not None:  # PyTorch raises the same error type with the same words
        with pytest.raises(exc, match=match):
            call(torch, torch.zeros(3, 4))
