"""A compiled step guards the Module attributes its trace read (hookgrad._compile.reads):
changing one traces again, however it is written; changing one nothing read keeps the
program, and the results stay the eager loop's. A read the lookup cannot see (the step
taking a Module's ``__dict__``, a class of its own ``__getattribute__``) guards every
plain value of that Module, as before."""
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from tests.test_compile import _arr
from tests.test_compile_steady import _batches, _loop, _same, checks  # noqa: F401 - a fixture


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)
        self.temperature = 1.0   # read by forward
        self.label = "unread"    # read by nothing

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x))) / self.temperature


class DictRead(Scaled):
    def forward(self, x):   # the value taken from ``__dict__``: not a lookup
        return self.fc2(F.relu(self.fc1(x))) / self.__dict__["temperature"]


class OwnLookup(Scaled):
    def __getattribute__(self, name):
        return object.__getattribute__(self, name)


class HookRead(Scaled):
    def forward(self, x):   # read by a hook alone
        return self.fc2(F.relu(self.fc1(x)))


def _gain_hook(mod, gi, go):
    return (gi[0] * mod.gain,)


def _model(cls):
    hg.manual_seed(0)
    m = cls()
    if cls is HookRead:
        m.fc2.gain = 1.0
        m.fc2.register_full_backward_hook(_gain_hook)
    return m, hg.optim.AdamW(m.parameters(), lr=0.05, weight_decay=0.01)


_WRITES = {
    "setattr": setattr,
    "dict_written": lambda m, k, v: m.__dict__.__setitem__(k, v),
    "object_setattr": object.__setattr__,
}

# (Module class, the Module changed, attribute, new value, traces in all)
_CHANGES = {
    "read": (Scaled, "", "temperature", 2.0, 2),
    "read_by_a_hook": (HookRead, "fc2", "gain", 0.5, 2),
    "unread": (Scaled, "", "label", "changed", 1),
    "unread_of_a_layer": (Scaled, "fc1", "in_features", 99, 1),
    "taken_from_the_dict": (DictRead, "", "temperature", 2.0, 2),
    "unread_taken_with_the_dict": (DictRead, "", "label", "changed", 2),
    "read_by_an_own_lookup": (OwnLookup, "", "temperature", 2.0, 2),
    "unread_of_an_own_lookup": (OwnLookup, "", "label", "changed", 2),
}


def _run(cls, path, name, value, write, compiled, checks):
    """Seven calls, the attribute written before the fourth: the losses, the parameters,
    whether the calls before the change and the last re-ran steadily, and the traces."""
    m, opt = _model(cls)
    step = _loop(m, opt)
    if compiled:
        step = hg.compile(step)
    losses, steady = [], []
    for i, (x, y) in enumerate(_batches(7)):
        if i in (2, 6):
            checks.clear()
        if i == 3:
            steady.append(checks == [])
            _WRITES[write](m.get_submodule(path), name, value)
        losses.append(_arr(step(x, y)))
    steady.append(checks == [])
    return losses, m, steady, getattr(step, "trace_count", None)


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
@pytest.mark.parametrize("write", sorted(_WRITES))
@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_a_read_attribute_changed_traces_again_an_unread_one_keeps_the_program(
        checks, change, write):
    cls, path, name, value, traces = _CHANGES[change]
    eager, me, _, _ = _run(cls, path, name, value, write, False, checks)
    losses, mc, steady, count = _run(cls, path, name, value, write, True, checks)
    for i, (c, e) in enumerate(zip(losses, eager)):
        np.testing.assert_allclose(c, e, rtol=1e-5, err_msg=f"call {i}")
    _same(me, mc, "after the loops")
    assert count == traces
    assert steady == [True, True]   # before the change, and again after it


def test_eager_calls_keep_pythons_own_lookup_after_a_trace_that_raised():
    m, _ = _model(Scaled)

    @hg.compile(fullgraph=True)
    def fails(x):
        return m(x).item() + 1   # a host read: no program
    with pytest.raises(Exception):
        fails(hg.ones(2, 3))
    assert "__getattribute__" not in vars(nn.Module)
    assert type(m).__getattribute__ is object.__getattribute__
