"""``torch.ops`` namespaces and ``torch.library`` registration by name: what a library
built on a C++ extension calls (``Library.define``/``impl``, ``register_fake`` before the
op exists, ``register_autograd("ns::name", ...)``), compared with PyTorch."""
import numpy as np
import pytest

import hookgrad


def _define_scale(L, ns):
    """ns::scale defined by schema, a CPU kernel, a fake kernel and its backward by name;
    returns (y, x.grad, node name, calls of the fake kernel)."""
    fakes = []
    with pytest.raises(RuntimeError, match=f"operator {ns}::scale does not exist"):
        L.library.register_fake(f"{ns}::scale", lambda x, k: x)
    lib = L.library.Library(ns, "DEF")
    assert lib.define("scale(Tensor x, float k) -> Tensor") == "scale"
    lib.impl("scale", lambda x, k: x * k, "CPU")
    L.library.register_fake(f"{ns}::scale")(lambda x, k: fakes.append(1) or x.new_empty(x.shape))

    def setup(ctx, inputs, output):
        ctx.k = inputs[1]

    L.library.register_autograd(f"{ns}::scale", lambda ctx, g: (g * ctx.k, None),
                                setup_context=setup)
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = getattr(L.ops, ns).scale(x, 2.5)
    y.sum().backward()
    return y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__, fakes


def test_an_op_defined_by_schema_runs_and_differentiates_as_in_pytorch():
    got = _define_scale(hookgrad, "hg_scale_test")
    assert got[:3] == ([2.5, -5.0, 7.5], [2.5, 2.5, 2.5],
                       "GeneratedBackwardFor_hg_scale_test_scale_defaultBackward")
    assert got[3] == []  # the fake kernel is kept, never run (JAX traces the real one)
    torch = pytest.importorskip("torch")
    want = _define_scale(torch, "hg_scale_test_torch")
    assert got[:2] == want[:2]
    assert want[2] == "GeneratedBackwardFor_hg_scale_test_torch_scale_defaultBackward"


def test_ops_namespaces_resolve_custom_ops_and_name_what_is_missing():
    @hookgrad.library.custom_op("hg_ns_test::twice", mutates_args=())
    def twice(x: hookgrad.Tensor) -> hookgrad.Tensor:
        return x * 2

    packet = hookgrad.ops.hg_ns_test.twice
    assert packet is hookgrad.ops.hg_ns_test.twice and packet.overloads() == ["default"]
    assert repr(packet.default) == "<OpOverload(op='hg_ns_test.twice', overload='default')>"
    assert packet.default(hookgrad.tensor([1.0])).tolist() == [2.0]
    with pytest.raises(AttributeError, match="'_OpNamespace' 'hg_ns_test' object has no "
                                             "attribute 'nothing'"):
        hookgrad.ops.hg_ns_test.nothing
    # PyTorch's own operators are the op table's rows; those it lacks are named
    assert hookgrad.ops.aten.add.Tensor(hookgrad.ones(2), 3).tolist() == [4.0, 4.0]
    with pytest.raises(AttributeError,
                       match="hookgrad does not implement torch.ops.aten.cudnn_convolution"):
        hookgrad.ops.aten.cudnn_convolution


def test_library_rejects_what_pytorch_rejects():
    with pytest.raises(ValueError, match="Unsupported kind: OTHER"):
        hookgrad.library.Library("hg_x", "OTHER")
    with pytest.raises(ValueError, match="aten is a reserved namespace"):
        hookgrad.library.Library("aten", "DEF")
    with pytest.raises(AttributeError, match="'_OpNamespace' 'hg_y' object has no attribute"):
        hookgrad.library.register_autograd("hg_y::absent", lambda ctx, g: g)
    lib = hookgrad.library.Library("hg_z", "DEF")
    lib.define("plain(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match="hg_z::plain: no kernel is registered"):
        hookgrad.ops.hg_z.plain(hookgrad.ones(2))
    with pytest.raises(NotImplementedError, match="dispatch key 'SparseCPU'"):
        lib.impl("plain", lambda x: x, "SparseCPU")


def test_dispatch_key_sets_join_and_the_exclude_guard_takes_one():
    C = hookgrad._C
    keys = C.DispatchKeySet(C.DispatchKey.AutocastCPU) | C.DispatchKeySet(
        C.DispatchKey.AutocastCUDA)
    assert keys.has(C.DispatchKey.AutocastCUDA) and not keys.has(C.DispatchKey.CPU)
    with C._ExcludeDispatchKeyGuard(keys):
        assert hookgrad.ones(2).sum().item() == 2.0
    with pytest.raises(TypeError, match="expected a DispatchKeySet"):
        C._ExcludeDispatchKeyGuard(C.DispatchKey.CPU)


def test_random_fills_in_place_follow_the_generator():
    g1, g2 = hookgrad.Generator().manual_seed(3), hookgrad.Generator().manual_seed(3)
    a = hookgrad.empty(1000).normal_(2.0, 0.5, generator=g1)
    b = hookgrad.empty(1000).normal_(2.0, 0.5, generator=g2)
    assert a.tolist() == b.tolist() and abs(a.mean().item() - 2.0) < 0.1
    u = hookgrad.empty(1000).uniform_(-1, 3)
    assert -1 <= u.min().item() and u.max().item() < 3
    p = hookgrad.empty(2000).bernoulli_(0.25)
    assert set(p.tolist()) <= {0.0, 1.0} and abs(p.mean().item() - 0.25) < 0.05
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        hookgrad.zeros(2, requires_grad=True).normal_()
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\]"):
        hookgrad.empty(2).bernoulli_(1.5)
    assert np.isfinite(hookgrad.empty(3).uniform_(**{"from": 1.0, "to": 2.0}).numpy()).all()
