"""The smaller autograd surface: engine switches, Variable, ``_C._autograd`` and
``_C._functions``, node calls and metadata, ``allow_mutation_on_saved_tensors``'s context,
``_foreach_*`` ops, ``set_``/``resize_``. Each scenario runs under PyTorch too when installed."""
import gc

import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch


# --------------------------------------------------------------------------- engine switches


def test_force_original_view_tracking_sets_at_once_and_restores():
    def f(L):
        C = L._C
        before = C._is_view_replay_enabled()
        with L.autograd._force_original_view_tracking(True):
            inside = C._is_view_replay_enabled()
        after = C._is_view_replay_enabled()
        L.autograd._force_original_view_tracking(True)  # a plain call sets it
        called = C._is_view_replay_enabled()
        L.autograd._force_original_view_tracking(False)
        return [before, inside, after, called, C._is_view_replay_enabled()]
    assert same_as_torch(f) == [False, True, False, True, False]


def test_force_original_view_tracking_as_decorator():
    def f(L):
        @L.autograd._force_original_view_tracking(True)
        def g():
            return L._C._is_view_replay_enabled()
        return [L._C._is_view_replay_enabled(), g(), L._C._is_view_replay_enabled()]
    assert same_as_torch(f) == [False, True, False]


def test_set_multithreading_enabled_context_and_call():
    def f(L):
        C = L._C
        with L.autograd.set_multithreading_enabled(False):
            inside = C._is_multithreading_enabled()
            x = L.tensor([1.0, 2.0], requires_grad=True)
            (x * x).sum().backward()
        return [inside, C._is_multithreading_enabled(), py(x.grad)]
    assert same_as_torch(f) == [False, True, [2.0, 4.0]]


def test_unsafe_preserve_version_counter():
    def f(L):
        x = L.ones(2, requires_grad=True).clone()
        x.add_(1)
        with L.autograd._unsafe_preserve_version_counter(x):
            x.mul_(2)
            x.mul_(3)
        y = L.ones(2).clone()
        with L.autograd._unsafe_preserve_version_counter((x, y)):
            x.mul_(2)
            y.mul_(2)
        return [x._version, y._version, py(x)]
    assert same_as_torch(f) == [1, 0, [24.0, 24.0]]


def test_unsafe_set_version_counter_errors():
    def f(L):
        x = L.ones(2)
        L._C._autograd._unsafe_set_version_counter((x,), (5,))
        return [x._version, raises(L._C._autograd._unsafe_set_version_counter, (x,), (-1,)),
                raises(L._C._autograd._unsafe_set_version_counter, (x,), (1, 2))]
    got = same_as_torch(f)
    assert got[0] == 5 and got[1]["raises"] == "RuntimeError"
    with pytest.raises(RuntimeError, match="Cannot set a version_counter to a value below 0"):
        hg._C._autograd._unsafe_set_version_counter((hg.ones(1),), (-1,))


# --------------------------------------------------------------------------- Variable


def test_variable_returns_a_new_leaf_tensor():
    def f(L):
        t = L.ones(2) * 3
        v = L.autograd.Variable(t, requires_grad=True)
        w = L.autograd.Variable(t)
        z = L.ones(2, requires_grad=True) * 2
        d = L.autograd.Variable(z)
        return [type(v).__name__, v is t, v.requires_grad, v.is_leaf, t.requires_grad,
                w.requires_grad, d.grad_fn is None, isinstance(t, L.autograd.Variable),
                py(v), hasattr(L.autograd.Variable, "_execution_engine")]
    assert same_as_torch(f) == ["Tensor", False, True, True, False, False, True, True,
                                [3.0, 3.0], True]


def test_variable_rejects_non_tensors():
    def f(L):
        return raises(L.autograd.Variable, [1.0])
    assert same_as_torch(f)["message"] == "Variable data has to be a tensor, but got list"
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        hg.autograd.Variable([1.0])


# --------------------------------------------------------------------------- _C


def test_saved_tensors_hooks_is_enabled():
    def f(L):
        A = L._C._autograd
        out = [A._saved_tensors_hooks_is_enabled()]
        with L.autograd.graph.disable_saved_tensors_hooks("no"):
            out.append(A._saved_tensors_hooks_is_enabled())
        out.append(A._saved_tensors_hooks_is_enabled())
        return out
    assert same_as_torch(f) == [True, False, True]


def test_current_graph_task_keep_graph():
    def f(L):
        seen = []
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: seen.append(L._C._autograd._get_current_graph_task_keep_graph()))
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return seen + [L._C._autograd._get_current_graph_task_keep_graph()]
    assert same_as_torch(f) == [True, False, True]


def test_make_saved_tensor_runs_pack_once_and_unpack_each_time():
    def f(L):
        counts = [0, 0]

        def pack(t):
            counts[0] += 1
            return t

        def unpack(t):
            counts[1] += 1
            return t
        a = L.tensor([1.0, 2.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            s = L._C._autograd._make_saved_tensor(a, is_output=False)
            after_pack = list(counts)
            u1, u2 = s.unpack(), s.unpack()
        return [after_pack, counts, py(u1), py(u2)]
    assert same_as_torch(f) == [[1, 0], [1, 2], [1.0, 2.0], [1.0, 2.0]]


def test_weak_tensor_ref_expires():
    def f(L):
        x = L.ones(2, requires_grad=True)
        y = x * 2
        ref = L._C._WeakTensorRef(y)
        alive = ref.expired()
        del y
        gc.collect()
        return [alive, ref.expired()]
    assert same_as_torch(f) == [False, True]
    with pytest.raises(TypeError, match="expected a Tensor"):
        hg._C._WeakTensorRef(1)


def test_delayed_error_raises_when_backward_reaches_it():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.tensor([3.0, 4.0], requires_grad=True)
        ys = L._C._functions.DelayedError("Boom!", 1)(y)
        out = (x * ys).sum()
        gx = L.autograd.grad(out, x, retain_graph=True)  # does not reach the node
        gys = L.autograd.grad(out, ys, retain_graph=True)
        err = raises(L.autograd.grad, out, y)
        return [py(gx), py(gys), err, ys.grad_fn.name(), len(ys.grad_fn.next_functions),
                raises(L._C._functions.DelayedError("Boom!", 2), x)]
    got = same_as_torch(f)
    assert got[2] == {"raises": "RuntimeError", "message": "Boom!"}
    assert got[5]["message"] == "expected 2 arguments, got 1 instead"


def test_undefined_grad_node_stops_gradient():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([1.0, 2.0], requires_grad=True)
        u = L._C._functions.UndefinedGrad()(x)
        ((u + w) * 2).sum().backward()
        return [x.grad, py(w.grad), u.grad_fn.name()]
    assert same_as_torch(f) == [None, [2.0, 2.0], "torch::autograd::UndefinedGradBackward"]


def test_functions_accumulate_grad_is_the_leaf_node_class():
    x = hg.ones(2, requires_grad=True)
    node = (x * 2).grad_fn.next_functions[0][0]
    assert isinstance(node, hg._C._functions.AccumulateGrad)
    assert issubclass(hg._C._functions.DelayedError, hg.autograd.graph.Node)


# --------------------------------------------------------------------------- Node API


def test_node_sequence_nr_orders_ready_nodes():
    def f(L):
        x, y, z = (L.ones(2, requires_grad=True) for _ in range(3))
        a, b = x + y, y + z
        c = a + b
        a.grad_fn._set_sequence_nr(100)
        b.grad_fn._set_sequence_nr(99)
        c.grad_fn._set_sequence_nr(98)
        order = []
        for name, t in (("a", a), ("b", b), ("c", c)):
            t.register_hook(lambda g, name=name: order.append(name))
        c.sum().backward()
        return [a.grad_fn._sequence_nr(), c.grad_fn._sequence_nr(), order]
    assert same_as_torch(f) == [100, 98, ["c", "a", "b"]]


def test_node_input_metadata():
    def f(L):
        x = L.ones(2, 3, requires_grad=True)
        m = (x * 2).grad_fn._input_metadata[0]
        acc = (x * 2).grad_fn.next_functions[0][0]._input_metadata[0]
        return [list(m.shape), str(m.dtype).split(".")[-1], m.device.type, list(acc.shape)]
    assert same_as_torch(f) == [[2, 3], "float32", "cpu", [2, 3]]


def test_calling_a_node_runs_its_backward():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.tensor([3.0, 4.0], requires_grad=True)
        gx, gy = (x * y).grad_fn(L.ones(2))
        ge = x.exp().grad_fn(L.ones(2))
        none = (x * y).grad_fn(None)
        acc = (x * y).grad_fn.next_functions[0][0]
        acc_out = acc(L.ones(2))
        return [py(gx), py(gy), py(ge), list(none), list(acc_out), py(x.grad), gx.requires_grad]
    got = same_as_torch(f, tol=1e-4)
    assert got[:2] == [[3.0, 4.0], [1.0, 2.0]] and got[3:] == [[None, None], [], [1.0, 1.0],
                                                                True]


def test_calling_a_node_with_wrong_arguments():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        fn = (x * 2).grad_fn
        return [raises(fn, L.ones(2), L.ones(2)), raises(fn), raises(fn, 1)]
    got = same_as_torch(f)
    assert [g["message"] for g in got] == ["expected 1 arguments, got 2 instead",
                                           "expected 1 arguments, got 0 instead",
                                           "argument 0 is not a Variable"]
    with pytest.raises(TypeError, match=r"expected 1 arguments, got 2 instead"):
        (hg.ones(1, requires_grad=True) * 2).grad_fn(hg.ones(1), hg.ones(1))


# --------------------------------------------------------------------------- mutation on saved


def test_allow_mutation_context_tracks_saved_and_modified_values():
    def f(L):
        out = []
        with L.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = L.tensor([0.5, 1.0], requires_grad=True).clone()
            b = a ** 2
            out.append(len(ctx.tid_to_weakhandle))
            a.sin_()
            c = a ** 2
            a.sin_()
            out.append(len(ctx.cloned))
            del b
            out.append(len(ctx.cloned))
            c.sum().backward()
            del c
            out.append(len(ctx.cloned))
        out.append([len(ctx.cloned), len(ctx.original), len(ctx.tid_to_weakhandle),
                    len(ctx.sid_to_tid)])
        return out
    assert same_as_torch(f) == [1, 2, 1, 0, [0, 0, 0, 0]]


def test_allow_mutation_backward_uses_saved_values():
    def f(L):
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            a = L.tensor([0.5, 1.0], requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.backward()
        return py(a.grad)
    assert same_as_torch(f) == [1.0, 2.0]


def test_backward_outside_the_mutation_context_raises_assertion_error():
    def f(L):
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            a = L.tensor([1.0, 2.0], requires_grad=True)
            out = (a ** 2).sum()
        outside = raises(out.backward)
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            other = raises(out.backward)
        return [outside["raises"], other["raises"]]
    assert same_as_torch(f) == ["AssertionError", "AssertionError"]
    with hg.autograd.graph.allow_mutation_on_saved_tensors():
        out = (hg.ones(2, requires_grad=True) ** 2).sum()
    with pytest.raises(AssertionError, match="Trying to backward outside of the "
                                             "'allow_mutation_on_saved_tensors' context"):
        out.backward()


# --------------------------------------------------------------------------- _foreach_*


def _pair(L):
    return [L.tensor([0.5, 1.0], requires_grad=True), L.tensor([2.0], requires_grad=True)]


@pytest.mark.parametrize("name", ["exp", "neg", "sqrt"])
def test_foreach_unary_one_node_for_the_list(name):
    def f(L):
        a = _pair(L)
        outs = getattr(L, f"_foreach_{name}")(a)
        node = outs[0].grad_fn
        (outs[0].sum() + 2 * outs[1].sum()).backward()
        return [type(outs).__name__, node.name(), node is outs[1].grad_fn,
                [o.output_nr for o in outs], len(node.next_functions),
                py(outs), py(a[0].grad), py(a[1].grad)]
    got = same_as_torch(f, tol=1e-5)
    assert got[0] == "tuple" and got[2] and got[3] == [0, 1] and got[4] == 2


_OVERLOADS = [(2.0, {}), ("list", {}), ([2.0, 3.0], {})]


@pytest.mark.parametrize("name,other,kw", [(n, o, k) for n in ("add", "mul", "div")
                                           for o, k in _OVERLOADS]
                         + [("add", "list", {"alpha": 2.0}), ("sub", "list", {"alpha": 2.0})])
def test_foreach_binary_overloads(name, other, kw):
    def f(L):
        a = _pair(L)
        o = [L.tensor([1.0, 4.0]), L.tensor([2.0], requires_grad=True)] if other == "list" \
            else other
        outs = getattr(L, f"_foreach_{name}")(a, o, **kw)
        (outs[0].sum() + outs[1].sum()).backward()
        return [outs[0].grad_fn.name(), py(outs), py(a[0].grad), py(a[1].grad)]
    got = same_as_torch(f)
    assert got[0].startswith(f"Foreach{name.capitalize()}Backward")
    assert len(got[1]) == 2 and len(got[2]) == 2 and len(got[3]) == 1


def test_foreach_inplace_records_per_tensor_nodes_and_returns_the_list():
    def f(L):
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            a = _pair(L)
            b = list(L._foreach_exp(a))
            same = L._foreach_mul_(b, 2.0) is b
            (b[0].sum() + b[1].sum()).backward()
        return [same, b[0].grad_fn.name().startswith("Mul"), py(a[0].grad), py(a[1].grad)]
    got = same_as_torch(f, names=False)
    assert got[0] and got[1]


@pytest.mark.parametrize("op", ["mul", "div", "maximum", "minimum"])
def test_foreach_of_two_lists_packs_every_other_before_every_self(op):
    # saved-tensor hooks see PyTorch's order (found by the fuzz tier)
    def f(L):
        packed = []
        a, b = _pair(L), [t * 2 + 1 for t in _pair(L)]

        def pack(t):
            packed.append(py(t))
            return t
        with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            getattr(L, f"_foreach_{op}")(a, b)
        return packed
    got = same_as_torch(f)
    assert len(got) == 4 and got[0] != got[2]


def test_foreach_errors():
    def f(L):
        a = _pair(L)
        return [raises(L._foreach_exp, []), raises(L._foreach_exp, a[0]),
                raises(L._foreach_add, a, [1.0]), raises(L._foreach_add, a, [a[0]])]
    got = same_as_torch(f)
    assert [g["message"] for g in got[::2]] == [
        "Tensor list must have at least one tensor.",
        "Tensor list must have same number of elements as scalar list."]
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of "
                                           "tensors, got 2 and 1"):
        hg._foreach_add(_pair(hg), [hg.ones(1)])


# --------------------------------------------------------------------------- set_, resize_


def test_set_replaces_data_and_bumps_version():
    def f(L):
        a, b = L.ones(2), L.zeros(3)
        r = a.set_(b)
        e = L.ones(2)
        e.set_()
        return [r is a, py(a), a._version, b._version, list(e.shape)]
    assert same_as_torch(f) == [True, [0.0, 0.0, 0.0], 1, 0, [0]]


def test_set_on_leaf_requiring_grad():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        err = raises(x.set_, L.zeros(2))
        edge = L.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with L.no_grad():
            x.set_(L.zeros(2))
        unused = raises(L.autograd.grad, out.sum(), x)
        return [err, unused["raises"], py(L.autograd.grad(out.sum(), edge)), x.requires_grad]
    got = same_as_torch(f, names=False)
    assert got[0]["message"] == ("a leaf Variable that requires grad is being used in an "
                                 "in-place operation.")


def test_set_from_tensor_requiring_grad_fails_in_backward():
    def f(L):
        c = L.ones(2).clone()
        c.set_(L.ones(3, requires_grad=True) * 2)
        return [c.requires_grad, raises(c.sum().backward)]
    assert same_as_torch(f) == [True, {"raises": "RuntimeError",
                                       "message": "derivative for set_ is not implemented"}]


def test_resize_keeps_leading_elements_and_bumps_version_on_change():
    def f(L):
        x = L.arange(6.0)
        x.resize_(2, 2)
        v1 = x._version
        x.resize_((2, 2))
        y = L.ones(3)
        x.resize_as_(y)
        return [py(x), v1, x._version]
    assert same_as_torch(f) == [[0.0, 1.0, 2.0], 1, 2]
    x = hg.ones(2)
    x.resize_(4)
    assert x.shape == (4,) and x[:2].tolist() == [1.0, 1.0]


def test_resize_of_a_tensor_requiring_grad_raises():
    def f(L):
        x = L.ones(2, requires_grad=True)
        return [raises(x.resize_, 3), raises((x * 2).resize_, 2)]
    got = same_as_torch(f)
    assert all(g["message"] == "cannot resize variables that require grad" for g in got)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        hg.ones(1, requires_grad=True).resize_(2)


def test_legacy_resize_function():
    def f(L):
        import importlib
        importlib.import_module(L.__name__ + ".autograd._functions")
        x = L.arange(6.0, requires_grad=True)
        y = L.autograd._functions.Resize.apply(x, (2, 3))
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        return [list(y.shape), y.grad_fn.name(), py(x.grad),
                raises(L.autograd._functions.Resize.apply, x, (4,))["raises"]]
    assert same_as_torch(f) == [[2, 3], "ResizeBackward", [1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
                                "RuntimeError"]


def test_backward_with_create_graph_warns_about_the_cycle(monkeypatch):
    from hookgrad._engine import backward as bw
    monkeypatch.setitem(bw._warn_state, "cycle_warned", False)  # once per process
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match=r"Using backward\(\) with create_graph=True will "
                                         "create a reference cycle"):
        (x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hg.autograd.grad((x * x).sum(), x, create_graph=True)  # grad: no cycle, no warning


def _order_names(L, build, run):
    seen = []

    def hook(_):
        nodes = L._C._current_graph_task_execution_order()
        seen.append([n.name().replace("torch::autograd::", "") for n in nodes])
    out = build()
    out.register_hook(hook)
    with L.autograd.set_multithreading_enabled(False):
        run(out)
    return seen[0]


def test_current_graph_task_execution_order():
    def f(L):
        def leaves():
            return L.tensor(1.0, requires_grad=True), L.tensor(2.0, requires_grad=True)
        a, b = leaves()
        chain = _order_names(L, lambda: a.clone().sin().exp(), lambda o: o.backward())
        a, b = leaves()
        branches = _order_names(L, lambda: b.sin() * a.cos(), lambda o: o.backward())
        a, b = leaves()
        shared = _order_names(L, lambda: a.sin() * a.cos(), lambda o: o.backward())
        a, b = leaves()
        c = a * 2
        r1, r2 = c.sin(), c.cos()
        # asked from the first node's hook (PyTorch replays from its live counts)
        roots = _order_names(L, lambda: c.cos(),
                             lambda o: L.autograd.grad((r1, o, r2), inputs=(a,)))
        a, b = leaves()
        sub = _order_names(L, lambda: (a * b).sin(), lambda o: L.autograd.grad(o, inputs=(a,)))
        return [chain, branches, shared, roots, sub]
    got = same_as_torch(f)
    assert got[0] == ["ExpBackward0", "SinBackward0", "CloneBackward0", "AccumulateGrad"]
    assert got[4] == ["SinBackward0", "MulBackward0", "AccumulateGrad"]


def test_current_graph_task_execution_order_errors():
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        hg._C._current_graph_task_execution_order()
    errors = []
    x = hg.tensor(1.0, requires_grad=True).sin()
    x.register_hook(lambda g: errors.append(raises(hg._C._current_graph_task_execution_order)))
    x.backward()
    assert "expects the current backward to be executed with multithreading disabled" in \
        errors[0]["message"]


def test_will_engine_execute_node_checks_its_argument_first():
    def f(L):
        x = L.ones(1, requires_grad=True)
        return [raises(L._C._will_engine_execute_node, x * 2),
                raises(L._C._will_engine_execute_node, (x * 2).grad_fn)["raises"]]
    got = same_as_torch(f)
    assert got[0] == {"raises": "RuntimeError", "message": "_will_engine_execute_node expects "
                      "an grad_fn, but got Tensor"}
