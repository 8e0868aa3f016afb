"""Custom ``autograd.Function`` rules PyTorch enforces: forward-mode AD through a
Function's ``jvp`` (with ``save_for_forward``, ``mark_dirty``, ``mark_non_differentiable``
and the checks on what ``jvp`` returns), ``gradcheck(check_forward_ad=True)``, and the
in-place rules of ``mark_dirty``. Differential against PyTorch where torch is installed."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.autograd.forward_ad as fwAD
from hookgrad.autograd import Function, gradcheck
from tests.differential import needs_torch, py, raises, same_as_torch


def _scaled_product(L):
    """``z * x * y`` with a hand-written jvp that reads ``save_for_forward``."""
    class Prod(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.z = z
            return z * x * y

        @staticmethod
        def jvp(ctx, x_t, y_t, z_t):
            assert z_t is None  # a non-Tensor argument gets None
            x, y = ctx.saved_tensors
            return ctx.z * (y * x_t + x * y_t)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return ctx.z * g * y, ctx.z * g * x, None
    return Prod


def test_jvp_gives_the_outputs_tangent_like_jax_and_torch():
    def f(L):
        A = L.autograd.forward_ad
        Prod = _scaled_product(L)
        x = L.tensor([1.0, -2.0], requires_grad=True)
        y = L.tensor([0.5, 3.0])
        with A.dual_level():
            out = Prod.apply(A.make_dual(x, L.tensor([1.0, 2.0])), y, 3)
            primal, tangent = A.unpack_dual(out)
            # only y carries a tangent now: x's is materialized as zeros
            t2 = A.unpack_dual(Prod.apply(x, A.make_dual(y, L.ones(2)), 3)).tangent
        out.sum().backward()
        return [py(primal), py(tangent), py(t2), py(x.grad)]
    got = same_as_torch(f)
    x, y = jnp.array([1.0, -2.0]), jnp.array([0.5, 3.0])
    _, want = jax.jvp(lambda x: 3 * x * y, (x,), (jnp.array([1.0, 2.0]),))
    np.testing.assert_allclose(got[1], want)
    np.testing.assert_allclose(got[2], 3 * x)
    np.testing.assert_allclose(got[3], 3 * y)


def test_forward_sees_primals_and_saved_tensors_in_jvp_are_the_forward_ones():
    seen = {}

    class Fn(Function):
        @staticmethod
        def forward(ctx, x):
            seen["tangent in forward"] = fwAD.unpack_dual(x).tangent
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def jvp(ctx, x_t):
            seen["saved in jvp"] = ctx.saved_tensors  # saved for backward only: none yet
            return x_t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = hg.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        out = Fn.apply(fwAD.make_dual(x, hg.ones(2)))
        assert fwAD.unpack_dual(out).tangent.tolist() == [2.0, 2.0]
    assert seen == {"tangent in forward": None, "saved in jvp": ()}
    assert len(out.grad_fn.saved_tensors) == 1
    assert out.grad_fn.saved_for_forward is None


def test_jvp_arguments_none_for_non_tensors_and_non_float_and_materialize_off():
    got = []

    class Fn(Function):
        @staticmethod
        def forward(ctx, n, x, idx, y, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2 + y

        @staticmethod
        def jvp(ctx, n_t, x_t, idx_t, y_t, m_t):
            got.append((n_t, x_t is None, idx_t, None if y_t is None else y_t.tolist(), m_t))
            return x_t * 2

    with fwAD.dual_level():
        x = fwAD.make_dual(hg.tensor([1.0]), hg.tensor([1.0]))
        Fn.apply(1, x, hg.tensor([0]), hg.tensor([3.0]), True)
        Fn.apply(1, x, hg.tensor([0]), hg.tensor([3.0]), False)
    assert got == [(None, False, None, [0.0], None), (None, False, None, None, None)]


def test_jvp_is_not_called_without_a_tangent_or_outside_a_level():
    class Fn(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    x = hg.ones(2, requires_grad=True)
    Fn.apply(x)
    with fwAD.dual_level():
        Fn.apply(x)  # no input carries a tangent: no jvp needed
        d = fwAD.make_dual(x, hg.ones(2))
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            Fn.apply(d)
    assert issubclass(NotImplementedError, RuntimeError)  # PyTorch's test catches it so


@needs_torch
def test_jvp_errors_match_torch():
    def f(L):
        A = L.autograd.forward_ad

        class NonDiff(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                out = y.clone()
                ctx.mark_non_differentiable(out)
                return x.clone(), out

            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t, x_t.clone()

        class TooMany(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def jvp(ctx, x_t):
                return x_t, x_t

        class IntOut(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone(), L.tensor([1])

            @staticmethod
            def jvp(ctx, x_t):
                return x_t, L.tensor([1])

        with A.dual_level():
            d = A.make_dual(L.tensor([2.0]), L.tensor([1.0]))
            return [raises(NonDiff.apply, d, L.tensor([3.0])), raises(TooMany.apply, d),
                    raises(IntOut.apply, d)]
    got = same_as_torch(f)
    assert [g["raises"] for g in got] == ["RuntimeError"] * 3


def test_jvp_error_messages():
    class NonDiff(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out, "tag"

        @staticmethod
        def jvp(ctx, x_t):
            return x_t, x_t.clone(), None

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def jvp(ctx, x_t):
            return x_t, x_t

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def jvp(ctx, x_t):
            return hg.ones(3)

    with fwAD.dual_level():
        d = fwAD.make_dual(hg.tensor([2.0]), hg.tensor([1.0]))
        with pytest.raises(RuntimeError, match=r"Function's jvp returned a gradient at position "
                           r"1, but  the corresponding forward output is not a differentiable "
                           r"Tensor\.You should return None at that position instead\."):
            NonDiff.apply(d)
        with pytest.raises(RuntimeError, match=r"jvp returned an invalid number of forward "
                           r"gradients \(expected 1 but got 2\)"):
            TooMany.apply(d)
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[1\] while the given "
                           r"forward gradient is of size \[3\]"):
            WrongShape.apply(d)


def _inplace_mul(L, in_place, on_a_copy=False):
    """``x.mul_(2)`` marked dirty (``on_a_copy``: of a new Tensor, not the input)."""
    class InplaceMul(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            t = 3 * x if on_a_copy else x
            t.mul_(2)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return 2 * g

        @staticmethod
        def jvp(ctx, x_t):
            return x_t.mul_(2) if in_place else x_t * 2
    return InplaceMul


def test_mark_dirty_needs_jvp_to_modify_the_tangent_in_place():
    def f(L):
        A = L.autograd.forward_ad
        out = []
        for requires_grad in (True, False):
            x = L.tensor([1.0, 3.0], requires_grad=requires_grad).clone()
            with A.dual_level():
                t = L.ones(2)
                d = A.make_dual(x, t)
                y = _inplace_mul(L, True).apply(d)
                out.append([y is d, A.unpack_dual(y).tangent is t, py(t), py(A.unpack_dual(y))])
                out.append(raises(_inplace_mul(L, False).apply, A.make_dual(x.clone(), t)))
        return out
    got = same_as_torch(f)
    assert got[0][:3] == [True, True, [2.0, 2.0]]
    with fwAD.dual_level():
        d = fwAD.make_dual(hg.ones(2), hg.ones(2))
        with pytest.raises(RuntimeError, match="jvp function must modify the corresponding "
                                               "gradient inplace"):
            _inplace_mul(hg, False).apply(d)


def test_mark_dirty_of_a_non_input_warns_and_then_raises_under_forward_ad():
    Bad = _inplace_mul(hg, True, on_a_copy=True)
    a = hg.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="Only input Tensors should be given to "
                                         r"ctx\.mark_dirty\(\)"):
        Bad.apply(a.clone())
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Only input Tensors should be given to "
                                               r"ctx\.mark_dirty\(\)\. If a Tensor is not an "
                                               "input, there is no need"):
            Bad.apply(fwAD.make_dual(hg.ones(2), hg.ones(2)))


# --------------------------------------------------------------------------- gradcheck


def _user_fn(factor):
    class UserFn(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.scale = scale
            return x * 2 * scale

        @staticmethod
        def vjp(ctx, g):
            return 2 * ctx.scale * g, None

        @staticmethod
        def jvp(ctx, x_t, _):
            return factor * ctx.scale * x_t
    return UserFn


def test_gradcheck_forward_ad_checks_the_jvp():
    x = hg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    assert gradcheck(_user_fn(2).apply, (x, 1.5), check_forward_ad=True)
    # the vjp is right, the jvp is not: only the forward-mode check fails
    assert gradcheck(_user_fn(3).apply, (x, 1.5))
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for "
                                           "output 0 with respect to input 0"):
        gradcheck(_user_fn(3).apply, (x, 1.5), check_forward_ad=True)
    assert not gradcheck(_user_fn(3).apply, (x, 1.5), check_forward_ad=True,
                         raise_exception=False)


def test_gradcheck_forward_ad_only_and_ops_without_custom_functions():
    x = hg.tensor([0.5, -1.0], requires_grad=True)
    y = hg.tensor([2.0, 0.25], requires_grad=True)
    assert gradcheck(lambda a, b: (a.sin() * b, (a / b).sum()), (x, y), check_forward_ad=True,
                     check_backward_ad=False)
    with pytest.raises(AssertionError, match="Expected at least one of check_forward_ad or "
                                             "check_backward_ad to be True"):
        gradcheck(lambda a: a, (x,), check_backward_ad=False)


@needs_torch
def test_gradcheck_forward_ad_agrees_with_torch():
    def f(L):
        class Fn(L.autograd.Function):
            @staticmethod
            def forward(ctx, n, x, n2, y):
                return x * 2 + y * 3

            @staticmethod
            def jvp(ctx, n, x_t, n2, y_t):
                return x_t * 2 + y_t * 4  # wrong in y

            @staticmethod
            def backward(ctx, g):
                return None, 2 * g, None, 3 * g
        x = L.tensor([1.0], dtype=L.float64, requires_grad=True) if L is not hg else \
            L.tensor([1.0], requires_grad=True)
        y = x.detach().clone().requires_grad_()
        ok = L.autograd.gradcheck(Fn.apply, (1, x, 1, y), check_forward_ad=True,
                                  raise_exception=False)
        bwd = L.autograd.gradcheck(Fn.apply, (1, x, 1, y), raise_exception=False)
        return [ok, bwd]
    assert same_as_torch(f) == [False, True]


# --------------------------------------------------------------------------- mark_dirty rules


def _adder(L):
    class Adder(L.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g, g
    return Adder


def test_mark_dirty_input_is_returned_as_is_and_history_moves():
    def f(L):
        b = L.ones(2, requires_grad=True)
        a = L.ones(2, requires_grad=True).clone()
        c = _adder(L).apply(a, b)
        c.sum().backward()
        return [c is a, type(c.grad_fn).__name__, a._version, py(b.grad)]
    assert same_as_torch(f) == [True, "AdderBackward", 2, [1.0, 1.0]]


_VIEWS = hg.ones(2).view_as(hg.ones(2))._is_view()


@pytest.mark.skipif(not _VIEWS, reason="needs views that are views (_is_view())")
def test_mark_dirty_on_a_view_input_with_several_outputs_raises():
    class TwoOut(Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, ga + gab

    b = hg.ones(2, requires_grad=True)
    a = hg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="your Function modifies inplace an input that is a "
                                           "view of another Tensor, your Function cannot "
                                           "return more than one Tensor"):
        TwoOut.apply(a.clone().view_as(a), b)
    c, d = TwoOut.apply(a.clone(), b)  # not a view: allowed
    (c * d).sum().backward()
    assert a.grad.tolist() == b.grad.tolist() == [5.0, 5.0]  # d(c*d) = d + c per input


@pytest.mark.skipif(not _VIEWS, reason="needs views that are views (_is_view())")
def test_forward_returning_an_input_needs_a_view_tangent():
    def fn(view):
        class MyFn(Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y, x

            @staticmethod
            def vjp(ctx, g1, g2):
                return g1 + g2, g1

            @staticmethod
            def jvp(ctx, x_t, y_t):
                return x_t + y_t, (x_t.view_as(x_t) if view else x_t)
        return MyFn

    a = hg.tensor(1.0, requires_grad=True)
    with fwAD.dual_level():
        t = hg.tensor(1.0)
        _, out = fn(True).apply(fwAD.make_dual(a, t), hg.tensor(2.0))
        assert fwAD.unpack_dual(out).tangent._base is t
        with pytest.raises(RuntimeError, match=r"forward is returning a view \(or an input "
                                               r"as-is\) but the jvp is not returning a view"):
            fn(False).apply(fwAD.make_dual(a, hg.tensor(1.0)), hg.tensor(2.0))


def test_function_jvp_inside_compile_matches_eager_and_jax():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def jvp(ctx, x_t):
            x, = ctx.saved_tensors
            return 2 * x * x_t

    def f(x, v):
        with fwAD.dual_level():
            return fwAD.unpack_dual(Sq.apply(fwAD.make_dual(x, v)).sin()).tangent

    compiled = hg.compile(f)
    v = hg.tensor([1.0, 2.0])
    for x in (hg.tensor([0.5, 1.0]), hg.tensor([1.0, 2.0])):  # the second call replays
        _, want = jax.jvp(lambda a: jnp.sin(a * a), (x._data,), (v._data,))
        np.testing.assert_allclose(f(x, v).tolist(), want, rtol=1e-6)
        np.testing.assert_allclose(compiled(x, v).tolist(), want, rtol=1e-6)
