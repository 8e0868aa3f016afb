"""hookgrad._custom_op.impl: the older custom-op API (torch._custom_op.impl), its
backward registration and its errors, differential against torch where installed.

torch 2.13 registers the op's Autograd kernel in ``custom_op`` itself, after which its
own ``impl_save_for_backward`` refuses to register; ``old_custom_op`` sets the flag that
torch's code expects (``_registered_autograd_kernel_indirection``) so that torch runs
the code paths this API documents.
"""
import importlib
import itertools
import typing
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import _mode
from tests.differential import py, raises, same_as_torch

_ids = itertools.count()
DEVICES = ["cpu", "cuda"]  # hookgrad's Tensors live on the accelerator when there is one


def impl_module(L):
    return importlib.import_module(L.__name__ + "._custom_op.impl")


def old_custom_op(L, base, stub, manual_schema=None):
    """Define an op from ``stub`` under a fresh name (torch keeps operators forever)."""
    name = f"{base}_{next(_ids)}"
    stub.__name__ = name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        op = impl_module(L).custom_op(f"hgold::{name}", manual_schema)(stub)
    if L.__name__ == "torch":
        op._registered_autograd_kernel_indirection = True
    return op


def make_foo(L, save=True, backward=True, which=None):
    """foo(x, y, n) = x * y * n, with a backward whose return is picked by ``which[0]``."""
    def stub(x: L.Tensor, y: L.Tensor, n: int) -> L.Tensor:
        raise NotImplementedError
    op = old_custom_op(L, "foo", stub)

    @op.impl(DEVICES)
    def _(x, y, n):
        return x * y * n
    if save:
        @op.impl_save_for_backward()
        def _(inputs, output):
            return inputs.x, inputs.y, inputs.n
    if backward:
        which = which if which is not None else ["ok"]

        @op.impl_backward()
        def _(ctx, saved, grad):
            x, y, n = saved
            k = which[0]
            if k == "ok":
                return {"x": grad * y * n, "y": grad * x * n}
            if k == "list":
                return [grad]
            if k == "missing":
                return {"x": grad}
            if k == "extra":
                return {"x": grad, "y": None, "n": None}
            if k == "nontensor":
                return {"x": 3, "y": None}
    return op


# --------------------------------------------------------------------------- working ops


def test_forward_backward_and_node_name():
    def f(L):
        op = make_foo(L)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.tensor([3.0, 4.0], requires_grad=True)
        out = op(x, y, 2)
        out.sum().backward()
        return [py(out), py(x.grad), py(y.grad), out.grad_fn.name().split("_")[0],
                out.grad_fn.name().endswith("_customopBackward"), repr(op).startswith(
                    '<CustomOp(op="hgold::foo_')]
    got = same_as_torch(f)
    assert got[1] == [6.0, 8.0] and got[2] == [2.0, 4.0]


def test_save_for_backward_gets_named_inputs_and_output():
    def f(L):
        seen = []

        def stub(x: L.Tensor, k: float) -> L.Tensor:
            raise NotImplementedError
        op = old_custom_op(L, "scale", stub)
        op.impl(DEVICES)(lambda x, k: x * k)

        @op.impl_save_for_backward()
        def _(inputs, output):
            seen.append([type(inputs).__name__.split("_")[0], list(inputs._fields),
                         inputs.k, py(output)])
            return inputs.k

        @op.impl_backward()
        def _(ctx, k, grad):
            seen.append(k)
            return {"x": grad * k}
        x = L.tensor([1.0, 2.0], requires_grad=True)
        op(x, 3.0).sum().backward()
        return [seen, py(x.grad)]
    assert same_as_torch(f) == [[["scale", ["x", "k"], 3.0, [3.0, 6.0]], 3.0], [3.0, 3.0]]


def test_list_input_gradients():
    def f(L):
        def stub(xs: typing.List[L.Tensor], s: float) -> L.Tensor:
            raise NotImplementedError
        op = old_custom_op(L, "bar", stub)
        op.impl(DEVICES)(lambda xs, s: xs[0] * s + xs[1])
        op.impl_save_for_backward()(lambda inputs, output: inputs.s)
        op.impl_backward()(lambda ctx, s, g: {"xs": [g * s, None]})
        a = L.ones(2, requires_grad=True)
        b = L.ones(2, requires_grad=True)
        op([a, b], 2.0).sum().backward()
        return [py(a.grad), b.grad is None]
    assert same_as_torch(f) == [[2.0, 2.0], True]


def test_output_differentiability():
    def f(L):
        def stub(x: L.Tensor) -> typing.Tuple[L.Tensor, L.Tensor]:
            raise NotImplementedError
        op = old_custom_op(L, "two", stub)
        op.impl(DEVICES)(lambda x: (x * 2, x * 3))
        got = []
        op.impl_save_for_backward()(lambda inputs, output: None)

        def bwd(ctx, saved, g1, g2):
            got.append(py(g2))
            return {"x": g1}
        op.impl_backward(output_differentiability=[True, False])(bwd)
        x = L.tensor([1.0, 2.0], requires_grad=True)
        p, q = op(x)
        p.sum().backward()
        return [p.requires_grad, q.requires_grad, got, py(x.grad)]
    assert same_as_torch(f) == [True, False, [[0.0, 0.0]], [1.0, 1.0]]


def test_output_differentiability_for_non_tensor_output():
    def f(L):
        def stub(x: L.Tensor) -> typing.Tuple[L.Tensor, int]:
            raise NotImplementedError
        op = old_custom_op(L, "intout", stub)
        op.impl(DEVICES)(lambda x: (x * 2, 3))
        op.impl_save_for_backward()(lambda inputs, output: None)
        op.impl_backward(output_differentiability=[True, True])(lambda c, s, g1, g2: {"x": g1})
        return raises(lambda: op(L.ones(1, requires_grad=True)))
    same_as_torch(f)

    def stub(x: hg.Tensor) -> typing.Tuple[hg.Tensor, int]:
        raise NotImplementedError
    op = old_custom_op(hg, "intout", stub)
    op.impl(DEVICES)(lambda x: (x * 2, 3))
    op.impl_save_for_backward()(lambda inputs, output: None)
    op.impl_backward(output_differentiability=[True, True])(lambda c, s, g1, g2: {"x": g1})
    with pytest.raises(RuntimeError, match=r"With output_differentiability=\[True, True\]. At idx "
                                           r"1, we received an object of type <class 'int'> that "
                                           r"is not a Tensor"):
        op(hg.ones(1, requires_grad=True))


def test_without_grad_calls_the_device_impl():
    def f(L):
        op = make_foo(L, save=False, backward=False)
        return [py(op(L.ones(2), L.ones(2), 3)), raises(lambda: op(L.ones(2, requires_grad=True),
                                                               L.ones(2), 3))]
    same_as_torch(f)
    op = make_foo(hg, save=False, backward=False)
    with pytest.raises(RuntimeError, match="^Autograd has not been implemented for operator$"):
        op(hg.ones(2, requires_grad=True), hg.ones(2), 3)
    with hg.no_grad():
        assert op(hg.ones(1, requires_grad=True), hg.ones(1), 3).tolist() == [3.0]


def test_functional_mode_and_jit():
    op = make_foo(hg)
    a, b = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
    # called on JAX arrays directly
    np.testing.assert_allclose(op(a, b, 2), 2 * a * b)
    np.testing.assert_allclose(jax.grad(lambda u: op(u, b, 2).sum())(a), 2 * b)

    def fn(a, b):
        with _mode.functional_mode():
            return op(hg.Tensor._wrap(a), hg.Tensor._wrap(b), 2)._data.sum()
    a, b = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
    ga, gb = jax.jit(jax.grad(fn, argnums=(0, 1)))(a, b)
    np.testing.assert_allclose(ga, 2 * b)
    np.testing.assert_allclose(gb, 2 * a)


# --------------------------------------------------------------------------- registration errors


def test_only_one_of_save_and_backward_registered():
    def f(L):
        a = make_foo(L, backward=False)
        b = make_foo(L, save=False)
        x = L.ones(2, requires_grad=True)
        return [raises(lambda: a(x, x, 1)), raises(lambda: b(x.detach(), x.detach(), 1))]
    same_as_torch(f)
    a = make_foo(hg, backward=False)
    with pytest.raises(RuntimeError, match=r"We found a 'save_for_backward' registration for "
                                           r"<CustomOp\(op=\"hgold::foo_\d+\"\)> at .*"
                                           r"test_custom_op_impl.py:\d+ but were unable to find a "
                                           r"'backward' registration"):
        a(hg.ones(1), hg.ones(1), 1)
    b = make_foo(hg, save=False)
    with pytest.raises(RuntimeError, match="We found a 'backward' registration .* unable to find "
                                           "a 'save_for_backward' registration"):
        b(hg.ones(1), hg.ones(1), 1)


def test_backward_return_validation():
    def f(L):
        which = ["ok"]
        op = make_foo(L, which=which)
        out = []
        x = L.ones(2, requires_grad=True)
        for k in ["list", "missing", "extra", "nontensor"]:
            which[0] = k
            out.append(raises(lambda: op(x, x, 2).sum().backward()))
        return out
    same_as_torch(f)
    which = ["ok"]
    op = make_foo(hg, which=which)
    x = hg.ones(2, requires_grad=True)
    prefix = (r"In the backward function defined for <CustomOp\(op=\"hgold::foo_\d+\"\)> at "
              r".*:\d+ using the CustomOp API, ")
    cases = {
        "list": "expected the output of the backward function to be a dict but got "
                "<class 'list'>",
        "missing": r"expected the returned grad_input dict to have keys \{'[xy]', '[xy]'\} but got "
                   r"dict_keys\(\['x'\]\)",
        "extra": r"expected the returned grad_input dict to have keys .* but got "
                 r"dict_keys\(\['x', 'y', 'n'\]\)",
        "nontensor": "got object of type <class 'int'> as the gradient for input 'x', but "
                     "expected the gradient to be either None or a Tensor"}
    for k, msg in cases.items():
        which[0] = k
        with pytest.raises(RuntimeError, match=prefix + msg):
            op(x, x, 2).sum().backward()


def test_list_gradient_validation():
    def make(L, ret):
        def stub(xs: typing.List[L.Tensor]) -> L.Tensor:
            raise NotImplementedError
        op = old_custom_op(L, "lst", stub)
        op.impl(DEVICES)(lambda xs: xs[0] + xs[1])
        op.impl_save_for_backward()(lambda inputs, output: None)
        op.impl_backward()(lambda ctx, saved, g: {"xs": ret(g)})
        return op

    rets = [lambda g: g, lambda g: [g], lambda g: [g, 1]]

    def f(L):
        a = L.ones(2, requires_grad=True)
        return [raises(lambda: make(L, r)([a, a]).sum().backward()) for r in rets]
    same_as_torch(f)
    a = hg.ones(2, requires_grad=True)
    msgs = ["for input 'xs' expected the grad_input dict to hold a list of gradients but got "
            "object of type <class 'hookgrad._tensor.Tensor'>",
            "for input 'xs' expected the grad_input dict to hold a list of 2 gradients but got 1",
            "for input 'xs' expected the grad_input dict to hold a list of None or Tensor "
            "gradients but got object of <class 'int'> at index 1"]
    for r, msg in zip(rets, msgs):
        with pytest.raises(RuntimeError, match=msg):
            make(hg, r)([a, a]).sum().backward()


def test_gradient_for_optional_tensor_passed_none():
    def f(L):
        def stub(x: L.Tensor, b: typing.Optional[L.Tensor]) -> L.Tensor:
            raise NotImplementedError
        op = old_custom_op(L, "opt", stub)
        op.impl(DEVICES)(lambda x, b: x * 2 if b is None else x * 2 + b)
        op.impl_save_for_backward()(lambda inputs, output: None)
        op.impl_backward()(lambda ctx, saved, g: {"x": g * 2, "b": g})
        return raises(lambda: op(L.ones(1, requires_grad=True), None).sum().backward())
    same_as_torch(f)

    def stub(x: hg.Tensor, b: typing.Optional[hg.Tensor]) -> hg.Tensor:
        raise NotImplementedError
    op = old_custom_op(hg, "opt", stub)
    op.impl(DEVICES)(lambda x, b: x * 2)
    op.impl_save_for_backward()(lambda inputs, output: None)
    op.impl_backward()(lambda ctx, saved, g: {"x": g * 2, "b": g})
    with pytest.raises(RuntimeError, match="got a Tensor as the gradient for input 'b' but "
                                           "expected None as the gradient because input 'b' was "
                                           "not a Tensor \\(it was type <class 'NoneType'>\\)."):
        op(hg.ones(1, requires_grad=True), None).sum().backward()


def test_output_differentiability_validation():
    def f(L):
        def stub(x: L.Tensor) -> typing.Tuple[L.Tensor, L.Tensor]:
            raise NotImplementedError
        op = old_custom_op(L, "od", stub)
        return [raises(lambda: op.impl_backward(output_differentiability=v))
                for v in ([True], (True, False), [True, 1])]
    same_as_torch(f)

    def stub(x: hg.Tensor) -> typing.Tuple[hg.Tensor, hg.Tensor]:
        raise NotImplementedError
    op = old_custom_op(hg, "od", stub)
    for v in ([True], (True, False), [True, 1]):
        with pytest.raises(RuntimeError, match=r"impl_backward\(output_differentiability\): "
                                               r"expected output_differentiability to be a list "
                                               r"of bools with length equal to the number of "
                                               r"outputs of this CustomOp got: "):
            op.impl_backward(output_differentiability=v)


def test_duplicate_registrations():
    def f(L):
        op = make_foo(L)
        return [raises(lambda: op.impl_backward()(lambda *a: None)),
                raises(lambda: op.impl("cuda")(lambda *a: None)),
                raises(lambda: op.impl("tpu_x"))]
    same_as_torch(f)
    op = make_foo(hg)
    with pytest.raises(RuntimeError, match=r"Attempting to register a backward impl for operator "
                                           r"hgold::foo_\d+ that already has a backward impl "
                                           r"registered from Python at .*test_custom_op_impl.py"):
        op.impl_backward()(lambda *a: None)
    with pytest.raises(ValueError, match=r"CustomOp.impl\(device_types=\[tpu_x, ...\]\): we only "
                                         r"support device_type in"):
        op.impl("tpu_x")


def test_definition_errors():
    def f(L):
        co = impl_module(L).custom_op

        def qq(x: L.Tensor) -> L.Tensor:
            raise NotImplementedError

        def nn(x) -> L.Tensor:
            raise NotImplementedError

        def mm(x: L.Tensor) -> None:
            raise NotImplementedError
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return [raises(lambda: co("foo")(qq)),
                    raises(lambda: co("hgold::other")(qq)),
                    raises(lambda: co("aten::qq")(qq)),
                    raises(lambda: co("my.lib::qq")(qq)),
                    raises(lambda: co("hgold::qq.x")(qq)),
                    raises(lambda: co("hgold::len")(len)),
                    raises(lambda: co("hgold::nn")(nn)),
                    raises(lambda: co("hgold::mm")(mm))]
    got = same_as_torch(f)
    assert {g["raises"] for g in got} == {"ValueError"}
    co = impl_module(hg).custom_op

    def qq(x: hg.Tensor) -> hg.Tensor:
        raise NotImplementedError

    def mm(x: hg.Tensor) -> None:
        raise NotImplementedError
    with pytest.warns(DeprecationWarning, match="hookgrad._custom_op is deprecated"):
        dec = co("foo")
    with pytest.raises(ValueError, match="Expected there to be a namespace in foo"):
        dec(qq)
    with pytest.warns(DeprecationWarning):
        with pytest.raises(ValueError, match="expected `func` to have name 'other' but got 'qq'"):
            co("hgold::other")(qq)
        with pytest.raises(ValueError, match="'aten' is a reserved namespace"):
            co("aten::qq")(qq)
        with pytest.raises(ValueError, match="custom_op only supports functional operators .* "
                                             "Got the following non-functional schema: "
                                             r"mm\(Tensor x\) -> \(\)"):
            co("hgold::mm")(mm)


def test_manual_schema():
    def f(L):
        def stub(x, k):
            raise NotImplementedError
        op = old_custom_op(L, "ms", stub, manual_schema="(Tensor x, float k) -> Tensor")
        op.impl(DEVICES)(lambda x, k: x * k)

        def annotated(x: L.Tensor, k: float):
            raise NotImplementedError

        def wrong(x, j):
            raise NotImplementedError
        return [py(op(L.ones(2), 2.5)), str(op._schema).split("(", 1)[1],
                raises(lambda: old_custom_op(L, "ms", annotated,
                                             manual_schema="(Tensor x, float k) -> Tensor")),
                raises(lambda: old_custom_op(L, "ms", wrong,
                                             manual_schema="(Tensor x, float k) -> Tensor"))]
    same_as_torch(f)


def test_device_impl_missing():
    def stub(x: hg.Tensor) -> hg.Tensor:
        raise NotImplementedError
    op = old_custom_op(hg, "nodev", stub)
    here = hg.ones(1).device.type
    with pytest.raises(NotImplementedError, match=f"when running with device='{here}' tensors: "
                                                  f"there is no {here} impl registered for this "
                                                  "CustomOp"):
        op(hg.ones(1))
    op.impl(here)(lambda x: x + 1)
    assert op(hg.ones(1)).tolist() == [2.0]
    op._destroy()
    assert op._qualname not in impl_module(hg).global_registry
