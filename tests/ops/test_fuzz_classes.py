"""Regression tests for the mismatch classes the differential fuzzer (tests/fuzz) found,
one named test per fixed class, each checked against PyTorch where it is installed."""
import warnings

import pytest

from tests.differential import py, raises, same_as_torch


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


def _logged(L, fn):
    # every pack and unpack hook call (shape and values) while ``fn`` records and backward runs
    log = []
    with L.autograd.graph.saved_tensors_hooks(
            lambda t: log.append(("pack", list(t.shape), t.tolist())) or t,
            lambda t: log.append(("unpack", list(t.shape), t.tolist())) or t):
        y = fn()
    (y * y).sum().backward()
    return log


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("batched", [False, True])
def test_conv1d_saves_input_and_weight_only(bias, batched):
    # seeds 89 123 215 651: the bias was packed; an absent bias keeps its None edge
    def scenario(L):
        x = L.tensor([[[-0.86, -1.26], [0.99, 0.36]], [[-0.35, 1.72], [-1.54, -1.64]]],
                     requires_grad=True)
        w = L.tensor([[[-1.58, 0.07], [-0.58, 1.77]]], requires_grad=True)
        b = L.tensor([-1.53], requires_grad=True) if bias else None
        xin = x if batched else x[0]
        log = _logged(L, lambda: L.nn.functional.conv1d(xin, w, b))
        y = L.nn.functional.conv1d(x, w, b)
        return {"log": log, "edges": [n and type(n).__name__ for n, _ in y.grad_fn.next_functions],
                "grads": [x.grad.tolist(), w.grad.tolist(), b and b.grad.tolist()]}
    got = same_as_torch(scenario)
    assert [shape for kind, shape, _ in got["log"] if kind == "pack"] == \
        ([[2, 2, 2]] if batched else [[1, 2, 2]]) + [[1, 2, 2]]
    assert got["edges"][2] == ("AccumulateGrad" if bias else None)


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_layer_norm_packs_bias_input_weight_mean_rstd(affine):
    # seeds 81 106 145 241 267 281 522 566 694: PyTorch also saves the mean and rstd
    def scenario(L):
        x = L.tensor([[1.0, 2.0, 4.5, -1.0], [0.5, -2.0, 3.0, 1.0]], requires_grad=True)
        w = L.tensor([2.0, 1.0, 0.5, 3.0], requires_grad=True) if affine in ("weight", "both") \
            else None
        b = L.tensor([3.0, 1.0, 0.0, 1.0], requires_grad=True) if affine in ("bias", "both") \
            else None
        log = _logged(L, lambda: L.nn.functional.layer_norm(x, (4,), w, b))
        y = L.nn.functional.layer_norm(x, (4,), w, b)  # no hooks: computed when read
        node = y.grad_fn
        return py({"log": log, "mean": node._saved_result1, "rstd": node._saved_result2,
                   "shape": list(node._saved_normalized_shape), "grad": x.grad,
                   "edges": [n and type(n).__name__ for n, _ in node.next_functions]})
    got = same_as_torch(scenario)
    packs = [shape for kind, shape, _ in got["log"] if kind == "pack"]
    assert packs[-2:] == [[2, 1], [2, 1]] and got["mean"] == [[1.625], [0.625]]
    assert [s for k, s, _ in got["log"] if k == "unpack"] == packs  # in the order packed


@pytest.mark.parametrize("case", ["mean", "weight_ignore_sum", "none", "unbatched_none",
                                  "2d_mean", "2d_none", "cross_entropy"])
def test_nll_loss_packs_total_weight(case):
    # seeds 67 116 160 261 274 309 324 531: PyTorch saves total_weight after the target
    def scenario(L):
        F = L.nn.functional
        shape, target, kw = {
            "mean": ((2, 3), [0, 2], {}),
            "weight_ignore_sum": ((2, 3), [0, 1], {"weight": [1.0, 2.0, 3.0], "ignore_index": 1,
                                                  "reduction": "sum"}),
            "none": ((2, 3), [0, 1], {"weight": [1.0, 2.0, 3.0], "reduction": "none"}),
            "unbatched_none": ((3,), 1, {"weight": [1.0, 2.0, 3.0], "reduction": "none"}),
            "2d_mean": ((2, 3, 2), [[0, 2], [1, 1]], {}),
            "2d_none": ((2, 3, 2), [[0, 2], [1, 1]], {"reduction": "none"}),
            "cross_entropy": ((2, 3), [0, 2], {}),
        }[case]
        n = 1
        for d in shape:
            n *= d
        x = L.arange(float(n)).reshape(shape).mul(0.3).sin().requires_grad_()
        if "weight" in kw:
            kw = dict(kw, weight=L.tensor(kw["weight"]))
        fn = F.cross_entropy if case == "cross_entropy" else F.nll_loss
        log = _logged(L, lambda: fn(x, L.tensor(target), **kw))
        node = fn(x, L.tensor(target), **kw).grad_fn
        while not type(node).__name__.startswith("NllLoss"):
            node = node.next_functions[0][0]
        return py({"log": log, "total_weight": node._saved_total_weight,
                   "reduction": node._saved_reduction, "grad": x.grad})
    got = same_as_torch(scenario)
    packs = [shape for kind, shape, _ in got["log"] if kind == "pack"]
    assert packs[-1] == []  # total_weight, a 0-d tensor, packed last


@pytest.mark.parametrize("index", ["mask3d", "rows", "mask2d_after_slice", "mask_and_ints",
                                   "masked_select", "masked_select_broadcast"])
def test_boolean_mask_indexing_saves_the_mask(index):
    # seeds 82 293 377 396 664 795 940: hookgrad packed the mask's nonzero integer indices
    def scenario(L):
        x = L.tensor([[[1.48, -0.67], [-1.2, 1.9]], [[-1.83, 0.21], [0.41, 0.98]],
                      [[-1.5, -0.99], [-0.43, 0.86]]], requires_grad=True)
        y = x * 2
        fn = {
            "mask3d": lambda: y[y > 0],
            "rows": lambda: y[L.tensor([True, False, True])],
            "mask2d_after_slice": lambda: y[:, L.tensor([[True, False], [True, True]])],
            "mask_and_ints": lambda: y[L.tensor([True, False, True]), L.tensor([0, 1])],
            "masked_select": lambda: y.masked_select(y > 0),
            "masked_select_broadcast": lambda: y.masked_select(L.tensor([True, False])),
        }[index]
        dtypes = []
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: dtypes.append(str(t.dtype).split(".")[-1]) or t, lambda t: t):
            out = fn()
        log = _logged(L, fn)
        return py({"log": log, "dtypes": dtypes, "out": out, "grad": x.grad})
    got = same_as_torch(scenario)
    assert got["dtypes"][0] == "bool"  # the mask, as given


def test_a_mask_changed_in_place_after_indexing_fails_backward():
    # the mask is saved as it is: its version is checked, as in PyTorch
    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        mask = L.tensor([True, False, True])
        y = x[mask]
        mask[0] = False
        try:
            y.sum().backward()
        except RuntimeError as e:
            return str(e).split(":")[0]
        return "no error"
    assert same_as_torch(scenario) == ("one of the variables needed for gradient computation "
                                       "has been modified by an inplace operation")


@pytest.mark.parametrize("index", ["[3]", "(:, [2])", "[[2, 2]]"])
def test_a_mask_of_another_shape_raises_index_error(index):
    def scenario(L):
        x = L.ones(2, 3)
        idx = {"[3]": L.tensor([True, False, True]),
               "(:, [2])": (slice(None), L.tensor([True, False])),
               "[[2, 2]]": L.tensor([[True, False], [True, True]])}[index]
        try:
            x[idx]
        except IndexError as e:
            return str(e)
        return "no error"
    got = same_as_torch(scenario)
    assert got.startswith("The shape of the mask")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return [type(e).__name__, str(e)]
    return None


@pytest.mark.parametrize("shape", [(3,), (2, 2), (2, 3, 2), ()])
@pytest.mark.parametrize("index", [[1, 5], [-1, 0], [0, -3], [7, 5]])
def test_index_select_out_of_range_raises_pytorchs_cpu_error_per_dim(shape, index):
    # seed 390: PyTorch's CPU kernel for dim 1 raises RuntimeError, the others IndexError
    def scenario(L):
        x = L.ones(shape)
        idx = index if shape else [next(i for i in index if i)]  # one entry for a 0-d x
        return [_error(lambda: x.index_select(d, L.tensor(idx)))
                for d in range(max(len(shape), 1))]
    got = same_as_torch(scenario)
    assert all(e is not None for e in got)


def test_index_select_of_an_empty_dim_raises():
    got = same_as_torch(lambda L: _error(lambda: L.ones(3, 0).index_select(1, L.tensor([1]))))
    assert got == ["RuntimeError", "index_select(): self indexing axis dim should be positive"]


@pytest.mark.parametrize("shape", [(3,), (2, 3), (3, 2, 2)])
@pytest.mark.parametrize("index", [[0, 5], [-1, 0], [5, -4]])
@pytest.mark.parametrize("alpha", [1, 2])
def test_index_add_checks_its_index_eagerly(shape, index, alpha):
    # JAX drops out-of-range scatter writes: hookgrad returned a result where PyTorch raises
    def scenario(L):
        out = []
        for d in range(len(shape)):
            src = L.ones([2 if k == d else n for k, n in enumerate(shape)])
            out.append(_error(lambda: L.zeros(shape).index_add(d, L.tensor(index), src,
                                                               alpha=alpha)))
            out.append(_error(lambda: L.zeros(shape).index_add_(d, L.tensor(index), src,
                                                                alpha=alpha)))
        return out
    got = same_as_torch(scenario)
    assert all(e is not None for e in got)


def test_index_add_into_a_0d_tensor():
    def scenario(L):
        x = L.tensor(1.5, requires_grad=True)
        y = x.index_add(0, L.tensor([0]), L.tensor(2.0))
        y.backward()
        return [y.item(), x.grad.item(), _error(lambda: L.zeros(()).index_add(
            0, L.tensor([1]), L.ones(())))]
    assert same_as_torch(scenario)[:2] == [3.5, 1.0]


@pytest.mark.parametrize("hook", ["full_backward_hook", "full_backward_pre_hook"])
@pytest.mark.parametrize("write", ["add_", "clamp_", "mul_", "copy_"])
def test_module_outputs_under_backward_hooks_are_views_not_to_write_in_place(hook, write):
    # seeds 96 420 498 677 802 921: PyTorch's BackwardHookFunction returns views
    def scenario(L):
        m = L.nn.Linear(3, 2)
        getattr(m, "register_" + hook)(lambda *args: None)
        y = m(L.tensor([[1.0, -2.0, 0.5]], requires_grad=hook == "full_backward_hook"))
        args = {"add_": (1,), "clamp_": (-1, 1), "mul_": (2,), "copy_": (L.ones(1, 2),)}[write]
        return [y._is_view(), type(y.grad_fn).__name__,
                _error(lambda: getattr(y, write)(*args))]
    got = same_as_torch(scenario)
    assert got[0] is True and got[2][1].startswith("Output 0 of BackwardHookFunction is a view")


@pytest.mark.parametrize("write", ["add_", "mul_"])
def test_in_place_on_an_expanded_leaf_view_names_the_leaf_first(write):
    # seeds 706 820: autograd's leaf check comes before the kernel's overlap check
    def scenario(L):
        a = L.tensor([[0.5, 1.5], [2.0, -1.0]], requires_grad=True)
        y = (a * 1).expand(2, 2, 2)
        return [_error(lambda: getattr(a.expand(2, 2, 2), write)(2)),
                _error(lambda: getattr(y, write)(2))]
    got = same_as_torch(scenario)
    assert got[0][1] == ("a view of a leaf Variable that requires grad is being used in an "
                         "in-place operation.")
    assert got[1][1].startswith("unsupported operation: more than one element")


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 2, 3), (2, 2, 2, 3), "expanded"])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_records_pytorchs_views(shape, bias):
    # seeds 203 206 344 639 673 763: the result of the flattened path is a view of addmm's
    # (in place: AsStridedBackward0); a non-contiguous input adds the bias in place
    def scenario(L):
        w = L.ones(2, 3, requires_grad=True)
        b = L.tensor([0.5, -1.0], requires_grad=True) if bias else None
        x = L.ones(2, 3, requires_grad=True)
        x = x.expand(2, 2, 3) if shape == "expanded" else L.ones(shape, requires_grad=True)
        y = L.nn.functional.linear(x, w, b)
        before = [type(y.grad_fn).__name__, y._is_view(),
                  [n and type(n).__name__ for n, _ in y.grad_fn.next_functions]]
        y.add_(1)
        y.sum().backward()
        return before + [type(y.grad_fn).__name__, w.grad]
    same_as_torch(lambda L: py(scenario(L)))


@pytest.mark.parametrize("write", ["unsqueeze_squeeze_add_", "setitem_int", "setitem_slice",
                                   "unbind_view", "split_select"])
def test_a_view_of_a_guarded_view_names_its_own_op(write):
    # seeds 316 368 475 560 789: PyTorch's error names the last view op's output
    def scenario(L):
        m = L.nn.Linear(3, 2)
        m.register_full_backward_pre_hook(lambda *args: None)
        y = m(L.tensor([[1.0, -2.0, 0.5], [0.25, 1.0, -1.0]], requires_grad=True))
        x = L.ones(2, 3, requires_grad=True) * 1

        def go():
            if write == "unsqueeze_squeeze_add_":
                y.unsqueeze(1).squeeze(1).add_(1)
            elif write == "setitem_int":
                y[0] = 0.5
            elif write == "setitem_slice":
                y[0:1] = 0.5
            elif write == "unbind_view":
                x.unbind(0)[1].view(-1).add_(1)
            else:
                x.split(1)[1][0].add_(1)
        return _error(go)
    got = same_as_torch(scenario)
    assert got[0] == "RuntimeError" and "BackwardHookFunction" not in got[1]


@pytest.mark.parametrize("call", ["scatter_add", "scatter", "scatter_value", "scatter_reduce",
                                  "index_select", "getitem", "getitem_mask"])
def test_pack_hooks_run_before_an_index_error(call):
    # seeds 547 657: PyTorch records the node (packing what it saves) before its kernel
    # checks the index values
    def scenario(L):
        x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        i = L.tensor([[0, 5], [1, 0]])
        fn = {"scatter_add": lambda: x.scatter_add(1, i, x * 2),
              "scatter": lambda: x.scatter(1, i, x * 2),
              "scatter_value": lambda: x.scatter(1, i, 0.5),
              "scatter_reduce": lambda: x.scatter_reduce(1, i, x * 2, "sum"),
              "index_select": lambda: x.index_select(1, L.tensor([0, 5])),
              "getitem": lambda: x[L.tensor([0, 5])],
              "getitem_mask": lambda: x[L.tensor([True, False, True])]}[call]
        log = []
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: log.append((list(t.shape), str(t.dtype).split(".")[-1])) or t,
                lambda t: t):
            err = _error(fn)
        return [log, err[0]]
    got = same_as_torch(scenario)
    assert got[0] and got[0][0][1] in ("int64", "bool")


def _flat_view_function(L):
    """A custom Function returning a view of its input (its output is a CUSTOM view)."""
    class Ident(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g
    return Ident


@pytest.mark.parametrize("made_by", ["split", "module_hook", "function"])
def test_a_saved_view_whose_base_was_written_names_how_it_was_made(made_by):
    # seed 684: backward reads a saved view's grad_fn first; for a view of a multi-output
    # op or of a custom Function whose base was written since, that read raises
    def scenario(L):
        a = L.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
        base = a * 1
        if made_by == "split":
            v = base.split(2)[0]
        elif made_by == "module_hook":
            m = L.nn.Identity()
            m.register_full_backward_pre_hook(lambda mod, g: None)
            v = m(base)
        else:
            v = _flat_view_function(L).apply(base)
        y = (v * v).sum()   # mul saves v
        base.mul_(2)
        return _error(lambda: y.backward())
    got = same_as_torch(scenario)
    assert got[0] == "RuntimeError"
    assert "is a view and its base or another view of its base has been modified" in got[1]


@pytest.mark.parametrize("made_by", ["unbind", "split", "no_grad", "function"])
@pytest.mark.parametrize("write_grad_mode", [True, False])
@pytest.mark.parametrize("use", ["op", "grad_fn", "autograd.grad", "op under no_grad"])
def test_using_a_view_whose_base_was_written_raises_as_pytorch_reads_its_grad_fn(
        made_by, write_grad_mode, use):
    # PyTorch regenerates a written-through view's grad_fn when it is next read, except for
    # views of multi-output ops, of custom Functions and made in no_grad mode: those raise
    # (an op on the view reads it when recording; under no_grad nothing is read)
    def scenario(L):
        base = L.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True) * 1
        if made_by == "no_grad":
            with L.no_grad():
                v = base[0]
        elif made_by == "function":
            v = _flat_view_function(L).apply(base)
        else:
            v = getattr(base, made_by)(1)[0]
        with L.set_grad_enabled(write_grad_mode):
            base.mul_(2)
        if use == "op":
            return _error(lambda: (v * 2).requires_grad)
        if use == "grad_fn":
            return _error(lambda: v.grad_fn.name())
        if use == "autograd.grad":
            return _error(lambda: L.autograd.grad(base.sum(), [v]))
        with L.no_grad():
            return py(v * 2)
    got = same_as_torch(scenario)
    if use == "op under no_grad":  # the view reads its base as written
        assert isinstance(got, list) and got and not isinstance(got[0], str)
    else:
        assert got[0] == "RuntimeError"
        assert "its base or another view of its base has been modified inplace" in got[1]


def test_multi_grad_hook_fires_when_an_inputs_leaf_is_not_reached():
    # backward(inputs=[a2, a1]) where the loss reaches only a1: the hook gets [None, g]
    def scenario(L):
        a1 = L.tensor([-1.09, 0.57], requires_grad=True)
        a2 = L.tensor([0.93, -1.27], requires_grad=True)
        seen = []
        L.autograd.graph.register_multi_grad_hook(
            [a2, a1], lambda gs: seen.append([None if g is None else g.tolist() for g in gs]))
        a1.tanh().sum().backward(inputs=[a2, a1])
        return {"seen": seen, "a2": a2.grad, "a1": a1.grad.tolist()}
    got = same_as_torch(scenario)
    assert len(got["seen"]) == 1 and got["seen"][0][0] is None and got["a2"] is None
    assert got["seen"][0][1] == got["a1"]


@pytest.mark.parametrize("op", ["fmod", "remainder"])
def test_fmod_and_remainder_save_only_for_the_divisors_gradient(op):
    # d/dself is 1: nothing is saved unless ``other`` is a Tensor that requires grad
    def scenario(L):
        x = L.tensor([1.5, -2.5, 3.25], requires_grad=True)
        y = L.tensor([0.7, 0.9, -1.1], requires_grad=True)
        out = {}
        for name, f in [("scalar", lambda: getattr(L, op)(x, 0.7)),
                        ("detached", lambda: getattr(L, op)(x, y.detach())),
                        ("tensor", lambda: getattr(L, op)(x, y))]:
            r, seen = _packed(L, f)
            gx, *gy = L.autograd.grad(r.sum(), [x] + ([y] if name == "tensor" else []))
            out[name] = {"seen": seen, "gx": gx.tolist(), "gy": [g.tolist() for g in gy]}
        return out
    got = same_as_torch(scenario)
    assert got["scalar"]["seen"] == got["detached"]["seen"] == []
    assert got["tensor"]["seen"] == [[3], [3]] and got["scalar"]["gx"] == [1.0, 1.0, 1.0]


def test_modified_by_copy_names_the_copy_node_whole():
    # PyTorch drops ``Backward<n>`` from a node name (``Mul``), not ``CopyBackwards``'s
    def scenario(L):
        a = L.ones(3, requires_grad=True)
        y = a * 2
        w = y.pow(2)
        y.copy_(L.zeros(3))
        with pytest.raises(RuntimeError) as e:
            w.sum().backward()
        return str(e.value).split("], ")[1].split(",")[0]
    assert same_as_torch(scenario) == "which is output 0 of torch::autograd::CopyBackwards"


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["amin", "amax"])
def test_scatter_reduce_extremum_shares_the_gradient_among_all_ties(reduce, include_self):
    # PyTorch counts self among the ties even when include_self=False (self's own share is
    # then dropped): column 0 has 4 ties (self + 3 src), column 1 has 3 (self + 2 src)
    def scenario(L):
        sign = 1.0 if reduce == "amin" else -1.0
        x = L.tensor([[1.0, 2.0], [3.0, 1.0]], requires_grad=True)
        src = L.tensor([[1.0, 2.0], [1.0, 5.0], [1.0, 2.0]], requires_grad=True)
        y = (x * sign).scatter_reduce(0, L.tensor([[0, 0], [0, 1], [0, 0]]), src * sign,
                                      reduce, include_self=include_self)
        y.backward(L.ones(2, 2))
        return {"x": (x.grad * sign).tolist(), "src": (src.grad * sign).tolist()}
    got = same_as_torch(scenario)
    third = pytest.approx(1 / 3)
    share = [0.25, third] if include_self else [0.0, 0.0]
    assert got["x"] == [share, [1.0, 1.0 if include_self else 0.0]]
    assert got["src"] == [[0.25, third], [0.25, 0.0 if include_self else 1.0], [0.25, third]]


@pytest.mark.parametrize("op", ["fmod", "remainder"])
@pytest.mark.parametrize("divisor", ["number", "tensor", "tensor requiring grad"])
def test_fmod_and_remainder_record_pytorchs_overload_node(op, divisor):
    # a number divisor is the .Scalar overload (...Backward0, nothing saved), a Tensor
    # the .Tensor one (...Backward1, self and other saved)
    def scenario(L):
        x = L.tensor([1.5, -2.5, 3.25], requires_grad=True)
        other = 0.7 if divisor == "number" else \
            L.tensor([0.7, 0.9, -1.1], requires_grad=divisor.endswith("grad"))
        y = getattr(x, op)(other)
        node = y.grad_fn
        saved = sorted(a for a in dir(node) if a.startswith("_saved_"))
        y.sum().backward()
        grads = [py(x.grad)] + ([py(other.grad)] if divisor.endswith("grad") else [])
        return [type(node).__name__, saved, py(y), grads]
    got = same_as_torch(scenario)
    assert got[0].endswith("Backward0" if divisor == "number" else "Backward1")


@pytest.mark.parametrize("write", [
    lambda L, y: y.clamp_(-1, 1), lambda L, y: y.clamp_(min=L.tensor(-1.0)),
    lambda L, y: y.pow_(L.tensor(2.0)), lambda L, y: y.add_(1),
    lambda L, y: y.div_(2, rounding_mode="floor"), lambda L, y: y.copy_(L.ones(2))],
    ids=["ClampBackward1", "ClampBackward0", "PowBackward1", "AddBackward0", "DivBackward2",
         "CopyBackwards"])
def test_modified_by_an_inplace_op_names_its_node_as_pytorch_shortens_it(write):
    # hypothesis example: `y.clamp_(-1, 1)` is "output 0 of Clamp1" (only Backward0 drops
    # its number)
    def scenario(L):
        y = L.ones(2, requires_grad=True) * 1
        z = y.sin()  # saves y
        write(L, y)
        kind, message = _error(lambda: z.sum().backward())
        return [kind, message[message.index("which is output"):]]  # past the tensor's type
    got = same_as_torch(scenario)
    assert got[0] == "RuntimeError"


@pytest.mark.parametrize("op", ["copy_", "zero_", "floor"])
def test_a_gradient_nothing_flows_into_is_outside_the_create_graph_graph(op):
    # PyTorch's zeros_like(grad): copy_'s self-gradient, zero_'s, floor's do not require
    # grad, so a second backward does not reach back through them (nor run y's hooks)
    def scenario(L):
        a = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = a * 2
        calls = []
        y.register_hook(lambda g: calls.append(g.tolist()) and None)
        z = y.floor() if op == "floor" else y.clone()
        if op != "floor":
            getattr(z, op)(*([L.ones(2, 2)] if op == "copy_" else []))
        ga, = L.autograd.grad((z * z).sum() + (a * a).sum(), [a], create_graph=True)
        n = len(calls)
        second, = L.autograd.grad((ga * ga).sum(), [a])
        return {"ga": ga.tolist(), "second": second.tolist(), "second_pass_hooks": calls[n:]}
    got = same_as_torch(scenario)
    assert got["second_pass_hooks"] == []


@pytest.mark.parametrize("bound", ["min", "max"])
def test_clamp_with_one_tensor_bound_saves_no_missing_bound(bound):
    # the missing bound is an undefined Tensor in PyTorch: no edge, nothing packed, None
    def scenario(L):
        x = L.tensor([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]], requires_grad=True)
        b = L.tensor([0.0, -1.0, 1.5], requires_grad=True)
        y, seen = _packed(L, lambda: L.clamp(x, **{bound: b}))
        fn = y.grad_fn
        missing = getattr(fn, "_saved_max" if bound == "min" else "_saved_min")
        y.sum().backward()
        return {"seen": seen, "missing": missing,
                "edges": [e is None for e, _ in fn.next_functions],
                "x": x.grad.tolist(), "b": b.grad.tolist()}
    got = same_as_torch(scenario)
    assert got["seen"] == [[3], [2, 3]] and got["missing"] is None
    assert got["edges"] == ([False, False, True] if bound == "min" else [False, True, False])


@pytest.mark.parametrize("case", ["kernel_too_big", "channels", "groups", "weight_dims",
                                  "unbatched_channels", "transposed_output_padding"])
def test_convolution_packs_input_and_weight_before_its_shape_error(case):
    # PyTorch's convolution node saves (packs) the batched input and the weight before its
    # kernel checks the shapes; the error names the batched input
    def scenario(L):
        F = L.nn.functional
        w = L.ones(2, 2, 2, requires_grad=True)
        x, fn, kw = {
            "kernel_too_big": ((3, 2, 1), F.conv1d, {}),
            "channels": ((3, 4, 5), F.conv1d, {}),
            "groups": ((3, 2, 5), F.conv1d, {"groups": 2}),
            "weight_dims": ((3, 2, 5), F.conv1d, {}),
            "unbatched_channels": ((3, 5), F.conv1d, {}),
            "transposed_output_padding": ((3, 2, 5), F.conv_transpose1d, {"output_padding": 2}),
        }[case]
        if case == "weight_dims":
            w = L.ones(2, 2, requires_grad=True)
        x = L.ones(*x, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            _packed(L, lambda: fn(x, w, **kw))
        seen = []
        with pytest.raises(RuntimeError):
            with L.autograd.graph.saved_tensors_hooks(
                    lambda t: seen.append(list(t.shape)) or t, lambda t: t):
                fn(x, w, **kw)
        return {"seen": seen, "message": str(e.value)}
    got = same_as_torch(scenario)
    assert len(got["seen"]) == 2
    if case == "unbatched_channels":
        assert "expected input[1, 3, 5]" in got["message"]


def test_a_packed_result_is_unpacked_in_backward_as_pytorchs():
    # scatter_reduce's node saves its result: backward unpacks it (last, in pack order)
    def scenario(L):
        log = []
        a = L.tensor([[0.5, 1.5], [2.0, -1.0]], requires_grad=True)
        s = L.tensor([[3.0, -2.0]], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: log.append(("pack", t.tolist())) or t,
                                                  lambda t: log.append(("unpack", t.tolist()))
                                                  or t):
            y = a.scatter_reduce(0, L.tensor([[1, 0]]), s, "amax")
        y.sum().backward()
        return log
    log = same_as_torch(scenario)
    assert [k for k, _ in log] == ["pack"] * 4 + ["unpack"] * 4
    assert log[-1] == ("unpack", [[0.5, 1.5], [3.0, -1.0]])


@pytest.mark.parametrize("form", ["function", "operator"])
def test_remainder_of_a_number_by_a_tensor_has_no_derivative(form):
    # PyTorch's remainder.Scalar_Tensor records a NotImplemented node: the forward works,
    # backward reaching it raises
    def scenario(L):
        y = L.tensor([1.5, 2.5, -0.75], requires_grad=True)
        z = L.remainder(2.0, y) if form == "function" else 2.0 % y
        with pytest.raises(RuntimeError, match="derivative for aten::remainder is not "
                                               "implemented"):
            z.exp().sum().backward()
        return {"value": z.tolist(), "node": z.grad_fn.name(),
                "edges": len(z.grad_fn.next_functions)}
    got = same_as_torch(scenario)
    assert got["node"] == "torch::autograd::NotImplemented" and got["edges"] == 1


def test_floor_divide_has_no_derivative():
    # PyTorch's floor_divide records a NotImplemented node (the division rounds: no formula)
    def scenario(L):
        a = L.tensor([1.5, 2.5], requires_grad=True)
        out = {}
        for form, z in [("method", a // 0.5), ("function", L.floor_divide(a, a)),
                        ("reflected", 3.0 // a)]:
            with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not "
                                                   "implemented"):
                z.sum().backward()
            out[form] = (z.tolist(), z.grad_fn.name(), len(z.grad_fn.next_functions))
        return out
    got = same_as_torch(scenario)
    assert got["function"][1:] == ("torch::autograd::NotImplemented", 2)


def test_augmented_assignment_writes_in_place():
    # `b **= 2` is pow_ (same Tensor, version bumped), not a rebinding to a new Tensor
    def scenario(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        ref, v = b, b._version
        b **= 2
        b %= 3
        i = L.tensor([3, 5])
        j = i
        i &= 6
        i |= 1
        i ^= 2
        return {"same": ref is b and j is i, "bumps": b._version - v, "b": b.tolist(),
                "i": i.tolist(), "rxor": (3 ^ i).tolist()}
    got = same_as_torch(scenario)
    assert got["same"] and got["bumps"] == 2


def test_contains_and_reversed():
    def scenario(L):
        a = L.tensor([1.0, 2.0, 4.0])
        with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
            "x" in a
        return {"in": [2.0 in a, 5 in a, L.tensor(4.0) in a],
                "reversed": [t.tolist() for t in reversed(a)]}
    got = same_as_torch(scenario)
    assert got == {"in": [True, False, True], "reversed": [4.0, 2.0, 1.0]}


def test_second_order_through_clamp_with_one_tensor_bound():
    # the missing bound is a None argument of the backward's op: its graph still lines up
    def scenario(L):
        x = L.tensor([0.5, -1.5, 2.0], requires_grad=True)
        hi = L.tensor([1.0, 1.0, 1.0], requires_grad=True)
        y = L.clamp(x * x, None, hi * 2)
        g = L.autograd.grad((y * y).sum(), [x, hi], create_graph=True)
        second = L.autograd.grad(sum(t.sum() for t in g), [x, hi])
        return [t.tolist() for t in g + second]
    assert same_as_torch(scenario)[2] == [3.0, 0.0, 0.0]


def test_a_vector_matrix_product_is_squeezed_in_place_as_pytorch_does():
    # PyTorch's matmul of a vector and a matrix squeezes its mm result in place: the result
    # is at version 1, so a later in-place op's version check names versions 2 and 3
    def scenario(L):
        a = L.tensor([-2.0, -1.99, -1.98], requires_grad=True)
        w = L.tensor([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]], requires_grad=True)
        versions = [(a @ w.t())._version, L.nn.functional.linear(a, w)._version,
                    L.nn.functional.linear(a, w, L.ones(2))._version,
                    (w @ a)._version]
        with L.no_grad():
            versions += [(a @ w.t())._version, L.nn.functional.linear(a, w)._version]
        y = L.nn.functional.linear(a, w)
        y.sigmoid_()
        y.mul_(2)
        try:
            y.sum().backward()
            error = None
        except RuntimeError as e:
            error = str(e).split("Hint")[0].replace("hookgrad.", "torch.")
        return {"versions": versions, "error": error}
    got = same_as_torch(scenario)
    assert got["versions"] == [1, 1, 0, 0, 1, 1]
    assert "is at version 3; expected version 2 instead" in got["error"]


def test_a_multi_grad_hook_on_an_unreached_captured_leaf_does_not_raise():
    # autograd.grad with a leaf's gradient edge among its inputs, the leaf unreached from
    # the loss: the engine does not execute its node (no "leaf node was passed" error)
    def scenario(L):
        a = L.tensor([-2.0, -1.99, -1.98], requires_grad=True)
        y = a.take(L.tensor([1, 2, 2]))
        z = y + a
        leaf = L.ones(3, 4, requires_grad=True)
        seen = []
        L.autograd.graph.register_multi_grad_hook(
            [z, leaf], lambda gs: seen.append([g is None for g in gs]), mode="all")
        loss = (y * y).sum() + z.tanh().sum()
        edge = L.autograd.graph.get_gradient_edge(leaf)
        got = L.autograd.grad(loss, [edge, a, y], allow_unused=True)
        return {"none": [g is None for g in got], "seen": seen}
    assert same_as_torch(scenario) == {"none": [True, False, False], "seen": [[False, True]]}


@pytest.mark.parametrize("op", ["sigmoid_", "tanh_", "exp_"])
def test_double_backward_after_an_inplace_op_on_a_view(op):
    # the node of an in-place op on a view lives inside the base's CopySlices; the result
    # it saved joins the second graph through the view's AsStridedBackward0, as PyTorch's
    # (joined at the node itself, the second backward ran it twice: the freed-graph error)
    def scenario(L):
        a = L.tensor([0.2, -0.1, 0.3], requires_grad=True)
        w = L.tensor([[-2.0, -1.99, -1.98], [-1.97, -1.96, -1.95], [-1.94, -1.93, -1.92]],
                     requires_grad=True)
        y = L.nn.functional.linear(a, w, L.tensor([0.1, 0.2, 0.3]))  # addmm's view
        getattr(y, op)()
        g, = L.autograd.grad(y.tanh().sum(), [a], create_graph=True)
        (g * g).sum().backward()
        return {"a": py(a.grad), "w": py(w.grad)}
    got = same_as_torch(scenario)
    assert any(v != 0 for v in got["a"])


@pytest.mark.xfail(strict=True, reason="issue 34 (open): hookgrad names the first in-place "
                   "node (Sigmoid), PyTorch's the view's AsStrided (tests/fuzz/_harness.py "
                   "KNOWN_BUGS)")
def test_the_version_error_after_two_inplace_ops_on_a_view_names_its_node():
    def scenario(L):
        a = L.tensor([-2.0, -1.99, -1.98], requires_grad=True)
        w = L.tensor([[-2.0, -1.99, -1.98], [-1.97, -1.96, -1.95], [-1.94, -1.93, -1.92]],
                     requires_grad=True)
        y = L.nn.functional.linear(a, w, L.tensor([-2.0, -1.99, -1.98]))
        y.sigmoid_()
        z = L.outer(a, a)
        y.mul_(2)
        try:
            L.autograd.grad((y * y).sum() + (z * z).sum(), [a, w], retain_graph=True)
        except RuntimeError as e:
            return str(e).split(" Hint:")[0].replace("hookgrad.", "torch.")
    assert "is at version 2; expected version 1" in same_as_torch(scenario)


_RESULT_SAVERS = {  # ops whose result PyTorch's node saves, and hookgrad recomputes
    "ldexp": lambda L, x: L.ldexp(x, L.tensor([1.0, 2.0])),
    "erfcx": lambda L, x: L.special.erfcx(x),
    "log_ndtr": lambda L, x: L.special.log_ndtr(x),
    "ndtri": lambda L, x: L.special.ndtri(x * 0.5),
    "sqrt": lambda L, x: x.sqrt(),
    "rsqrt": lambda L, x: x.rsqrt(),
    "tan": lambda L, x: x.tan(),
    "reciprocal": lambda L, x: x.reciprocal(),
    "prod": lambda L, x: x.prod(),
    "cumprod": lambda L, x: x.cumprod(0),
    "pow of a number": lambda L, x: L.pow(2.0, x),
    "aminmax's min": lambda L, x: L.aminmax(x, dim=0)[0],
    "aminmax's max": lambda L, x: L.aminmax(x, dim=0)[1],
}


@pytest.mark.parametrize("op", list(_RESULT_SAVERS))
def test_an_inplace_write_to_a_saved_result_fails_backward(op):
    # hookgrad's backward recomputes the result from the input, but keeps the result's
    # version: writing into it fails backward, as PyTorch's saved result does
    def scenario(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = _RESULT_SAVERS[op](L, x)
        y.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return str(e).split(" Hint:")[0].replace("hookgrad.", "torch.")
        return "ran"
    assert "modified by an inplace operation" in same_as_torch(scenario)


_TARGETS = {
    "float class indices": ((3, 4), lambda L: L.tensor([0.0, 1.0, 2.0])),
    "int32": ((3, 4), lambda L: L.tensor([0, 1, 2], dtype=L.int32)),
    "bool": ((4,), lambda L: L.tensor(True)),
    "(N, 1)": ((3, 4), lambda L: L.tensor([[0], [1], [2]])),
    "long probabilities": ((3, 4), lambda L: L.zeros(3, 4, dtype=L.long)),
    "a 0-d target for a batch": ((3, 4), lambda L: L.tensor(1)),
    "unbatched, several targets": ((4,), lambda L: L.tensor([0, 1])),
    "spatial, wrong size": ((3, 4, 5), lambda L: L.zeros(3, 6, dtype=L.long)),
    "2-d, wrong size": ((3, 4, 5, 6), lambda L: L.zeros(3, 5, 7, dtype=L.long)),
    "2-d, wrong rank": ((3, 4, 5, 6), lambda L: L.zeros(3, 5, dtype=L.long)),
    "out of range": ((4,), lambda L: L.tensor([7])),
}


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("target", list(_TARGETS))
def test_a_bad_class_target_gets_pytorchs_error(loss, target):
    # PyTorch tells probabilities from class indices by shape, then checks the indices'
    # batch, rank, shape and dtype (Long or Byte) in that order: no JAX error escapes
    def scenario(L):
        shape, make = _TARGETS[target]
        x = L.ones(shape, requires_grad=True)
        try:
            getattr(L.nn.functional, loss)(x, make(L))
        except (RuntimeError, ValueError, IndexError) as e:
            return {"raises": type(e).__name__, "text": str(e)}
        return {"returned": True}
    got = same_as_torch(scenario)
    assert "raises" in got


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_byte_and_single_unbatched_targets_are_accepted(loss):
    # (PyTorch's backward of an unbatched input with a (1,) target fails: forward only)
    def scenario(L):
        x = L.tensor([[0.5, 1.5, -1.0], [2.0, 0.25, 1.0]], requires_grad=True)
        f = getattr(L.nn.functional, loss)
        y = f(x, L.tensor([2, 0], dtype=L.uint8))
        y.backward()
        v = L.tensor([0.5, 1.5, -1.0])
        return py({"y": y, "x": x.grad, "v": [f(v, L.tensor([1]), reduction=r)
                                               for r in ("none", "mean")]})
    same_as_torch(scenario)


def test_assigning_a_grad_of_another_dtype_names_grad_dtype():
    def scenario(L):
        out = []
        for dtype in (L.float64, L.float16, L.int64, L.complex64):
            x = L.ones(2, requires_grad=True)
            try:
                x.grad = L.zeros(2, dtype=dtype)
            except RuntimeError as e:
                out.append(str(e))
        return out
    got = same_as_torch(scenario)
    assert got[0].startswith("attempting to assign a gradient with dtype 'double' to a "
                             "tensor with grad_dtype 'Float'.")


def test_backward_of_a_compiled_steps_output_says_outputs_are_detached():
    import hookgrad
    m = hookgrad.nn.Linear(3, 1)
    step = hookgrad.compile(lambda x: m(x).sum())
    y = step(hookgrad.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"does not require grad and does not have a grad_fn "
                       r"\(it is an output of a hookgrad.compile step, and a compiled step's "
                       r"outputs are detached"):
        y.backward()
    with pytest.raises(RuntimeError, match=r"does not have a grad_fn$"):
        hookgrad.ones(1).backward()   # not a compiled output: PyTorch's message only


def test_an_all_mode_multi_grad_hook_needs_every_tensor_to_require_grad():
    from tests.differential import raises_as_torch
    raises_as_torch(lambda L: L.autograd.graph.register_multi_grad_hook(
        (L.ones(2, requires_grad=True), L.ones(2)), lambda gs: None, mode="all"),
        AssertionError, "Expected gradient function to be set")


def test_an_all_mode_multi_grad_hook_counts_the_nodes_of_registration():
    # the nodes the hook waits for are those when it was registered: an in-place op after
    # registration does not change which gradients it waits for
    def scenario(L):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        a = x * 2
        seen = []
        L.autograd.graph.register_multi_grad_hook(
            (a, x), lambda gs: seen.append([None if g is None else g.tolist() for g in gs]))
        a.mul_(3)
        a.sum().backward()
        return seen
    same_as_torch(scenario)


_MATMUL_SHAPES = [((3, 4), (2, 4, 1)), ((3, 4), (1, 4, 6)), ((4,), (2, 4, 1)),
                  ((2, 3, 4), (1, 4, 6)), ((1, 3, 4), (2, 4, 6)), ((1, 3, 4), (5, 1, 4, 6)),
                  ((5, 2, 3, 4), (1, 4, 6)), ((2, 3, 4), (4,)), ((0, 3, 4), (5, 1, 4, 6))]


def _graph(fn):
    names = [type(fn).__name__]
    for n, _ in fn.next_functions:
        if n is not None and type(n).__name__ != "AccumulateGrad":
            names += _graph(n)
    return names


@pytest.mark.parametrize("grads", ["both", "left", "right", "left transposed"])
@pytest.mark.parametrize("sa,sb", _MATMUL_SHAPES)
def test_matmul_records_pytorchs_folded_or_batched_graph(sa, sb, grads):
    # PyTorch folds a batch times a matrix into one mm (transposed, (b^T a^T)^T, when the
    # batch is on the right) where the smaller operand requires grad or no copy is needed,
    # squeezing a batch of one; else it expands both into one bmm
    def scenario(L):
        if grads == "left transposed" and len(sa) >= 2:
            a = L.ones(sa[:-2] + (sa[-1], sa[-2])).mT.requires_grad_()
        else:
            a = L.ones(sa, requires_grad=grads != "right")
        b = L.ones(sb, requires_grad=grads in ("both", "right"))
        y = a @ b
        y.sum().backward()
        return {"graph": _graph(y.grad_fn), "shape": list(y.shape),
                "contiguous": y.is_contiguous(), "version": y._version}
    same_as_torch(scenario)


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
@pytest.mark.parametrize("value", ["number", "0-d tensor", "same shape", "broadcast"])
@pytest.mark.parametrize("before", ["", "y.mul_(2); y.add_(1)"])
def test_writing_the_whole_tensor_copies_or_fills_as_pytorch(shape, value, before):
    # PyTorch copies a value of the target's shape (a number into a 0-d tensor too), fills
    # from a 0-d value, and copies any other after broadcasting it
    def scenario(L):
        x = L.ones(shape, requires_grad=True)
        v = L.tensor(0.5, requires_grad=True)
        y = x * 2
        exec(before, {"y": y})
        value_of = {"number": 0.09, "0-d tensor": v * 1, "same shape": L.full(shape, 0.25),
                    "broadcast": L.full(shape[-1:], 0.25)}
        y[...] = value_of[value]
        (y * 3).sum().backward()
        return {"node": type(y.grad_fn).__name__, "version": y._version, "y": y,
                "v": v.grad, "x": x.grad}
    same_as_torch(lambda L: py(scenario(L)))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_unbatched_cross_entropy_with_probabilities_ends_in_pytorchs_node(reduction):
    # PyTorch sums over the class dim of an unbatched input directly: no unsqueeze/squeeze
    def scenario(L):
        x = L.tensor([0.5, 1.5, -1.0], requires_grad=True)
        y = L.nn.functional.cross_entropy(x, L.tensor([0.2, 0.3, 0.5]), reduction=reduction,
                                          weight=L.tensor([1.0, 2.0, 3.0]))
        g, = L.autograd.grad(y.sum(), x, create_graph=True)
        return py({"node": type(y.grad_fn).__name__, "shape": list(y.shape), "y": y, "g": g,
                   "g requires grad": g.requires_grad})
    assert same_as_torch(scenario)["node"] == ("DivBackward1" if reduction == "mean" else
                                               "NegBackward0")


@pytest.mark.parametrize("case", ["mul", "mul of a non-leaf", "add", "scalar", "matmul",
                                  "where", "cat", "grad"])
def test_node_post_hooks_get_none_for_the_inputs_the_engine_does_not_need(case):
    # under backward(inputs=) and autograd.grad PyTorch's op nodes compute only the needed
    # gradients (cat's one formula for its list computes all)
    def scenario(L):
        a = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        b = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = L.tensor(2.0, requires_grad=True)
        c = a * 1
        z, want = {"mul": (a * b, [a]), "mul of a non-leaf": (c * b, [c]), "add": (a + b, [b]),
                   "scalar": (a * s, [s]), "matmul": (a[None] @ b[:, None], [b]),
                   "where": (L.where(a > 0, a, b), [b]), "cat": (L.cat([a, b]), [a]),
                   "grad": (a * b, None)}[case]
        seen = []
        z.grad_fn.register_hook(lambda gi, go: seen.append(gi))
        if want is None:
            L.autograd.grad(z.sum(), [b])
        else:
            z.sum().backward(inputs=want)
        return py(seen)
    same_as_torch(scenario)


@pytest.mark.parametrize("tensors", ["a b", "a c", "c d", "a e", "b d e", "c e"])
@pytest.mark.parametrize("call", ["grad of a", "grad of c", "grad of a e", "grad of d",
                                  "grad_outputs of a", "grad_outputs of c", "inputs a",
                                  "inputs c", "inputs e", "backward"])
@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hooks_fire_with_pytorchs_tensors_under_grad_and_inputs(tensors, call, mode):
    # a backward of one root starts at that root's node, which PyTorch does not count as a
    # node the graph task executes: an "all" hook on it and on another tensor fires once per
    # gradient; gradients the task does not compute are None
    def scenario(L):
        log = []
        a = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        b = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = a * b
        d = c.exp()
        e = L.tensor([1.5, 0.5, 1.0], requires_grad=True)
        env = {"a": a, "b": b, "c": c, "d": d, "e": e}
        ts = [env[n] for n in tensors.split()]
        L.autograd.graph.register_multi_grad_hook(ts, lambda gs: log.append(py(gs)), mode=mode)
        loss = (d * 2).sum() + (c * e).sum()
        kind, _, names = call.partition(" of ")
        ins = [env[n] for n in (names or call.partition(" ")[2]).split()]
        try:  # a hook on a leaf that autograd.grad captures raises PyTorch's leaf error
            if kind == "grad":
                L.autograd.grad(loss, ins, allow_unused=True)
            elif kind == "grad_outputs":
                L.autograd.grad([d], ins, grad_outputs=[L.ones(3) * 3], allow_unused=True)
            elif call == "backward":
                loss.backward()
            else:
                loss.backward(inputs=ins)
        except RuntimeError as err:
            log.append(str(err))
        return log
    same_as_torch(scenario, tol=1e-4)


@pytest.mark.parametrize("dim", [None, 1])
def test_aminmax_packs_its_input_then_max_then_min(dim):
    # PyTorch's AminmaxBackward0 saves self, max and min: pack hooks see all three
    def scenario(L):
        a = L.tensor([[0.75, -0.5, -1.5], [-0.25, 0.5, -0.125]], requires_grad=True)
        seen = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append(py(t)) or t,
                                                  lambda t: t):
            lo, hi = L.aminmax(a, dim=dim) if dim is not None else L.aminmax(a)
        (lo.sum() + hi.sum()).backward()
        return {"seen": seen, "grad": py(a.grad)}
    got = same_as_torch(scenario)
    assert got["seen"][1:] == ([[0.75, 0.5], [-1.5, -0.25]] if dim else [0.75, -1.5])


@pytest.mark.parametrize("values", [([2.0], [0.5]), ([0.5], [2.0]), ([0.5], [float("nan")]),
                                    ([float("nan")], [-1.0]), ([0.25], [1.0])])
def test_binary_cross_entropy_checks_input_then_target(values):
    # PyTorch's kernel refuses probabilities outside [0, 1], the input's first
    # (and, as PyTorch's, its node packs input and target before the refusal)
    def scenario(L):
        x, t = (L.tensor(v) for v in values)
        seen = []
        with L.autograd.graph.saved_tensors_hooks(lambda p: seen.append(py(p)) or p,
                                                  lambda p: p):
            try:
                return py(L.nn.functional.binary_cross_entropy(x.requires_grad_() * 1, t))
            except RuntimeError as e:
                return [str(e), seen]
    got = same_as_torch(scenario)
    assert isinstance(got, float) or got[0].startswith("all elements of") and len(got[1]) == 2


def test_unfold_is_a_view_that_writes_reach():
    def scenario(L):
        x = L.tensor([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]], requires_grad=True)
        leaf = raises(lambda: x.unfold(1, 2, 1).__setitem__(Ellipsis, 0.25))
        a = x * 1
        y = a.unfold(1, 2, 2)
        geom = [list(y.shape), list(y.stride()), y._base is a, type(y.grad_fn).__name__]
        y[0] = 3.0  # writes reach a
        t = a.t().unfold(0, 3, 1)  # a window view of a transposed view
        (a * x).sum().backward()
        return {"leaf": leaf, "geom": geom, "a": py(a), "t": [py(t), list(t.stride())],
                "nodes": [type(a.grad_fn).__name__, type(y.grad_fn).__name__],
                "grad": py(x.grad)}
    got = same_as_torch(scenario)
    assert got["leaf"]["message"] == ("a view of a leaf Variable that requires grad is being "
                                      "used in an in-place operation.")
    assert got["geom"] == [[2, 2, 2], [4, 2, 1], True, "UnfoldBackward0"]
    assert got["a"][0] == [3.0, 3.0, 3.0, 3.0] and got["nodes"] == ["CopySlices",
                                                                   "AsStridedBackward0"]


@pytest.mark.parametrize("write", ["a.fill_(0.5)", "a[0].fill_(0.5)", "a.t_()",
                                   "a.unfold(1, 2, 1)[...] = 0.5", "a.mul_(2)"])
def test_a_view_made_to_require_grad_is_a_view_of_a_leaf(write):
    # arange(6.).reshape(2, 3) is a view of a leaf that does not require grad; made to
    # require grad, an in-place write through it fails as through a view of such a leaf
    def scenario(L):
        a = L.arange(6.0).reshape(2, 3).requires_grad_()
        return raises(lambda: exec(write, {"a": a}))
    got = same_as_torch(scenario)
    assert got["message"] == ("a view of a leaf Variable that requires grad is being used in "
                              "an in-place operation.")


@pytest.mark.parametrize("case", ["non-contiguous 3-d", "contiguous 4-d, 2-d bias"])
def test_linear_adds_the_bias_in_place_where_pytorch_does_not_fold_the_rows(case):
    """PyTorch runs addmm on the input's rows only for a contiguous input of 3 dimensions
    or with a 1-d bias; otherwise matmul then an in-place add, with add's errors (fuzz
    eager seed 2106)."""
    def scenario(L):
        if case == "non-contiguous 3-d":
            x, w, b = L.ones(3, 3, 4)[..., 2:], L.ones(2, 1), L.tensor([1.0, 2.0, 3.0])
        else:
            x, w, b = L.ones(2, 3, 3, 2), L.ones(1, 2), L.ones(3, 3)
        return raises(lambda: L.nn.functional.linear(x, w, b))
    got = same_as_torch(scenario)
    assert got["raises"] == "RuntimeError"


def _pack_log(L, fn):
    # every pack and unpack while ``fn`` records and backpropagates: (event, shape)
    log = []

    def hook(event):
        return lambda t: log.append([event, list(t.shape)]) or t
    with L.autograd.graph.saved_tensors_hooks(hook("pack"), hook("unpack")):
        out = fn()
    out.pow(2).sum().backward()
    return log


@pytest.mark.parametrize("center", [False, True])
def test_istft_saves_the_window_and_envelope_with_a_leading_batch_dim(center):
    """istft multiplies by ``window.view(1, 1, n_fft)`` and divides by a ``(1, length)``
    envelope, which pack hooks see; the envelope is differentiable in the window (fuzz
    eager seed 1531)."""
    def scenario(L):
        a = L.tensor([[[0.75, 1.5], [0.5, -1.5], [-0.5, 0.25]],
                      [[-1.0, 1.5], [1.25, 0.75], [-1.5, 1.0]],
                      [[0.25, -0.75], [1.0, 0.5], [0.5, 1.25]]], requires_grad=True)
        w = L.tensor([0.25, 1.0, 1.0, 0.5], requires_grad=True)
        log = _pack_log(L, lambda: L.istft(L.view_as_complex(a), 4, hop_length=1,
                                           center=center, window=w))
        return {"log": log, "a": py(a.grad), "w": py(w.grad)}
    got = same_as_torch(scenario)
    assert got["log"][:2] == [["pack", [1, 1, 4]], ["pack", [1, 3, 4]]]
    assert ["pack", [1, 2 if center else 6]] in got["log"]


def test_istft_divides_by_the_overlap_of_a_complex_windows_squares():
    # PyTorch's envelope is ``window.pow(2)`` added up, complex for a complex window
    def scenario(L):
        z = L.tensor([[1.0, 2.0, 0.5, 1.5, -1.0], [0.5, -1.0, 2.0, 1.0, 0.25],
                      [1.5, 0.5, -0.5, 2.0, 1.0], [0.25, 1.0, 1.5, -1.0, 0.5]]) * (1 + 0.5j)
        w = L.tensor([1.0 + 0.5j, 1.0 - 0.25j, 0.5 + 0.5j, 1.0 + 0j])
        y = L.istft(z, 4, hop_length=1, window=w, return_complex=True, onesided=False)
        return py(L.view_as_real(y))
    same_as_torch(scenario)


def test_istft_refuses_a_window_of_another_length_with_its_own_words():
    def scenario(L):
        z = L.ones(3, 5, dtype=L.complex64)
        return raises(lambda: L.istft(z, 4, hop_length=1, win_length=3, window=L.ones(4)))
    got = same_as_torch(scenario)
    assert got["message"].endswith("Invalid window shape. window has to be 1D and length of "
                                   "`win_length`")


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_reflection_and_replication_pads_save_their_input(mode):
    """So stft's centring pad packs the ``(1, B, n)`` signal first (fuzz eager seed 2528)."""
    def scenario(L):
        a = L.tensor([[1.5, -0.5, 0.25, 1.0, 2.0], [0.5, 0.75, -1.0, 1.25, 0.0]],
                     requires_grad=True)
        log = _pack_log(L, lambda: L.nn.functional.pad(a.view(1, 2, 5), [2, 1], mode))
        spec = _pack_log(L, lambda: L.view_as_real(L.stft(
            a, 4, hop_length=2, window=L.hann_window(4), return_complex=True, pad_mode=mode)))
        return {"log": log, "stft": spec, "grad": py(a.grad)}
    got = same_as_torch(scenario)
    assert got["log"] == [["pack", [1, 2, 5]], ["unpack", [1, 2, 5]]]
    assert got["stft"][:3] == [["pack", [1, 2, 5]], ["pack", [4]], ["pack", [2, 3, 4]]]


@pytest.mark.parametrize("needs", ["both", "real", "imag"])
def test_complex_saves_each_part_for_its_own_gradient_imag_first(needs):
    """``complex(real, imag)`` saves ``imag`` then ``real``, each only when its gradient is
    needed (fuzz eager seed 2694)."""
    def scenario(L):
        r = L.tensor([1.5, 2.0], requires_grad=needs in ("both", "real"))
        i = L.tensor([-0.5, 0.25], requires_grad=needs in ("both", "imag"))
        seen = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append(py(t)) or t,
                                                  lambda t: t):
            z = L.complex(r, i)
        saved = [py(z.grad_fn._saved_real), py(z.grad_fn._saved_imag)]
        (z * z).abs().sum().backward()
        return {"seen": seen, "saved": saved, "grads": [py(r.grad), py(i.grad)]}
    got = same_as_torch(scenario)
    assert got["seen"] == {"both": [[-0.5, 0.25], [1.5, 2.0]], "real": [[1.5, 2.0]],
                           "imag": [[-0.5, 0.25]]}[needs]


def test_svd_saves_the_singular_values_before_the_vectors():
    """LinalgSvdBackward0 packs ``S``, ``U``, ``Vh`` in that order (fuzz eager seed 2794;
    the vectors' signs and the input hookgrad's vjp packs after them are
    docs/differences.md's)."""
    def scenario(L):
        a = L.tensor([[1.5, -1.75, 0.5], [2.0, 1.5, 0.75], [-1.0, 0.5, 0.25],
                      [0.5, 0.0, -1.25]], requires_grad=True)
        shapes = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(list(t.shape)) or t,
                                                  lambda t: t):
            L.linalg.svd(a)
            L.linalg.svdvals(a)
        return shapes[:3] + shapes[4:7] if len(shapes) == 8 else shapes
    got = same_as_torch(scenario)
    assert got == [[3], [4, 4], [3, 3], [3], [4, 3], [3, 3]]


@pytest.mark.parametrize("eq,kinds", [
    ("ij,kj->ik", "bf"), ("ij,kj->ik", "fb"), ("ij,kj->ik", "bl"), ("ij,kj->ik", "fl"),
    ("ij,kj->ik", "fd"), ("ij,ij->ij", "bf"), ("ij,kj->i", "bb"), ("ij,j->i", "bb"),
    ("i,j->ij", "bb"), ("ij,jk->k", "bb"), ("ij,ik->", "bb"), ("i,i,i->", "bbb"),
    ("bij,bjk->bik", "bb"), ("...j,kj->...k", "bb"), ("ij,jk->ik", "ll")])
def test_einsum_of_bools_and_mixed_dtypes_follows_pytorchs_pairwise_steps(eq, kinds):
    """PyTorch contracts pairwise: ``bmm`` (no bool kernel, one dtype) where a label is
    summed over both operands, ``mul`` where none is, ``sum`` (int64) of a label only one
    operand has."""
    def scenario(L):
        dtypes = {"b": L.bool, "f": L.float32, "d": L.float64, "l": L.int64}
        shapes = {"ij,jk->k": [(2, 1), (1, 3)], "bij,bjk->bik": [(1, 2, 3), (1, 3, 2)],
                  "ij,jk->ik": [(2, 3), (3, 2)]}.get(eq)
        terms = eq.split("->")[0].split(",")
        shapes = shapes or [tuple({"i": 2, "j": 3, "k": 2}[c] for c in t.replace("...", "i"))
                            for t in terms]
        xs = [L.ones(s, dtype=dtypes[k]) for s, k in zip(shapes, kinds)]
        try:
            out = L.einsum(eq, *xs)
        except Exception as e:  # noqa: BLE001 - the type and words are compared
            return {"error": [type(e).__name__, str(e)]}
        return {"dtype": str(out.dtype).split(".")[-1], "value": py(out)}
    got = same_as_torch(scenario)
    assert set(got) in ({"error"}, {"dtype", "value"})


def test_einsum_names_a_label_whose_sizes_do_not_broadcast_before_its_dtype_checks():
    def scenario(L):
        b = L.ones(2, 3, dtype=L.bool)
        return raises(lambda: L.einsum("ij,jk->ik", b, b))
    got = same_as_torch(scenario)
    assert got["message"] == ("einsum(): subscript j has size 2 for operand 1 which does not "
                              "broadcast with previously seen size 3")


def _error(fn):
    # the exception's type and words, compared whole by same_as_torch
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, str(e)]
    return None


@pytest.mark.parametrize("case", [
    "self smaller", "self of fewer dims", "mask narrower", "0-d self", "int mask",
    "byte mask", "long self", "long source", "short source", "byte mask+self of fewer dims",
    "int mask+long source", "long source+self of fewer dims"])
@pytest.mark.parametrize("inplace", [True, False])
def test_masked_scatter_refuses_what_cannot_be_written_with_pytorchs_words(case, inplace):
    """In place, ``mask`` expands to ``self`` (``self`` cannot grow); out of place both
    broadcast. The checks come in PyTorch's order and name its scalar types."""
    def scenario(L):
        m = L.tensor([[True, False, True], [False, True, True]])
        self_, mask, src = L.zeros(2, 3), m, L.arange(6.0)
        changes = {"self smaller": lambda: (L.zeros(1, 3), mask, src),
                   "self of fewer dims": lambda: (L.zeros(3), mask, src),
                   "mask narrower": lambda: (self_, m[:, :2], src),
                   "0-d self": lambda: (L.tensor(0.0), mask, src),
                   "int mask": lambda: (self_, m.int(), src),
                   "byte mask": lambda: (self_, m.to(L.uint8), src),
                   "long self": lambda: (self_.long(), mask, src),
                   "long source": lambda: (self_, mask, L.arange(6)),
                   "short source": lambda: (self_, mask, L.arange(2.0))}
        for part in case.split("+"):
            self_, mask, src = changes[part]()
        name = "masked_scatter_" if inplace else "masked_scatter"
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            error = _error(lambda: getattr(self_, name)(mask, src))
        return {"error": error, "warned": [str(w.message).split(" (Triggered")[0]
                                           for w in seen]}
    got = same_as_torch(scenario)
    assert got["error"] is not None or not inplace and case in ("self smaller",
                                                                "self of fewer dims",
                                                                "0-d self")


@pytest.mark.parametrize("case", ["0-d other of float64", "0-d other, float16 self",
                                  "other a number", "int self"])
@pytest.mark.parametrize("inplace", [True, False])
def test_nextafter_promotes_as_pytorch_and_refuses_with_its_words(case, inplace):
    """A 0-d ``other`` lifts the kind only (float32 stays float32: the next float32 after
    0 is 1.4e-45, not float64's 5e-324 rounded to 0)."""
    def scenario(L):
        x, other = L.zeros(3), L.tensor(1.0, dtype=L.float64)
        if case == "0-d other, float16 self":
            x = x.half()
        elif case == "other a number":
            other = 1.0
        elif case == "int self":
            x, other = x.long(), L.ones(3)
        try:
            out = x.nextafter_(other) if inplace else L.nextafter(x, other)
        except Exception as e:  # noqa: BLE001 - the type and words are compared
            return {"error": [type(e).__name__, str(e)]}
        return {"dtype": str(out.dtype).split(".")[-1], "value": py(out)}
    got = same_as_torch(scenario)
    if case.startswith("0-d"):
        assert got["value"][0] > 0


@pytest.mark.parametrize("dim", [0, -1, 1])
def test_repeat_interleave_of_a_0d_tensor_along_a_dim_raises_pytorchs_index_error(dim):
    def scenario(L):
        x = L.tensor(3.0)
        return {"dim": _error(lambda: x.repeat_interleave(2, dim=dim)),
                "flat": py(x.repeat_interleave(2)),
                "negative": _error(lambda: x.repeat_interleave(-1, dim=dim))}
    got = same_as_torch(scenario)
    assert got["dim"][0] == "IndexError" and got["flat"] == [3.0, 3.0]


@pytest.mark.parametrize("fn", ["linalg.cross", "cross"])
def test_cross_packs_other_before_self_and_keeps_its_gradients(fn):
    """PyTorch's LinalgCrossBackward0 saves ``other`` (read by ``self``'s gradient) before
    ``self``; each saved as given, before broadcasting."""
    def scenario(L):
        a = L.tensor([[1.5, -0.75], [-0.5, 1.0], [-1.5, -1.25]], requires_grad=True)
        b = L.tensor([[0.25], [-0.75], [0.5]], requires_grad=True)
        f = L.linalg.cross if fn == "linalg.cross" else L.cross
        y, seen = _packed(L, lambda: f(a, b, dim=0))
        (y * L.tensor([[1.0, 2.0]])).sum().backward()
        return {"seen": seen, "y": y.tolist(), "a": a.grad.tolist(), "b": b.grad.tolist()}
    assert same_as_torch(scenario)["seen"] == [[3, 1], [3, 2]]


def test_diag_embed_of_negative_values_has_positive_zeros_off_the_diagonal():
    """Off its diagonal, diag_embed writes +0.0 whatever the values' signs (a product with
    the identity gave -0.0 beside a negative value: atan2 then differed by pi)."""
    def scenario(L):
        x = L.tensor([[-1.5, 1.25, -0.5]], requires_grad=True)
        y = x.diag_embed(-1, 0, 2)
        z = L.atan2(y, L.tensor([[[-0.5]], [[2.0]], [[1.0]], [[-3.0]]]))
        z.sum().backward()
        return {"signs": (L.signbit(y) & (y == 0)).tolist(), "z": z.tolist(),
                "g": x.grad.tolist()}
    assert not any(v for page in same_as_torch(scenario)["signs"] for row in page
                   for v in row)


def test_copysign_double_backward_is_nan_where_self_is_zero_as_pytorchs():
    """PyTorch's copysign gradient is ``result / self`` with 0 where ``self`` is 0; its own
    derivative there is 0 / 0, so a double backward gives nan at a zero ``self``."""
    def scenario(L):
        a = L.tensor([[0.0, 2.0, -1.5, 0.0]], requires_grad=True)
        b = L.tensor([[1.0, -3.0, 2.0, -1.0]], requires_grad=True)
        y = L.copysign(a, a) * L.copysign(a, b)
        g, gb = L.autograd.grad(y.sum(), [a, b], create_graph=True)
        (g * g).sum().backward()
        return {"g": g.tolist(), "gb": gb.tolist(), "a": [str(v) for v in a.grad[0].tolist()]}
    assert same_as_torch(scenario)["a"][0] == "nan"


def test_ihfftn_gives_pytorchs_transposed_strides():
    """PyTorch's ihfftn/ihfft2 lay their result out by its kernels' strides (transposed for
    a matrix), so a Linear of it takes the matmul path; a write into it still works."""
    def scenario(L):
        a = L.tensor([[1.0, 0.75, 1.25, 0.5], [-0.75, -0.25, 0.5, 1.0], [-0.5, 0.25, 0.0, -1.5]],
                     requires_grad=True)
        b = L.stack([a, a * 2]).transpose(0, 2)
        got = [list(L.fft.ihfftn(a).stride()), list(L.fft.ihfft2(a).stride())]
        got += [list(L.fft.ihfftn(b, dim=d).stride()) for d in (None, (0, 2), (2, 0))]
        got += [list(L.fft.ihfft2(b, dim=d).stride()) for d in ((-2, -1), (0, 1))]
        y = L.view_as_real(L.fft.ihfft2(a))
        lin = L.nn.functional.linear(y, L.ones(2, 2))
        lin.sum().backward()
        z = L.fft.ihfftn(a.detach())
        z.mul_(2)
        return got, lin.grad_fn.name(), a.grad.tolist(), z.is_contiguous(), z._base is None
    got = same_as_torch(scenario)
    assert got[0][0] == [1, 3] and got[3] is False


def test_a_vector_changed_in_place_after_its_matmul_fails_the_saved_version_check():
    """``v @ m`` saves ``v.unsqueeze(0)``, a view sharing ``v``'s version counter: a write
    into ``v`` then fails the backward (whichever input's gradient is asked for), as
    PyTorch's MmBackward0 unpacks both its saved tensors."""
    def scenario(L):
        a = L.tensor([-2.0, -1.5], requires_grad=True)
        m = L.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True)
        v = a * 1
        y = v @ m
        v[0] = 0.5
        return [raises(lambda: L.autograd.grad(y.sum(), [x], retain_graph=True))
                for x in (a, m)]
    got = same_as_torch(scenario)
    assert all("modified by an inplace operation" in str(r) for r in got)


def test_addcdiv_packs_tensor1_before_tensor2():
    """PyTorch 2.13's AddcdivBackward0 packs tensor1, then tensor2 (its ``_saved_*`` order)."""
    def scenario(L):
        a = L.tensor([[-1.5, -0.5]], requires_grad=True)
        b = L.tensor([[-1.0, 0.75]], requires_grad=True)
        t2 = a * a + 0.5
        seen = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.tolist()) or t,
                                                  lambda t: t):
            L.addcdiv(a, b, t2, value=2)
        return seen
    assert same_as_torch(scenario)[0] == [[-1.0, 0.75]]


def test_addcmul_packs_tensor1_before_tensor2():
    """PyTorch 2.13's AddcmulBackward0 packs tensor1, then tensor2, as its addcdiv's (the
    fuzz tier found it once the op table's eigvals row changed its draws)."""
    def scenario(L):
        a = L.tensor([[-1.5, -0.5]], requires_grad=True)
        b = L.tensor([[-1.0, 0.75]], requires_grad=True)
        seen = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.tolist()) or t,
                                                  lambda t: t):
            L.addcmul(a, b, a * 2, value=2)
        return seen
    assert same_as_torch(scenario)[0] == [[-1.0, 0.75]]


def test_polar_inputs_changed_in_place_do_not_fail_the_backward():
    """PyTorch's PolarBackward0 saves only the result: writing ``angle`` in place after
    ``polar`` leaves the backward working (and its gradients PyTorch's)."""
    def scenario(L):
        r = L.tensor([1.5, 0.5], requires_grad=True)
        t = L.tensor([0.25, -1.0], requires_grad=True)
        angle = t * 1
        z = L.view_as_real(L.polar(r, angle))
        angle[0] = 0.5
        return raises(lambda: (z * z).sum().backward())
    assert same_as_torch(scenario) == {"returned": True}


@pytest.mark.xfail(strict=True, reason="issue 32: Tensor.resize_as returns a new tensor, not "
                   "PyTorch's view made inside the Resize Function (KNOWN_BUGS rule "
                   "resize_is_not_a_custom_view)")
def test_a_write_into_resize_as_raises_as_pytorchs():
    """PyTorch's ``Resize`` Function returns a view of its input: writing into it (here
    through ``select``) is refused as for any view made inside a custom Function."""
    def scenario(L):
        a = L.tensor([[0.25, 1.25, 2.0, 0.5], [1.0, 0.75, 0.5, 1.5]], requires_grad=True)
        b = L.zeros(4, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = a.resize_as(b)

        def write():
            y[..., 0] = 0.5
        return raises(write)
    got = same_as_torch(scenario)
    assert got["raises"] == "RuntimeError" and "custom Function" in got["message"], got


@pytest.mark.xfail(strict=True, reason="issue 32: hookgrad gives zeros (KNOWN_BUGS rule "
                   "unused_foreach_output_gets_zeros)")
def test_an_unused_foreach_output_gives_its_input_no_gradient():
    """PyTorch's ``_foreach_add`` node gives no gradient (None) to the input of an output
    the loss does not use."""
    def scenario(L):
        w = L.tensor([1.5, 2.0, -0.5], requires_grad=True)
        x = L.tensor([[0.25, -1.0, 1.5], [1.0, 0.5, -0.75]], requires_grad=True)
        y = L._foreach_add([x, w], 2.0)[0]
        g = L.autograd.grad((y * y).sum(), [w], allow_unused=True)[0]
        return None if g is None else g.tolist()
    assert same_as_torch(scenario) is None


@pytest.mark.xfail(strict=True, reason="issue 32: ldexp packs a third value (KNOWN_BUGS rule "
                   "ldexp_packs_a_third_value)")
def test_ldexp_packs_what_pytorch_packs():
    """PyTorch's LdexpBackward0 packs ``other`` then ``self``."""
    def scenario(L):
        log = []
        x = L.tensor([[2.0, -1.5, 1.25, -1.5], [-0.5, 1.75, 1.25, 1.0]], requires_grad=True)

        def pack(t):
            log.append((tuple(t.shape), str(t.dtype).split(".")[-1]))
            return t
        with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            L.ldexp(x, L.tensor([1, 2, 0, 3]))
        return log
    assert same_as_torch(scenario) == [((4,), "int64"), ((2, 4), "float32")]


def test_cdist_packs_x1_x2_then_its_result():
    """PyTorch 2.13's CdistBackward0 packs x1, x2, then the result (the fuzz tier's slow
    test found it once the linalg.eig op-table row changed its draws)."""
    def scenario(L):
        a = L.tensor([[-2.0, -1.5, 0.5], [1.0, 0.25, 2.0]], requires_grad=True)
        b = L.tensor([[0.5, 1.0, -1.0]], requires_grad=True)
        seen = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append(list(t.shape)) or t,
                                                  lambda t: t):
            L.cdist(a, b).sum().backward()
        return seen
    assert same_as_torch(scenario) == [[2, 3], [1, 3], [2, 1]]


@pytest.mark.parametrize("make", ["ihfft2", "transpose"])
def test_view_as_real_keeps_its_inputs_layout(make):
    """PyTorch's ``view_as_real`` keeps its input's strides (doubled, each pair innermost),
    so a Linear of ``view_as_real(fft.ihfft2(x))`` (fuzz seed 1736) takes matmul's path, as
    of any permuted input: AddBackward0 over UnsafeViewBackward0, not addmm's ViewBackward0;
    ``view_as_complex`` keeps the pairs' layout back."""
    def scenario(L):
        x = L.tensor([[1.0, 0.71, 1.21, 0.88], [-0.7, -0.05, 0.49, 1.12],
                      [-0.11, 0.39, -0.24, -1.43]], requires_grad=True)
        z = L.fft.ihfft2(x) if make == "ihfft2" else L.complex(x, x * 0.5).t()
        r = L.view_as_real(z)
        lin = L.nn.Linear(2, 2)
        with L.no_grad():
            lin.weight.copy_(L.tensor([[0.5, -0.25], [1.5, 0.75]]))
            lin.bias.fill_(0.125)
        y = lin(r)
        y.clamp_(-1, 1)
        y.sum().backward()
        back = L.view_as_complex(r.detach())
        return {"stride": list(r.stride()), "contiguous": r.is_contiguous(),
                "node": type(y.grad_fn).__name__,
                "next": [type(n).__name__ for n, _ in y.grad_fn.next_functions],
                "back": list(back.stride()), "grad": x.grad.tolist()}
    got = same_as_torch(scenario, names=False)
    assert got["stride"][0] == 2 and got["stride"][-1] == 1 and not got["contiguous"]
    assert got["node"] == "ClampBackward1"
