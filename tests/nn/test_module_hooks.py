"""Module hooks: call order and arguments, global hooks, always_call, with_kwargs, prepend,
full backward hooks (BackwardHook) and their errors, differential against PyTorch."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
from hookgrad.nn.modules import module as hg_module
from tests.nn._common import both, conv, needs_torch, torch

LIBS = [hookgrad] + ([torch] if torch is not None else [])


def lin(L, w, b=None):
    m = L.nn.Linear(len(w[0]), len(w), bias=b is not None)
    m.weight = L.nn.Parameter(L.tensor(w))
    if b is not None:
        m.bias = L.nn.Parameter(L.tensor(b))
    return m


# --------------------------------------------------------------------------- order, args


def _record_everything(L):
    seq = L.nn.Sequential(lin(L, [[1.0, 2.0], [3.0, -1.0]], [0.5, 0.1]),
                          lin(L, [[1.0, -2.0]], [0.2]))
    log = []
    for n, mod in seq.named_modules():
        mod.register_forward_pre_hook(lambda m, a, n=n: log.append(["fpre", n, a]))
        mod.register_forward_hook(lambda m, a, o, n=n: log.append(["f", n, a, o]))
        mod.register_full_backward_pre_hook(lambda m, go, n=n: log.append(["bpre", n, go]))
        mod.register_full_backward_hook(lambda m, gi, go, n=n: log.append(["b", n, gi, go]))
    x = L.tensor([[1.0, -1.0]], requires_grad=True)
    seq(x).sum().backward()
    return log, x.grad, [p.grad for p in seq.parameters()]


@needs_torch
def test_nested_hook_log_and_grads_match_torch():
    ours, theirs = both(_record_everything)
    assert ours == theirs


def test_hook_gradients_match_jax_grad():
    # a backward hook doubling grad_input and a pre-hook tripling grad_output: x.grad = 6 dL/dx
    w = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    m = lin(hookgrad, w.tolist(), [0.5, 0.1])
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
    x = hookgrad.tensor([[1.0, -1.0]], requires_grad=True)
    (m(x) ** 2).sum().backward()
    f = lambda xx, ww: jnp.sum((xx @ ww.T + jnp.array([0.5, 0.1])) ** 2)  # noqa: E731
    gx, gw = jax.grad(f, argnums=(0, 1))(jnp.array([[1.0, -1.0]]), jnp.asarray(w))
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.asarray(gx), rtol=1e-6)
    np.testing.assert_allclose(m.weight.grad.numpy(), 3 * np.asarray(gw), rtol=1e-6)


@needs_torch
def test_prepend_and_global_order_match_torch():
    def run(L):
        m = lin(L, [[2.0]], [1.0])
        log = []
        mm = L.nn.modules.module
        hs = [mm.register_module_full_backward_hook(lambda mod, gi, go: log.append("gb")),
              mm.register_module_full_backward_pre_hook(lambda mod, go: log.append("gbpre")),
              mm.register_module_forward_pre_hook(lambda mod, a: log.append("gfpre")),
              mm.register_module_forward_hook(lambda mod, a, o: log.append("gf"))]
        try:
            m.register_full_backward_hook(lambda mod, gi, go: log.append("b1"))
            m.register_full_backward_hook(lambda mod, gi, go: log.append("b0"), prepend=True)
            m.register_full_backward_pre_hook(lambda mod, go: log.append("bp1"))
            m.register_full_backward_pre_hook(lambda mod, go: log.append("bp0"), prepend=True)
            m.register_forward_pre_hook(lambda mod, a: log.append("fp1"))
            m.register_forward_pre_hook(lambda mod, a: log.append("fp0"), prepend=True)
            m.register_forward_hook(lambda mod, a, o: log.append("f1"))
            m.register_forward_hook(lambda mod, a, o: log.append("f0"), prepend=True)
            m(L.ones(1, 1, requires_grad=True)).sum().backward()
        finally:
            for h in hs:
                h.remove()
        return log
    ours, theirs = both(run)
    assert ours == theirs
    assert ours == ["gfpre", "fp0", "fp1", "gf", "f0", "f1", "gbpre", "bp0", "bp1", "gb", "b0",
                    "b1"]


def test_global_hooks_run_first_and_are_removable():
    m = lin(hookgrad, [[1.0]], [0.0])
    log = []
    m.register_forward_pre_hook(lambda mod, a: log.append("local"))
    h = hg_module.register_module_forward_pre_hook(lambda mod, a: log.append("global"))
    try:
        m(hookgrad.ones(1, 1))
    finally:
        h.remove()
    m(hookgrad.ones(1, 1))
    assert log == ["global", "local", "local"]
    assert not hg_module._global_forward_pre_hooks


def test_global_forward_hook_with_kwargs_and_replacement():
    class K(hookgrad.nn.Module):
        def forward(self, a, scale=1.0):
            return a * scale

    seen = []

    def hook(mod, args, kwargs, out):
        seen.append(dict(kwargs))
        return out + 1

    h = hg_module.register_module_forward_hook(hook, with_kwargs=True)
    try:
        out = K()(hookgrad.ones(1), scale=3.0)
    finally:
        h.remove()
    assert seen == [{"scale": 3.0}] and out.tolist() == [4.0]
    assert not hg_module._global_forward_hooks_with_kwargs


def test_forward_pre_hook_replaces_args():
    m = lin(hookgrad, [[1.0, -1.0]], [0.0])
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 3,))
    assert m(hookgrad.tensor([[2.0, 1.0]])).tolist() == [[3.0]]
    m2 = lin(hookgrad, [[1.0]], [0.0])
    m2.register_forward_pre_hook(lambda mod, args: args[0] * 5)  # single value gets wrapped
    assert m2(hookgrad.ones(1, 1)).tolist() == [[5.0]]


def test_forward_hook_replaces_output_and_sees_input():
    m = lin(hookgrad, [[1.0, 1.0]], [1.0])
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append((args[0].tolist(), out.tolist()))
                            or out * 0 + 7)
    assert m(hookgrad.tensor([[1.0, 2.0]])).tolist() == [[7.0]]
    assert seen == [([[1.0, 2.0]], [[4.0]])]


def test_with_kwargs_hooks():
    class K(hookgrad.nn.Module):
        def forward(self, a, scale=1.0):
            return a * scale

    k = K()
    log = []

    def pre(mod, args, kwargs):
        log.append(("pre", kwargs))
        return (args[0] + 1,), {"scale": 10.0}

    def post(mod, args, kwargs, out):
        log.append(("post", args[0].tolist(), kwargs))
        return out + 1

    k.register_forward_pre_hook(pre, with_kwargs=True)
    k.register_forward_hook(post, with_kwargs=True)
    assert k(hookgrad.ones(1), scale=2.0).tolist() == [21.0]
    assert log == [("pre", {"scale": 2.0}), ("post", [2.0], {"scale": 10.0})]


def test_with_kwargs_pre_hook_bad_return_raises():
    k = hookgrad.nn.Identity()
    k.register_forward_pre_hook(lambda m, a, kw: (1, 2, 3), with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of "
                                           r"\(new_args, new_kwargs\), but got \(1, 2, 3\)"):
        k(hookgrad.ones(1))


def test_with_kwargs_flag_removed_with_handle():
    m = hookgrad.nn.Identity()
    h = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
    h2 = m.register_forward_pre_hook(lambda *a: None, with_kwargs=True)
    h.remove()
    h2.remove()
    assert not (m._forward_hooks or m._forward_hooks_with_kwargs
                or m._forward_hooks_always_called or m._forward_pre_hooks
                or m._forward_pre_hooks_with_kwargs)


# --------------------------------------------------------------------------- always_call


class _Boom(hookgrad.nn.Module):
    def forward(self, x):
        raise ValueError("boom")


def test_always_call_runs_when_forward_raises():
    m = _Boom()
    log = []
    m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
    m.register_forward_hook(lambda mod, a, o: log.append("normal"))
    g = hg_module.register_module_forward_hook(lambda mod, a, o: log.append("global"),
                                               always_call=True)
    try:
        with pytest.raises(ValueError, match="boom"):
            m(hookgrad.ones(1))
    finally:
        g.remove()
    assert log == ["global", ("always", None)]


def test_always_call_hook_error_is_a_warning():
    m = _Boom()

    def bad(mod, a, o):
        raise KeyError("inner")

    m.register_forward_hook(bad, always_call=True)
    with pytest.warns(UserWarning, match="module forward hook with ``always_call=True`` raised "
                                         "an exception that was silenced"):
        with pytest.raises(ValueError, match="boom"):
            m(hookgrad.ones(1))


def test_always_call_hook_that_ran_is_not_rerun():
    m = lin(hookgrad, [[1.0]], [0.0])
    log = []
    m.register_forward_hook(lambda mod, a, o: log.append("always"), always_call=True)

    def bad(mod, a, o):
        log.append("bad")
        raise KeyError("x")

    m.register_forward_hook(bad)
    m.register_forward_hook(lambda mod, a, o: log.append("always2"), always_call=True)
    with pytest.raises(KeyError):
        m(hookgrad.ones(1, 1))
    assert log == ["always", "bad", "always2"]


# --------------------------------------------------------------------------- backward hooks


class _MultiIO(object):
    @staticmethod
    def build(L):
        class M(L.nn.Module):
            def forward(self, a, b, c=None, k=3):
                return a * b, 5, b * 2
        return M()


def _multi_io(L):
    m = _MultiIO.build(L)
    log = []
    m.register_full_backward_pre_hook(lambda mod, go: log.append(["pre", go]))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(["hook", gi, go]))
    a = L.ones(2, requires_grad=True)
    b = L.full((2,), 2.0)
    out = m(a, b, 7)
    log.append([out[0].grad_fn.name(), out[2].requires_grad])
    out[0].sum().backward()
    return log, a.grad


def test_backward_hook_argument_rules():
    log, grad = conv(_multi_io(hookgrad))
    # non-Tensor arguments and outputs are None; a Tensor input without grad gets zeros
    assert log == [["BackwardHookFunctionBackward", False],
                   ["pre", [[1.0, 1.0], None, None]],
                   ["hook", [[2.0, 2.0], [0.0, 0.0], None], [[1.0, 1.0], None, None]]]
    assert grad == [2.0, 2.0]


@needs_torch
def test_backward_hook_argument_rules_match_torch():
    ours, theirs = both(_multi_io)
    assert ours == theirs


def _cases():
    def unused_input(L):
        class M(L.nn.Module):
            def forward(self, a, b):
                return a * 2, a * 3
        m = M()
        log = []
        m.register_full_backward_pre_hook(lambda mod, go: log.append(["pre", go]))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(["hook", gi, go]))
        a, b = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        m(a, b)[0].sum().backward()
        return log, a.grad, b.grad

    def identity(L):
        class M(L.nn.Module):
            def forward(self, a):
                return a
        m = M()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(["hook", gi, go]))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(["pre", go]))
        a = L.ones(2, requires_grad=True)
        m(a).sum().backward()
        return log, a.grad

    def kwargs_ignored(L):
        class M(L.nn.Module):
            def forward(self, a, b=None):
                return a * b
        m = M()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(["hook", gi, go]))
        a, b = L.ones(2, requires_grad=True), L.full((2,), 3.0, requires_grad=True)
        m(a, b=b).sum().backward()
        return log, a.grad, b.grad

    def none_replaces_grad_input(L):
        m = lin(L, [[2.0]], [1.0])
        m.register_full_backward_hook(lambda mod, gi, go: (None,))
        x = L.ones(1, 1, requires_grad=True)
        m(x).sum().backward()
        return x.grad, m.weight.grad

    def none_replaces_grad_output(L):
        m = lin(L, [[2.0]], [1.0])
        m.register_full_backward_pre_hook(lambda mod, go: (None,))
        x = L.ones(1, 1, requires_grad=True)
        m(x).sum().backward()
        return x.grad, m.weight.grad

    def list_return(L):
        m = lin(L, [[2.0]], [1.0])
        m.register_full_backward_hook(lambda mod, gi, go: [gi[0] * 2])
        x = L.ones(1, 1, requires_grad=True)
        m(x).sum().backward()
        return x.grad

    def hooks_fixed_at_forward(L):
        m = lin(L, [[2.0]], [1.0])
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append("h1"))
        x = L.ones(1, 1, requires_grad=True)
        y = m(x)
        m.register_full_backward_hook(lambda mod, gi, go: log.append("h2"))
        y.sum().backward()
        m(x).sum().backward()
        return log

    def double_backward(L):
        m = lin(L, [[2.0]], [1.0])
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(["h", gi, go]))
        x = L.ones(1, 1, requires_grad=True)
        (g,) = L.autograd.grad((m(x) ** 2).sum(), x, create_graph=True)
        g.sum().backward()
        return log, x.grad

    def under_no_grad(L):
        m = lin(L, [[1.0]], [0.0])
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append("b"))
        with L.no_grad():
            y = m(L.ones(1, 1, requires_grad=True))
        return log, y.requires_grad

    def list_argument(L):
        a = L.ones(2, requires_grad=True)

        class M(L.nn.Module):
            def forward(self, xs):
                return xs[0] * 2
        m = M()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(["hook", gi, go]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m([a]).sum().backward()
        return log, a.grad

    def non_full_hook(L):
        m = lin(L, [[2.0]], [1.0])
        log = []
        m.register_backward_hook(lambda mod, gi, go: log.append(len(go)))
        x = L.ones(1, 1, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(x).sum().backward()
        return log, x.grad, [issubclass(x.category, FutureWarning) for x in w]

    return [unused_input, identity, kwargs_ignored, none_replaces_grad_input,
            none_replaces_grad_output, list_return, hooks_fixed_at_forward, double_backward,
            under_no_grad, list_argument, non_full_hook]


@needs_torch
@pytest.mark.parametrize("case", _cases(), ids=lambda f: f.__name__)
def test_backward_hook_cases_match_torch(case):
    ours, theirs = both(case)
    assert ours == theirs


def test_unused_tensor_input_gets_zeros():
    class M(hookgrad.nn.Module):
        def forward(self, a, b):
            return a * 2

    m = M()
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(conv(gi)))
    a, b = hookgrad.ones(2, requires_grad=True), hookgrad.ones(2, requires_grad=True)
    m(a, b).sum().backward()
    assert seen == [[[2.0, 2.0], [0.0, 0.0]]]
    assert b.grad.tolist() == [0.0, 0.0]  # PyTorch: the identity node materializes zeros


def test_no_input_requires_grad_fires_on_grad_output_and_warns():
    w = hookgrad.ones(2, requires_grad=True)

    class N(hookgrad.nn.Module):
        def forward(self, a):
            return a * w

    n = N()
    log = []
    n.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", conv(go))))
    n.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", gi, conv(go))))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are "
                                         "computed with respect to module outputs since no "
                                         "inputs require gradients"):
        n(hookgrad.ones(2)).sum().backward()
    assert log == [("pre", [[1.0, 1.0]]), ("hook", (None,), [[1.0, 1.0]])]
    assert w.grad.tolist() == [1.0, 1.0]


def test_no_input_requires_grad_hook_must_return_none():
    w = hookgrad.ones(2, requires_grad=True)

    class N(hookgrad.nn.Module):
        def forward(self, a):
            return a * w

    n = N()
    n.register_full_backward_hook(lambda mod, gi, go: (hookgrad.ones(2),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Backward hook for Modules where no input "
                                               "requires gradient should always return None"):
            n(hookgrad.ones(2)).sum().backward()
    n2 = N()
    n2.register_full_backward_hook(lambda mod, gi, go: (None,))  # all-None is allowed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n2(hookgrad.ones(2)).sum().backward()


def test_wrong_number_of_grad_input_raises():
    m = lin(hookgrad, [[1.0]], [0.0])
    m.register_full_backward_hook(lambda mod, gi, go: ())
    x = hookgrad.ones(1, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                           "grad_input, got 0, but expected 1"):
        m(x).sum().backward()


def test_wrong_number_of_grad_output_raises():
    m = lin(hookgrad, [[1.0]], [0.0])
    m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    x = hookgrad.ones(1, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="Backward pre hook returned an invalid number of "
                                           "grad_output, got 2, but expected 1"):
        m(x).sum().backward()


@pytest.mark.parametrize("kind", ["post", "pre"])
def test_wrong_shape_from_backward_hook_raises(kind):
    m = lin(hookgrad, [[1.0]], [0.0])
    if kind == "post":
        m.register_full_backward_hook(lambda mod, gi, go: (hookgrad.ones(3),))
    else:
        m.register_full_backward_pre_hook(lambda mod, go: (hookgrad.ones(3),))
    x = hookgrad.ones(1, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="hook 'hook' has changed the size of value"):
        m(x).sum().backward()


def test_backward_hook_returning_non_sequence_raises_type_error():
    m = lin(hookgrad, [[1.0]], [0.0])
    m.register_full_backward_hook(lambda mod, gi, go: 5)
    with pytest.raises(TypeError, match="has no len"):
        m(hookgrad.ones(1, 1, requires_grad=True)).sum().backward()


def test_dict_output_warns_and_skips_backward_hooks():
    class D(hookgrad.nn.Module):
        def forward(self, a):
            return {"x": a * 2}

    d = D()
    log = []
    d.register_full_backward_hook(lambda mod, gi, go: log.append("hook"))
    a = hookgrad.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="For backward hooks to be called, module output "
                                         "should be a Tensor or a tuple of Tensors"):
        out = d(a)
    out["x"].sum().backward()
    assert log == [] and a.grad.tolist() == [2.0, 2.0]


def test_identity_nodes_wrap_inputs_and_outputs():
    seen = {}

    class M(hookgrad.nn.Module):
        def forward(self, a, b):
            seen["a"] = a
            seen["b"] = b
            return a * 2, b

    m = M()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    a, b = hookgrad.ones(2, requires_grad=True), hookgrad.ones(2)
    out = m(a, b)
    assert seen["a"] is not a and seen["a"].grad_fn.name() == "BackwardHookFunctionBackward"
    assert seen["b"] is not b and not seen["b"].requires_grad and seen["b"].grad_fn is None
    in_node = seen["a"].grad_fn
    assert in_node.next_functions[0][0] is a.grad_fn or \
        in_node.next_functions[0][0].variable is a
    assert in_node.next_functions[1] == (None, 0)
    assert out[0].grad_fn.name() == "BackwardHookFunctionBackward"
    assert out[0].grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert out[1].grad_fn is None


def test_backward_hook_class_is_reexported():
    from hookgrad._autograd.backward_hook import BackwardHook
    assert hookgrad.utils.hooks.BackwardHook is BackwardHook


def test_mixing_full_and_non_full_backward_hooks_raises():
    m = lin(hookgrad, [[1.0]], [0.0])
    m.register_backward_hook(lambda mod, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full "
                                           "backward hooks on a single Module"):
        m.register_full_backward_hook(lambda mod, gi, go: None)
    m2 = lin(hookgrad, [[1.0]], [0.0])
    m2.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
        m2.register_backward_hook(lambda mod, gi, go: None)


def test_global_backward_hooks_run_before_local_and_see_module():
    m = lin(hookgrad, [[2.0]], [0.0])
    log = []
    m.register_full_backward_hook(lambda mod, gi, go: log.append("local"))
    m.register_full_backward_pre_hook(lambda mod, go: log.append("local pre"))
    h1 = hg_module.register_module_full_backward_hook(
        lambda mod, gi, go: log.append(("global", mod is m)))
    h2 = hg_module.register_module_full_backward_pre_hook(
        lambda mod, go: log.append(("global pre", mod is m)))
    try:
        m(hookgrad.ones(1, 1, requires_grad=True)).sum().backward()
    finally:
        h1.remove()
        h2.remove()
    assert log == [("global pre", True), "local pre", ("global", True), "local"]
    assert not hg_module._global_backward_hooks and not hg_module._global_backward_pre_hooks


def test_no_hooks_is_plain_forward():
    class M(hookgrad.nn.Module):
        def forward(self, x):
            return x

    x = hookgrad.ones(2, requires_grad=True)
    assert M()(x) is x  # no identity op when no hook is registered


# --------------------------------------------------------------------------- functional mode


def test_functional_mode_uses_func_contract(monkeypatch):
    from hookgrad import _mode
    from hookgrad._functional import module as functional_module

    calls = []

    def fake(module, forward_fn, args, kwargs, bw_pre_hooks, bw_hooks):
        calls.append((module, list(bw_pre_hooks), list(bw_hooks), kwargs))
        return forward_fn(*args, **kwargs)

    monkeypatch.setattr(functional_module, "call_with_backward_hooks", fake)
    m = lin(hookgrad, [[2.0]], [0.0])
    log = []

    def pre(mod, go):
        return None

    def post(mod, gi, go):
        return None

    def gpre(mod, go):
        return None

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(post)
    m.register_forward_hook(lambda mod, a, o: log.append("fwd hook") or o * 10)
    h = hg_module.register_module_full_backward_pre_hook(gpre)
    try:
        with _mode.functional_mode():
            out = m(hookgrad.ones(1, 1, requires_grad=True))
    finally:
        h.remove()
    assert calls == [(m, [gpre, pre], [post], {})]
    assert log == ["fwd hook"] and out.tolist() == [[20.0]]


# --------------------------------------------------------------------------- conformance-like


def test_sequential_hook_order():
    model = hookgrad.nn.Sequential(lin(hookgrad, [[1.0]], [0.0]), lin(hookgrad, [[2.0]], [0.0]))
    log = []
    for name, mod in (("seq", model), ("l0", model[0]), ("l1", model[1])):
        mod.register_forward_hook(lambda m, a, o, n=name: log.append("fwd " + n))
        mod.register_full_backward_hook(lambda m, gi, go, n=name: log.append("bwd " + n))
    model(hookgrad.ones(1, 1, requires_grad=True)).sum().backward()
    assert log == ["fwd l0", "fwd l1", "fwd seq", "bwd l1", "bwd l0", "bwd seq"]
