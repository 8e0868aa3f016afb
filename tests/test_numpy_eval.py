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


# --- the rest of the elementwise primitives ----------------------------------------------------

UNIT = np.tanh(f32(3, 4)) * 0.99  # inside (-1, 1), for asin, acos, atanh
BIG = np.abs(f32(3, 4)) + 1.0     # >= 1, for acosh
I, J = i32(3, 4), i32(3, 4)
U = RNG.integers(0, 2**32, (3, 4), dtype=np.uint32)
UJ = RNG.integers(0, 2**32, (3, 4), dtype=np.uint32)
NAN = np.array([[1.0, np.nan, -np.inf, np.inf], [0.0, -0.0, 2.5, -2.5], [0.5, -0.5, 1.5, 7.0]],
               np.float32)

UNARY = {"abs": X, "sign": NAN, "floor": X * 3, "ceil": X * 3, "is_finite": NAN, "exp2": X,
         "log1p": POS, "expm1": X, "tanh": X, "logistic": X * 5, "sin": X, "cos": X, "tan": X,
         "asin": UNIT, "acos": UNIT, "atan": X, "sinh": X, "cosh": X, "asinh": X, "acosh": BIG,
         "atanh": UNIT, "rsqrt": POS, "cbrt": X, "square": X}


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    check(getattr(lax, name), UNARY[name], uses=name)


def test_unary_on_ints():
    check(lambda i: [lax.abs(i), lax.sign(i), lax.neg(i), lax.square(i)], I,
          uses=("abs", "sign", "neg", "square"))


def test_round_both_methods():
    x = np.concatenate([NAN.ravel(), (X * 4).ravel(), [0.49999997, -2.5, 3.5]]).astype(np.float32)
    check(lambda x: [lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
                     lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)], x, uses="round")


BINARY = {"min": (X, Y), "atan2": (X, Y), "nextafter": (X, Y), "rem": (X * 5, Y),
          "ne": (I, J), "ge": (X, Y), "le": (I, J), "and": (B, ~B), "or": (I, J),
          "xor": (U, UJ)}


@pytest.mark.parametrize("name", BINARY)
def test_binary(name):
    fn = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor}.get(name)
    check(fn or getattr(lax, name), *BINARY[name], uses=name)


def test_not_on_bools_and_ints():
    check(lambda b, i, u: [lax.bitwise_not(b), lax.bitwise_not(i), lax.bitwise_not(u)], B, I, U,
          uses="not")


def test_clamp_propagates_nan():
    check(lambda lo, x, hi: [lax.clamp(lo, x, hi), lax.clamp(np.float32(-0.5), x, np.float32(1))],
          np.float32(np.nan), NAN, np.float32(1.0), uses="clamp")


def test_integer_div_and_rem_follow_xla():
    """XLA truncates toward zero (NumPy floors), x / 0 is -1 (all ones unsigned), x % 0 is x,
    INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0; rem has the dividend's sign."""
    x = np.array([7, -7, 7, -7, 5, -5, 0, -2**31, -2**31, 3], np.int32)
    y = np.array([2, 2, -2, -2, 0, 0, 0, -1, 0, 7], np.int32)
    check(lambda x, y: [lax.div(x, y), lax.rem(x, y)], x, y, uses=("div", "rem"))
    check(lambda x, y: [lax.div(x, y), lax.rem(x, y)], np.array([7, 5, 0], np.uint8),
          np.array([2, 0, 0], np.uint8), uses=("div", "rem"))
    check(lambda x, y: [lax.div(x, y), lax.rem(x, y)], I, np.where(J == 0, 3, J).astype(np.int32))


def test_float_rem_is_c_fmod():
    check(lax.rem, np.array([5.5, -5.5, 5.5, -5.5, 1.0, np.inf], np.float32),
          np.array([2.0, 2.0, -2.0, -2.0, 0.0, 1.0], np.float32), uses="rem")


def test_shifts_by_the_bit_width_or_more():
    """XLA: shifting by >= the bit width (or a negative amount) gives 0, or the sign for an
    arithmetic right shift; NumPy leaves that to the C compiler."""
    x = np.array([1, -8, 12345, -1, 7, -2**31], np.int32)
    s = np.array([3, 1, 31, 32, 40, -1], np.int32)
    check(lambda x, s: [lax.shift_left(x, s), lax.shift_right_arithmetic(x, s),
                        lax.shift_right_logical(x, s)], x, s,
          uses=("shift_left", "shift_right_arithmetic", "shift_right_logical"))
    check(lambda x, s: [lax.shift_left(x, s), lax.shift_right_arithmetic(x, s),
                        lax.shift_right_logical(x, s)],
          np.array([1, 200, 255, 128], np.uint8), np.array([7, 1, 8, 9], np.uint8))


def test_float_to_int_saturates_and_nan_is_zero():
    x = np.array([1e10, -1e10, np.nan, np.inf, -np.inf, -1.5, 2.7, 3e9, 255.9, -0.9], np.float32)
    check(lambda x: [x.astype(t) for t in (jnp.int32, jnp.uint32, jnp.int8, jnp.uint8,
                                           jnp.int16, jnp.bool_)], x,
          uses="convert_element_type")


def test_pow_with_int_exponent():
    check(lax.pow, POS, I, uses="pow")


def test_select_n_three_way():
    which = RNG.integers(0, 3, (3, 4)).astype(np.int32)
    check(lambda w, a, b, c: lax.select_n(w, a, b, c), which, X, Y, POS, uses="select_n")
    check(lambda b, x: jnp.where(b, x, 0.0), np.bool_(True), X, uses="select_n")


def test_reduce_precision_noop():
    check(lambda x: lax.reduce_precision(x, 8, 23), X, uses="reduce_precision")


# --- reductions and scans ----------------------------------------------------------------------

X3 = f32(2, 3, 4)


def test_reductions():
    check(lambda x: [jnp.min(x, axis=(0, 2)), jnp.prod(x, axis=1), jnp.max(x, axis=())], X3,
          uses=("reduce_min", "reduce_prod"))
    check(lambda i: [jnp.sum(i, axis=0), jnp.prod(i, axis=1), jnp.max(i, 1), jnp.min(i)], I)
    check(lambda b: [jnp.all(b, axis=0), jnp.any(b, axis=1), jnp.all(b)], B,
          uses=("reduce_and", "reduce_or"))
    check(lambda i: [lax.reduce_and_p.bind(i, axes=(1,)), lax.reduce_or_p.bind(i, axes=(0,)),
                     lax.reduce_xor_p.bind(i, axes=(1,)), lax.reduce_xor_p.bind(B, axes=(0,))],
          I, uses=("reduce_and", "reduce_or", "reduce_xor"))


def test_reductions_over_an_empty_axis_give_the_identity():
    e = np.zeros((3, 0), np.float32)
    check(lambda x: [lax.reduce_max(x, (1,)), lax.reduce_min(x, (1,)), jnp.sum(x, 1),
                     jnp.prod(x, 1)], e, uses=("reduce_max", "reduce_min"))
    check(lambda i: [lax.reduce_max(i, (1,)), lax.reduce_min(i, (1,))], np.zeros((2, 0), np.int8))


def test_argmax_argmin_first_nan_wins():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, -1.0, -1.0], [-np.inf] * 4], np.float32)
    check(lambda x: [jnp.argmax(x, axis=1), jnp.argmin(x, axis=1), jnp.argmax(x, axis=0),
                     lax.argmin(x, 1, jnp.uint8)], x, uses=("argmax", "argmin"))
    check(lambda i: [jnp.argmax(i, axis=0), jnp.argmin(i, axis=1)], I)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative(reverse):
    check(lambda x: [lax.cumsum(x, 1, reverse), lax.cumprod(x, 0, reverse),
                     lax.cummax(x, 1, reverse), lax.cummin(x, 0, reverse),
                     lax.cumlogsumexp(x, 1, reverse)], X,
          uses=("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"))
    check(lambda i: [lax.cumsum(i, 1, reverse), lax.cumprod(i, 0, reverse),
                     lax.cummax(i, 1, reverse)], I)


# --- data movement -----------------------------------------------------------------------------

def test_concatenate_split_iota():
    check(lambda x, y: [lax.concatenate([x, y, x], 1), *jnp.split(x, [1, 3], axis=1),
                        lax.iota(jnp.int32, 5), lax.broadcasted_iota(jnp.float32, (2, 3), 1)],
          X, Y, uses=("concatenate", "split", "iota"))


def test_stack_unstack_tile():
    check(lambda x, y: [jnp.stack([x, y], 1), *jnp.unstack(x, axis=1), jnp.tile(y, (2, 1, 3))],
          X, Y, uses=("stack", "unstack", "tile"))
    check(lambda i: [jnp.stack([i, i]), *jnp.unstack(i), jnp.tile(i, 2)], I,
          uses=("stack", "unstack", "tile"))


def test_pad_negative_and_interior():
    check(lambda x: [lax.pad(x, np.float32(-1), [(1, -1, 2), (-2, 3, 0)]),
                     lax.pad(x, np.float32(0), [(-2, -3, 1), (0, 0, 1)]),
                     jnp.pad(x, 2, mode="constant", constant_values=5.0)], X, uses="pad")


def test_slice_with_strides():
    check(lambda x: [lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)), x[:, ::2, 1:], x[..., ::-1]],
          X3, uses=("slice", "rev"))


def test_dynamic_slice_clamps_its_start():
    check(lambda x, i, j: [lax.dynamic_slice(x, (i, j), (2, 3)),
                           lax.dynamic_update_slice(x, jnp.ones((2, 2), x.dtype), (i, j)),
                           lax.dynamic_slice(x, (j, i), (3, 1))],
          X, np.int32(5), np.int32(-7), uses=("dynamic_slice", "dynamic_update_slice"))


def test_expand_dims_squeeze_copy():
    check(lambda x: [jnp.expand_dims(x, (0, 3)), jnp.squeeze(x[None]), jnp.array(x, copy=True)],
          X, uses=("broadcast_in_dim", "squeeze", "copy"))


def test_sort():
    """Stable sorts; NaNs go last; several operands sort along with the keys."""
    x = np.where(RNG.random((3, 6)) < 0.2, np.nan, f32(3, 6)).astype(np.float32)
    keys = RNG.integers(0, 3, (3, 6)).astype(np.int32)
    check(lambda x, k: [jnp.sort(x, axis=1), jnp.sort(x, axis=0), jnp.argsort(x, axis=1),
                        *lax.sort((k, x), dimension=1, num_keys=1),
                        *lax.sort((k, jnp.round(x), x), dimension=1, num_keys=2),
                        jnp.sort(k, axis=1, stable=False)], x, keys, uses="sort")


# --- gather and scatter ------------------------------------------------------------------------

G = f32(5, 4, 3)
IDX = np.array([0, 4, 2, 2, 1])


def test_gather_forms():
    check(lambda x, i: [x[i], x[:, i % 4], x[i, :, i % 3], x[1:3, i % 4, ::2], x[2, 1],
                        jnp.take_along_axis(x, (i[:, None, None] % 3).repeat(4, 1), axis=2)],
          G, IDX, uses="gather")


@pytest.mark.parametrize("mode", ["fill", "clip", "promise_in_bounds"])
def test_take_modes(mode):
    """mode='fill': an out-of-bounds index gives NaN (floats), the dtype's min (signed
    ints), its max (unsigned) or True (bools); 'clip' clamps into range."""
    i = np.array([5, -1, 1, 0, 2, -7, 100])
    if mode == "promise_in_bounds":
        i = np.abs(i) % 3
    for x in (f32(3), np.arange(3, dtype=np.int32), np.arange(3, dtype=np.uint8),
              np.array([False, True, False])):
        check(lambda x, i: [x.at[i].get(mode=mode), x.at[i].get(mode=mode, fill_value=None)],
              x, i, uses="gather")
    check(lambda x, i: x.at[:, i].get(mode=mode), G, i, uses="gather")
    if mode != "promise_in_bounds":
        check(lambda x, i: jnp.take(x, i, axis=1, mode=mode), G, i, uses="gather")


def test_gather_fill_drops_whole_slices():
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
                                    start_index_map=(0,))
    i = np.array([[4], [-1], [3], [0]], np.int32)
    for mode in ("fill", "clip", "promise_in_bounds"):
        check(lambda x, i: lax.gather(x, i, dn, (2,), mode=mode), np.arange(5.0, dtype=np.float32),
              i, uses="gather")
    check(lambda x, i: lax.gather(x, i, dn, (2,), mode="fill", fill_value=-3.0),
          np.arange(5.0, dtype=np.float32), i)


def test_vmapped_indexing_uses_batching_dims():
    def pick(x, i):
        return x[i], x.at[i].add(1.0), jnp.take(x, i, mode="fill")
    closed = check(jax.vmap(pick), G[:, :, 0], (IDX[:, None] + np.arange(2)) % 5 - 1,
                   uses=("gather", "scatter-add"))
    dns = [e.params["dimension_numbers"] for e in closed.jaxpr.eqns
           if e.primitive.name in ("gather", "scatter-add")]
    assert all(dn.operand_batching_dims for dn in dns)


def test_scatter_forms():
    u = f32(5, 3)
    check(lambda x, i, u: [x.at[i, 1].add(u), x.at[i, 1].mul(u), x.at[i, 1].min(u),
                           x.at[i, 1].max(u), x.at[:, i % 4].add(1.0),
                           x.at[2].set(0.0), x.at[1:3, 0].set(u[:2]), x.at[i].get()],
          G, IDX, u, uses=("scatter-add", "scatter-mul", "scatter-min", "scatter-max",
                           "scatter"))
    check(lambda x, i: x.at[i].add(np.int32(1)), np.zeros(5, np.int32),
          np.array([0, 0, 3, 4, 3]))


@pytest.mark.parametrize("mode", ["fill", "clip", "promise_in_bounds"])
def test_scatter_out_of_bounds(mode):
    """Out-of-bounds windows are dropped whole (FILL_OR_DROP and, as XLA's own scatter does,
    PROMISE_IN_BOUNDS) or clamped into range (CLIP)."""
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0,))
    i = np.array([[4], [-1], [1], [3]], np.int32)
    check(lambda x, i, u: [lax.scatter_add(x, i, u, dn, mode=mode),
                           lax.scatter_mul(x, i, u, dn, mode=mode)],
          f32(6), i, f32(4, 2), uses=("scatter-add", "scatter-mul"))
    check(lambda x, i: x.at[i].add(10.0, mode=mode), f32(6), np.array([7, -1, 2, -9]))


def test_scatter_with_unique_indices():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    check(lambda x, u: lax.scatter(x, np.array([[3], [0], [1]], np.int32), u, dn,
                                   unique_indices=True),
          f32(5), f32(3), uses="scatter")


# --- calls and control flow --------------------------------------------------------------------

def test_calls_run_their_sub_jaxprs():
    @jax.custom_vjp
    def clipped(x):
        return jnp.clip(x, -1, 1)
    clipped.defvjp(lambda x: (clipped(x), x), lambda x, g: (g,))

    def f(x):
        y = jax.checkpoint(lambda v: jnp.sin(v) * 2)(x)
        z = jax.jit(lambda v: jax.jit(jnp.cos)(v) + 1)(y)
        return clipped(z), jax.nn.gelu(x), jax.nn.softplus(x)
    check(f, X, uses=("remat2", "jit", "custom_vjp_call", "custom_jvp_call"))
    check(jax.grad(lambda x: jax.checkpoint(lambda v: jnp.sin(v).sum())(x)), X)


def test_closed_call():
    """closed_call (as some transformations stage it): the jit equation, renamed."""
    from jax._src import core
    f = lambda x, y: jax.jit(lambda a, b: (a * b, a - b))(x, y)  # noqa: E731
    closed = jax.jit(f).trace(X, Y).jaxpr
    eqn = closed.jaxpr.eqns[0]
    call = eqn.replace(primitive=core.closed_call_p, params={"call_jaxpr": eqn.params["jaxpr"]})
    closed = closed.replace(jaxpr=closed.jaxpr.replace(eqns=[call]))
    assert supported(closed)
    for got, want in zip(eval_jaxpr(closed, X, Y), jax.jit(f)(X, Y)):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_cond_picks_a_branch_and_clamps_the_index():
    branches = [lambda x: x + 1, lambda x: x * 2, lambda x: -x]
    for i in (-3, 0, 1, 2, 9):
        check(lambda i, x: lax.switch(i, branches, x), np.int32(i), X, uses="cond")
    check(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), np.bool_(True), X, uses="cond")


# --- jaxpr plumbing: literals, consts, dropped and forwarded outputs ---------------------------

def test_consts_literals_and_forwarded_outputs():
    table = np.arange(12.0, dtype=np.float32).reshape(3, 4)  # a NumPy constant: a constvar

    def f(x, y):
        return x, 3.0, x * table + 2, y, jnp.int32(7), lax.split(x, (2, 2), axis=1)[0]
    closed = check(f, X, I)
    jaxpr = closed.jaxpr
    assert jaxpr.constvars and len(closed.consts) == len(jaxpr.constvars)
    assert jaxpr.outvars[0] is jaxpr.invars[0]  # an input forwarded
    assert type(jaxpr.outvars[1]).__name__ == "Literal"
    # an unused output (printed ``_``) may also be a DropVar, as older tracing made it
    from jax._src import core
    split = jaxpr.eqns[-1]
    dropped = split.replace(outvars=[split.outvars[0], core.DropVar(split.outvars[1].aval)])
    closed = closed.replace(jaxpr=jaxpr.replace(eqns=[*jaxpr.eqns[:-1], dropped]))
    np.testing.assert_array_equal(eval_jaxpr(closed, X, I)[-1], X[:, :2])


def test_results_are_writable_arrays_of_the_aval_dtype():
    closed = jax.jit(lambda x: (x.sum(), x[0] > 0, x.astype(jnp.int8),
                                jnp.broadcast_to(x[0], (5, 4)))).trace(X).jaxpr
    out = eval_jaxpr(closed, X)
    assert [type(o) for o in out] == [np.ndarray] * 4
    assert [o.dtype for o in out] == [np.float32, np.bool_, np.int8, np.float32]
    assert out[0].shape == ()
    assert all(o.flags.writeable for o in out)  # no read-only broadcast views


def test_numpy_scalar_arguments():
    closed = jax.jit(lambda a, b: a * b + 1).trace(np.float32(2), np.float32(3)).jaxpr
    assert eval_jaxpr(closed, np.float32(2), np.float32(3))[0] == np.float32(7)


def test_no_warnings_on_zero_division_or_overflow():
    import warnings
    closed = jax.jit(lambda x: (x / 0.0, jnp.exp(x * 1e3), jnp.log(-x))).trace(X).jaxpr
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eval_jaxpr(closed, X)


# --- what it refuses ---------------------------------------------------------------------------

REFUSED = {
    "erf (no vectorized NumPy form)": (lax.erf, X),
    "lgamma": (lax.lgamma, POS),
    "bfloat16 input": (lambda x: x * 2, X.astype(jnp.bfloat16)),
    "float16 result": (lambda x: x.astype(jnp.float16), X),
    "complex": (lambda x: x * 1j, X),
    "random bits": (lambda k: jax.random.normal(k, (3,)), jax.random.key(0)),
    "old-style raw key": (lambda k: jax.random.uniform(k, (3,)), jax.random.PRNGKey(0)),
    "while loop": (lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2),
                                            (0, x))[1], X),
    "scan": (lambda x: lax.scan(lambda c, v: (c + v, c), 0.0, x)[0], X[0]),
    "fori_loop": (lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2, x), X),
    "debug print (an effect)": (lambda x: jax.debug.print("{}", x) or x, X),
    "pure callback": (lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype),
                                                  x), X),
    "reduce_precision that rounds": (lambda x: lax.reduce_precision(x, 5, 10), X),
    "scatter without unique indices": (lambda x, i: x.at[i].set(1.0), X[0], np.array([0, 0])),
    "scatter_apply (a function of the old value)": (lambda x: x.at[1].apply(jnp.sin), X[0]),
    "unstable multi-operand sort": (lambda k, x: lax.sort((k, x), is_stable=False, num_keys=1),
                                    I[0], X[0]),
    "population_count (no rule)": (lax.population_count, I),
    "reduce_window (no rule)": (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1),
                                                            "VALID"), X),
}


@pytest.mark.parametrize("name", REFUSED)
def test_refused(name):
    f, *args = REFUSED[name]
    assert not supported(jax.jit(f).trace(*args).jaxpr)


def test_refuses_a_param_it_does_not_know():
    closed = jax.jit(lambda x: x * 2).trace(X).jaxpr
    eqn = closed.jaxpr.eqns[0]
    odd = eqn.replace(params={**eqn.params, "out_dtype": np.dtype(np.float64)})
    assert not supported(closed.replace(jaxpr=closed.jaxpr.replace(eqns=[odd])))
    odd = eqn.replace(params={**eqn.params, "new_param": 1})
    assert not supported(closed.replace(jaxpr=closed.jaxpr.replace(eqns=[odd])))


# --- 64-bit and narrow dtypes (hookgrad turns JAX's x64 mode on) --------------------------------

def test_64_bit_and_narrow_dtypes():
    assert jax.config.jax_enable_x64
    d = RNG.standard_normal((3, 4)) * 1e19
    check(lambda d: [d * 2, jnp.exp(d / 1e19), d.astype(jnp.int64), d.astype(jnp.uint64),
                     (d / 1e19).astype(jnp.float32), d.astype(jnp.int16)], d,
          uses="convert_element_type", rtol=1e-14, atol=0)
    i = RNG.integers(-2**62, 2**62, (3, 4))
    check(lambda i, j: [lax.div(i, j), lax.rem(i, j), lax.shift_right_logical(i, j % 70),
                        i * j, i.astype(jnp.float32), i.astype(jnp.uint16)],
          i, RNG.integers(-5, 5, (3, 4)), uses=("div", "rem"))
    check(lambda a, b: [a + b, a * b, lax.div(a, b), a.astype(jnp.int8), jnp.sum(a)],
          RNG.integers(0, 2**16, 7, dtype=np.uint16), RNG.integers(1, 9, 7, dtype=np.uint16))


def test_max_min_propagate_nan():
    check(lambda x, y: [lax.max(x, y), lax.min(x, y), jnp.max(x), jnp.min(x, axis=1)], NAN,
          NAN[::-1], uses=("max", "min"))


def test_conv_groups_and_other_ranks():
    """Feature groups (grouped, depthwise), batch groups, and 1-D and 3-D convolutions."""
    x, w = f32(2, 4, 7, 6), f32(6, 2, 3, 2)
    check(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2),
          x, w, uses="conv_general_dilated", rtol=1e-5, atol=1e-5)
    check(lambda x, w: lax.conv_general_dilated(x, w, (2, 1), "VALID", feature_group_count=4),
          x, f32(8, 1, 3, 3), rtol=1e-5, atol=1e-5)
    check(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=2),
          f32(4, 3, 5, 5), f32(6, 3, 2, 2), rtol=1e-5, atol=1e-5)
    check(lambda x, w: lax.conv_general_dilated(x, w, (2,), [(1, 2)], rhs_dilation=(2,)),
          f32(2, 3, 9), f32(4, 3, 3), rtol=1e-5, atol=1e-5)
    check(lambda x, w: lax.conv_general_dilated(x, w, (1, 2, 1), "SAME",
                                                dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
          f32(2, 4, 5, 6, 3), f32(2, 3, 2, 3, 4), rtol=1e-5, atol=1e-5)
    check(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                                preferred_element_type=jnp.int32),
          RNG.integers(-9, 9, (2, 3, 5, 5)).astype(np.int8),
          RNG.integers(-9, 9, (4, 3, 3, 3)).astype(np.int8))


def test_dot_general_preferred_type():
    a = RNG.integers(-100, 100, (3, 5)).astype(np.int8)
    b = RNG.integers(-100, 100, (5, 4)).astype(np.int8)
    check(lambda a, b: [lax.dot(a, b, preferred_element_type=jnp.int32),
                        lax.dot(a.astype(jnp.float32), b.astype(jnp.float32),
                                preferred_element_type=jnp.float64)], a, b, uses="dot_general")
