"""hookgrad.library.custom_op: eager autograd through the generated Function, the
registered backward under jax.grad/jit/vmap on raw arrays, schemas and errors.
Scenarios ``f(L)`` run under hookgrad and torch (``same_as_torch``)."""
import itertools
import typing

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import _mode
from tests.differential import py, raises, same_as_torch

_ids = itertools.count()


def uniq(base):
    """A fresh op name per call: torch keeps every operator for the whole process."""
    return f"hgtest::{base}_{next(_ids)}"


def make_sin(L, with_autograd=True, scale=1.0):
    name = uniq("sin")

    @L.library.custom_op(name, mutates_args=())
    def mysin(x: L.Tensor) -> L.Tensor:
        return x.sin()

    if with_autograd:
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.cos() * scale
        mysin.register_autograd(backward, setup_context=setup_context)
    return mysin, name


# --------------------------------------------------------------------------- eager


def test_custom_op_forward_backward_and_node():
    def f(L):
        op, name = make_sin(L)
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = op(x)
        node = y.grad_fn.name()
        y.sum().backward()
        ns, opname = name.split("::")
        return [py(y), py(x.grad), node == f"GeneratedBackwardFor_{ns}_{opname}_defaultBackward",
                len(y.grad_fn.next_functions), repr(op).startswith("<CustomOpDef(")]
    got = same_as_torch(f)
    np.testing.assert_allclose(got[1], np.cos([0.5, 1.0]), rtol=1e-6)
    assert got[2] is True


def test_no_grad_needed_records_nothing():
    def f(L):
        op, _ = make_sin(L)
        y = op(L.tensor([0.5]))
        x = L.tensor([0.5], requires_grad=True)
        with L.no_grad():
            z = op(x)
        return [y.requires_grad, y.grad_fn is None, z.requires_grad]
    assert same_as_torch(f) == [False, True, False]


def test_backward_without_registered_formula():
    def f(L):
        op, _ = make_sin(L, with_autograd=False)
        x = L.tensor([0.5], requires_grad=True)
        y = op(x)  # the call itself works
        return [y.requires_grad, raises(lambda: y.sum().backward())]
    same_as_torch(f)
    op, name = make_sin(hg, with_autograd=False)
    y = op(hg.tensor([0.5], requires_grad=True))
    opname = name.replace("::", ".") + ".default"
    with pytest.raises(RuntimeError, match=f"^Trying to backward through {opname} but no autograd "
                                           "formula was registered. Please use register_autograd "
                                           "to add one.$"):
        y.sum().backward()


def test_needs_input_grad_non_tensor_args_and_multiple_outputs():
    def f(L):
        seen = []

        @L.library.custom_op(uniq("affine"), mutates_args=())
        def affine(x: L.Tensor, w: L.Tensor, k: float) -> tuple[L.Tensor, L.Tensor]:
            return x * w * k, x + w

        def setup_context(ctx, inputs, output):
            x, w, k = inputs
            ctx.save_for_backward(x, w)
            ctx.k = k

        def backward(ctx, g1, g2):
            seen.append(list(ctx.needs_input_grad))
            x, w = ctx.saved_tensors
            return g1 * w * ctx.k + g2, g1 * x * ctx.k + g2, None
        affine.register_autograd(backward, setup_context=setup_context)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0])
        a, b = affine(x, w, 2.0)
        (a.sum() + 3 * b.sum()).backward()
        return [py(a), py(b), py(x.grad), seen, len(a.grad_fn.next_functions)]
    got = same_as_torch(f)
    assert got[2] == [9.0, 11.0] and got[3] == [[True, False, False]]


def test_wrong_gradient_count_message_names_generated_node():
    def f(L):
        op, name = make_sin(L)
        op.register_autograd(lambda ctx, g: (g, g))
        return raises(lambda: op(L.tensor([0.5], requires_grad=True)).sum().backward())
    same_as_torch(f)
    op, _ = make_sin(hg)
    op.register_autograd(lambda ctx, g: (g, g))
    with pytest.raises(RuntimeError, match=r"function GeneratedBackwardFor_hgtest_sin_\d+_default"
                                           r"Backward returned a gradient different than None at "
                                           r"position 2"):
        op(hg.tensor([0.5], requires_grad=True)).sum().backward()


def test_keyword_only_arguments():
    def f(L):
        @L.library.custom_op(uniq("mul"), mutates_args=())
        def mul(x: L.Tensor, *, val: float) -> L.Tensor:
            return x * val

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.val = keyword_only_inputs["val"]

        mul.register_autograd(lambda ctx, g: g * ctx.val, setup_context=setup_context)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = mul(x, val=3.5)
        y.sum().backward()
        return [py(y), py(x.grad)]
    assert same_as_torch(f)[1] == [3.5, 3.5]


def test_default_arguments_reach_setup_context():
    def f(L):
        seen = []

        @L.library.custom_op(uniq("pw"), mutates_args=())
        def pw(x: L.Tensor, n: int = 3) -> L.Tensor:
            return x ** n

        def setup_context(ctx, inputs, output):
            seen.append(len(inputs))
            ctx.save_for_backward(inputs[0])
            ctx.n = inputs[1]

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.n * x ** (ctx.n - 1), None
        pw.register_autograd(backward, setup_context=setup_context)
        x = L.tensor([2.0], requires_grad=True)
        pw(x).sum().backward()
        return [seen, py(x.grad)]
    assert same_as_torch(f) == [[2], [12.0]]


def test_list_of_tensors_inputs():
    def f(L):
        seen = []

        @L.library.custom_op(uniq("wsum"), mutates_args=())
        def wsum(xs: typing.List[L.Tensor], ws: typing.List[float]) -> L.Tensor:
            return sum(t * w for t, w in zip(xs, ws))

        def setup_context(ctx, inputs, output):
            ctx.ws = inputs[1]

        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return [g * w for w in ctx.ws], None
        wsum.register_autograd(backward, setup_context=setup_context)
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        y = wsum([a, b], [0.5, 2.0])
        y.sum().backward()
        return [py(y), py(a.grad), py(b.grad), py(seen)]
    got = same_as_torch(f)
    assert got[1] == [0.5, 0.5] and got[2] == [2.0, 2.0]


def test_list_of_tensors_output():
    def f(L):
        @L.library.custom_op(uniq("split2"), mutates_args=())
        def split2(x: L.Tensor) -> typing.List[L.Tensor]:
            return [x * 2, x * 3]

        def backward(ctx, grads):
            return grads[0] * 2 + grads[1] * 3
        split2.register_autograd(backward)
        x = L.tensor([1.0], requires_grad=True)
        a, b = split2(x)
        (a + b).sum().backward()
        return [py(a), py(b), py(x.grad)]
    assert same_as_torch(f)[2] == [5.0]


# --------------------------------------------------------------------------- JAX


def test_raw_jax_arrays_use_registered_backward():
    op, _ = make_sin(hg, scale=3.0)  # a deliberately scaled backward: who runs it shows
    a = jnp.array([0.1, 0.7])
    out = op(a)
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(out, jnp.sin(a), rtol=1e-6)
    want = 3 * jnp.cos(a)
    np.testing.assert_allclose(jax.grad(lambda v: op(v).sum())(a), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda v: op(v).sum()))(a), want, rtol=1e-6)
    batch = jnp.stack([a, 2 * a])
    np.testing.assert_allclose(jax.vmap(jax.grad(lambda v: op(v).sum()))(batch),
                               3 * jnp.cos(batch), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(op)(a), jnp.sin(a), rtol=1e-6)


def test_raw_jax_arrays_without_backward():
    op, _ = make_sin(hg, with_autograd=False)
    a = jnp.array([0.1])
    np.testing.assert_allclose(op(a), jnp.sin(a), rtol=1e-6)
    with pytest.raises(RuntimeError, match="but no autograd formula was registered"):
        jax.grad(lambda v: op(v).sum())(a)


def test_functional_mode_with_tensors():
    op, _ = make_sin(hg, scale=2.0)

    def fn(v):
        with _mode.functional_mode():
            return op(hg.Tensor._wrap(v))._data.sum()
    a = jnp.array([0.3, 0.4])
    np.testing.assert_allclose(jax.grad(fn)(a), 2 * jnp.cos(a), rtol=1e-6)


def test_eager_engine_under_jit():
    op, _ = make_sin(hg, scale=2.0)

    def step(v):
        x = hg.Tensor._wrap(v).requires_grad_(True)
        op(x).sum().backward()
        return x.grad._data
    a = jnp.array([0.3, 0.4])
    np.testing.assert_allclose(jax.jit(step)(a), 2 * jnp.cos(a), rtol=1e-6)


# --------------------------------------------------------------------------- mutation, kernels


def test_mutating_op():
    def f(L):
        @L.library.custom_op(uniq("inc"), mutates_args={"x"})
        def inc(x: L.Tensor) -> None:
            x.add_(1)
        t = L.tensor([1.0, 2.0])
        v0 = t._version
        r = inc(t)
        err = raises(lambda: inc.register_autograd(lambda ctx, g: g))
        return [r, py(t), t._version > v0, err]
    same_as_torch(f)

    @hg.library.custom_op(uniq("inc"), mutates_args={"x"})
    def inc(x: hg.Tensor) -> None:
        x._data = x._data + 1  # a JAX-style write: the op still bumps the version
    t = hg.tensor([1.0])
    inc(t)
    assert t._version == 1 and t.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="Cannot register autograd formula for non-functional "
                                           "operator"):
        inc.register_autograd(lambda ctx, g: g)
    with pytest.raises(RuntimeError, match="cannot be called on JAX arrays"):
        inc(jnp.ones(1))


def test_register_kernel_and_set_kernel_enabled():
    def f(L):
        @L.library.custom_op(uniq("k"), mutates_args=())
        def k(x: L.Tensor) -> L.Tensor:
            return x * 0

        x = L.tensor([1.0])
        dev = x.device.type

        @k.register_kernel(dev)
        def _(x):
            return x + 1
        a = py(k(x))
        with k.set_kernel_enabled(dev, enabled=False):
            b = py(k(x))
        return [a, b, py(k(x))]
    assert same_as_torch(f) == [[2.0], [0.0], [2.0]]


def test_device_specific_op_on_other_device():
    here = hg.ones(1).device.type
    other = "tpu" if here != "tpu" else "cpu"

    @hg.library.custom_op(uniq("elsewhere"), mutates_args=(), device_types=other)
    def elsewhere(x: hg.Tensor) -> hg.Tensor:
        return x
    with pytest.raises(NotImplementedError, match=f"no kernel is registered for device type "
                                                  f"'{here}'"):
        elsewhere(hg.ones(1))


def test_register_fake_is_kept_and_returned():
    op, _ = make_sin(hg)

    def fake(x):
        return x
    assert op.register_fake(fake) is fake
    assert op._abstract_fn is fake


def test_non_decorator_form_and_opdefs():
    def impl(x: hg.Tensor) -> hg.Tensor:
        return x * 2
    name = uniq("twice")
    op = hg.library.custom_op(name, impl, mutates_args=())
    assert hg.library.OPDEFS[name] is op
    assert op(hg.tensor([2.0])).tolist() == [4.0]


# --------------------------------------------------------------------------- schema errors


def test_schema_inference_errors():
    def f(L):
        def no_ann(x):
            return x

        def tup(x: typing.Tuple[L.Tensor, L.Tensor]) -> L.Tensor:
            return x[0]

        def kw_tensor(x: L.Tensor, *, y: L.Tensor) -> L.Tensor:
            return x

        def ok(x: L.Tensor) -> L.Tensor:
            return x
        return [raises(lambda: L.library.custom_op(uniq("a"), mutates_args=())(no_ann)),
                raises(lambda: L.library.custom_op(uniq("b"), mutates_args=())(tup)),
                raises(lambda: L.library.custom_op(uniq("c"), mutates_args=())(kw_tensor)),
                raises(lambda: L.library.custom_op(uniq("d"), mutates_args=("z",))(ok)),
                raises(lambda: L.library.custom_op(uniq("e"), mutates_args="all")(ok)),
                raises(lambda: L.library.custom_op(uniq("f"), mutates_args=(),
                                                   schema="(Tensor(a!) x) -> Tensor")(ok))]
    got = same_as_torch(f)
    assert [g["raises"] for g in got] == ["ValueError", "ValueError", "NotImplementedError",
                                          "ValueError", "ValueError", "ValueError"]

    def no_ann(x):
        return x
    with pytest.raises(ValueError, match="infer_schema\\(func\\): Parameter x must have a type "
                                         "annotation."):
        hg.library.custom_op(uniq("a"), mutates_args=())(no_ann)

    def kw_tensor(x: hg.Tensor, *, y: hg.Tensor) -> hg.Tensor:
        return x
    with pytest.raises(NotImplementedError, match="custom_op with kwarg-only Tensor args"):
        hg.library.custom_op(uniq("c"), mutates_args=())(kw_tensor)

    def ok(x: hg.Tensor) -> hg.Tensor:
        return x
    with pytest.raises(ValueError, match="in mutates_args were not found in the custom op's "
                                         "signature"):
        hg.library.custom_op(uniq("d"), mutates_args=("z",))(ok)
    with pytest.raises(ValueError, match="mutates_args must either be a sequence"):
        hg.library.custom_op(uniq("e"), mutates_args="all")(ok)
    with pytest.raises(ValueError, match="The schema suggests that the op mutates"):
        hg.library.custom_op(uniq("f"), mutates_args=(), schema="(Tensor(a!) x) -> Tensor")(ok)
    with pytest.raises(ValueError, match="expected the name to look like"):
        hg.library.custom_op("no_namespace", mutates_args=())(ok)


def test_inferred_schema_text():
    from hookgrad._custom_op.schema import infer_schema

    def f(x: hg.Tensor, ys: typing.List[hg.Tensor], n: int = 2, *, s: float,
          o: typing.Optional[hg.Tensor] = None) -> typing.Tuple[hg.Tensor, hg.Tensor]:
        return x, x
    assert str(infer_schema(f, mutates_args=["x"], op_name="f")) == \
        "f(Tensor(a0!) x, Tensor[] ys, SymInt n=2, *, float s, Tensor? o=None) -> (Tensor, Tensor)"
    torch = pytest.importorskip("torch")

    def g(x: torch.Tensor, ys: typing.List[torch.Tensor], n: int = 2, *, s: float,
          o: typing.Optional[torch.Tensor] = None) -> typing.Tuple[torch.Tensor, torch.Tensor]:
        return x, x
    assert torch.library.infer_schema(g, mutates_args=["x"], op_name="f") == \
        str(infer_schema(f, mutates_args=["x"], op_name="f"))
