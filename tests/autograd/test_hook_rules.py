"""Rules PyTorch's engine and hook calls enforce: what a hook may return, what
``backward(inputs=...)`` and GradientEdge roots do, and PyTorch's messages for misuse.

Each scenario is ``fn(L)`` over the library (differential against PyTorch where torch is
installed, with explicit values that also hold without it); the engine rules also run inside
``hookgrad.compile`` (``MODES``). Module/node/tensor hooks returning their own argument in
every mode and transform: the ``returns_arg`` kind of tests/_compose.py.
"""
import warnings

import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch

MODES = ("eager", "compiled")


def _run(mode, step, *args):
    """``step(*args)`` eagerly, or as the program ``hookgrad.compile`` traces (twice: the
    second call replays it)."""
    if mode == "eager":
        return step(*args)
    compiled = hg.compile(step)
    compiled(*args)
    return compiled(*args)


# --------------------------------------------------------------------------- returned values


def test_post_accumulate_hook_may_return_its_tensor():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        a.register_post_accumulate_grad_hook(lambda p: p)   # unmodified, as PyTorch counts
        (a * 3).sum().backward()
        return py(a.grad)
    assert same_as_torch(f) == [3.0, 3.0]


@pytest.mark.parametrize("mode", MODES)
def test_post_accumulate_hook_returning_its_tensor_in_each_mode(mode):
    w = hg.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    note = hg.compile.trace_only(calls.append)   # compiled: the program has the hook, once
    w.register_post_accumulate_grad_hook(lambda p: note(1) or p)

    def step(x):
        (w * x).sum().backward()
        return w.grad
    got = _run(mode, step, hg.tensor([2.0, 3.0]))
    assert py(got) == ([2.0, 3.0] if mode == "eager" else [4.0, 6.0])  # compiled: two calls
    assert calls


@pytest.mark.parametrize("result, error, match", [
    (lambda p: 3, TypeError, "expected Variable, but hook returned 'int'"),
    (lambda p: p.clone(), RuntimeError, "Tensor post accumulate grad hooks should return None."),
    (lambda p: hg.ones(3), RuntimeError, "hook '<lambda>' has changed the size of value"),
])
def test_post_accumulate_hook_bad_results(result, error, match):
    a = hg.tensor([1.0, 2.0], requires_grad=True)
    a.register_post_accumulate_grad_hook(result)
    with pytest.raises(error, match=match):
        (a * 2).sum().backward()


def test_post_accumulate_hooks_after_a_bad_result_still_run_then_it_raises():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        a.register_post_accumulate_grad_hook(lambda p: p * 2)
        a.register_post_accumulate_grad_hook(lambda p: seen.append(py(p)))
        out = raises(lambda: (a * 2).sum().backward())
        return [out["raises"], seen]
    # the second hook gets what the first returned, as PyTorch passes it on
    assert same_as_torch(f) == ["RuntimeError", [[2.0, 4.0]]]


def test_node_hooks_returning_their_arguments_change_nothing():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        b.register_hook(lambda g: g)
        b.grad_fn.register_prehook(lambda go: go)
        b.grad_fn.register_hook(lambda gi, go: gi)
        b.sum().backward()
        return py(a.grad)
    assert same_as_torch(f) == [2.0, 2.0]


@pytest.mark.parametrize("result, error, match", [
    (lambda go: [go[0]], TypeError, "expected tuple, but hook returned 'list'"),
    (lambda go: 3, TypeError, "expected tuple, but hook returned 'int'"),
    (lambda go: (go[0], go[0]), RuntimeError,
     r"hook '<lambda>' has returned an incorrect number of values \(got 2, but expected 1\)"),
])
def test_node_pre_hook_bad_results(result, error, match):
    a = hg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.grad_fn.register_prehook(result)
    with pytest.raises(error, match=match):
        b.sum().backward()


# --------------------------------------------------------------------------- AccumulateGrad


def _acc_hook_program(L, record):
    t = L.tensor([1.0, 1.0, 1.0], requires_grad=True)
    acc = t.view_as(t).grad_fn.next_functions[0][0]
    t.register_hook(lambda g: g.sub(2.0))
    acc.register_prehook(lambda go: (go[0].div(5.0),))

    def post_acc(p):
        p.grad.add_(0.5)
    t.register_post_accumulate_grad_hook(post_acc)

    def post(gi, go):
        record(go[0])
        t.grad = go[0].mul(10)
    acc.register_hook(post)
    return t, acc   # PyTorch's leaf holds its AccumulateGrad (and its hooks) weakly


@pytest.mark.parametrize("mode", MODES)
def test_accumulate_grad_post_hook_sees_the_grad_the_post_accumulate_hook_changed(mode):
    # tensor hook -> AccumulateGrad pre-hook -> post-accumulate-grad hook -> post-hook; when
    # backward sets a missing .grad, the post-hook's grad_outputs[0] is that .grad
    log = []
    t, acc = _acc_hook_program(hg, hg.compile.host_hook(lambda g: log.append(py(g))))

    def step():
        t.grad = None
        t.sum().backward()
        return t.grad
    assert py(_run(mode, step)) == pytest.approx([3.0, 3.0, 3.0])
    assert log[-1] == pytest.approx([0.3, 0.3, 0.3])


def test_accumulate_grad_hook_order_and_values_match_pytorch():
    def f(L):
        log = []
        t, acc = _acc_hook_program(L, lambda g: log.append(py(g)))
        t.sum().backward()
        first = py(t.grad)
        t.sum().backward()   # .grad exists: the post-hook sees the incoming gradient
        return [first, log, py(t.grad)]
    first, log, second = same_as_torch(f)
    assert first == pytest.approx([3.0] * 3)
    assert log[1] == pytest.approx([-0.2] * 3) and second == pytest.approx([-2.0] * 3)


def test_accumulate_grad_pre_hooks_do_not_run_under_autograd_grad():
    def f(L):
        log = []
        a = L.tensor(1.0, requires_grad=True)
        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(lambda g: log.append("tensor") or g * 3)
        acc.register_prehook(lambda go: log.append("acc_pre") or (go[0] * 2,))
        acc.register_hook(lambda gi, go: log.append("acc_post"))
        g, = L.autograd.grad(b, a, retain_graph=True)
        grad_log = list(log)
        log.clear()
        b.backward()
        return [py(g), grad_log, log, py(a.grad)]
    # autograd.grad captures at the leaf: its tensor hooks run, its node does not
    assert same_as_torch(f) == [3.0, ["tensor"], ["tensor", "acc_pre", "acc_post"], 6.0]


# --------------------------------------------------------------------------- backward(inputs=)


@pytest.mark.parametrize("mode", MODES)
def test_backward_inputs_non_leaf_gets_grad_after_its_tensor_hooks(mode):
    a = hg.tensor(1.0, requires_grad=True)

    def step(x):
        b = a * x
        b.register_hook(lambda g: g * 3)
        b.grad_fn.register_prehook(lambda go: (go[0] * 2,))   # after the grad was retained
        (b * 5).backward(inputs=[b])
        return b.grad, b.retains_grad
    grad, retains = _run(mode, step, hg.tensor(2.0))
    assert grad.item() == 15.0 and retains
    assert a.grad is None   # only the inputs' gradients are accumulated


def test_backward_inputs_non_leaf_matches_pytorch():
    def f(L):
        log = []
        a = L.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(lambda gs: log.append(2) or tuple(g * 2 for g in gs))
        b.register_hook(lambda g: log.append(1) or g * 3)
        before = b.retains_grad
        b.sum().backward(inputs=(b,), retain_graph=True)
        first = [py(b.grad), b.retains_grad]
        b.sum().backward(inputs=[b, a])
        return [before, first, py(b.grad), py(a.grad), log]
    assert same_as_torch(f) == [False, [3.0, True], 6.0, 6.0, [1, 2, 1, 2]]


def test_backward_inputs_non_leaf_retained_first_is_not_counted_twice():
    def f(L):
        a = L.tensor(1.0, requires_grad=True)
        b = a * 2
        b.retain_grad()
        b.register_hook(lambda g: g * 5)
        (b * 3).backward(inputs=[b])
        return py(b.grad)
    assert same_as_torch(f) == 15.0


def test_backward_inputs_that_does_not_require_grad():
    def f(L):
        a, c = L.ones(2, requires_grad=True), L.ones(2)
        return [raises(lambda: (a * c).sum().backward(inputs=[c])),
                raises(lambda: L.autograd.grad((a * c).sum(), [c]))]
    got = same_as_torch(f)
    assert got[0]["message"] == "can't retain_grad on Tensor that has requires_grad=False"
    assert got[1]["message"] == "One of the differentiated Tensors does not require grad"


# --------------------------------------------------------------------------- GradientEdge roots


@pytest.mark.parametrize("mode", MODES)
def test_backward_on_a_one_element_gradient_edge_implies_ones(mode):
    w = hg.tensor([[3.0]], requires_grad=True)

    def step():
        w.grad = None
        out = w * 2
        edge = hg.autograd.graph.get_gradient_edge(out)
        hg.autograd.backward(edge)
        return w.grad
    assert py(_run(mode, step)) == [[2.0]]


def test_gradient_edge_roots_match_pytorch():
    def f(L):
        x = L.tensor([[3.0]], requires_grad=True)
        y = L.tensor([1.0, 2.0], requires_grad=True)
        leaf_edge = L.autograd.graph.get_gradient_edge(x)
        L.autograd.backward(leaf_edge)
        big = L.autograd.graph.get_gradient_edge(y * 2)
        return [py(x.grad),
                raises(L.autograd.backward, big),
                raises(L.autograd.backward, leaf_edge, L.ones(2)),
                py(L.autograd.grad(big, y, L.ones(2)))]
    got = same_as_torch(f)
    assert got[0] == [[1.0]]
    assert got[1]["message"] == "grad can be implicitly created only for scalar outputs"
    assert got[2]["message"].startswith("Mismatch in shape: grad_output[0] has a shape of ")
    assert got[3] == [[2.0, 2.0]]


def test_materialize_grads_with_gradient_edges():
    def f(L):
        x = L.rand(2, requires_grad=True).clone()
        y = L.rand(2, requires_grad=True).clone()
        ex = L.autograd.graph.GradientEdge(x.grad_fn, x.output_nr)
        ey = L.autograd.graph.GradientEdge(y.grad_fn, y.output_nr)
        out = x.clone().sum()
        used = L.autograd.grad(out, (ex, y), allow_unused=True, materialize_grads=True,
                               retain_graph=True)
        return [py(used), raises(lambda: L.autograd.grad(out, (x, ey), allow_unused=True,
                                                         materialize_grads=True))]
    got = same_as_torch(f)
    assert got[0] == [[1.0, 1.0], [0.0, 0.0]]
    assert got[1]["message"] == ("materialize_grads cannot be used when the given input is a "
                                 "GradientEdge")


# --------------------------------------------------------------------------- messages


def test_gradient_count_messages_name_tensors_then_gradients():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        y, z = (a * 2).sum(), (a * 3).sum()
        one = L.tensor(1.0)
        return [raises(lambda: L.autograd.backward([y, z], [one], retain_graph=True)),
                raises(lambda: L.autograd.grad([y, z], [a], [one], retain_graph=True)),
                # as PyTorch (zip), gradients beyond the tensors are ignored
                py(L.autograd.grad([y], [a], [one, one], retain_graph=True)),
                raises(lambda: L.autograd.backward(y, [1.0]))]
    got = same_as_torch(f)
    assert got[0]["message"] == got[1]["message"] == "got 2 tensors and 1 gradients"
    assert got[2] == [[2.0, 2.0]]
    assert got[3] == {"raises": "TypeError",
                      "message": "gradients can be either Tensors or None, but got float"}


def test_unused_input_message_names_its_index():
    def f(L):
        a, b = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        return raises(lambda: L.autograd.grad((a * 2).sum(), [a, b]))
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to "
                                           "not have been used in the graph"):
        a, b = hg.ones(2, requires_grad=True), hg.ones(2, requires_grad=True)
        hg.autograd.grad((a * 2).sum(), [a, b])
    assert same_as_torch(f)["raises"] == "RuntimeError"


def test_inputs_argument_forms():
    import collections

    def f(L):
        x, y = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        out = (x * 2).sum()
        as_dict = L.autograd.grad(out, {"x": x, "y": y}, allow_unused=True, retain_graph=True)
        L.autograd.backward(out, inputs={"x": x}, retain_graph=True)
        return [py(as_dict), py(x.grad),
                raises(lambda: L.autograd.grad(out, collections.OrderedDict(x=x))),
                raises(lambda: L.autograd.grad(out, [])),
                raises(lambda: L.autograd.backward(out, inputs=[]))]
    got = same_as_torch(f)
    assert got[:2] == [{"x": [2.0, 2.0], "y": None}, [2.0, 2.0]]
    assert got[2]["message"] == ("`inputs` argument to `grad()` must be a dict, not OrderedDict. "
                                 "Other Mapping types are not supported.")
    assert got[3]["message"] == "`inputs` argument to `grad()` cannot be empty."
    assert got[4]["message"] == "`inputs` argument to `backward()` cannot be empty."


def test_will_engine_execute_node_checks_its_argument_first():
    from hookgrad import _C
    with pytest.raises(RuntimeError, match="_will_engine_execute_node expects an grad_fn, but "
                                           "got int"):
        _C._will_engine_execute_node(3)
    a = hg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="_get_should_execute_nodes should only be called "
                                           "during the backward pass"):
        _C._will_engine_execute_node((a * 2).grad_fn)


def test_will_engine_execute_node_during_backward():
    def f(L):
        a, b = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        acc_a = (a * 1).grad_fn.next_functions[0][0]
        acc_b = (b * 1).grad_fn.next_functions[0][0]
        q = a * 2
        r = q * b
        seen = []
        q.register_hook(lambda g: seen.append(
            [raises(L._C._will_engine_execute_node, n).get("raises")
             or L._C._will_engine_execute_node(n)
             for n in (acc_a, acc_b, q.grad_fn, L.autograd.graph.get_gradient_edge(q))]))
        r.sum().backward(inputs=[a], retain_graph=True)
        L.autograd.grad(r.sum(), q, retain_graph=True)
        L.autograd.grad(r.sum(), a)
        return seen
    assert same_as_torch(f) == [
        [True, False, True, "RuntimeError"],     # a GradientEdge is not a grad_fn
        [False, False, True, "RuntimeError"],
        ["RuntimeError", False, True, "RuntimeError"]]   # a captured leaf under grad()


def test_create_graph_warning_once_per_process_unless_warn_always(monkeypatch):
    from hookgrad._engine import backward as bw
    monkeypatch.setitem(bw._warn_state, "cycle_warned", False)
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    match = (r"Using backward\(\) with create_graph=True will create a reference cycle between "
             "the parameter and its gradient")
    with pytest.warns(UserWarning, match=match):
        (x * x).sum().backward(create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * x).sum().backward(create_graph=True)   # once per process, as PyTorch
        hg.autograd.grad((x * x).sum(), x, create_graph=True)
    assert not hg.is_warn_always_enabled()
    hg.set_warn_always(True)
    try:
        for _ in range(2):
            with pytest.warns(UserWarning, match=match):
                (x * x).sum().backward(create_graph=True)
    finally:
        hg.set_warn_always(False)


def test_post_hook_registered_while_its_node_runs_gets_no_grad_outputs():
    def f(L):
        seen = []

        def unpack(t):
            node = L._C._current_autograd_node()

            def hook(gi, go):
                seen.append([node.name(), len(gi), py(go)])
                return tuple(g / 2.0 for g in gi)
            node.register_hook(hook)
            return t
        b = L.tensor([1.0, 2.0], requires_grad=True)
        y = b * b
        y.grad_fn.register_hook(lambda gi, go: seen.append(["before", len(gi), py(go)]))
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            z = b.exp()
        (y + z).sum().backward()
        return [seen, py(b.grad)]
    seen, grad = same_as_torch(f)
    # ExpBackward0's hook came during its unpack: no grad_outputs; MulBackward0's did not
    assert seen == [["ExpBackward0", 1, []], ["before", 2, [[1.0, 1.0]]]]
    assert grad == pytest.approx([2.0 + 2.718282 / 2, 4.0 + 7.389056 / 2])
