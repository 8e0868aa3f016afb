"""The Tensor declares what ``hookgrad.compile`` does with each of its fields
(``Tensor._COMPILE_SNAPSHOT``/``_COMPILE_KEY``/``_COMPILE_LOCAL``): a field added to the
Tensor and to none of them fails here, before a trace could leak a traced value into it."""
import types

import jax.numpy as jnp
import pytest

import hookgrad
from hookgrad import Tensor, _watch
from hookgrad._compile import replay
from hookgrad._compile.state import _tensor_key
from hookgrad._watch import WatchedOrderedDict


def _no_grad_mul(t):
    with hookgrad.no_grad():
        t.mul_(2.0)


_WRITES = {
    "data_assigned": lambda t: setattr(t, "data", hookgrad.zeros(2, 2)),
    "in_place_op": _no_grad_mul,
    "grad_assigned": lambda t: setattr(t, "grad", hookgrad.ones(2, 2)),
    "grad_zeroed_in_place": lambda t: t.grad.zero_(),
    "requires_grad_": lambda t: t.requires_grad_(False),
    "hook": lambda t: t.register_hook(lambda g: g),
    "retain_grad_of_a_view": lambda t: t.view(4).retain_grad(),
    "detach_": lambda t: t.detach_(),
    "set_on_an_alias": lambda t: t.detach().set_(hookgrad.ones(2, 2)),
}


def _fields():
    slots = [s for s in Tensor.__slots__ if not s.startswith("__")]
    defaults = [k for k, v in vars(Tensor).items()
                if k.startswith("_") and not k.startswith("__") and not k.startswith("_COMPILE")
                and not callable(v) and not isinstance(v, (property, classmethod, staticmethod,
                                                             types.MemberDescriptorType))]
    return set(slots) | set(defaults)


def test_every_tensor_field_is_declared_for_the_compiled_mode():
    declared = (set(Tensor._COMPILE_SNAPSHOT) | set(Tensor._COMPILE_KEY) |
                set(Tensor._COMPILE_LOCAL))
    assert _fields() - declared == set(), "add the field to Tensor._COMPILE_*"
    assert declared - _fields() == set(), "a declared field the Tensor no longer has"


def test_snapshot_restores_every_snapshot_field():
    t = hookgrad.ones(2, requires_grad=True)
    t.grad = hookgrad.zeros(2)
    grad = t.grad
    before = {f: getattr(t, f) for f in Tensor._COMPILE_SNAPSHOT}
    grad_before = (grad._data, grad._version)
    snap = t._compile_snapshot()
    for f in Tensor._COMPILE_SNAPSHOT:
        setattr(t, f, object())
    grad._data, grad._version = jnp.full(2, 7.0), 5
    t._compile_restore(snap)
    assert {f: getattr(t, f) for f in Tensor._COMPILE_SNAPSHOT} == before
    assert t._grad is grad and (grad._data, grad._version) == grad_before


def test_the_cache_key_and_replay_flags_see_every_key_field():
    t = hookgrad.ones(2, requires_grad=True)
    y = (t * 2).sum()
    acc = t._grad_accumulator()  # the key reads a node's hooks, not its identity
    acc.register_prehook(lambda grads: None)
    changes = {"_requires_grad": False, "grad_fn": y.grad_fn, "_retains_grad": True,
               "_backward_hooks": WatchedOrderedDict({0: print}),
               "_post_acc_hooks": WatchedOrderedDict({0: print}),
               "_acc": acc}
    assert set(changes) == set(Tensor._COMPILE_KEY)
    for field, value in changes.items():
        u = hookgrad.ones(2, requires_grad=True)
        key, flags = _tensor_key(u, 0), replay._FLAGS(u)
        setattr(u, field, value)
        assert _tensor_key(u, 0) != key, field
        assert replay._FLAGS(u) != flags, field
    # a re-run call reads the flags as the two slots and the instance's attributes
    # (``replay._META``): every other key field is an attribute default of the class
    slots = [f for f in Tensor._COMPILE_KEY if f in Tensor.__slots__]
    assert replay._META.__reduce__()[1][:2] == tuple(slots)
    for field in set(Tensor._COMPILE_KEY) - set(slots):
        assert not callable(vars(Tensor)[field]) and not hasattr(vars(Tensor)[field], "__get__")
    for field, value in changes.items():
        u = hookgrad.ones(2, requires_grad=True)
        meta = replay._META(u)
        meta = meta[:2] + (dict(meta[2]),)
        setattr(u, field, value)
        assert replay._META(u) != meta, field


def test_every_write_to_an_existing_tensor_is_counted():
    # a re-run compiled call skips comparing its state Tensors while this count holds
    fields = (set(Tensor._COMPILE_SNAPSHOT) | set(Tensor._COMPILE_KEY) |
              set(Tensor._COMPILE_LOCAL) | {"note"})
    for field in sorted(fields):
        t = hookgrad.ones(2, requires_grad=True)
        before = _watch.writes()
        setattr(t, field, getattr(t, field, None))
        assert _watch.writes() == before + 1, field
    t = hookgrad.ones(2)
    t.note = 1.0
    before = _watch.writes()
    del t.note
    assert _watch.writes() == before + 1


@pytest.mark.parametrize("write", sorted(_WRITES))
def test_writes_through_the_api_are_counted(write):
    t = hookgrad.ones(2, 2, requires_grad=True)
    t.grad = hookgrad.zeros(2, 2)
    before = _watch.writes()
    _WRITES[write](t)
    assert _watch.writes() > before, write


def test_an_op_makes_its_outputs_without_counting():
    x = hookgrad.ones(4, requires_grad=True)
    x._grad_accumulator()
    x[:1]   # its node and the record of its views: writes to ``x``, counted
    before = _watch.writes()
    y = (x * 2).sin()
    a, b = x.split(2)
    z = hookgrad.zeros(3)
    float(y.sum() + a.sum() + b.sum() + x[1:].sum() + z.sum())   # deferred values computed
    assert _watch.writes() == before
