"""ModTracker: parents, is_bw, fully-qualified names and user hooks in forward and backward,
compared with torch.distributed._tools.mod_tracker.ModTracker where torch is installed."""
import importlib
import warnings

import pytest

import hookgrad
from hookgrad.utils.mod_tracker import ModTracker

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="differential test needs torch")


def tracker(L):
    path = ("torch.distributed._tools.mod_tracker" if L.__name__ == "torch"
            else "hookgrad.utils.mod_tracker")
    return importlib.import_module(path).ModTracker


def both(fn):
    return fn(hookgrad), fn(torch)


def make_model(L):
    class Block(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.nn.Linear(2, 2)
            self.b = L.nn.Linear(2, 2)

        def forward(self, x):
            return self.b(self.a(x)).relu()

    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = L.nn.ModuleList([Block(), Block()])
            self.head = L.nn.Linear(2, 1)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(x)

    return Net()


def _trace(L, input_requires_grad=True):
    mt = tracker(L)()
    ops = []
    mt.register_user_hooks(
        lambda m, i: ops.append(["pre_fw", mt.get_known_fqn(m), sorted(mt.parents)]),
        lambda m, i, o: ops.append(["post_fw", mt.get_known_fqn(m), sorted(mt.parents)]),
        lambda m, g: ops.append(["pre_bw", mt.get_known_fqn(m), sorted(mt.parents), mt.is_bw]),
        lambda m, g: ops.append(["post_bw", mt.get_known_fqn(m), sorted(mt.parents)]))
    net = make_model(L)
    with mt:
        y = net(L.ones(1, 2, requires_grad=input_requires_grad))
        ops.append(["after fw", sorted(mt.parents), mt.is_bw])
        y.sum().backward()
        ops.append(["after bw", sorted(mt.parents), mt.is_bw])
    return ops


def test_forward_trace():
    ops = _trace(hookgrad)
    fw = ops[:ops.index(["after fw", ["Global"], False])]
    assert fw[0] == ["pre_fw", "Net", ["Global", "Net"]]
    assert fw[2] == ["pre_fw", "Net.blocks.0.a", ["Global", "Net", "Net.blocks.0",
                                                  "Net.blocks.0.a"]]
    assert [o[1] for o in fw if o[0] == "post_fw"] == [
        "Net.blocks.0.a", "Net.blocks.0.b", "Net.blocks.0", "Net.blocks.1.a", "Net.blocks.1.b",
        "Net.blocks.1", "Net.head", "Net"]
    assert ops[-1] == ["after bw", ["Global"], False]
    bw = [o for o in ops if o[0] == "pre_bw"]
    assert bw[0] == ["pre_bw", "Net.head", ["Global", "Net.head"], True]
    assert all(o[3] for o in bw)


@needs_torch
@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_trace_matches_torch(input_requires_grad):
    ours, theirs = both(lambda L: _trace(L, input_requires_grad))
    assert ours == theirs


def _parents_in_weight_hooks(L):
    seen = []
    net = make_model(L)
    with tracker(L)() as mt:
        for n, m in net.named_modules():
            if isinstance(m, L.nn.Linear):
                m.weight.register_hook(lambda g, n=n: seen.append([n, sorted(mt.parents)]))
        net(L.ones(1, 2)).sum().backward()
    return seen


@needs_torch
def test_parents_seen_by_tensor_hooks_match_torch():
    ours, theirs = both(_parents_in_weight_hooks)
    assert ours == theirs
    assert ours[0] == ["head", ["Global", "Net", "Net.head"]]


def test_parents_in_forward():
    seen = []
    box = [None]

    class Leaf(hookgrad.nn.Module):
        def forward(self, x):
            seen.append(sorted(box[0].parents))
            return x + 1

    class Root(hookgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.leaf = Leaf()

        def forward(self, x):
            return self.leaf(x) * 2

    with ModTracker() as mt:
        box[0] = mt
        Root()(hookgrad.ones(1))
        seen.append(sorted(mt.parents))
    assert seen == [["Global", "Root", "Root.leaf"], ["Global"]]


def test_is_bw_and_reset_after_backward():
    log = []
    m = hookgrad.nn.Linear(1, 1)
    with ModTracker() as mt:
        y = m(hookgrad.ones(1, requires_grad=True))
        y.register_hook(lambda g: log.append([mt.is_bw, sorted(mt.parents)]))
        log.append(mt.is_bw)
        y.sum().backward()
        log.append([mt.is_bw, sorted(mt.parents)])
    assert log == [False, [True, ["Global", "Linear"]], [False, ["Global"]]]


def _module_called_twice(L):
    log = []
    lin = L.nn.Linear(2, 2)

    class Twice(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def forward(self, x):
            log.append(sorted(mt.parents))
            return self.lin(self.lin(x))

    with tracker(L)() as mt:
        lin.register_forward_hook(lambda m, a, o: log.append(["in", sorted(mt.parents)]))
        Twice()(L.ones(1, 2, requires_grad=True)).sum().backward()
        log.append(sorted(mt.parents))
    return log


@needs_torch
def test_module_called_twice_matches_torch():
    ours, theirs = both(_module_called_twice)
    assert ours == theirs


def _tuple_outputs(L):
    log = []

    class Split(L.nn.Module):
        def forward(self, x):
            return x * 2, x * 3

    class Top(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.s = Split()

        def forward(self, x):
            a, b = self.s(x)
            return (a * b).sum()

    with tracker(L)() as mt:
        mt.register_user_hooks(
            None, None, lambda m, g: log.append(["pre", mt.get_known_fqn(m), len(g)]),
            lambda m, g: log.append(["post", mt.get_known_fqn(m), len(g), len(g[0])]))
        x = L.ones(2, requires_grad=True)
        top = Top()  # alive during backward (a dead module is passed as None)
        top(x).backward()
    return log, x.grad.tolist()


def test_tuple_outputs_user_hook_arguments():
    log, grad = _tuple_outputs(hookgrad)
    # both modules get the same input x: its hooks run in registration order (Top first)
    assert log == [["pre", "Top", 1], ["pre", "Top.s", 1], ["post", "Top", 1, 1],
                   ["post", "Top.s", 1, 1]]
    assert grad == [12.0, 12.0]


@needs_torch
def test_tuple_outputs_match_torch():
    ours, theirs = both(_tuple_outputs)
    assert ours == theirs


def test_exception_in_forward_pops_parents():
    class Boom(hookgrad.nn.Module):
        def forward(self, x):
            raise ValueError("x")

    class Top(hookgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.b = Boom()

        def forward(self, x):
            return self.b(x)

    with ModTracker() as mt:
        with pytest.raises(ValueError):
            Top()(hookgrad.ones(1))
        assert mt.parents == {"Global"}


def test_known_fqn_and_outside_context():
    net = make_model(hookgrad)
    other = hookgrad.nn.Linear(1, 1)
    mt = ModTracker()
    net(hookgrad.ones(1, 2))  # not tracked: no context
    assert mt.get_known_fqn(net) is None
    with mt:
        net(hookgrad.ones(1, 2))
    assert [mt.get_known_fqn(m) for m in net.modules()] == [
        "Net", "Net.blocks", "Net.blocks.0", "Net.blocks.0.a", "Net.blocks.0.b", "Net.blocks.1",
        "Net.blocks.1.a", "Net.blocks.1.b", "Net.head"]
    assert mt.get_known_fqn(other) is None
    # the global hooks are gone after the context
    from hookgrad.nn.modules import module as mm
    assert not mm._global_forward_hooks and not mm._global_forward_pre_hooks


def test_user_hook_registration_rules():
    mt = ModTracker()
    log = []
    mt.register_user_hooks(None, None, lambda m, g: None, None)
    with pytest.raises(AssertionError, match="Only one pre_bw_hook can be registered at a time"):
        mt.register_user_hooks(None, None, lambda m, g: None, None)
    mt.register_user_hooks(lambda m, i: log.append(1))  # another kind is fine
    mt.clear_user_hooks()
    mt.register_user_hooks(lambda m, i: log.append(2))
    with mt:
        hookgrad.nn.Linear(1, 1)(hookgrad.ones(1, 1))
    assert log == [2]


def test_reentrant_forward_warns():
    class Rec(hookgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.depth = 0

        def forward(self, x):
            if self.depth == 0:
                self.depth += 1
                return self(x)
            return x

    with ModTracker():
        with pytest.warns(UserWarning, match="The module hierarchy tracking maybe be messed up"):
            Rec()(hookgrad.ones(1))


@needs_torch
def test_reentrant_forward_matches_torch():
    def run(L):
        class Rec(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.depth = 0

            def forward(self, x):
                seen.append(sorted(mt.parents))
                if self.depth == 0:
                    self.depth += 1
                    return self(x)
                return x

        seen = []
        with tracker(L)() as mt:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                Rec()(L.ones(1))
            seen.append(sorted(mt.parents))
        return seen, len(w)

    fmt = warnings.formatwarning  # torch's ModTracker replaces it globally
    try:
        ours, theirs = both(run)
    finally:
        warnings.formatwarning = fmt
    assert ours == theirs
