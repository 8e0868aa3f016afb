"""hookgrad.utils.hooks: RemovableHandle, unserializable_hook, warn_if_has_hooks."""
import gc
import pickle
import warnings
from collections import OrderedDict

import pytest

import hookgrad as hg
from hookgrad.utils.hooks import RemovableHandle, unserializable_hook, warn_if_has_hooks


def test_ids_increase_and_remove_is_idempotent():
    d = OrderedDict()
    h1, h2 = RemovableHandle(d), RemovableHandle(d)
    assert h2.id > h1.id
    d[h1.id], d[h2.id] = "a", "b"
    h1.remove()
    h1.remove()
    assert list(d.values()) == ["b"]


def test_extra_dicts_single_and_list():
    d, e1, e2 = OrderedDict(), OrderedDict(), OrderedDict()
    h = RemovableHandle(d, extra_dict=[e1, e2])
    d[h.id] = e1[h.id] = e2[h.id] = 1
    h.remove()
    assert (len(d), len(e1), len(e2)) == (0, 0, 0)
    h = RemovableHandle(d, extra_dict=e1)
    d[h.id] = e1[h.id] = 1
    with h:
        pass
    assert (len(d), len(e1)) == (0, 0)


def test_dead_dict_removes_nothing():
    d = OrderedDict()
    h = RemovableHandle(d)
    del d
    gc.collect()
    h.remove()  # no error


def test_pickle_round_trip_keeps_next_id_ahead():
    d = OrderedDict()
    h = RemovableHandle(d)
    d[h.id] = "hook"
    blob = pickle.dumps((d, h))
    d2, h2 = pickle.loads(blob)
    assert h2.id == h.id and list(d2) == [h.id]
    h2.remove()
    assert len(d2) == 0 and len(d) == 1
    assert RemovableHandle(OrderedDict()).id > h.id


def test_pickle_with_extra_dict():
    d, e = OrderedDict(), OrderedDict()
    h = RemovableHandle(d, extra_dict=e)
    d[h.id] = e[h.id] = 1
    d2, e2, h2 = pickle.loads(pickle.dumps((d, e, h)))
    h2.remove()
    assert (len(d2), len(e2)) == (0, 0)


def test_unserializable_hook_and_warn_if_has_hooks():
    @unserializable_hook
    def quiet(g):
        return g

    assert quiet.__torch_unserializable__ is True
    x = hg.tensor([1.0], requires_grad=True)
    x.register_hook(quiet)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_has_hooks(x)
    y = hg.tensor([1.0], requires_grad=True)
    y.register_hook(lambda g: g)
    with pytest.warns(UserWarning, match="will not be serialized"):
        warn_if_has_hooks(y)


def test_pickling_tensor_with_hooks_warns_and_drops_hooks():
    y = hg.tensor([1.0, 2.0], requires_grad=True)
    y.register_hook(lambda g: g * 100)
    with pytest.warns(UserWarning, match="will not be serialized"):
        blob = pickle.dumps(y)
    z = pickle.loads(blob)
    assert z.tolist() == [1.0, 2.0] and z.requires_grad and z._backward_hooks is None
    (z * 1).sum().backward()
    assert z.grad.tolist() == [1.0, 1.0]
