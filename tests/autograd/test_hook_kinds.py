"""The hook table (``hookgrad._autograd.hooks.KINDS``): one row per hook kind, and the
engine, fusion and ``hookgrad.compile`` read it. These tests hold the table to the code
that stores hooks and to PyTorch's order."""
import pytest

import hookgrad as hg
from hookgrad._autograd import hooks
from hookgrad._autograd.graph import _Node, _NodeHooks
from hookgrad._engine import fusion
from tests.differential import same_as_torch


def test_every_hook_slot_of_a_node_is_a_row():
    # a node holds its hooks in one ``_NodeHooks``, made at the first registration
    assert {s for s in _Node.__slots__ if "hook" in s} == {"_hooks"}
    assert set(hooks.NODE_ATTRS) == set(_NodeHooks.__slots__)


def test_a_node_makes_its_hook_holder_at_the_first_registration_only():
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    node = (x * 2.0).grad_fn
    assert node._hooks is None and all(getattr(node, a) is None for a in hooks.NODE_ATTRS)
    node._post_hooks = None  # writing None registers nothing
    assert node._hooks is None
    h = node.register_prehook(lambda go: None)
    assert node._hooks is not None and len(node._pre_hooks) == 1
    assert node._post_hooks is None and node._tensor_pre_hooks is None
    h.remove()
    assert len(node._pre_hooks) == 0


def test_compile_keys_every_tensor_attribute_of_the_table():
    # a program traced with a Tensor depends on its hooks: hookgrad.compile keys them
    for kind in hooks.KINDS:
        if kind.tensor_attr is not None:
            assert kind.tensor_attr in hg.Tensor._COMPILE_KEY, kind.name
            assert kind.tensor_key is not None, kind.name


def test_a_copy_leaves_the_hook_dicts_of_the_table_behind():
    from hookgrad import _tensor
    assert set(hooks.TENSOR_DICTS) <= _tensor._NOT_COPIED
    x = hg.tensor([1.0], requires_grad=True)
    for kind in hooks.KINDS:
        if kind.tensor_attr in hooks.TENSOR_DICTS:
            getattr(x, kind.name.split(".")[1])(lambda *a: None)
    import copy
    import pickle
    with pytest.warns(UserWarning, match="will not be serialized"):  # PyTorch warns alike
        pickled = pickle.loads(pickle.dumps(x))
    for y in (copy.deepcopy(x), pickled):
        assert all(getattr(y, a) is None for a in hooks.TENSOR_DICTS)


def _all_kinds(L, log):
    """One hook of every kind on one small graph, each logging its kind when it runs."""
    x = L.tensor([1.0, 2.0], requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: log.append("post_accumulate"))
    y = x * 2
    y.register_hook(lambda g: log.append("tensor") and None)
    y.retain_grad()
    y.grad_fn.register_prehook(lambda go: log.append("node_pre") and None)
    y.grad_fn.register_hook(lambda gi, go: log.append("node_post") and None)
    y.sin().sum().backward()
    return log


def test_the_kinds_fire_in_the_tables_order_as_in_pytorch():
    log = same_as_torch(lambda L: _all_kinds(L, []))
    names = {"Tensor.register_hook": "tensor", "Node.register_prehook": "node_pre",
             "Node.register_hook": "node_post",
             "Tensor.register_post_accumulate_grad_hook": "post_accumulate"}
    order = [names[k.name] for k in hooks.KINDS if k.name in names]
    assert log == order
    # retain_grad runs among the BEFORE rows: after the tensor hooks, before the pre-hooks
    assert [k.fires for k in hooks.KINDS] == sorted(
        (k.fires for k in hooks.KINDS),
        key=[hooks.BEFORE, hooks.AFTER, hooks.ACCUMULATED].index)


@pytest.mark.parametrize("kind", [k for k in hooks.KINDS if k.fused is not None],
                         ids=lambda k: k.name)
def test_a_hook_on_a_chain_node_ends_the_chain_where_the_table_says(kind):
    # a chain of four op nodes; the hook sits on the second (never the chain's first)
    def run(register):
        x = hg.tensor([0.5, 1.0], requires_grad=True)
        a = x.sin()
        b = a.cos()
        register(b)
        b.exp().tanh().sum().backward()
        return x.grad

    installs = {"Tensor.register_hook": lambda t: t.register_hook(lambda g: None),
                "Tensor.retain_grad": lambda t: t.retain_grad(),
                "Node.register_prehook": lambda t: t.grad_fn.register_prehook(lambda g: None),
                "Node.register_hook": lambda t: t.grad_fn.register_hook(lambda gi, go: None)}
    plain = run(lambda t: None)
    seen = []
    real = fusion._plain_next  # the test of a node behind a region's first

    def spy(node):
        ok = real(node)
        seen.append((node.name(), ok))
        return ok
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fusion, "_plain_next", spy)
        for _ in range(3):   # fusion starts from the second sighting of a chain
            seen.clear()
            got = run(installs[kind.name])
    assert hg.allclose(got, plain)
    held = [ok for name, ok in seen if name == "CosBackward0"]
    assert held and not any(held), seen  # the hooked node never joins a chain behind others



def _unbind_module(L, log, held):
    """A module whose op has two outputs, one unused: its hooks log what they receive;
    ``held`` gets, per node attribute of the table, whether the node holds hooks there."""
    class Split(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = L.nn.Parameter(L.tensor([1.0, 2.0]))

        def forward(self):
            a, b = (self.w * 3).unbind()
            b.register_hook(lambda g: log.append(("unused output", g is None)) and None)
            a.register_hook(lambda g: log.append(("used output", g is None)) and None)
            a.grad_fn.register_prehook(
                lambda go: log.append(("pre", [g is None for g in go])) and None)
            a.grad_fn.register_hook(lambda gi, go: log.append(("post", len(gi))) and None)
            if L is hg:
                held.update((k.node_attr, bool(getattr(a.grad_fn, k.node_attr)))
                            for k in hooks.KINDS if k.node_attr)
            return (a * 2).sum()
    return Split()


def _eager_unbind_log(L):
    log = []
    _unbind_module(L, log, {})().backward()
    return log


def test_a_functional_node_holds_and_runs_its_hooks_as_the_table_says():
    import jax
    from hookgrad.func import functional_call, state
    eager = same_as_torch(_eager_unbind_log)
    log, held = [], {}
    m = _unbind_module(hg, log, held)
    jax.grad(lambda p: functional_call(m, p, ()))(state(m))
    # the same hooks, in the same order, with the same arguments as eagerly: the output
    # no gradient reaches gets None, as in PyTorch
    assert log == eager
    # held where the table's rows say (retain_grad: functional mode fills no .grad)
    assert held == {k.node_attr: k.name != "Tensor.retain_grad"
                    for k in hooks.KINDS if k.node_attr}
