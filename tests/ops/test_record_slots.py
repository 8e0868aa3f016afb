"""``stages.record._record`` builds nodes with Node.__init__ inlined (it runs once per op): a
slot it forgets would surface only as an AttributeError deep in some backward. Every
slot of every recorded node kind must be set."""
import pytest

import hookgrad
from hookgrad._ops.op_node import NodeSite, OpNode
from tests.differential import needs_torch, same_as_torch


def _slots(node):
    names = []
    for cls in type(node).__mro__:
        names += [s for s in getattr(cls, "__slots__", ()) if s != "__weakref__"]
    return names


# what only a site's memo (``stages/record.py``) keeps: unset off a site
_MEMO = ("needed", "keep", "saves", "plan")


def _unset(node):
    missing = []
    for name in _slots(node):
        try:
            getattr(node, name)
        except AttributeError:
            missing.append(name)
    site = getattr(node, "_site", None)
    for name in NodeSite.__slots__:  # the fields it shares with its op site's
        if site is not None and name not in _MEMO and not hasattr(site, name):
            missing.append(f"_site.{name}")
    return missing


def _leaf():
    return hookgrad.tensor([1.0, -2.0, 3.0], requires_grad=True)


CASES = {
    "saves all (mul)": lambda: _leaf() * _leaf(),
    "saves the output (exp)": lambda: _leaf().exp(),
    "saves nothing (sum)": lambda: _leaf().sum(),
    "a constant operand": lambda: _leaf() * 2.0,
    "multi-output (max over a dim)": lambda: _leaf().reshape(1, 3).max(dim=1)[0],
    "in place": lambda: _leaf().clone().mul_(3.0),
    "conditional saving (integer index)": lambda: _leaf()[hookgrad.tensor([0, 2])],
}


@pytest.mark.parametrize("make", list(CASES.values()), ids=list(CASES))
def test_every_slot_of_a_recorded_node_is_set(make):
    out = make()
    node = out.grad_fn
    assert isinstance(node, OpNode)
    assert _unset(node) == []
    out.sum().backward()  # and the node it made runs


def test_every_slot_is_set_under_saved_tensor_hooks():
    with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        out = _leaf() * _leaf()
    assert _unset(out.grad_fn) == []
    out.sum().backward()


KEY_CASES = dict(CASES, **{
    "an operand not requiring grad": lambda: _leaf() * hookgrad.tensor([1.0, 2.0, 3.0]),
    "add (saves nothing of its Tensors)": lambda: _leaf() + hookgrad.tensor([1.0, 2.0, 3.0]),
    "a mask (no edge)": lambda: hookgrad.where(_leaf() > 0, _leaf(), 0.0),
    "an integer Tensor operand": lambda: _leaf() * hookgrad.tensor([1, 2, 3]),
})


@pytest.mark.parametrize("make", list(KEY_CASES.values()), ids=list(KEY_CASES))
def test_the_vjp_key_recorded_is_the_one_backward_works_out(make):
    # the record stage works out ``want`` and the vjp key as it classifies the arguments
    # (``OpNode._keys`` inlined) and keeps them on the node's site; worked out again from
    # the node, they must agree
    node = make().grad_fn
    recorded = (node._site.want, node._site.vkey)
    assert recorded[1] is not None
    assert node._keys() == recorded



def _mul_site_calls(patterns, xv, yv):
    """``x * y`` on one op site (same shapes, deferred after the first call) for each of
    ``patterns``, which operands require grad; yields each call's grads, after checking
    that the node's vjp key is the one worked out from the node itself."""
    for rx, ry in patterns:
        x = hookgrad.tensor(xv, requires_grad=rx)
        y = hookgrad.tensor(yv, requires_grad=ry)
        x._data, y._data  # small values are held on the host: in XLA now, deferred ops
        out = x * y
        node = out.grad_fn
        assert node._keys() == (node._site.want, node._site.vkey)
        out.sum().backward()
        yield x.grad, y.grad


def test_a_site_whose_operands_require_grad_otherwise_saves_what_they_need():
    # the record stage reuses what the last node of an op site needed saved while the
    # positions with an edge are the same (``lazy.Site``); other positions: worked anew
    xv, yv = [1.0, -2.0, 3.0, 5.0, -7.0], [0.5, 4.0, -1.5, 2.0, 3.0]  # (a shape of its own)
    pats = [(True, False), (True, False), (False, True), (True, True), (True, False),
            (False, True), (False, True), (True, False)]
    for (rx, ry), (gx, gy) in zip(pats, _mul_site_calls(pats, xv, yv)):
        assert (gx is not None) == rx and (gy is not None) == ry
        if rx:
            assert gx.tolist() == yv
        if ry:
            assert gy.tolist() == xv


def test_a_site_works_out_what_its_nodes_save_once(monkeypatch):
    from hookgrad._ops.stages import record
    calls = []
    real = record.needed_inputs
    monkeypatch.setattr(record, "needed_inputs", lambda *a: calls.append(1) or real(*a))
    xv, yv = [1.0, -2.0, 3.0, 4.0], [0.5, 4.0, -1.5, 2.0]  # (a shape of its own)
    list(_mul_site_calls([(True, False)] * 3, xv, yv))  # the first runs eagerly: no site
    calls.clear()
    list(_mul_site_calls([(True, False)] * 4, xv, yv))
    assert calls == []
    # another operand requires grad: worked out, found other than the last node's (the
    # arguments saved by it are saved again by this call's), then remembered
    list(_mul_site_calls([(False, True)] * 3, xv, yv))
    assert calls == [1, 1]


def test_the_nodes_of_one_op_site_share_their_fixed_fields():
    # the fields a node shares with its op site's (op, statics, ``want``, vjp key, output
    # avals) are worked out once per op site and kept (``lazy.Site``): one ``NodeSite``,
    # which the backward's plans compare by identity first (``_engine/fusion.py``)
    x = hookgrad.tensor([1.0, -2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    x._data  # small values are held on the host: in XLA now, deferred ops
    sites = [(x * x).grad_fn._site for _ in range(4)]  # the first runs eagerly
    assert all(s is sites[1] for s in sites[2:])
    assert sites[0].vkey == sites[1].vkey  # (the first may be a node of its own)
    y = hookgrad.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y._data
    other = (x * y).grad_fn._site  # another argument saved: its own key
    assert other.vkey != sites[1].vkey


def test_an_op_with_a_mask_shares_its_sites_fields_whichever_operand_requires_grad():
    # ``where``'s condition has no edge (``nondiff``) and its saving rule reads nothing of
    # whether it requires grad: its nodes share their site's ``NodeSite`` too, one per
    # pattern of edges, and the gradients are the ones worked out afresh. (``y * 2.0`` of
    # a ``y`` not requiring grad is held on the host: ``where`` then takes apply's general
    # path, which hands the record stage the site all the same)
    def f(L):
        cond = L.tensor([True, False, True, True, False, False, True])
        xv, yv = [1.0, -2.0, 3.0, 5.0, -7.0, 2.0, 0.5], [0.5, 4.0, -1.5, 2.0, 3.0, 1.0, 6.0]
        out = []
        for rx, ry in [(True, False)] * 3 + [(False, True), (True, True), (True, False)]:
            x, y = L.tensor(xv, requires_grad=rx), L.tensor(yv, requires_grad=ry)
            if L is hookgrad:
                cond._data, x._data, y._data  # in XLA now: deferred ops (a site)
            r = L.where(cond, x.exp(), y * 2.0)
            if L is hookgrad:
                node = r.grad_fn
                sites.append(node._site)
                assert node._keys() == (node._site.want, node._site.vkey)
            r.sum().backward()
            out.append([None if t.grad is None else t.grad.tolist() for t in (x, y)])
        return out
    sites = []
    same_as_torch(f)
    assert sites[2] is sites[1]  # (the first runs eagerly: no site)
    assert sites[3] is not sites[2] and sites[3].want != sites[2].want


def test_an_op_at_positions_shares_a_fixed_part_per_positions():
    # a slice's positions are arguments of its deferred program (one ``lazy.Site`` for
    # all of them) but statics of its node: its nodes share a ``NodeSite`` per positions
    # and ``want``, and the gradients are the ones worked out afresh
    def f(L):
        x = L.tensor([1.0, -2.0, 3.0, 5.0, -7.0, 2.0, 0.5, 4.0, 6.0], requires_grad=True)
        out = []
        for start in [1, 1, 1, 3, 3, 1, 3]:
            x.grad = None
            if L is hookgrad:
                x._data  # in XLA now: deferred ops (a site)
            y = x.exp()[start:start + 4]
            if L is hookgrad:
                node = y.grad_fn
                assert node._keys() == (node._site.want, node._site.vkey)
                sites.append((start, node._site))
            (y * y).sum().backward()
            out.append(x.grad.tolist())
        return out
    sites = []
    same_as_torch(f)
    at = {}
    for start, site in sites[1:]:  # (the first runs eagerly: no site)
        assert at.setdefault(start, site) is site
    assert at[1] is not at[3] and at[1].key != at[3].key


def _site_packs(lib):
    # ``(x * k).exp()`` on one op site each step (the integer ``k`` kept whatever requires
    # grad, exp's result saved); the last steps under saved-tensor hooks, after the site
    # has kept what its nodes save: the packs must be PyTorch's all the same
    got = []
    for step in range(7):
        x = lib.tensor([1.0, -2.0, 0.5, 0.25, 3.0, 1.5, -1.0], requires_grad=True)
        k = lib.tensor([1, 2, 3, 1, 2, 3, 1])
        getattr(x, "_data", None), getattr(k, "_data", None)  # hookgrad: in XLA, deferred
        packs = []
        if step < 4:
            y = (x * k).exp()
        else:
            with lib.autograd.graph.saved_tensors_hooks(
                    lambda t: packs.append(t.tolist()) or t, lambda t: t):
                y = (x * k).exp()
        y.sum().backward()
        got.append((packs, x.grad.tolist()))
    return got


@needs_torch
def test_a_site_keeps_what_its_nodes_save_and_saved_tensor_hooks_still_pack_it():
    got = same_as_torch(_site_packs)
    assert [len(p) for p, _ in got] == [0, 0, 0, 0, 2, 2, 2]
