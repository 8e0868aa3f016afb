"""A replayed region whose nodes wait for gradients from outside it (``fusion._replay``):
a gradient an earlier node delivered into the buffer of a node of the region goes into
the region's program as an argument (``_replayed_parts``). A plan remembers where
gradients waited when it was made (``_Plan.waits``); a replay where the same nodes wait
runs the plan's program as it is, one where other nodes wait works its parts out anew.
Either way the gradients are PyTorch's."""
import collections

import pytest

from hookgrad._engine import fusion
from tests.differential import py, same_as_torch

X = [[0.1, -0.4, 0.7], [0.3, 0.2, -0.9]]


@pytest.fixture
def parts(monkeypatch):
    """Per replay: (the plan's waiting positions, the replay's, whether the plan's
    parts ran as they were)."""
    monkeypatch.setattr(fusion, "_seen", {})
    monkeypatch.setattr(fusion, "_compiled", collections.OrderedDict())
    monkeypatch.setattr(fusion, "_plans", {})
    done = []
    real = fusion._replayed_parts

    def spy(plan, region, saved, buffers, exact):
        waiting = tuple(i for i, cur in enumerate(region) if i and cur in buffers
                        and buffers[cur][0] is not None)
        found = real(plan, region, saved, buffers, exact)
        done.append((plan.waits, waiting, found[1] is plan.parts))
        return found
    monkeypatch.setattr(fusion, "_replayed_parts", spy)
    return done


# which hooked branches feed the chain's nodes, per step: "a" into ``h``'s node, "b" into
# ``g``'s (a hooked node ends a region: its gradient waits in the chain's buffer)
STEPS = ["ab", "ab", "ab", "ab", "b", "a", "", "ab", "ab", "a", "b", "ab", "ab"]


def test_gradients_waiting_in_a_replayed_region_where_its_plan_had_them_or_not(parts):
    def f(L):
        x = L.tensor(X, requires_grad=True)
        out = []
        for feeds in STEPS:
            x.grad = None
            h = x * 1.5
            g = h.sin()
            loss = (g * 2.0).tanh().sum()
            if "a" in feeds:
                a = h.exp()
                a.register_hook(lambda t: t * 1)
                loss = loss + a.sum()
            if "b" in feeds:
                b = (g * 5.0).cos()
                b.register_hook(lambda t: t * 3)
                loss = loss + b.sum()
            loss.backward()
            out.append(py(x.grad))
        return out
    same_as_torch(f)
    two = [(now, same) for made, now, same in parts if len(made) == 2]
    assert (two[0][0], True) in two  # both wait again: the plan's program as it is
    assert any(len(now) < 2 and not same for now, same in two)  # others: worked out anew
    assert all(same == (now == made) for made, now, same in parts)
