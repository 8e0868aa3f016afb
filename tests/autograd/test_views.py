"""Views by functionalization: a view remembers its base and geometry, in-place writes
through it reach the base and its other views, and autograd records what PyTorch records
(``CopySlices`` on the base, ``AsStridedBackward0`` on the views)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hookgrad
from tests.differential import needs_torch, py, same_as_torch

VIEWS = {
    "slice": lambda b: b[1:3],
    "int": lambda b: b[1],
    "none_ellipsis": lambda b: b[None, ..., 1],
    "int_slice": lambda b: b[0, 1:],
    "step": lambda b: b[::2, 1::2],
    "view": lambda b: b.view(12),
    "reshape": lambda b: b.reshape(2, 6),
    "flatten": lambda b: b.flatten(),
    "transpose": lambda b: b.transpose(0, 1),
    "t": lambda b: b.t(),
    "permute": lambda b: b.permute(1, 0),
    "select": lambda b: b.select(1, 2),
    "narrow": lambda b: b.narrow(1, 1, 2),
    "unsqueeze": lambda b: b.unsqueeze(1),
    "squeeze": lambda b: b[None].squeeze(0),
    "diagonal": lambda b: b.diagonal(1),
    "view_of_view": lambda b: b[1:].t()[1],
    "view_as": lambda b: b.view_as(b),
}


def _scenario(make):
    def fn(L):
        x = L.arange(12.0).reshape(3, 4).requires_grad_()
        b = x.clone()
        v = make(b)
        sibling = b.t()
        meta = [list(v.shape), list(v.stride()), v.storage_offset(), v.is_contiguous(),
                v._is_view(), v._base is b, type(v.grad_fn).__name__]
        v.mul_(2)
        after = [type(v.grad_fn).__name__, type(b.grad_fn).__name__,
                 [type(f[0]).__name__ for f in b.grad_fn.next_functions],
                 v._version, b._version, sibling._version, type(sibling.grad_fn).__name__]
        (b * b).sum().add(sibling.sum()).add(v.sum()).backward()
        return {"meta": meta, "after": after, "base": py(b), "sibling": py(sibling),
                "grad": py(x.grad)}
    return fn


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_write_through_a_view_matches_pytorch(name):
    got = same_as_torch(_scenario(VIEWS[name]))
    assert got["meta"][4] and got["meta"][5]  # a view of b
    assert got["after"][:2] == ["AsStridedBackward0", "CopySlices"]
    assert got["after"][3] == got["after"][4] == got["after"][5] == 1  # one shared counter


def test_in_place_on_the_base_updates_its_views():
    x = hookgrad.zeros(2, 3)
    row, col = x[1], x[:, 2]
    x.add_(1)
    row.mul_(5)
    assert x.tolist() == [[1, 1, 1], [5, 5, 5]]
    assert col.tolist() == [1, 5]
    assert x._version == row._version == col._version == 2


def test_detach_shares_the_version_and_data_does_not():
    x = hookgrad.ones(3)
    d, a = x.detach(), x.data
    assert not d._is_view() and d._base is None and not a._is_view()
    d.add_(1)
    assert x.tolist() == a.tolist() == [2, 2, 2]
    assert x._version == 1 and a._version == 0
    a.add_(1)
    assert x.tolist() == d.tolist() == [3, 3, 3] and x._version == 1


def test_data_assignment_keeps_the_version_counter_but_not_the_storage():
    x = hookgrad.zeros(1, 2)
    v = x[:]
    x.data = hookgrad.ones(2, 3)
    x.add_(1)
    assert x._version == v._version == 1
    assert v.tolist() == [[0, 0]]


def test_strides_offsets_and_data_ptr():
    x = hookgrad.zeros(3, 4)
    v = x[1:, ::2]
    assert v.stride() == (4, 2) and v.storage_offset() == 4 and not v.is_contiguous()
    assert v.data_ptr() == x.data_ptr() + 4 * x.element_size()
    assert x.t().contiguous().grad_fn is None and x.t().contiguous().is_contiguous()
    assert not x.t().contiguous()._is_view()
    assert x.expand(2, 3, 4).stride() == (0, 4, 1)


def test_reshape_is_a_view_only_where_view_would_be():
    x = hookgrad.zeros(3, 4, requires_grad=True).clone()
    assert x.reshape(12)._is_view()
    r = x.t().reshape(12)
    assert not r._is_view() and type(r.grad_fn).__name__ == "UnsafeViewBackward0"
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's "
                                           "size and stride"):
        x.t().view(12)


def test_in_place_on_a_view_of_a_leaf_raises():
    x = hookgrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation"):
        x[0].mul_(2)
    with hookgrad.no_grad():  # allowed without grad mode (initialisation)
        x[0].mul_(2)
    assert x.tolist() == [2, 1, 1] and x._version == 1


def test_in_place_on_a_view_made_in_no_grad_mode_raises():
    x = hookgrad.ones(3, requires_grad=True).clone()
    with hookgrad.no_grad():
        v = x[1:]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                                           "modified inplace with grad mode enabled"):
        v.mul_(2)


@pytest.mark.parametrize("split", ["unbind", "split", "chunk"])
def test_in_place_on_an_output_of_a_multi_output_view_op_raises(split):
    x = hookgrad.ones(4, 2, requires_grad=True).clone()
    parts = {"unbind": lambda: x.unbind(0), "split": lambda: x.split(2),
             "chunk": lambda: x.chunk(2)}[split]()
    name = "Unbind" if split == "unbind" else "Split"
    with pytest.raises(RuntimeError, match=f"Output 1 of {name} is a view and is being "
                                           "modified inplace"):
        parts[1].mul_(2)


def test_in_place_on_a_view_returned_by_a_custom_function_raises():
    class Alias(hookgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:]

        @staticmethod
        def backward(ctx, g):
            return g

    out = Alias.apply(hookgrad.ones(2, requires_grad=True).clone())
    assert out._is_view()
    with pytest.raises(RuntimeError, match="Output 0 of Alias is a view and is being modified "
                                           "inplace. This view was created inside a custom "
                                           "Function"):
        out.mul_(2)


def test_in_place_on_an_expanded_view_raises():
    x = hookgrad.ones(1, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor "
                                           "refers to a single memory location"):
        x.expand(2, 3).add_(1)


def test_hooks_on_a_view_stay_with_its_old_history():
    fired = []
    base = hookgrad.tensor([1.0], requires_grad=True).clone()
    view, view2 = base[:], base[:]
    view.register_hook(lambda g: fired.append("old"))
    view.mul_(2)
    view2.register_hook(lambda g: fired.append("new"))
    (view + view2).sum().backward()
    assert fired == ["new"]


def _compiled_step(x):
    b = x * 1.0
    b[1:].mul_(3)
    b.t()[0].add_(1)
    return (b * b).sum()


def test_write_through_views_inside_compile_and_func_matches_eager():
    x = hookgrad.arange(6.0).reshape(2, 3).requires_grad_()
    _compiled_step(x).backward()
    eager = x.grad.tolist()
    x.grad = None

    def step(x):
        loss = _compiled_step(x)
        loss.backward()
        return loss
    compiled = hookgrad.compile(step)
    for _ in range(2):
        x.grad = None
        compiled(x)
        assert np.allclose(x.grad.tolist(), eager)

    class M(hookgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = hookgrad.nn.Parameter(hookgrad.arange(6.0).reshape(2, 3))

        def forward(self):
            return _compiled_step(self.w)

    m = M()
    grad = jax.grad(lambda w: hookgrad.func.functional_call(m, {"w": w}, ()))(
        jnp.arange(6.0).reshape(2, 3))
    assert np.allclose(np.asarray(grad), eager)


# --------------------------------------------------------------------------- random chains

_STEPS = ["slice", "int", "t", "unsqueeze", "narrow", "flat", "diag", "none"]


def _apply_step(t, kind, k):
    if t.ndim == 0:
        return t
    if kind == "slice":
        return t[k % t.shape[0]:]
    if kind == "int":
        return t[k % t.shape[0]] if t.ndim > 1 else t
    if kind == "t":
        return t.transpose(0, t.ndim - 1)
    if kind == "unsqueeze":
        return t.unsqueeze(k % (t.ndim + 1)) if t.ndim < 4 else t
    if kind == "narrow":
        d = k % t.ndim
        return t.narrow(d, 0, max(t.shape[d] - 1, 1))
    if kind == "flat":
        return t.reshape(-1) if t.is_contiguous() else t
    if kind == "diag":
        return t.diagonal() if t.ndim >= 2 else t
    return t[None]


def _chain_program(chains, which, op):
    def fn(L):
        x = L.arange(24.0).reshape(2, 3, 4).requires_grad_()
        b = x.clone()
        views = []
        for chain in chains:
            v = b
            for kind, k in chain:
                v = _apply_step(v, kind, k)
            views.append(v)
        target = views[which]
        if op == "mul":
            target.mul_(2)
        else:
            target.add_(target.detach().sin())
        out = {"base": py(b), "views": [py(v) for v in views], "versions":
               [v._version for v in views] + [b._version],
               "strides": [[list(v.stride()), v.storage_offset()] for v in views],
               "names": [type(v.grad_fn).__name__ for v in views] + [type(b.grad_fn).__name__]}
        loss = (b * b).sum()
        for i, v in enumerate(views):
            loss = loss + (v * (i + 1)).sum()
        loss.backward()
        out["grad"] = py(x.grad)
        return out
    return fn


_chain = st.lists(st.tuples(st.sampled_from(_STEPS), st.integers(0, 3)), min_size=1,
                  max_size=4)


@needs_torch
@settings(max_examples=5, deadline=None)
@given(st.lists(_chain, min_size=1, max_size=3), st.integers(0, 2),
       st.sampled_from(["mul", "add"]))
def test_random_view_chains_match_pytorch(chains, which, op):
    same_as_torch(_chain_program(chains, which % len(chains), op))


@pytest.mark.slow
@needs_torch
@settings(max_examples=60, deadline=None)
@given(st.lists(_chain, min_size=1, max_size=4), st.integers(0, 3),
       st.sampled_from(["mul", "add"]))
def test_random_view_chains_match_pytorch_many(chains, which, op):
    same_as_torch(_chain_program(chains, which % len(chains), op))


class _AddInPlace(hookgrad.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        a.add_(b)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class _AddInPlaceTwo(hookgrad.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        a.add_(b)
        ctx.mark_dirty(a)
        return a, a + b

    @staticmethod
    def backward(ctx, ga, gab):
        return ga + gab, ga + gab


def test_a_function_modifying_a_view_rebases_the_base():
    a = hookgrad.ones(2, requires_grad=True)
    b = hookgrad.ones(2, requires_grad=True)
    base = a.clone()
    c = _AddInPlace.apply(base.view_as(base), b)
    assert type(base.grad_fn).__name__ == "CopySlices"
    assert type(c.grad_fn).__name__ == "AsStridedBackward0"
    (c.sum() + base.sum()).backward()
    assert a.grad.tolist() == [2, 2] and b.grad.tolist() == [2, 2]
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        _AddInPlace.apply(a.view_as(a), b)
    with pytest.raises(RuntimeError, match="If your Function modifies inplace an input that "
                                           "is a view of another Tensor, your Function cannot "
                                           "return more than one Tensor"):
        _AddInPlaceTwo.apply(a.clone().view_as(a), b)


def _piece_geometries(L):
    # twice: the second reads the remembered geometries (a model's split per step)
    x = L.arange(24.0).reshape(2, 12)
    out = []
    for _ in range(2):
        for p in x.split(4, dim=1):
            v = p.view(2, 2, 2).transpose(1, 2)
            out.append([list(v.shape), list(v.stride()), v.storage_offset(),
                        p.is_contiguous(), py(v)])
    n = x.narrow(1, L.tensor(3), 5)  # a Tensor start: worked out, not remembered
    out.append([list(n.stride()), n.storage_offset(), n._base is x, py(n)])
    n.mul_(0)  # a write through it reaches x (x is no leaf: nothing records)
    out.append(py(x))
    return out


@needs_torch
def test_split_pieces_and_narrow_geometries_match_pytorch():
    got = same_as_torch(_piece_geometries)
    assert got[0][:3] == [[2, 2, 2], [12, 1, 2], 0] and got[-2][1] == 3
