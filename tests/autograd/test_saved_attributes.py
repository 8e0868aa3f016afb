"""Saved tensors as node attributes: ``grad_fn._saved_<name>``, ``_raw_saved_<name>``
(``SavedTensor`` objects with ``register_hooks``), PyTorch's identity rules, the freed
error, and the order in which pack hooks see what an op saves."""
import warnings

import jax
import numpy as np
import pytest

import hookgrad as hg
from hookgrad._autograd.saved import FREED_MESSAGE
from hookgrad.autograd.graph import saved_tensors_hooks

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

FREED = "after they have already been freed"


def _names(node):
    return sorted(a for a in dir(node) if a.startswith("_saved_"))


# --------------------------------------------------------------------------- values


def test_saved_inputs_are_the_inputs_themselves():
    a = hg.randn(5, requires_grad=True)
    b = a * a
    c = a * b
    assert b.grad_fn._saved_self is a and b.grad_fn._saved_other is a
    assert c.grad_fn._saved_other is b  # a non-leaf input, not an output of this node
    assert _names(c.grad_fn) == ["_saved_other", "_saved_self"]


def test_saved_result_is_equal_but_not_the_output():
    a = hg.randn(4, requires_grad=True)
    d = a.exp()
    r = d.grad_fn._saved_result
    assert r is not d
    np.testing.assert_array_equal(np.asarray(r._data), np.asarray(d._data))
    assert r.grad_fn is d.grad_fn and r._version == d._version


def test_saved_result_shares_the_outputs_storage_and_version():
    a = hg.randn(2, requires_grad=True)
    b = a.exp()
    r = b.grad_fn._saved_result
    with hg.no_grad():
        b += 1  # a write to the output shows through what was unpacked before it
    assert r._version == b._version == 1 and not r._is_view()
    np.testing.assert_array_equal(np.asarray(r._data), np.asarray(b._data))
    with pytest.raises(RuntimeError, match=r"output 0 of Exp\w*, is at version 1; "
                                           r"expected version 0 instead"):
        b.grad_fn._saved_result  # unpacking after the write: PyTorch's version check


def test_an_input_not_saved_reads_none():
    a, c = hg.randn(3, requires_grad=True), hg.randn(3)
    y = a * c  # the gradient of ``a`` needs ``c`` only
    assert y.grad_fn._saved_self is None and y.grad_fn._saved_other is c


def test_scalars_and_sizes_are_python_values():
    x = hg.randn(3, 4, requires_grad=True)
    s = x.sum(1).grad_fn
    assert (s._saved_dim, s._saved_keepdim, s._saved_self_sym_sizes) == ((1,), False, (3, 4))
    assert x.mean().grad_fn._saved_self_sym_numel == 12
    assert (x + 1).grad_fn._saved_alpha == 1
    assert hg.sub(x, x, alpha=2).grad_fn._saved_alpha == 2
    assert (x ** 2).grad_fn._saved_exponent == 2
    m = hg.mm(x, hg.randn(4, 5, requires_grad=True)).grad_fn
    assert (m._saved_self_sym_strides, m._saved_mat2_sym_sizes) == ((4, 1), (4, 5))
    mx = x.max(1).values.grad_fn
    np.testing.assert_array_equal(np.asarray(mx._saved_indices._data),
                                  np.asarray(x._data).argmax(1))
    other = (x * 2).grad_fn._saved_other  # a number of binary arithmetic: a 0-d Tensor
    assert isinstance(other, hg.Tensor) and other.item() == 2


@needs_torch
@pytest.mark.parametrize("op, grads", [
    (op, grads) for op in ("mm", "mm_t", "addmm_t")
    for grads in ((True, True), (True, False), (False, True))
    # NOTE: the one difference left (docs/differences.md): a transposed view the node did
    # not save (the other operand needs no gradient) reads a contiguous matrix's strides
    if not (op != "mm" and grads == (False, True))])
def test_saved_strides_are_torchs(op, grads):
    """``_saved_<arg>_sym_strides`` is the argument's strides as recorded (a transposed
    view's, ``(1, n)``), and empty when that argument needs no gradient: PyTorch keeps
    them for its own formula only."""
    def strides(lib):
        x = lib.tensor(np.ones((3, 4), np.float32), requires_grad=grads[0])
        w = lib.tensor(np.ones((5, 4), np.float32), requires_grad=grads[1])
        fn = (lib.mm(x, w.t().contiguous()) if op == "mm" else lib.mm(x, w.t()) if op == "mm_t"
              else lib.addmm(lib.ones(5), x, w.t())).grad_fn
        return {a: tuple(getattr(fn, a)) for a in dir(fn) if a.endswith("_sym_strides")}
    assert strides(hg) == strides(torch)


def test_a_result_hookgrad_does_not_keep_is_computed_again():
    x = hg.rand(3, requires_grad=True) + 0.5
    y = hg.sqrt(x)  # PyTorch saves the result; hookgrad keeps the input
    np.testing.assert_allclose(np.asarray(y.grad_fn._saved_result._data),
                               np.asarray(y._data))
    assert y.grad_fn._saved_result.grad_fn is y.grad_fn


def test_unknown_saved_name_is_an_attribute_error():
    y = hg.randn(3, requires_grad=True).sin()
    with pytest.raises(AttributeError, match="_saved_other"):
        y.grad_fn._saved_other
    assert not hasattr(y.grad_fn, "_raw_saved_other")


def test_freed_after_backward_tensors_raise_scalars_stay():
    x = hg.randn(3, 4, requires_grad=True)
    y = x * x
    s = x.sum(1)
    y.sum().backward()
    s.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._saved_self
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._raw_saved_other
    assert s.grad_fn._saved_dim == (1,)


def test_modified_or_detached_saved_inputs_raise():
    a = hg.randn(3, requires_grad=True).clone()
    y = a * a
    with hg.no_grad():
        a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.grad_fn._saved_self
    a = hg.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="has been detached in-place"):
        b.backward()
    a = hg.tensor(1.0, requires_grad=True).clone()
    b = a.exp()  # only its output is saved: detaching the input is fine
    a.detach_()
    b.backward()


# --------------------------------------------------------------------------- raw SavedTensor


def test_saved_tensor_cannot_be_made_directly():
    with pytest.raises(RuntimeError, match="from Python is forbidden"):
        hg.autograd.SavedTensor()
    assert hg._C._autograd.SavedTensor is hg.autograd.SavedTensor


def test_raw_saved_data_and_hooks():
    a = hg.randn(4, requires_grad=True)
    y = a * a
    raw = y.grad_fn._raw_saved_self
    assert isinstance(raw, hg.autograd.SavedTensor)
    assert raw.data is a and raw.unpack_hook is None
    calls = []

    def unpack(t):
        calls.append("unpack")
        return t / 2
    raw.register_hooks(lambda t: (calls.append("pack"), t * 2)[1], unpack)
    assert calls == ["pack"]
    np.testing.assert_allclose(np.asarray(y.grad_fn._saved_self._data), np.asarray(a._data))
    y.sum().backward()
    assert calls == ["pack", "unpack", "unpack"]
    np.testing.assert_allclose(np.asarray(a.grad._data), 2 * np.asarray(a._data), rtol=1e-6)
    e = hg.randn(3, requires_grad=True).exp()
    assert e.grad_fn._raw_saved_result.data is not e


def test_register_hooks_errors():
    a = hg.randn(4, requires_grad=True)
    y = a * a
    raw = y.grad_fn._raw_saved_self
    with pytest.raises(TypeError, match="incompatible function arguments"):
        raw.register_hooks(lambda t: t)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        raw.register_hooks(1, 1)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        raw.register_hooks(lambda t, b: t, lambda t: t)
    raw.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="already been set"):
        raw.register_hooks(lambda t: t, lambda t: t)

    def double(t):
        t *= 2
        return t
    y = a.clone() * a
    with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
        y.grad_fn._raw_saved_other.register_hooks(double, lambda t: t)


def test_unpack_hook_must_return_a_tensor():
    a = hg.randn(3, requires_grad=True)
    y = a * a
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 1)
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        y.grad_fn._saved_self


def test_function_saved_tensors():
    class Keep(hg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    a = hg.randn(3, requires_grad=True)
    y = Keep.apply(a)
    assert y.grad_fn._saved_tensors[1] is None
    raw = y.grad_fn._raw_saved_tensors
    assert all(isinstance(r, hg.autograd.SavedTensor) for r in raw)
    with pytest.raises(RuntimeError, match="None is forbidden"):
        raw[1].register_hooks(lambda t: t, lambda t: t)
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._raw_saved_tensors


def test_clear_saved_tensors_on_access_allows_one_read():
    class Once(hg.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            ctx.saved_tensors
            return g

    with pytest.raises(RuntimeError, match="can only be accessed once"):
        Once.apply(hg.randn(3, requires_grad=True)).sum().backward()


# --------------------------------------------------------------------------- pack hooks


def _pack_log(L, fn, *args):
    log = []
    with L.autograd.graph.saved_tensors_hooks(lambda t: (log.append(t), t)[1], lambda t: t):
        out = fn(*args)
    names = {id(a): f"in{i}" for i, a in enumerate(args)}
    names[id(out)] = "out"
    return [names.get(id(t), "other") for t in log]


PACK_ORDER = {
    "mul": (lambda L, a, b: a * b, ["in1", "in0"]),
    "div": (lambda L, a, b: a / b, ["in1", "in0"]),
    "atan2": (lambda L, a, b: L.atan2(a, b), ["in1", "in0"]),
    "maximum": (lambda L, a, b: L.maximum(a, b), ["in1", "in0"]),
    "mm": (lambda L, a, b: L.mm(a, b.t().contiguous()), None),
    "pow": (lambda L, a, b: a.abs() ** b, None),
    "pow_tensor": (lambda L, a, b: L.pow(a, b), ["in1", "in0", "out"]),
    "exp": (lambda L, a, b: a.exp(), ["out"]),
    "sin": (lambda L, a, b: a.sin(), ["in0"]),
}


@pytest.mark.parametrize("op", ["mul", "div", "atan2", "maximum", "pow_tensor", "exp", "sin"])
def test_pack_order(op):
    fn, want = PACK_ORDER[op]
    a, b = hg.rand(2, 2, requires_grad=True), hg.rand(2, 2, requires_grad=True)
    assert _pack_log(hg, lambda x, y: fn(hg, x, y), a, b) == want


@needs_torch
@pytest.mark.parametrize("op", sorted(PACK_ORDER))
def test_pack_order_and_count_match_torch(op):
    fn = PACK_ORDER[op][0]
    data = np.random.default_rng(0).uniform(0.5, 1.5, (2, 3, 3)).astype(np.float32)
    got = _pack_log(hg, lambda x, y: fn(hg, x, y),
                    *[hg.tensor(d, requires_grad=True) for d in data])
    want = _pack_log(torch, lambda x, y: fn(torch, x, y),
                     *[torch.tensor(d, requires_grad=True) for d in data])
    assert got == want


_INDEXED = {  # name: (call, source's shape)
    "put": (lambda L, x, i, s: x.put(i, s), (2,)),
    "put.accumulate": (lambda L, x, i, s: x.put(i, s, accumulate=True), (2,)),
    "index_reduce": (lambda L, x, i, s: x.index_reduce(0, i, s, "mean", include_self=False),
                     (2, 4)),
}


@needs_torch
@pytest.mark.parametrize("grads", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("op", sorted(_INDEXED))
def test_indexed_writes_pack_what_torch_packs(op, grads):
    # put keeps ``source`` only for its own gradient and never ``self``; index_reduce
    # packs index, self, source, then the result
    call, shape = _INDEXED[op]

    def log(L):
        x = L.arange(12.0).reshape(3, 4).requires_grad_(grads[0]) * 1
        s = L.ones(shape).requires_grad_(grads[1]) * 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # index_reduce's beta warning
            return _pack_log(L, lambda *a: call(L, *a), x, L.tensor([0, 2]), s)
    assert log(hg) == log(torch)


def test_pack_hook_modifying_its_input_raises():
    a = hg.randn(5, requires_grad=True)

    def inc(t):
        t += 1
        return t
    with saved_tensors_hooks(inc, lambda t: t):
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            a.exp()


def test_hook_stack_changes_inside_unpack_stay_inside():
    ctx = saved_tensors_hooks(lambda t: t, lambda t: (ctx.__exit__(), t)[1])
    ctx.__enter__()
    y = hg.randn(3, requires_grad=True).sin()
    y.sum().backward()  # the unpack hook's __exit__ changes nothing outside it
    ctx.__exit__()
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT"):
        ctx.__exit__()  # one more than were entered
    e = hg.randn(2, requires_grad=True).exp()
    e.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)  # no hooks left


def test_disabling_while_hooks_are_active_raises():
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks now"):
            with hg.autograd.graph.disable_saved_tensors_hooks("no hooks now"):
                pass
    assert hg._C._autograd._saved_tensors_hooks_is_enabled()


# --------------------------------------------------------------------------- modes


def test_compiled_mode_names_and_identity_of_arguments():
    w = hg.randn(3, requires_grad=True)
    seen = {}
    note = hg.compile.trace_only(lambda k, v: seen.__setitem__(k, v))   # what tracing sees

    @hg.compile
    def step(x):
        y = x * w
        note("names", _names(y.grad_fn))
        note("self", y.grad_fn._saved_self is x)
        z = y.exp()
        note("result", isinstance(z.grad_fn._saved_result._data, jax.core.Tracer))
        z.sum().backward()
        return z.sum()
    step(hg.randn(3))
    assert seen == {"names": ["_saved_other", "_saved_self"], "self": True, "result": True}


def test_freed_message_is_pytorchs():
    assert FREED_MESSAGE.startswith("Trying to backward through the graph a second time")


def test_a_node_class_several_ops_record_has_each_ops_own_saved_attributes():
    # AddBackward0 is recorded by add (which saves alpha) and, here, by alpha_dropout
    # (which saves self too): each node reads and lists the attributes of its own op
    x = hg.randn(4, 8, requires_grad=True)
    plain = (x + 1).grad_fn
    dropped = hg.nn.functional.alpha_dropout(x, 0.5, training=True).grad_fn
    assert type(plain) is type(dropped)
    assert plain._saved_alpha == 1 and not hasattr(plain, "_saved_self")
    assert "_saved_self" not in dir(plain) and "_saved_self" in dir(dropped)
    assert dropped._saved_self.shape == x.shape and dropped._raw_saved_self is not None
    with pytest.raises(AttributeError, match="'AddBackward0' object has no attribute "
                                             "'_raw_saved_self'"):
        plain._raw_saved_self
    with pytest.raises(AttributeError, match="'AddBackward0' object has no attribute 'nope'"):
        plain.nope
