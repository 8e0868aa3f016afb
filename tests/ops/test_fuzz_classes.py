"""Regression tests for the mismatch classes the differential fuzzer (tests/fuzz) found,
one named test per fixed class, each checked against PyTorch where it is installed."""
import pytest

from tests.differential import same_as_torch


def _packed(L, fn):
    # the shapes saved-tensor pack hooks see while ``fn`` records
    seen = []
    with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append(list(t.shape)) or t,
                                              lambda t: t):
        out = fn()
    return out, seen


def test_lerp_with_a_number_weight_saves_no_tensor():
    def scenario(L):
        a = L.tensor([[1.5, 2.0], [1.25, -1.0]], requires_grad=True)
        b = L.tensor([1.5, 0.5], requires_grad=True)
        y, seen = _packed(L, lambda: L.lerp(a, b * 2, 0.25))
        ac = a.clone()
        z = L.lerp(ac, b, 0.25)
        ac.mul_(2)  # nothing of ac is saved, so this in-place change is allowed
        (y.sum() + z.sum()).backward()
        return {"seen": seen, "weight": y.grad_fn._saved_weight,
                "a": a.grad.tolist(), "b": b.grad.tolist()}
    got = same_as_torch(scenario)
    assert got["seen"] == [] and got["weight"] == 0.25
    assert got["a"] == [[1.5, 1.5], [1.5, 1.5]]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_unbatched_nll_loss_is_one_nll_loss_node(loss, reduction):
    def scenario(L):
        x = L.tensor([0.25, 1.5, 1.75], requires_grad=True)
        logp = x.log_softmax(-1) if loss == "nll_loss" else x
        y = getattr(L.nn.functional, loss)(logp, L.tensor(2), reduction=reduction)
        y.backward()
        return {"node": type(y.grad_fn).__name__, "shape": list(y.shape),
                "next": [type(n).__name__ for n, _ in y.grad_fn.next_functions],
                "grad": x.grad.tolist()}
    got = same_as_torch(scenario)
    assert got["node"] == "NllLossBackward0" and got["next"] == ["LogSoftmaxBackward0"]
    assert got["shape"] == []


@pytest.mark.parametrize("keepdim", [False, True])
def test_max_dim_saves_the_returned_indices(keepdim):
    def scenario(L):
        x = L.tensor([[1.5, -0.75, 0.5], [-1.75, 1.5, -1.75]], requires_grad=True)
        (values, indices), seen = _packed(L, lambda: x.max(1, keepdim=keepdim))
        saved = values.grad_fn._saved_indices.tolist()
        (values * 2).sum().backward()
        return {"seen": seen, "indices": indices.tolist(), "values": values.tolist(),
                "saved": saved, "grad": x.grad.tolist()}
    got = same_as_torch(scenario)
    assert got["seen"] == ([[2, 1]] if keepdim else [[2]])
    assert got["saved"] == got["indices"]


@pytest.mark.parametrize("needs", ["self", "self end", "weight", "all"])
def test_lerp_with_a_tensor_weight_saves_what_the_gradients_need(needs):
    def scenario(L):
        a = L.tensor([[0.5, 1.5, -1.0], [2.0, 0.25, 1.0]], requires_grad="self" in needs)
        e = L.tensor([1.0, -2.0, 0.5], requires_grad="end" in needs or needs == "all")
        w = L.tensor([0.75], requires_grad=needs in ("weight", "all"))
        if needs == "all":
            a.requires_grad_()
        y, seen = _packed(L, lambda: L.lerp(a, e, w))
        y.sum().backward()
        return {"seen": seen, "grads": [None if t.grad is None else t.grad.tolist()
                                        for t in (a, e, w)]}
    got = same_as_torch(scenario)
    assert got["seen"] == ([[1]] if needs in ("self", "self end") else [[3], [2, 3], [1]])


@pytest.mark.parametrize("op", ["mm", "atan2", "mul", "div", "maximum"])
def test_saved_tensor_hooks_unpack_in_pack_order(op):
    def scenario(L):
        a = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], requires_grad=True)
        b = L.tensor([[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]], requires_grad=True)
        other = b if op == "mm" else b.t().contiguous() * 1.0
        log = []
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: log.append(("pack", t.tolist())) or t,
                lambda t: log.append(("unpack", t.tolist())) or t):
            y = getattr(L, op)(a, other)
        y.sum().backward()
        return log
    log = same_as_torch(scenario)
    packs = [v for k, v in log if k == "pack"]
    unpacks = [v for k, v in log if k == "unpack"]
    assert len(packs) == 2 and unpacks == packs  # unpacked in the order packed
