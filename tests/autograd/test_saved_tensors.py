"""saved_tensors_hooks, disable_saved_tensors_hooks, save_on_cpu, version checks,
allow_mutation_on_saved_tensors."""
import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch


def counting_hooks(L, log):
    def pack(t):
        log.append("pack")
        return t

    def unpack(t):
        log.append("unpack")
        return t
    return L.autograd.graph.saved_tensors_hooks(pack, unpack)


@pytest.mark.parametrize("prog", ["mul_sin", "exp", "mul_const", "mm", "tanh", "add", "pow",
                                  "one_requires_grad", "softmax", "sum"])
def test_pack_and_unpack_counts_match_torch(prog):
    def f(L):
        x = L.tensor([[1.0, 2.0]], requires_grad=True)
        w = L.tensor([[0.5], [0.5]], requires_grad=True)
        c = L.tensor([[3.0, 4.0]])
        log = []
        with counting_hooks(L, log):
            y = {"mul_sin": lambda: (x * c.requires_grad_(True)).sin(),
                 "exp": lambda: x.exp(), "mul_const": lambda: x * 2, "mm": lambda: x.mm(w),
                 "tanh": lambda: x.tanh(), "add": lambda: x + c, "pow": lambda: x ** 2,
                 "one_requires_grad": lambda: x * c, "softmax": lambda: x.softmax(1),
                 "sum": lambda: x.sum()}[prog]()
        packed = log.count("pack")
        y.sum().backward()
        return [packed, log.count("unpack")]
    same_as_torch(f)


def test_pack_receives_tensor_and_may_return_anything():
    def f(L):
        x = L.tensor([1.0, 3.0], requires_grad=True)
        store = {}

        def pack(t):
            store[len(store)] = t.detach().tolist()
            return len(store) - 1

        def unpack(k):
            return L.tensor(store[k])
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).sum()
        y.backward()
        return py(x.grad)
    assert same_as_torch(f) == [2.0, 6.0]


def test_unpack_result_is_used_and_innermost_pair_applies():
    def f(L):
        x = L.tensor([1.0, 3.0], requires_grad=True)
        g = L.autograd.graph
        with g.saved_tensors_hooks(lambda t: t, lambda t: t * 100):
            with g.saved_tensors_hooks(lambda t: t, lambda t: t + 1):
                y = x.sin()
        y.sum().backward()
        return py(x.grad)
    same_as_torch(f)


def test_unpack_must_return_tensor():
    x = hg.tensor([1.0], requires_grad=True)
    with hg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = x.sin()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor "
                                        "but got result of type int"):
        y.backward()


def test_disable_saved_tensors_hooks_and_nesting():
    g = hg.autograd.graph
    with g.disable_saved_tensors_hooks("outer message"):
        with g.disable_saved_tensors_hooks("inner message"):
            with pytest.raises(RuntimeError, match="inner message"):
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with pytest.raises(RuntimeError, match="outer message"):
            with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with g.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_inplace_on_saved_tensor_raises_with_torch_message():
    def f(L):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        return raises(lambda: y.sum().backward())
    r = same_as_torch(f)
    assert "modified by an inplace operation" in r["message"]
    assert "which is output 0 of Exp, is at version 1; expected version 0 instead" in r["message"]


def test_inplace_on_saved_input_raises():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = a.clone()
        out = b * b
        b.mul_(10)
        return raises(lambda: out.sum().backward())["raises"]
    assert same_as_torch(f) == "RuntimeError"


def test_inplace_before_save_is_fine():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = a.clone()
        b.mul_(10)
        (b * b).sum().backward()
        return py(a.grad)
    assert same_as_torch(f) == [200.0, 400.0]


def test_hooks_skip_version_check_as_torch():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = x.exp()
        y.add_(1)
        y.sum().backward()
        return py(x.grad)
    same_as_torch(f)


def test_allow_mutation_on_saved_tensors():
    def f(L):
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            a = L.tensor([1.0, 2.0], requires_grad=True)
            b = a.clone()
            out = (b * b).sum()
            b.mul_(10)
            out.backward()
        return py(a.grad)
    assert same_as_torch(f) == [2.0, 4.0]


def test_allow_mutation_errors():
    g = hg.autograd.graph
    with g.allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with g.allow_mutation_on_saved_tensors():
                pass
        a = hg.tensor([1.0], requires_grad=True)
        out = (a.clone() * a).sum()
    with pytest.raises(AssertionError, match="Trying to backward outside of the "
                                             "'allow_mutation_on_saved_tensors' context"):
        out.backward()


def test_save_on_cpu_same_gradients():
    def f(L):
        def run(use):
            x = L.tensor([0.5, 1.5], requires_grad=True)
            if use:
                with L.autograd.graph.save_on_cpu(pin_memory=False):
                    y = (x.exp() * x).sum()
            else:
                y = (x.exp() * x).sum()
            y.backward()
            return py(x.grad)
        return [run(False), run(True)]
    r = same_as_torch(f)
    assert r[0] == r[1]


def test_saved_tensor_freed_after_backward():
    x = hg.tensor([1.0], requires_grad=True)
    with hg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.sin()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_modified_saved_input_names_its_current_node_and_the_anomaly_hint():
    def f(L):
        out = []
        for anomaly in (False, True):
            with L.autograd.set_detect_anomaly(anomaly):
                a = L.ones(3, requires_grad=True)
                b = a * 2
                c = b.sin()  # saves b
                b.add_(1)
                out.append(raises(lambda: c.sum().backward()))
        return out
    plain, anomaly = same_as_torch(f)
    assert "which is output 0 of Add, is at version 1" in plain["message"]
    assert plain["message"].endswith("with torch.autograd.set_detect_anomaly(True, "
                                     "check_nan=False).")
    assert anomaly["message"].endswith("anywhere later. Good luck!")


@pytest.mark.parametrize("pinned", [False, True])
def test_save_on_cpu_round_trip_lands_in_device_memory(pinned):
    # save_on_cpu's move and its way back, on the CPU device standing in for an
    # accelerator: a pinned-host copy must come back in the device's default memory
    import jax
    from hookgrad._autograd.saved import _offload, _restore
    dev = jax.devices()[0]
    arr = jax.numpy.arange(6.0).reshape(2, 3)
    host = _offload(arr, dev, pinned)
    if pinned:
        assert host.sharding.memory_kind == "pinned_host"
    back = _restore(host, dev)
    assert back.sharding.memory_kind == dev.default_memory().kind
    assert back.devices() == {dev}
    assert (back == arr).all()
