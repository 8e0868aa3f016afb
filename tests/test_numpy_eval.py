"""The NumPy interpreter of jaxprs (``hookgrad._numpy_eval``) gives XLA's values.

Each row is a small JAX function using one primitive through ``jax.lax`` (or the ``jax.numpy``
call that emits it), run on random inputs twice: compiled by XLA (``jax.jit``) and
interpreted by ``eval_jaxpr`` on the traced jaxpr. The interpreter must accept it
(``supported``), return arrays with exactly the avals' shapes and dtypes, and equal XLA's
results: exactly for integers, bools and data movement, within float32 rounding otherwise.
Whole programs (a CNN's forward and backward, an AdamW update) run the same way. Last, what
the interpreter must refuse, so that its caller runs XLA instead.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from hookgrad._numpy_eval import eval_jaxpr, supported

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def i32(*shape, lo=-10, hi=10):
    return RNG.integers(lo, hi, shape).astype(np.int32)


def primitives(jaxpr):
    """Every primitive name in a jaxpr, through its sub-jaxprs."""
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for v in eqn.params.values():
            for sub in (v if isinstance(v, tuple) else (v,)):
                if hasattr(sub, "eqns"):
                    names |= primitives(sub)
                elif hasattr(sub, "jaxpr") and hasattr(sub.jaxpr, "eqns"):
                    names |= primitives(sub.jaxpr)
    return names


def check(f, *args, uses=(), rtol=2e-6, atol=1e-6):
    """Interpret f's jaxpr on args and compare with XLA; ``uses``: primitives it must contain."""
    closed = jax.jit(f).trace(*args).jaxpr
    missing = set([uses] if isinstance(uses, str) else uses) - primitives(closed.jaxpr)
    assert not missing, f"the row does not exercise {missing}"
    assert supported(closed)
    flat = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    got = eval_jaxpr(closed, *flat)
    want = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    assert len(got) == len(want) == len(closed.out_avals)
    for g, w, aval in zip(got, want, closed.out_avals):
        assert type(g) is np.ndarray
        assert (g.shape, g.dtype) == (aval.shape, aval.dtype)
        w = np.asarray(w)
        if g.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)
    return closed


# --- the primitives of a small CNN's training step ---------------------------------------------

X, Y = f32(3, 4), f32(3, 4)
POS = np.abs(f32(3, 4)) + 0.1
B = RNG.random((3, 4)) < 0.5

STEP_ROWS = {
    "add": (lax.add, X, Y),
    "sub": (lax.sub, X, Y),
    "mul": (lax.mul, X, Y),
    "div": (lax.div, X, POS),
    "neg": (lax.neg, X),
    "max": (lax.max, X, Y),
    "exp": (lax.exp, X),
    "log": (lax.log, POS),
    "sqrt": (lax.sqrt, POS),
    "pow": (lax.pow, POS, Y),
    "integer_pow": (lambda x: [lax.integer_pow(x, 3), lax.integer_pow(x, -2),
                               lax.integer_pow(x, 0)], X),
    "eq": (lambda x, y: lax.eq(x, lax.round(y)), lax.round(X), Y),
    "gt": (lax.gt, X, Y),
    "lt": (lax.lt, X, Y),
    "select_n": (lambda b, x, y: lax.select_n(b, x, y), B, X, Y),
    "convert_element_type": (lambda x: [x.astype(jnp.int32), (x > 0).astype(jnp.float32),
                                        x.astype(jnp.bool_)], X * 10),
    "stop_gradient": (lax.stop_gradient, X),
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 5, 4), (1, 3)), X),
    "reshape": (lambda x: lax.reshape(x, (2, 6)), X),
    "squeeze": (lambda x: lax.squeeze(x, (0, 2)), f32(1, 3, 1)),
    "transpose": (lambda x: lax.transpose(x, (2, 0, 1)), f32(2, 3, 4)),
    "rev": (lambda x: lax.rev(x, (0, 2)), f32(2, 3, 4)),
    "reduce_sum": (lambda x: [lax.reduce_sum_p.bind(x, axes=(0, 2), out_sharding=None),
                              x.sum()], f32(2, 3, 4)),
    "reduce_max": (lambda x: [jnp.max(x, axis=1), jnp.max(x)], f32(2, 3, 4)),
    "dot_general": (lambda x, y: [x @ y, jnp.einsum("bij,bjk->bik", x[None], y[None]),
                                  lax.dot_general(x, y, (((0,), (1,)), ((), ())))],
                    f32(3, 4), f32(4, 3)),
    "dot_general batch dims in the middle": (
        lambda x, y: lax.dot_general(x, y, (((2,), (0,)), ((1,), (2,)))), f32(2, 3, 4),
        f32(4, 5, 3)),
    "custom_jvp_call": (jax.nn.relu, X),
    "jit": (jax.jit(lambda x: x * 2), X),
    "gather": (lambda x, i: [x[i], jnp.take_along_axis(x[:4], i[:, None] % 3, axis=1)],
               f32(5, 3), np.array([0, 4, 2, 2])),
    "scatter-add": (lambda x, i, u: x.at[i].add(u), f32(5, 3), np.array([0, 4, 2, 2]),
                    f32(4, 3)),
}


@pytest.mark.parametrize("name", STEP_ROWS)
def test_training_step_primitive(name):
    f, *args = STEP_ROWS[name]
    check(f, *args, uses=name.split()[0])


CONV_CASES = {
    "NCHW same": dict(window_strides=(1, 1), padding="SAME"),
    "strided valid": dict(window_strides=(2, 1), padding="VALID"),
    "explicit and negative padding": dict(window_strides=(1, 2), padding=((2, -1), (0, 1))),
    "lhs dilation": dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(2, 1)),
    "rhs dilation": dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(2, 3)),
    "NHWC HWIO": dict(window_strides=(1, 1), padding="SAME",
                      dimension_numbers=("NHWC", "HWIO", "NHWC")),
    "NHWC out NCHW": dict(window_strides=(2, 2), padding="SAME",
                          dimension_numbers=("NHWC", "OIHW", "NCHW")),
}


def _conv_args(dimension_numbers=("NCHW", "OIHW", "NCHW"), groups=1, **_):
    lhs_shape = {"N": 2, "C": 4, "H": 7, "W": 6}
    rhs_shape = {"O": 6, "I": 4 // groups, "H": 3, "W": 2}
    return (f32(*[lhs_shape[c] for c in dimension_numbers[0]]),
            f32(*[rhs_shape[c] for c in dimension_numbers[1]]))


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_general_dilated(case):
    kw = {"dimension_numbers": ("NCHW", "OIHW", "NCHW"), **CONV_CASES[case]}
    lhs, rhs = _conv_args(**kw)
    check(lambda x, w: lax.conv_general_dilated(x, w, **kw), lhs, rhs,
          uses="conv_general_dilated", rtol=1e-5, atol=1e-5)  # 24-term float32 sums


@pytest.mark.parametrize("case", ["NCHW same", "strided valid", "lhs dilation", "NHWC HWIO",
                                  "grouped"])
def test_conv_vjp(case):
    """jax.vjp of a conv: the input gradient (lhs dilation, flipped kernel, swapped features)
    and the kernel gradient (batch and feature dims exchanged; batch_group_count if grouped)."""
    kw = dict(dimension_numbers=("NCHW", "OIHW", "NCHW"), window_strides=(2, 1),
              padding="SAME")
    kw.update({k: v for k, v in CONV_CASES.get(case, {}).items()})
    if case == "grouped":
        kw["feature_group_count"] = 2
    lhs, rhs = _conv_args(groups=kw.get("feature_group_count", 1), **kw)
    f = lambda x, w: lax.conv_general_dilated(x, w, **kw)  # noqa: E731
    ct = f32(*jax.eval_shape(f, lhs, rhs).shape)

    def both(x, w, ct):
        return jax.vjp(f, x, w)[1](ct)
    closed = check(both, lhs, rhs, ct, uses="conv_general_dilated", rtol=1e-5, atol=1e-5)
    if case == "grouped":
        counts = {e.params.get("batch_group_count") for e in closed.jaxpr.eqns
                  if e.primitive.name == "conv_general_dilated"}
        assert 2 in counts


# --- whole programs ----------------------------------------------------------------------------

def _cnn(params, x):
    w1, b1, w2, b2 = params
    h = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    h = jax.nn.relu(h + b1[None, :, None, None])
    h = h.reshape(h.shape[0], 8, 8, 2, 8, 2).max(axis=(3, 5))  # 2x2 max pool
    return h.reshape(h.shape[0], -1) @ w2 + b2


def _loss(params, x, y):
    logits = _cnn(params, x)
    return -jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1).mean()


CNN_PARAMS = [f32(8, 3, 3, 3) * 0.3, f32(8) * 0.1, f32(8 * 8 * 8, 10) * 0.05, f32(10) * 0.1]
CNN_X, CNN_Y = f32(4, 3, 16, 16), RNG.integers(0, 10, 4).astype(np.int32)


def test_cnn_forward():
    check(_loss, CNN_PARAMS, CNN_X, CNN_Y, uses=("conv_general_dilated", "gather"))


def test_cnn_backward():
    def step(params, x, y):
        loss, vjp = jax.vjp(lambda p: _loss(p, x, y), params)
        return loss, vjp(jnp.float32(1))
    check(step, CNN_PARAMS, CNN_X, CNN_Y, uses=("conv_general_dilated", "scatter-add"),
          rtol=2e-5, atol=1e-6)  # gradients summed over 4x16x16 positions


def test_adamw_update():
    optax = pytest.importorskip("optax")
    opt = optax.adamw(1e-3, weight_decay=0.01)
    grads = [f32(*p.shape) for p in CNN_PARAMS]
    state = opt.init(CNN_PARAMS)
    state = opt.update(grads, state, CNN_PARAMS)[1]  # a step taken: count 1, moments nonzero

    def update(grads, state, params):
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state
    check(update, grads, state, CNN_PARAMS, uses=("sqrt", "pow"))
