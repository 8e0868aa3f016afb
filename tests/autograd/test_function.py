"""autograd.Function: forward/backward, ctx methods, errors, hooks, and its lowering to
``jax.custom_vjp`` in functional mode. Each scenario ``f(L)`` defines the same Function
for ``L=hookgrad`` and ``L=torch``; ``same_as_torch`` compares the two."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import _mode
from tests.differential import py, raises, same_as_torch


def Fn(L, fwd, bwd, name="F", setup=None):
    """A Function class named ``name`` with the given static methods."""
    attrs = {"forward": staticmethod(fwd), "backward": staticmethod(bwd)}
    if setup is not None:
        attrs["setup_context"] = staticmethod(setup)
    return type(name, (L.autograd.Function,), attrs)


def make_exp(L):
    def fwd(ctx, i):
        r = i.exp()
        ctx.save_for_backward(r)
        return r

    def bwd(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r
    return Fn(L, fwd, bwd, "Exp")


# --------------------------------------------------------------------------- basics


def test_exp_gradient_node_name_and_class():
    def f(L):
        Exp = make_exp(L)
        x = L.tensor([0.0, 1.0], requires_grad=True)
        y = Exp.apply(x)
        y.sum().backward()
        return [py(y), py(x.grad), y.grad_fn.name(), type(y.grad_fn).__name__,
                y.grad_fn.next_functions[0][0].name(), y.is_leaf, y.requires_grad]
    got = same_as_torch(f)
    assert got[2] == "ExpBackward"
    np.testing.assert_allclose(got[1], np.exp([0.0, 1.0]), rtol=1e-6)


def test_grad_matches_jax_grad():
    Exp = make_exp(hg)
    x = hg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (Exp.apply(x) * x).sum().backward()
    want = jax.grad(lambda a: (jnp.exp(a) * a).sum())(jnp.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(x.grad._data), want, rtol=1e-6)


def test_needs_input_grad_non_tensor_args_and_next_functions():
    def f(L):
        seen = []

        def fwd(ctx, x, k, w):
            seen.append(list(ctx.needs_input_grad))
            return x * k + w

        def bwd(ctx, g):
            return g * 2, None, g
        F = Fn(L, fwd, bwd)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([1.0, 1.0])
        y = F.apply(x, 3, w)
        nf = [None if n is None else n.name() for n, _ in y.grad_fn.next_functions]
        y.sum().backward()
        with L.no_grad():
            z = F.apply(x, 3, w)
        F.apply(w, 3, w)
        return [seen, nf, py(x.grad), z.requires_grad, z.grad_fn is None]
    got = same_as_torch(f)
    assert got[0] == [[True, False, False], [True, False, False], [False, False, False]]


def test_keyword_arguments_bind_to_inputs():
    def f(L):
        seen = []

        def fwd(ctx, x, y=None, z=None):
            seen.append(list(ctx.needs_input_grad))
            return x + y

        def bwd(ctx, g):
            return g, g * 2, None
        F = Fn(L, fwd, bwd)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([1.0, 2.0], requires_grad=True)
        r = F.apply(x, y=w)
        r.sum().backward()
        return [seen, len(r.grad_fn.next_functions), py(x.grad), py(w.grad)]
    same_as_torch(f)


def test_forward_runs_without_grad_and_nested_function_not_recorded():
    def f(L):
        inner = Fn(L, lambda ctx, x: x * 2, lambda ctx, g: g * 2, "Inner")
        log = []

        def fwd(ctx, x):
            log.append(L.is_grad_enabled())
            r = inner.apply(x)
            log.append(r.requires_grad)
            return r
        F = Fn(L, fwd, lambda ctx, g: g * 5)
        x = L.tensor([1.0], requires_grad=True)
        F.apply(x).sum().backward()
        return [log, py(x.grad)]
    assert same_as_torch(f) == [[False, False], [5.0]]


def test_ctx_attributes_visible_on_grad_fn():
    def f(L):
        def fwd(ctx, x, k):
            ctx.k = k
            ctx.save_for_backward(x)
            return x * k

        def bwd(ctx, g):
            return g * ctx.k, None
        F = Fn(L, fwd, bwd)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x, 4)
        node = y.grad_fn
        node.metadata["tag"] = 1
        return [node.k, list(node.needs_input_grad), py(node.saved_tensors[0]),
                node.saved_tensors[0].requires_grad, node.metadata]
    same_as_torch(f)


# --------------------------------------------------------------------------- gradient checks


def test_wrong_number_of_gradients():
    def f(L):
        F = Fn(L, lambda ctx, a, b: a * b, lambda ctx, g: g)
        a = L.tensor([1.0], requires_grad=True)
        return raises(lambda: F.apply(a, a).sum().backward())
    same_as_torch(f)
    F = Fn(hg, lambda ctx, a, b: a * b, lambda ctx, g: g)
    a = hg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^function FBackward returned an incorrect number of "
                                           r"gradients \(expected 2, got 1\)$"):
        F.apply(a, a).sum().backward()


def test_too_many_gradients_and_trailing_nones():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        ok = Fn(L, lambda ctx, x: x * 1, lambda ctx, g: (g, None, None), "H")
        ok.apply(x).sum().backward()
        bad = Fn(L, lambda ctx, x: x * 1, lambda ctx, g: (g, g), "H2")
        return [py(x.grad), raises(lambda: bad.apply(x).sum().backward())]
    same_as_torch(f)
    bad = Fn(hg, lambda ctx, x: x * 1, lambda ctx, g: (g, g), "H2")
    with pytest.raises(RuntimeError, match=r"function H2Backward returned an incorrect number of "
                                           r"gradients \(expected 1, got 2\)"):
        bad.apply(hg.tensor([1.0], requires_grad=True)).sum().backward()


def test_gradient_for_non_tensor_input_must_be_none():
    def f(L):
        F = Fn(L, lambda ctx, x, k: x * k, lambda ctx, g: (g, 5))
        x = L.tensor([1.0], requires_grad=True)
        return raises(lambda: F.apply(x, 3).sum().backward())
    same_as_torch(f)
    F = Fn(hg, lambda ctx, x, k: x * k, lambda ctx, g: (g, 5))
    with pytest.raises(RuntimeError, match="function FBackward returned a gradient different than "
                                           "None at position 2, but the corresponding forward "
                                           "input was not a Variable"):
        F.apply(hg.tensor([1.0], requires_grad=True), 3).sum().backward()


def test_non_tensor_gradient_for_tensor_input():
    def f(L):
        F = Fn(L, lambda ctx, x: x * 1, lambda ctx, g: 5)
        return raises(lambda: F.apply(L.tensor([1.0], requires_grad=True)).sum().backward())
    same_as_torch(f)
    F = Fn(hg, lambda ctx, x: x * 1, lambda ctx, g: 5)
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got int\)"):
        F.apply(hg.tensor([1.0], requires_grad=True)).sum().backward()


def test_gradient_shape_checked_reduced_and_cast():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        bad = Fn(L, lambda ctx, x: x * 1, lambda ctx, g: L.ones(3), "S")
        err = raises(lambda: bad.apply(x).sum().backward())
        wide = Fn(L, lambda ctx, x: x * 1, lambda ctx, g: L.ones(4, 2), "S2")
        wide.apply(x).sum().backward()
        g1 = py(x.grad)
        x.grad = None
        ints = Fn(L, lambda ctx, x: x * 1, lambda ctx, g: L.ones(2, dtype=L.int32), "S3")
        ints.apply(x).sum().backward()
        scalar = Fn(L, lambda ctx, x: x * 1, lambda ctx, g: L.ones(()), "S4")
        err2 = raises(lambda: scalar.apply(x).sum().backward())
        # a gradient for an input that needs none is ignored, whatever its shape
        other = Fn(L, lambda ctx, x, y: x * y, lambda ctx, g: (g, L.ones(5)), "S5")
        x.grad = None
        other.apply(x, L.ones(2)).sum().backward()
        return [err, g1, py(x.grad), str(x.grad.dtype).split(".")[-1], err2]
    got = same_as_torch(f)
    assert got[1] == [4.0, 4.0]
    bad = Fn(hg, lambda ctx, x: x * 1, lambda ctx, g: hg.ones(3), "S")
    with pytest.raises(RuntimeError, match=r"^Function SBackward returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape compatible "
                                           r"with \[2\]$"):
        bad.apply(hg.tensor([1.0, 2.0], requires_grad=True)).sum().backward()
    # index counts Tensor inputs only
    bad2 = Fn(hg, lambda ctx, x, k, y: x * y, lambda ctx, g: (g, None, hg.ones(3, 3)), "S6")
    with pytest.raises(RuntimeError, match=r"index 1 - got \[3, 3\] but expected shape "
                                           r"compatible with \[2\]"):
        bad2.apply(hg.ones(2, requires_grad=True), 1,
                   hg.ones(2, requires_grad=True)).sum().backward()


# --------------------------------------------------------------------------- outputs


def test_returning_an_input_as_is():
    def f(L):
        F = Fn(L, lambda ctx, x: x, lambda ctx, g: g * 3, "I")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x)
        r = [y is x, y.grad_fn.name(), y.is_leaf, x.is_leaf]
        y.sum().backward()
        r.append(py(x.grad))
        with L.no_grad():
            z = F.apply(x)
        r += [z is x, z.requires_grad, z.grad_fn is None]
        c = L.tensor([1.0])
        w = F.apply(c)
        r += [w is c, w.requires_grad]
        return r
    assert same_as_torch(f) == [False, "IBackward", False, True, [3.0, 3.0], False, False, True,
                                False, False]


def test_tuple_outputs_with_non_tensors_list_and_none():
    def f(L):
        got = []

        def bwd(ctx, *g):
            got.append([None if t is None else py(t) for t in g])
            return g[0]
        F = Fn(L, lambda ctx, x: (x * 1, 3, "a", None, (x * 2,)), bwd, "Tr")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        r = F.apply(x)
        kinds = [getattr(t, "grad_fn", None) is not None for t in r]
        r[0].sum().backward()
        lst = Fn(L, lambda ctx, x: [x * 1, x * 2], lambda ctx, g: g, "Lr").apply(x)
        none = Fn(L, lambda ctx, x: None, lambda ctx, g: g, "Nn").apply(x)
        return [type(r).__name__, r[1:4], kinds, got, type(lst).__name__,
                lst[0].requires_grad, none]
    same_as_torch(f)


def test_materialized_zeros_for_unused_and_integer_outputs():
    def f(L):
        got = []

        def bwd(ctx, g1, g2, g3):
            got.append([py(g1), py(g2), str(g2.dtype).split(".")[-1], py(g3)])
            return g1 + g3[0]

        def fwd(ctx, x):
            return x * 2, (x * 3).int(), x[:1] * 3
        F = Fn(L, fwd, bwd, "U")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b, c = F.apply(x)
        c.sum().backward()
        return [got, b.requires_grad, b.grad_fn is None, py(x.grad)]
    same_as_torch(f)


def test_set_materialize_grads_false():
    def f(L):
        got = []

        def fwd(ctx, x):
            ctx.set_materialize_grads(False)
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b, 5, x.clone()

        def bwd(ctx, g1, g2, g3, g4):
            got.append([g is None for g in (g1, g2, g3, g4)])
            return g4 if g1 is None else g1
        F = Fn(L, fwd, bwd, "M")
        x = L.tensor([1.0], requires_grad=True)
        a, b, c, d = F.apply(x)
        d.sum().backward()
        a2, *_ = F.apply(x)
        a2.sum().backward()
        return [got, py(x.grad)]
    assert same_as_torch(f)[0] == [[True, True, True, False], [False, True, True, True]]


def test_backward_called_when_all_gradients_are_none():
    def f(L):
        log = []

        def p_bwd(ctx, g):
            log.append(None if g is None else py(g))
            return g

        def p2_fwd(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2
        P = Fn(L, lambda ctx, x: x * 2, p_bwd, "P")
        P2 = Fn(L, p2_fwd, p_bwd, "P2")
        Q = Fn(L, lambda ctx, x: x * 2, lambda ctx, g: None, "Q")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        Q.apply(P.apply(x)).sum().backward()
        Q.apply(P2.apply(x)).sum().backward()
        return [log, py(x.grad)]
    assert same_as_torch(f)[0] == [[0.0, 0.0], None]


def test_mark_non_differentiable():
    def f(L):
        got = []

        def fwd(ctx, x):
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b

        def bwd(ctx, g1, g2):
            got.append([py(g1), py(g2)])
            return g1
        F = Fn(L, fwd, bwd, "ND")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b = F.apply(x)
        r = [a.requires_grad, b.requires_grad, b.grad_fn is None, b.is_leaf]
        a.sum().backward()
        r.append(raises(lambda: b.sum().backward()))

        def fwd_in(ctx, x):
            ctx.mark_non_differentiable(x)
            return x
        y = Fn(L, fwd_in, lambda ctx, g: g, "NDI").apply(x)
        r += [y is x, y.requires_grad, x.requires_grad]

        def fwd_in2(ctx, x):  # marking an input does not affect a new output
            ctx.mark_non_differentiable(x)
            return x * 2
        r.append(Fn(L, fwd_in2, lambda ctx, g: g, "ND2").apply(x).requires_grad)
        return [r, got]
    same_as_torch(f)


def test_mark_non_differentiable_rejects_non_tensors():
    def f(L):
        def fwd(ctx, x):
            ctx.mark_non_differentiable(3)
            return x * 2
        return raises(lambda: Fn(L, fwd, lambda ctx, g: g).apply(L.ones(1, requires_grad=True)))
    same_as_torch(f)

    def fwd(ctx, x):
        ctx.mark_non_differentiable(3)
        return x * 2
    with pytest.raises(RuntimeError, match="mark_non_differentiable only accepts variable "
                                           "arguments, but got int"):
        Fn(hg, fwd, lambda ctx, g: g).apply(hg.ones(1, requires_grad=True))


# --------------------------------------------------------------------------- mark_dirty


def _inplace_add(L, name="D"):
    def fwd(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x
    return Fn(L, fwd, lambda ctx, g: g * 2, name)


def test_mark_dirty_rebases_history_and_bumps_version():
    def f(L):
        D = _inplace_add(L)
        log = []
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = x * 1
        z.register_hook(lambda g: log.append(("old z hook", py(g))))
        z.retain_grad()
        old = z.grad_fn.name()
        y = D.apply(z)
        r = [y is z, z.grad_fn.name(), z._version, z.grad_fn.next_functions[0][0].name(), old,
             py(z)]
        z.register_hook(lambda g: log.append(("new z hook", py(g))))
        (z * 3).sum().backward()
        r += [py(x.grad), log, py(z.grad)]
        w = L.ones(2)
        D.apply(w)  # no grad needed: still bumped, no history
        r += [w._version, w.requires_grad]
        return r
    got = same_as_torch(f)
    assert got[2] == 2 and got[0] is True


def test_mark_dirty_input_not_requiring_grad_joins_graph():
    def f(L):
        def fwd(ctx, x, w):
            w.mul_(2)
            ctx.mark_dirty(w)
            return x * 2, w

        F = Fn(L, fwd, lambda ctx, g, g2: (g * 2, g2), "D4")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.ones(2)
        r = F.apply(x, w)
        return [r[1] is w, w.grad_fn.name(), w._version, w.requires_grad, py(w)]
    same_as_torch(f)


def test_mark_dirty_errors():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        leaf = raises(lambda: _inplace_add(L).apply(x))

        def not_returned(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        def not_tensor(ctx, x):
            ctx.mark_dirty(3)
            return x * 2
        e2 = raises(lambda: Fn(L, not_returned, lambda ctx, g: g).apply(x * 1))
        e3 = raises(lambda: Fn(L, not_tensor, lambda ctx, g: g).apply(x * 1))
        return [leaf, e2, e3]
    same_as_torch(f)
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in "
                                           "an in-place operation."):
        _inplace_add(hg).apply(x)

    def not_returned(ctx, x):
        ctx.mark_dirty(x)
        return x * 2
    z = x * 1
    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward "
                                           "method were not returned as output"):
        Fn(hg, not_returned, lambda ctx, g: g).apply(z)
    assert z.grad_fn.name() == "MulBackward0"  # history untouched

    def not_tensor(ctx, x):
        ctx.mark_dirty(3)
        return x * 2
    with pytest.raises(RuntimeError, match="mark_dirty can only accept variables, but argument "
                                           "0 is of type int"):
        Fn(hg, not_tensor, lambda ctx, g: g).apply(x * 1)


# --------------------------------------------------------------------------- saved tensors


def test_saved_tensors_pack_unpack_and_graph_membership():
    def f(L):
        log = []
        seen = []

        def fwd(ctx, i):
            r = i.exp()
            ctx.save_for_backward(r, i, None)
            return r

        def bwd(ctx, g):
            r, i, n = ctx.saved_tensors
            seen.append([r.requires_grad, r.grad_fn.name(), i.requires_grad, i.grad_fn is None,
                         n, L.is_grad_enabled()])
            return g * r
        F = Fn(L, fwd, bwd, "Exp")
        x = L.tensor([0.0, 1.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: (log.append("pack"), t)[1],
                                                  lambda t: (log.append("unpack"), t)[1]):
            y = F.apply(x)
        packed = list(log)
        y.sum().backward()
        return [packed, log, seen, py(x.grad)]
    assert same_as_torch(f)[0] == ["pack", "pack"]


def test_save_for_backward_rejects_non_tensors():
    def f(L):
        def fwd(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2
        return raises(lambda: Fn(L, fwd, lambda ctx, g: g).apply(L.ones(1, requires_grad=True)))
    same_as_torch(f)

    def fwd(ctx, x):
        ctx.save_for_backward(x, 3)
        return x * 2
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument "
                                        "1 is of type int"):
        Fn(hg, fwd, lambda ctx, g: g).apply(hg.ones(1, requires_grad=True))


def test_saved_tensor_version_check_and_freed_buffers():
    def f(L):
        Exp = make_exp(L)
        x = L.tensor([0.0, 1.0], requires_grad=True)
        z = x * 1
        y = Exp.apply(z)
        with L.no_grad():
            y.add_(1)  # the saved output is modified
        e1 = raises(lambda: y.sum().backward())
        y = Exp.apply(x)
        y.sum().backward()
        e2 = raises(lambda: y.sum().backward())
        e3 = raises(lambda: y.grad_fn.saved_tensors)
        y = Exp.apply(x)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        # nothing saved: a second backward is fine; saving only None is not
        x.grad = None
        plain = Fn(L, lambda ctx, x: x * 2, lambda ctx, g: g, "E")
        y = plain.apply(x)
        y.sum().backward()
        y.sum().backward()

        def fwd_none(ctx, x):
            ctx.save_for_backward(None)
            return x * 2
        y = Fn(L, fwd_none, lambda ctx, g: g, "E2").apply(x)
        y.sum().backward()
        e4 = raises(lambda: y.sum().backward())
        return [e1, e2, e3, py(x.grad), e4]
    same_as_torch(f)
    Exp = make_exp(hg)
    x = hg.tensor([0.0, 1.0], requires_grad=True)
    y = Exp.apply(x)
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation "
                                           r"has been modified by an inplace operation: .* is at "
                                           r"version 1; expected version 0 instead"):
        y.sum().backward()
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors


def test_saved_tensors_empty_during_forward_and_without_save():
    def f(L):
        seen = []

        def fwd(ctx, x):
            seen.append(len(ctx.saved_tensors))
            return x * 2

        def bwd(ctx, g):
            seen.append(len(ctx.saved_tensors))
            return g
        Fn(L, fwd, bwd).apply(L.ones(1, requires_grad=True)).sum().backward()
        return seen
    assert same_as_torch(f) == [0, 0]


# --------------------------------------------------------------------------- higher order


def test_double_backward_through_function():
    def f(L):
        Exp = make_exp(L)
        x = L.tensor([0.0, 1.0], requires_grad=True)
        y = Exp.apply(x)
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        r = [py(g), g.grad_fn.name()]
        g.sum().backward()
        return r + [py(x.grad)]
    got = same_as_torch(f)
    np.testing.assert_allclose(got[2], np.exp([0.0, 1.0]), rtol=1e-6)


def test_double_backward_matches_jax():
    class Cube(hg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x
    x = hg.tensor([0.5, 2.0], requires_grad=True)
    (g,) = hg.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = hg.autograd.grad(g.sum(), x)
    want = jax.grad(lambda a: jax.grad(lambda b: (b ** 3).sum())(a).sum())(jnp.array([0.5, 2.0]))
    np.testing.assert_allclose(np.asarray(gg._data), want, rtol=1e-6)


def test_once_differentiable():
    def f(L):
        seen = []

        def fwd(ctx, i):
            ctx.save_for_backward(i)
            return i * i

        @L.autograd.function.once_differentiable
        def bwd(ctx, g):
            (i,) = ctx.saved_tensors
            seen.append(L.is_grad_enabled())
            return 2 * i * g
        OD = Fn(L, fwd, bwd, "OD")
        x = L.tensor([0.0, 1.0], requires_grad=True)
        v = L.ones(2, requires_grad=True)
        (g,) = L.autograd.grad(OD.apply(x), x, v, create_graph=True)
        r = [py(g), g.grad_fn.name().replace("torch::autograd::", ""), g.requires_grad]
        r.append(raises(lambda: g.sum().backward()))
        (g2,) = L.autograd.grad(OD.apply(x).sum(), x)
        r += [py(g2), g2.grad_fn is None, seen]
        return r
    same_as_torch(f)
    fwd = staticmethod(lambda ctx, i: i * i)
    OD = type("OD", (hg.autograd.Function,), {
        "forward": fwd,
        "backward": staticmethod(hg.autograd.once_differentiable(lambda ctx, g: g * 2))})
    x = hg.tensor([1.0], requires_grad=True)
    (g,) = hg.autograd.grad(OD.apply(x), x, hg.ones(1, requires_grad=True), create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()


# --------------------------------------------------------------------------- setup_context, API


def test_setup_context():
    def f(L):
        seen = []

        def fwd(x, k=2):
            return x * k

        def setup(ctx, inputs, output):
            seen.append([len(inputs), inputs[1], output.requires_grad,
                         list(ctx.needs_input_grad), L.is_grad_enabled()])
            ctx.save_for_backward(inputs[0], output)
            ctx.k = inputs[1]

        def bwd(ctx, g):
            x, out = ctx.saved_tensors
            seen.append(out.grad_fn.name())
            return g * ctx.k, None
        F = Fn(L, fwd, bwd, "SC", setup=setup)
        x = L.tensor([0.0, 1.0], requires_grad=True)
        F.apply(x).sum().backward()
        F.apply(x, 3).sum().backward()
        return [seen, py(x.grad)]
    assert same_as_torch(f)[1] == [5.0, 5.0]


def test_vjp_alias_and_missing_methods():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        V = type("V", (L.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2),
                                               "vjp": staticmethod(lambda ctx, g: g * 7)})
        V.apply(x).sum().backward()
        both = type("BV", (L.autograd.Function,), {
            "forward": staticmethod(lambda ctx, x: x * 2),
            "vjp": staticmethod(lambda ctx, g: g), "backward": staticmethod(lambda ctx, g: g)})
        no_bwd = type("NB", (L.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x)})
        no_fwd = type("NF", (L.autograd.Function,), {})
        return [py(x.grad), raises(lambda: both.apply(x).sum().backward()),
                raises(lambda: no_bwd.apply(x * 1).sum().backward()),
                raises(lambda: no_fwd.apply(x)),
                L.autograd.Function.vjp is L.autograd.Function.backward]
    same_as_torch(f)
    both = type("BV", (hg.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: x * 2),
        "vjp": staticmethod(lambda ctx, g: g), "backward": staticmethod(lambda ctx, g: g)})
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        both.apply(hg.ones(1, requires_grad=True)).sum().backward()
    no_bwd = type("NB", (hg.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 1)})
    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp"):
        no_bwd.apply(hg.ones(1, requires_grad=True)).sum().backward()
    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        type("NF", (hg.autograd.Function,), {}).apply(hg.ones(1))


def test_instantiating_a_function_is_deprecated():
    Exp = make_exp(hg)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        e = Exp()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward "
                                           "method is deprecated"):
        e(hg.ones(1))


def test_function_ctx_and_exports():
    from hookgrad._engine import function as fmod
    assert hg.autograd.FunctionCtx is fmod.FunctionCtx
    assert hg.autograd.once_differentiable is fmod.once_differentiable
    assert issubclass(hg.autograd.Function, fmod.FunctionCtx)
    Exp = make_exp(hg)
    node = Exp.apply(hg.ones(1, requires_grad=True)).grad_fn
    assert isinstance(node, fmod.FunctionCtx)
    assert isinstance(node, hg.autograd.graph.Node)
    assert isinstance(node, fmod.BackwardCFunction)
    assert node._forward_cls is Exp
    with pytest.raises(AssertionError, match="save_for_forward expects all arguments to be "
                                             "tensors"):
        fmod.FunctionCtx().save_for_forward(3)
    with pytest.warns(FutureWarning, match="mark_shared_storage"):
        fmod.FunctionCtx().mark_shared_storage((1, 2))


# --------------------------------------------------------------------------- hooks


def test_hooks_on_outputs_and_node():
    def f(L):
        log = []

        def bwd(ctx, g1, g2):
            log.append(("bw", py(g1), py(g2)))
            return g1 + g2, g1 * 3
        M = Fn(L, lambda ctx, x, y: (x * y, x + y), bwd, "M")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.tensor([3.0, 4.0], requires_grad=True)
        a, b = M.apply(x, y)
        a.grad_fn.register_prehook(lambda go: log.append(("pre", py(go))))
        a.grad_fn.register_hook(lambda gi, go: log.append(("post", py(gi), py(go))))
        a.register_hook(lambda g: log.append(("a", py(g))))
        b.register_hook(lambda g: (log.append(("b", py(g))), g * 10)[1])
        a.retain_grad()
        (a.sum() + b.sum() * 2).backward()
        return [log, py(a.grad), py(x.grad), py(y.grad)]
    got = same_as_torch(f)
    assert [e[0] for e in got[0]] == ["a", "b", "pre", "bw", "post"]


def test_node_hooks_can_replace_gradients():
    def f(L):
        F = Fn(L, lambda ctx, x: x * 2, lambda ctx, g: g * 2)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x)
        y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
        y.sum().backward()
        return py(x.grad)
    assert same_as_torch(f) == [21.0, 21.0]


# --------------------------------------------------------------------------- functional mode


class Triple(hg.autograd.Function):
    """sin forward with a deliberately wrong backward (3 * grad), to see who runs it."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert ctx.k == "tag"
        return g * 3, None


def _functional(F, *extra):
    def fn(arr):
        with _mode.functional_mode():
            out = F.apply(hg.Tensor._wrap(arr), *extra)
        return out._data
    return fn


def test_functional_mode_uses_custom_backward_under_grad_jit_vmap():
    fn = _functional(Triple, "tag")
    a = jnp.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(fn(a), jnp.sin(a), rtol=1e-6)
    g = jax.grad(lambda v: fn(v).sum())(a)
    np.testing.assert_allclose(g, 3 * jnp.ones(3))
    gj = jax.jit(jax.grad(lambda v: fn(v).sum()))(a)
    np.testing.assert_allclose(gj, 3 * jnp.ones(3))
    gv = jax.vmap(jax.grad(lambda v: (fn(v) * v).sum()))(jnp.stack([a, 2 * a]))
    want = jnp.stack([3 * a + jnp.sin(a), 3 * 2 * a + jnp.sin(2 * a)])
    np.testing.assert_allclose(gv, want, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(fn)(jnp.stack([a, a])), jnp.sin(jnp.stack([a, a])),
                               rtol=1e-6)


def test_functional_mode_saved_attrs_needs_input_grad_and_materialize():
    seen = []

    class Two(hg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            seen.append(tuple(ctx.needs_input_grad))
            ctx.set_materialize_grads(False)
            ctx.w = y * 2  # a Tensor attribute on ctx: carried as a residual
            return x * y, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1 * ctx.w, None

    def fn(a, b):
        with _mode.functional_mode():
            p, q = Two.apply(hg.Tensor._wrap(a), hg.Tensor._wrap(b))
        return p._data.sum()
    a, b = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
    g = jax.jit(jax.grad(fn))(a, b)
    np.testing.assert_allclose(g, 2 * b)
    assert seen == [(True, False), (False, True)]


def test_functional_mode_gradient_checks():
    bad = Fn(hg, lambda ctx, x: x * 2, lambda ctx, g: (g, g), "Bad")
    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number of "
                                           r"gradients \(expected 1, got 2\)"):
        jax.grad(lambda v: _functional(bad)(v).sum())(jnp.ones(2))
    shape = Fn(hg, lambda ctx, x: x * 2, lambda ctx, g: hg.ones(3), "Shp")
    with pytest.raises(RuntimeError, match=r"Function ShpBackward returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape compatible "
                                           r"with \[2\]"):
        jax.grad(lambda v: _functional(shape)(v).sum())(jnp.ones(2))
    wide = Fn(hg, lambda ctx, x: x * 2, lambda ctx, g: hg.ones(4, 2), "Wide")
    np.testing.assert_allclose(jax.grad(lambda v: _functional(wide)(v).sum())(jnp.ones(2)),
                               [4.0, 4.0])


def test_functional_mode_non_differentiable_outputs_and_integers():
    got = []

    class Split(hg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b, (x * 4).int(), 7

        @staticmethod
        def backward(ctx, ga, gb, gi, gc):
            got.append([np.asarray(gb._data).tolist(), str(gi.dtype), gc])
            return ga * 2

    def fn(v):
        with _mode.functional_mode():
            a, b, i, c = Split.apply(hg.Tensor._wrap(v))
        assert c == 7
        return (a._data + b._data).sum()
    g = jax.grad(fn)(jnp.ones(2))
    np.testing.assert_allclose(g, [2.0, 2.0])  # b's cotangent is dropped: non-differentiable
    assert got == [[[0.0, 0.0], "hookgrad.int32", None]]


def test_functional_mode_second_order_through_custom_backward():
    class Cube(hg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x
    fn = _functional(Cube)
    gg = jax.grad(lambda a: jax.grad(lambda b: fn(b).sum())(a).sum())(jnp.array([0.5, 2.0]))
    np.testing.assert_allclose(gg, [3.0, 12.0], rtol=1e-6)


def test_functional_mode_mark_dirty_writes_back():
    def fn(v):
        t = hg.Tensor._wrap(v)
        with _mode.functional_mode():
            out = _inplace_add(hg).apply(t)
        assert out is t and t._version == 1
        return (t._data * v).sum()
    g = jax.grad(fn)(jnp.array([1.0, 2.0]))
    # d/dv[(v+1) * v] with the custom backward (2 * grad) on the (v+1) factor
    np.testing.assert_allclose(g, [2 * 1.0 + 2.0, 2 * 2.0 + 3.0])


def test_function_without_tensor_inputs_in_functional_mode():
    F = Fn(hg, lambda ctx, k: k * 2, lambda ctx, g: None)
    with _mode.functional_mode():
        assert F.apply(3) == 6


# --------------------------------------------------------------------------- compiled mode


def test_eager_engine_under_jit_uses_custom_backward():
    def step(arr):
        x = hg.Tensor._wrap(arr)
        x.requires_grad_(True)
        y = Triple.apply(x, "tag")
        (y * x).sum().backward()
        return x.grad._data

    a = jnp.array([0.1, 0.2])
    got = jax.jit(step)(a)
    np.testing.assert_allclose(got, 3 * a + jnp.sin(a), rtol=1e-6)
    np.testing.assert_allclose(step(a), got, rtol=1e-6)


def test_apply_does_not_warn_in_normal_use():
    Exp = make_exp(hg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Exp.apply(hg.ones(2, requires_grad=True)).sum().backward()


def test_functional_call_under_jax_grad_uses_custom_backward():
    from hookgrad.func import functional_call

    class Scaled(hg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = hg.nn.Parameter(hg.ones(3))

        def forward(self, x):
            return Triple.apply(self.w * x, "tag")

    m = Scaled()
    params = {k: v._data for k, v in m.named_parameters()}
    x = jnp.array([1.0, 2.0, 3.0])
    g = jax.jit(jax.grad(lambda p: functional_call(m, p, (x,)).sum()))(params)
    np.testing.assert_allclose(g["w"], 3 * x)


def test_hookgrad_compile_step_with_function_and_hook():
    class Square(hg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    w = hg.nn.Parameter(hg.tensor([1.0, 2.0]))

    @hg.compile
    def step(x):
        y = Square.apply(w * x)
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return y

    x = hg.tensor([1.0, 3.0])
    step(x)
    eager_w = hg.tensor([1.0, 2.0], requires_grad=True)
    y = Square.apply(eager_w * x)
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(w.grad._data), np.asarray(eager_w.grad._data))
    np.testing.assert_allclose(np.asarray(w.grad._data), [20.0, 360.0])


def test_post_hook_sees_gradients_after_shape_and_dtype_fitting():
    def f(L):
        seen = []
        F = Fn(L, lambda ctx, x: x * 2, lambda ctx, g: L.ones(4, 2, dtype=L.int32), "Wide")
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x)
        y.grad_fn.register_hook(lambda gi, go: seen.append(
            [list(gi[0].shape), str(gi[0].dtype).split(".")[-1]]))
        y.sum().backward()
        return [seen, py(x.grad)]
    assert same_as_torch(f) == [[[[2], "float32"]], [4.0, 4.0]]


def test_an_in_place_write_on_a_view_of_a_local_clone_in_forward():
    """The forward's clone is still deferred when its view is written in place: the write
    computes it (was: a deferred value passed to the write's program)."""
    def scenario(L):
        class Local(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp, inplace):
                view = inp.clone()[:3]
                if inplace:
                    view += 2
                return view

            @staticmethod
            def backward(ctx, grad):
                return L.cat([grad * 3, grad.new_zeros(7)]), None
        base = L.rand(10, requires_grad=True)
        first = Local.apply(base, False)
        out = Local.apply(base, True)
        out.sum().backward()
        return [type(first.grad_fn).__name__, type(out.grad_fn).__name__,
                [round(v, 5) for v in (out - first).tolist()], base.grad.tolist()]
    assert same_as_torch(scenario) == ["LocalBackward", "LocalBackward", [2.0] * 3,
                                       [3.0, 3.0, 3.0] + [0.0] * 7]
