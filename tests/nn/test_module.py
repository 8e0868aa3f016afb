"""Module API: registration, iteration, state_dict/load_state_dict, conversion, repr,
Parameter/Buffer, pytree; differential against PyTorch where it is installed."""
import collections
import copy
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
from hookgrad import nn
from tests.nn._common import both, needs_torch, torch


def errors(*fns):
    out = []
    for f in fns:
        try:
            f()
            out.append("ok")
        except Exception as e:  # noqa: BLE001
            # error text names the library's tensor types; compare the rest
            out.append([type(e).__name__, str(e).replace("torch.FloatTensor", "T")
                        .replace("hookgrad.FloatTensor", "T")
                        .replace("hookgrad.nn.modules", "torch.nn.modules")
                        .replace("hookgrad.Size", "torch.Size")])
    return out


def make_net(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = L.nn.Linear(2, 3)
            self.blocks = L.nn.ModuleList([L.nn.Linear(3, 3), L.nn.Linear(3, 3, bias=False)])
            self.register_buffer("running", L.zeros(3))
            self.register_buffer("tmp", L.ones(1), persistent=False)
            self.head = L.nn.Sequential(collections.OrderedDict([("out", L.nn.Linear(3, 1))]))
            self.scale = L.nn.Parameter(L.ones(1))
            self.nothing = None
            self.register_parameter("p_none", None)
            self.register_buffer("b_none", None)

        def forward(self, x):
            x = self.fc(x)
            for b in self.blocks:
                x = b(x)
            return self.head(x + self.running) * self.scale
    return Net()


# --------------------------------------------------------------------------- names


def _names(L):
    n = make_net(L)
    return ([k for k, _ in n.named_parameters()], [k for k, _ in n.named_buffers()],
            [k for k, _ in n.named_modules()], [k for k, _ in n.named_children()],
            list(n.state_dict().keys()),
            [k for k, _ in n.named_parameters(prefix="m", recurse=False)],
            [k for k, _ in n.named_buffers(recurse=False)], len(list(n.parameters())),
            len(list(n.modules())), list(n.state_dict(keep_vars=True).keys()),
            [k for k, _ in n.named_modules(prefix="root")])


def test_names_and_state_dict_keys():
    p, b, mods, children, sd, *_ = _names(hookgrad)
    assert p == ["scale", "fc.weight", "fc.bias", "blocks.0.weight", "blocks.0.bias",
                 "blocks.1.weight", "head.out.weight", "head.out.bias"]
    assert b == ["running", "tmp"]
    assert mods == ["", "fc", "blocks", "blocks.0", "blocks.1", "head", "head.out"]
    assert children == ["fc", "blocks", "head"]
    assert sd == ["scale", "running", "fc.weight", "fc.bias", "blocks.0.weight",
                  "blocks.0.bias", "blocks.1.weight", "head.out.weight", "head.out.bias"]


@needs_torch
def test_names_match_torch():
    ours, theirs = both(_names)
    assert ours == theirs


def _shared(L):
    lin = L.nn.Linear(1, 1)
    s = L.nn.Sequential(lin, lin)
    p = L.nn.Parameter(L.ones(1))
    m = L.nn.Module()
    m.a = p
    m.b = p
    return ([k for k, _ in s.named_parameters()],
            [k for k, _ in s.named_parameters(remove_duplicate=False)],
            [k for k, _ in s.named_modules()],
            [k for k, _ in s.named_modules(remove_duplicate=False)],
            list(s.state_dict()), [k for k, _ in m.named_parameters()], list(m.state_dict()))


def test_shared_members():
    r = _shared(hookgrad)
    assert r[0] == ["0.weight", "0.bias"]
    assert r[1] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert r[4] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert r[5] == ["a"] and r[6] == ["a", "b"]


@needs_torch
def test_shared_members_match_torch():
    ours, theirs = both(_shared)
    assert ours == theirs


def _deep_tree(L):
    # a tree four deep with a shared subtree, a None child and a child whose class
    # overrides named_modules (asked as PyTorch's recursion asks it)
    class Custom(L.nn.Module):
        def named_modules(self, memo=None, prefix="", remove_duplicate=True):
            yield prefix + "<custom>", self

    leaf = L.nn.Linear(1, 1)
    inner = L.nn.Sequential(leaf, L.nn.Sequential(L.nn.ReLU(), leaf))
    root = L.nn.Module()
    root.a = L.nn.Sequential(inner, L.nn.Tanh())
    root.gap = None
    root.b = inner
    root.c = Custom()
    root.c.d = L.nn.Linear(1, 1)
    root.e = L.nn.ModuleList([L.nn.Sequential(L.nn.Sequential(L.nn.Linear(1, 2)))])
    it = root.named_modules()
    first_two = [next(it)[0], next(it)[0]]  # walked lazily
    return ([k for k, _ in root.named_modules()],
            [k for k, _ in root.named_modules(remove_duplicate=False)],
            [k for k, _ in root.named_modules(prefix="m")],
            [k for k, _ in root.named_parameters()],
            [k for k, _ in root.named_parameters(remove_duplicate=False)],
            len(list(root.parameters())), first_two,
            [k for k, _ in root.e.named_modules(prefix="x")])


def test_a_deep_tree_walks_in_pytorchs_order():
    mods, mods_all, *_ = _deep_tree(hookgrad)
    assert mods == ["", "a", "a.0", "a.0.0", "a.0.1", "a.0.1.0", "a.1", "c<custom>", "e",
                    "e.0", "e.0.0", "e.0.0.0"]
    assert mods_all[:8] == ["", "a", "a.0", "a.0.0", "a.0.1", "a.0.1.0", "a.0.1.1", "a.1"]


@needs_torch
def test_a_deep_tree_walks_as_torchs():
    ours, theirs = both(_deep_tree)
    assert ours == theirs


def _members_walk(L):
    # parameters()/buffers() of a tree with a shared module and Parameter, None members, a
    # leaf and a nested level, a class whose named_parameters/named_buffers PyTorch's
    # parameters()/buffers() go through, and zero_grad on each (a Parameter subclass with
    # its own ``grad`` property sees the write)
    class Renamed(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = L.nn.Parameter(L.ones(1))
            self.register_buffer("b", L.ones(1))

        def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
            yield "only", self.w

        def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
            return iter(())

    class Watched(L.nn.Parameter):
        sets = []

        @property
        def grad(self):
            return super().grad

        @grad.setter
        def grad(self, value):
            Watched.sets.append(value is None)
            L.Tensor.grad.__set__(self, value)

    shared = L.nn.Linear(2, 2)
    root = L.nn.Module()
    root.a = L.nn.Sequential(shared, L.nn.Sequential(L.nn.ReLU(), shared, L.nn.BatchNorm1d(2)))
    root.register_parameter("gap", None)
    root.register_buffer("none_buf", None)
    root.twice = shared.weight
    root.r = Renamed()
    root.w = Watched(L.ones(2))
    names = {}
    for k, v in [*root.named_parameters(remove_duplicate=False),
                 *root.named_buffers(remove_duplicate=False)]:
        names.setdefault(id(v), k)
    it = root.parameters()
    first = names[id(next(it))]
    root.late = L.nn.Linear(1, 1)  # added while walking: the walk reads the tree lazily
    out = [first, [names.get(id(p), "late") for p in it],
           [names[id(b)] for b in root.buffers()],
           [names[id(p)] for p in root.parameters(recurse=False)],
           [names[id(b)] for b in root.a.buffers(recurse=False)],
           [names[id(p)] for p in root.r.parameters()], list(root.r.buffers())]
    (root.a(L.ones(3, 2)).sum() + root.w.sum()).backward()
    root.zero_grad(set_to_none=False)
    out.append([None if p.grad is None else p.grad.tolist() for p in root.parameters()])
    root.zero_grad()
    out.append([p.grad for p in root.parameters()])
    out.append(Watched.sets)
    return out


def test_parameters_and_buffers_walk_as_pytorchs():
    out = _members_walk(hookgrad)
    assert out[:2] == ["twice", ["w", "a.0.bias", "a.1.2.weight", "a.1.2.bias", "r.w",
                                 "late", "late"]]
    assert out[2] == ["a.1.2.running_mean", "a.1.2.running_var", "a.1.2.num_batches_tracked",
                      "r.b"]
    assert out[3:7] == [["twice", "w"], [], ["r.w"], []]
    assert out[-2] == [None] * 8 and out[-1] == [True]


@needs_torch
def test_parameters_and_buffers_walk_as_torchs():
    ours, theirs = both(_members_walk)
    assert ours == theirs


def _calls_and_clears(L):
    """A subclass's own ``_call_impl`` runs on ``m(x)`` with no hooks and with one; a
    Parameter subclass with its own ``__setattr__`` sees ``zero_grad``'s write."""
    seen = []

    class Own(L.nn.Linear):
        def _call_impl(self, *args, **kwargs):
            seen.append("own")
            return super()._call_impl(*args, **kwargs)

    class P(L.nn.Parameter):
        def __setattr__(self, name, value):
            if not name.startswith("_"):   # PyTorch's grad is a C slot: no inner write
                seen.append(name)
            super().__setattr__(name, value)

    m = Own(2, 1)
    x = L.ones(1, 2)
    m(x)
    h = m.register_forward_hook(lambda mod, a, out: seen.append("hook"))
    m(x)
    h.remove()
    m(x).sum().backward()
    calls = seen[:]
    plain = L.nn.Linear(2, 1)
    plain.q = P(L.ones(2))
    (plain(x).sum() + plain.q.sum()).backward()
    del seen[:]
    plain.zero_grad()
    m.zero_grad()
    return calls, seen, plain.q.grad, plain.weight.grad, m.weight.grad


def test_a_call_and_zero_grad_keep_a_subclasss_overrides():
    calls, seen, q, w, mw = _calls_and_clears(hookgrad)
    assert calls == ["own", "own", "hook", "own"]
    assert seen == ["grad"] and q is None and w is None and mw is None
    m = nn.Linear(2, 1)
    seen2 = []

    class Own(nn.Linear):
        def _call_impl(self, *args, **kwargs):
            seen2.append("own")
            return super()._call_impl(*args, **kwargs)

    Own(2, 1)(hookgrad.ones(1, 2))
    m(hookgrad.ones(1, 2))
    assert seen2 == ["own"]


@needs_torch
def test_a_call_and_zero_grad_keep_a_subclasss_overrides_as_torchs():
    ours, theirs = both(_calls_and_clears)
    assert ours[:2] == theirs[:2]


# --------------------------------------------------------------------------- attributes


def _attr_errors(L):
    m = L.nn.Module()
    out = errors(lambda: m.register_buffer("a.b", None), lambda: m.register_buffer("", None),
                 lambda: m.register_buffer(3, None), lambda: m.register_buffer("x", 5),
                 lambda: m.register_parameter("p", L.ones(1)),
                 lambda: m.add_module("a.b", None), lambda: m.add_module("", None),
                 lambda: m.add_module("x", 5), lambda: m.missing,
                 lambda: m.register_parameter("q", L.nn.Parameter(L.ones(1)) * 2),
                 lambda: m.register_parameter("", None))
    m.training2 = 1
    m.p = L.nn.Parameter(L.ones(1))
    m.sub = L.nn.Linear(1, 1)
    m.register_buffer("buf", L.ones(1))

    def assign(name, value):
        return lambda: setattr(m, name, value)

    out += errors(lambda: m.register_buffer("training2", None), assign("p", L.ones(1)),
                  assign("sub", 5), assign("buf", 5), assign("p", L.nn.Linear(1, 1)))
    m.buf = L.zeros(2)
    m.p = None
    m.sub = None
    out.append([m.p, m.sub, m.buf, list(m.state_dict())])

    class Early(L.nn.Module):
        def __init__(self):
            self.w = L.nn.Parameter(L.ones(1))

    class EarlyMod(L.nn.Module):
        def __init__(self):
            self.w = L.nn.Linear(1, 1)

    class EarlyBuf(L.nn.Module):
        def __init__(self):
            self.register_buffer("b", L.ones(1))

    out += errors(Early, EarlyMod, EarlyBuf, lambda: L.nn.Module(3), lambda: L.nn.Module(a=1))
    return out


def test_attribute_errors():
    out = _attr_errors(hookgrad)
    assert out[0] == ["KeyError", '\'buffer name can\\\'t contain "."\'']
    assert out[3] == ["TypeError", "cannot assign 'int' object to buffer 'x' (torch Tensor or "
                                   "None required)"]
    assert out[8] == ["AttributeError", "'Module' object has no attribute 'missing'"]
    assert out[9] == ["TypeError", "cannot assign 'T' object to parameter 'q' "
                                   "(torch.nn.Parameter or None required)"]
    assert out[-5] == ["AttributeError", "cannot assign parameters before Module.__init__() "
                                         "call"]


@needs_torch
def test_attribute_errors_match_torch():
    ours, theirs = both(_attr_errors)
    assert ours == theirs


def _reassign(L):
    m = L.nn.Module()
    m.x = L.nn.Parameter(L.ones(1))
    del m.x
    m.x = L.nn.Linear(1, 1)
    r1 = ([k for k, _ in m.named_parameters()], list(m._modules))
    m.register_buffer("b", L.ones(1), persistent=False)
    m.b = L.nn.Parameter(L.ones(1))
    r2 = (list(m._buffers), list(m._parameters), list(m.state_dict()))
    m.c = L.nn.Buffer(L.ones(2), persistent=False)
    m.d = L.nn.Buffer(L.ones(2))
    m.register_buffer("e", L.ones(1), persistent=False)
    m.e = L.zeros(1)  # stays non-persistent
    r3 = (list(m._buffers), list(m.state_dict()), type(m.c).__name__,
          isinstance(m.c, L.nn.Buffer), isinstance(L.ones(1), L.nn.Buffer))
    del m.c
    del m.x
    r4 = (list(m._buffers), list(m._modules), sorted(m._non_persistent_buffers_set))
    m.plain = 3
    del m.plain
    return r1, r2, r3, r4, hasattr(m, "plain")


@needs_torch
def test_a_name_leaves_every_other_store_when_it_becomes_a_parameter_or_module():
    def run(L):
        m = L.nn.Module()
        m.a, m.b = 1, 2
        m.register_buffer("c", L.ones(1), persistent=False)
        m.register_buffer("d", L.ones(1), persistent=False)
        m.a, m.c = L.nn.Parameter(L.ones(1)), L.nn.Parameter(L.ones(1))
        m.b, m.d = L.nn.ReLU(), L.nn.ReLU()
        return [sorted(m._parameters), sorted(m._modules), sorted(m._buffers),
                sorted(m._non_persistent_buffers_set), [n in vars(m) for n in "abcd"]]
    ours, theirs = both(run)
    assert ours == theirs == [["a", "c"], ["b", "d"], [], [], [False] * 4]


def test_reassign_moves_between_kinds():
    r1, r2, r3, r4, has_plain = _reassign(hookgrad)
    assert r1 == ([k for k in ("x.weight", "x.bias")], ["x"])
    assert r2 == ([], ["b"], ["b", "x.weight", "x.bias"])
    assert r3[0] == ["c", "d", "e"] and r3[1] == ["b", "d", "x.weight", "x.bias"]
    assert r3[3] is True and r3[4] is False
    assert r4 == (["d", "e"], [], ["e"]) and has_plain is False


@needs_torch
def test_reassign_matches_torch():
    ours, theirs = both(_reassign)
    assert ours == theirs


def test_dir_lists_members():
    d = dir(make_net(hookgrad))
    for k in ("fc", "blocks", "running", "scale", "forward", "tmp", "training"):
        assert k in d
    assert d == sorted(d)


# --------------------------------------------------------------------------- getters


def _getters(L):
    n = make_net(L)
    out = [type(n.get_submodule("blocks.1")).__name__, list(n.get_parameter("blocks.0.bias").shape),
           list(n.get_buffer("running").shape), n.get_submodule("") is n]
    out += errors(lambda: n.get_submodule("blocks.7"), lambda: n.get_submodule("fc.weight"),
                  lambda: n.get_parameter("fc.nope"), lambda: n.get_parameter("running"),
                  lambda: n.get_buffer("scale"), lambda: n.get_buffer("fc.zz"),
                  lambda: n.set_submodule("", L.nn.Linear(1, 1)),
                  lambda: n.set_submodule("fc", 3),
                  lambda: n.set_submodule("blocks.9", L.nn.Linear(1, 1), strict=True),
                  lambda: n.set_submodule("scale", L.nn.Linear(1, 1)))
    n.set_submodule("blocks.1", L.nn.Identity())
    out.append(type(n.blocks[1]).__name__)
    return out


def test_getters():
    out = _getters(hookgrad)
    assert out[:4] == ["Linear", [3], [3], True]
    assert out[4] == ["AttributeError", "ModuleList has no attribute `7`"]
    assert out[5] == ["AttributeError", "`weight` is not an nn.Module"]
    assert out[-1] == "Identity"


@needs_torch
def test_getters_match_torch():
    ours, theirs = both(_getters)
    assert ours == theirs


# --------------------------------------------------------------------------- state dict


def test_state_dict_values_are_detached_views():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    assert isinstance(sd, collections.OrderedDict)
    assert not sd["weight"].requires_grad and sd["weight"].grad_fn is None
    np.testing.assert_array_equal(sd["weight"].numpy(), m.weight.detach().numpy())
    assert m.state_dict(keep_vars=True)["weight"] is m.weight
    assert sd._metadata[""] == {"version": 1}


def _load_errors(L):
    out = []

    def bad_sd(edit):
        n = make_net(L)
        sd = n.state_dict()
        edit(sd)
        return lambda: n.load_state_dict(sd)

    def missing_unexpected(sd):
        del sd["fc.bias"]
        sd["extra"] = L.ones(1)
        sd["fc.zzz"] = L.ones(1)
        sd["nope.x"] = L.ones(1)

    out += errors(bad_sd(missing_unexpected),
                  bad_sd(lambda sd: sd.__setitem__("fc.bias", L.ones(7))),
                  bad_sd(lambda sd: sd.__setitem__("fc.bias", 3)),
                  lambda: L.nn.Linear(1, 1).load_state_dict([1, 2]))
    n = make_net(L)
    sd = n.state_dict()
    del sd["fc.bias"]
    sd["extra"] = L.ones(1)
    r = n.load_state_dict(sd, strict=False)
    out.append([r.missing_keys, r.unexpected_keys, repr(r),
                repr(make_net(L).load_state_dict(make_net(L).state_dict()))])
    return out


def test_load_state_dict_strict_errors():
    out = _load_errors(hookgrad)
    assert out[0] == ["RuntimeError", 'Error(s) in loading state_dict for Net:\n\tMissing '
                      'key(s) in state_dict: "fc.bias". \n\tUnexpected key(s) in state_dict: '
                      '"extra", "nope.x", "fc.zzz". ']
    assert out[1][0] == "RuntimeError" and "size mismatch for fc.bias" in out[1][1]
    assert out[3] == ["TypeError", "Expected state_dict to be dict-like, got <class 'list'>."]
    assert out[4][:2] == [[], ["extra"]] or out[4][:2] == [["fc.bias"], ["extra"]]
    assert out[4][3] == "<All keys matched successfully>"


@needs_torch
def test_load_state_dict_errors_match_torch():
    ours, theirs = both(_load_errors)
    assert ours == theirs


def test_load_state_dict_copies_in_place():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    w = b.weight
    with hookgrad.no_grad():
        a.weight.fill_(1.5)
        a.bias.fill_(-2.0)
    res = b.load_state_dict(a.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert b.weight is w and b.weight.is_leaf and b.weight.requires_grad
    assert b.weight.tolist() == [[1.5, 1.5], [1.5, 1.5]] and b.bias.tolist() == [-2.0, -2.0]


def test_load_state_dict_assign_keeps_requires_grad():
    b = nn.Linear(2, 2)
    b.bias.requires_grad_(False)
    b.load_state_dict({"weight": hookgrad.full((2, 2), 3.0), "bias": hookgrad.zeros(2)},
                      assign=True)
    assert type(b.weight) is nn.Parameter and b.weight.requires_grad
    assert type(b.bias) is nn.Parameter and not b.bias.requires_grad
    assert b.weight.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_load_state_dict_failure_leaves_module_unchanged():
    m = nn.Linear(2, 2)
    before = m.weight.tolist()
    with pytest.raises(RuntimeError, match="size mismatch for bias"):
        m.load_state_dict({"weight": hookgrad.zeros(2, 2), "bias": hookgrad.zeros(3)})
    # as PyTorch: entries that match are copied, the error reports the others
    assert m.weight.tolist() == [[0.0, 0.0], [0.0, 0.0]] != before


def _state_dict_hooks(L):
    log = []
    m = L.nn.Sequential(L.nn.Linear(1, 1))
    m.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(["pre", prefix, keep]))
    m[0].register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(["pre0", prefix]))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(["post", list(sd)]))
    sd = m.state_dict()
    m.register_load_state_dict_post_hook(
        lambda mod, keys: log.append(["lpost", list(keys.missing_keys),
                                      list(keys.unexpected_keys)]))
    m[0].register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: log.append(["lpre0",
                                                                                  prefix]))
    m.load_state_dict(sd)

    def clear(mod, keys):
        keys.unexpected_keys.clear()

    m.register_load_state_dict_post_hook(clear)
    sd["junk"] = L.ones(1)
    m.load_state_dict(sd)  # the hook clears the unexpected key: no error
    bad = L.nn.Linear(1, 1)
    bad.register_state_dict_post_hook(lambda *a: {})
    log += errors(bad.state_dict)
    return log


def test_state_dict_hooks():
    log = _state_dict_hooks(hookgrad)
    assert log[:4] == [["pre", "", False], ["pre0", "0."], ["post", ["0.weight", "0.bias"]],
                       ["lpre0", "0."]]
    assert log[-1] == ["RuntimeError", "state_dict post-hook must return None"]


@needs_torch
def test_state_dict_hooks_match_torch():
    ours, theirs = both(_state_dict_hooks)
    assert ours == theirs


def _extra_state(L):
    class E(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.v = 1

        def get_extra_state(self):
            return {"v": self.v}

        def set_extra_state(self, s):
            self.v = s["v"]

    s = L.nn.Sequential(E())
    sd = s.state_dict()
    sd["0._extra_state"] = {"v": 7}
    s.load_state_dict(sd)
    out = [list(sd), s[0].v]
    out += errors(lambda: s.load_state_dict({}),
                  lambda: L.nn.Linear(1, 1).load_state_dict(
                      {"weight": L.ones(1, 1), "bias": L.ones(1), "_extra_state": 1}))
    return out


@needs_torch
def test_extra_state_matches_torch():
    ours, theirs = both(_extra_state)
    assert ours == theirs
    assert ours[:2] == [["0._extra_state"], 7]


def test_state_dict_positional_args_warn():
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        keys = list(nn.Linear(1, 1).state_dict(None, "pre."))
    assert keys == ["pre.weight", "pre.bias"]


# --------------------------------------------------------------------------- modes, grads


def _modes(L):
    n = make_net(L)
    n.eval()
    a = [m.training for m in n.modules()]
    n.train()
    b = [m.training for m in n.modules()]
    b += errors(lambda: n.train("yes"))
    n.requires_grad_(False)
    c = [p.requires_grad for p in n.parameters()]
    seen = []
    n.apply(lambda m: seen.append(type(m).__name__))
    return a, b, c, seen


def test_train_eval_requires_grad_apply():
    a, b, c, seen = _modes(hookgrad)
    assert not any(a) and all(b[:-1]) and not any(c)
    assert b[-1] == ["ValueError", "training mode is expected to be boolean"]
    assert seen == ["Linear", "Linear", "Linear", "ModuleList", "Linear", "Sequential", "Net"]


@needs_torch
def test_modes_match_torch():
    ours, theirs = both(_modes)
    assert ours == theirs


def test_zero_grad():
    m = nn.Linear(2, 1)
    m(hookgrad.ones(1, 2)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is g and g.tolist() == [[0.0, 0.0]]
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_to_and_casts_keep_parameter_objects():
    m = nn.Linear(2, 2)
    m.register_buffer("idx", hookgrad.tensor([1, 2]))
    w = m.weight
    m(hookgrad.ones(1, 2)).sum().backward()
    m.half()
    assert m.weight is w and m.weight.dtype is hookgrad.float16
    assert m.weight.grad.dtype is hookgrad.float16 and not m.idx.dtype.is_floating_point
    assert m.to(hookgrad.float32) is m and m.weight.dtype is hookgrad.float32
    m.to(dtype=hookgrad.bfloat16)
    assert m.bias.dtype is hookgrad.bfloat16
    m.to(hookgrad.ones(1, dtype=hookgrad.float16))
    assert m.weight.dtype is hookgrad.float16
    m.float().to("cpu")
    assert m.weight.dtype is hookgrad.float32 and m.weight.device.type == "cpu"
    assert m(hookgrad.ones(1, 2)).dtype is hookgrad.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex "
                                        "dtypes, but got desired dtype=hookgrad.int32"):
        m.to(hookgrad.int32)


# --------------------------------------------------------------------------- repr


@needs_torch
def test_repr_matches_torch():
    def reprs(L):
        return (repr(make_net(L)),
                repr(L.nn.ModuleList([L.nn.Linear(1, 1)] * 3 + [L.nn.Identity()])),
                repr(L.nn.ModuleList()), repr(L.nn.Bilinear(2, 3, 4)), repr(L.nn.Module()))
    ours, theirs = both(reprs)
    assert ours == theirs


def test_repr_nested():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Linear(1, 2))

        def extra_repr(self):
            return "k=1"

    assert repr(M()) == ("M(\n  k=1\n  (seq): Sequential(\n    (0): Linear(in_features=1, "
                         "out_features=2, bias=True)\n  )\n)")


# --------------------------------------------------------------------------- registration hooks


def _registration_hooks(L):
    mm = L.nn.modules.module
    log = []
    hs = [mm.register_module_buffer_registration_hook(
        lambda m, n, b: log.append(["buf", n]) or (b * 2 if b is not None else None)),
        mm.register_module_parameter_registration_hook(lambda m, n, p: log.append(["param", n])),
        mm.register_module_module_registration_hook(lambda m, n, s: log.append(["mod", n]))]
    try:
        m = L.nn.Module()
        m.register_buffer("b", L.ones(1))
        m.w = L.nn.Parameter(L.ones(1))
        m.sub = L.nn.Linear(1, 1)
        m.add_module("sub2", None)
    finally:
        for h in hs:
            h.remove()
    m.register_buffer("c", L.ones(1))
    return log, m.b


def test_registration_hooks():
    log, b = _registration_hooks(hookgrad)
    assert log == [["buf", "b"], ["param", "w"], ["param", "weight"], ["param", "bias"],
                   ["mod", "sub"], ["mod", "sub2"]]
    assert b.tolist() == [2.0]


@needs_torch
def test_registration_hooks_match_torch():
    ours, theirs = both(_registration_hooks)
    assert ours == theirs


# --------------------------------------------------------------------------- parameter, buffer


def test_parameter_basics():
    t = hookgrad.ones(2, requires_grad=True) * 2
    p = nn.Parameter(t)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert not nn.Parameter(hookgrad.ones(2), requires_grad=False).requires_grad
    assert list(nn.Parameter().shape) == [0]
    assert type(p * 2) is hookgrad.Tensor and isinstance(p, hookgrad.Tensor)
    with hookgrad.no_grad():
        assert nn.Parameter(hookgrad.ones(1)).requires_grad
    assert repr(nn.Parameter(hookgrad.tensor([1.0, 2.0]))) == (
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)")
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(hookgrad.tensor([1, 2]))


def test_parameter_deepcopy_and_pickle():
    m = nn.Linear(2, 1)
    m(hookgrad.ones(1, 2)).sum().backward()
    m.register_forward_hook(lambda *a: None)
    c = copy.deepcopy(m)
    assert c.weight is not m.weight and type(c.weight) is nn.Parameter
    assert c.weight.grad is None and c.weight.requires_grad  # as PyTorch: .grad not copied
    assert c.weight.tolist() == m.weight.tolist() and len(c._forward_hooks) == 1
    s = nn.Sequential(nn.Linear(2, 2))
    s2 = pickle.loads(pickle.dumps(s))
    assert list(s2.state_dict()) == ["0.weight", "0.bias"]
    assert type(s2[0].weight) is nn.Parameter and s2[0].weight.tolist() == s[0].weight.tolist()


def test_buffer_marker():
    src = hookgrad.ones(2, requires_grad=True) * 3
    b = nn.Buffer(src, persistent=False)
    assert type(b) is hookgrad.Tensor and isinstance(b, nn.Buffer)
    assert b.grad_fn is None and b.requires_grad and b.persistent is False
    assert not isinstance(hookgrad.ones(1), nn.Buffer)


# --------------------------------------------------------------------------- call path


def test_forward_unimplemented():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                                                  r'"forward" function'):
        nn.Module()(1)


def test_init_slots_skip_module_setattr_but_reach_a_co_base():
    # Module.__init__ sets its slots with the __setattr__ that follows the Module classes in
    # the MRO (object's, or a co-base's), never Module.__setattr__, as PyTorch's does
    from hookgrad import _watch
    from hookgrad.nn.modules._pytree import HOOK_DICTS

    def seen_by_co_base(L):
        class Recorder:
            def __setattr__(self, name, value):
                type(self).seen.append(name)
                object.__setattr__(self, name, value)

        class M(L.nn.Module, Recorder):
            seen = []
        before = _watch.epoch()
        m = M()
        if L is hookgrad:  # Module.__setattr__ counts a change; construction is none
            assert _watch.epoch() == before
        assert isinstance(m.__dict__["_parameters"], dict)
        return sorted(M.seen)

    seen = seen_by_co_base(hookgrad)
    assert {"training", "_parameters", "_buffers", "_modules", *HOOK_DICTS} <= set(seen)
    if torch is not None:
        assert seen == seen_by_co_base(torch)


@needs_torch
def test_public_methods_have_torch_signatures_and_docstrings():
    import inspect
    checked = 0
    for name in dir(torch.nn.Module):
        ours = getattr(nn.Module, name, None)
        theirs = getattr(torch.nn.Module, name)
        if name.startswith("_") or ours is None or not inspect.isfunction(theirs):
            continue
        sig = [(p.name, p.kind, p.default)
               for p in inspect.signature(ours).parameters.values()]
        want = [(p.name, p.kind, p.default)
                for p in inspect.signature(theirs).parameters.values()]
        assert sig == want, name
        assert inspect.getdoc(ours), name
        checked += 1
    assert checked > 40


# --------------------------------------------------------------------------- pytree


def test_pytree_leaves_and_roundtrip():
    net = make_net(hookgrad)
    leaves, treedef = jax.tree_util.tree_flatten(net)
    names = [k for k, _ in net.named_parameters()] + [k for k, _ in net.named_buffers()]
    expected = [t for _, t in net.named_parameters()] + [t for _, t in net.named_buffers()]
    assert len(leaves) == len(names)
    for leaf, t in zip(leaves, expected):
        assert leaf is t._data
    rebuilt = jax.tree_util.tree_unflatten(treedef, [x * 0 + 1 for x in leaves])
    assert type(rebuilt) is type(net) and rebuilt is not net
    assert [k for k, _ in rebuilt.named_parameters()] == [k for k, _ in net.named_parameters()]
    assert isinstance(rebuilt.fc.weight, nn.Parameter) and rebuilt.fc.weight.requires_grad
    assert rebuilt.fc.weight.tolist() == [[1.0, 1.0]] * 3
    assert rebuilt.p_none is None and rebuilt.tmp.tolist() == [1.0]
    assert list(rebuilt.state_dict()) == list(net.state_dict())
    assert net.fc.weight.tolist() != [[1.0, 1.0]] * 3  # the original is untouched
    assert jax.tree_util.tree_structure(rebuilt) == treedef


def test_pytree_shared_module_rebuilt_once():
    lin = nn.Linear(1, 1)
    s = nn.Sequential(lin, lin)
    leaves, treedef = jax.tree_util.tree_flatten(s)
    r = jax.tree_util.tree_unflatten(treedef, leaves)
    assert len(leaves) == 2 and r[0] is r[1] and r[0] is not lin


def test_pytree_through_jit_and_grad():
    hookgrad.manual_seed(0)
    m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    x = hookgrad.tensor([[1.0, 2.0], [-1.0, 0.5]])

    def loss(model, x):
        return (model(x) ** 2).sum()._data

    g = jax.grad(loss)(m, x)
    assert type(g) is nn.Sequential and type(g[0].weight) is nn.Parameter
    w0, b0, w1, b1 = (jnp.asarray(t._data) for t in m.parameters())

    def ref(w0, b0, w1, b1):
        h = x._data @ w0.T + b0
        return jnp.sum((h @ w1.T + b1) ** 2)

    expect = jax.grad(ref, argnums=(0, 1, 2, 3))(w0, b0, w1, b1)
    for got, want in zip(g.parameters(), expect):
        np.testing.assert_allclose(np.asarray(got._data), np.asarray(want), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(loss)(m, x), loss(m, x), rtol=1e-6)
    # the gradient module has the same structure: tree_map over (model, grads) works
    new = jax.tree_util.tree_map(lambda p, gp: p - 0.1 * gp, m, g)
    np.testing.assert_allclose(np.asarray(new[0].weight._data),
                               np.asarray(w0 - 0.1 * expect[0]), rtol=1e-6)


def test_pytree_with_optax():
    optax = pytest.importorskip("optax")
    m = nn.Linear(2, 1)
    before = m.weight.tolist()
    g = jax.grad(lambda mod: mod(hookgrad.ones(1, 2)).sum()._data)(m)
    opt = optax.sgd(0.5)
    state = opt.init(m)
    updates, state = opt.update(g, state, m)
    new = optax.apply_updates(m, updates)
    np.testing.assert_allclose(new.weight.tolist(), np.asarray(before) - 0.5, rtol=1e-6)
    np.testing.assert_allclose(new.bias.tolist(), np.asarray(m.bias.tolist()) - 0.5, rtol=1e-6)


def test_pytree_rebuilt_module_keeps_hooks_independently():
    m = nn.Linear(1, 1)
    log = []
    m.register_forward_hook(lambda mod, a, o: log.append("hook"))
    r = jax.tree_util.tree_map(lambda v: v, m)
    r(hookgrad.ones(1, 1))
    assert log == ["hook"]
    r.register_forward_hook(lambda mod, a, o: log.append("only on copy"))
    m(hookgrad.ones(1, 1))
    assert log == ["hook", "hook"]
    plain = jax.tree_util.tree_map(lambda v: v, nn.Linear(1, 1))
    assert "_pytree_origin" in plain.__dict__
    assert "_pytree_origin" not in pickle.loads(pickle.dumps(plain)).__dict__
