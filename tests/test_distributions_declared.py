"""What each distribution class declares, against PyTorch: ``arg_constraints`` and
``support`` (declared on the class, dependent, or computed per instance), the
``__init__`` signature and where the class lives; the relaxations' ``has_rsample`` and
how they validate their base; and the joined constraints ``cat``/``stack`` (their
parts' checks, discreteness and event dimension)."""
import inspect
import re

import pytest

from tests.differential import raises, same_as_torch

torch = pytest.importorskip("torch")

# every public class, plus the relaxations' bases that PyTorch keeps in their modules
_NAMES = sorted(n for n, c in vars(torch.distributions).items()
                if n in torch.distributions.__all__ and isinstance(c, type)
                and issubclass(c, torch.distributions.Distribution))
_INNER = [("relaxed_bernoulli", "LogitRelaxedBernoulli"),
          ("relaxed_categorical", "ExpRelaxedCategorical")]


def _class(L, module, name):
    return getattr(getattr(L.distributions, module), name) if module else \
        getattr(L.distributions, name)


def _static(constraint, attr):
    try:
        return getattr(constraint, attr)
    except NotImplementedError as e:  # PyTorch's: not known without an instance
        return str(e)


def _declared(L, cls, attr):
    # read on the class: declared data, a dependent constraint, or a plain property
    value = getattr(cls, attr)
    if isinstance(value, dict):
        return {k: repr(v) for k, v in value.items()}
    if L.distributions.constraints.is_dependent(value):
        return ["dependent", *(_static(value, a) for a in ("is_discrete", "event_dim"))]
    return repr(value) if isinstance(value, L.distributions.constraints.Constraint) \
        else type(value).__name__


@pytest.mark.parametrize("module,name", [(None, n) for n in _NAMES] + _INNER,
                         ids=lambda v: v or "")
def test_a_distribution_class_declares_what_pytorchs_does(module, name):
    def run(L):
        cls = _class(L, module, name)
        sig = inspect.signature(cls.__init__)
        return {"module": cls.__module__.split(".", 1)[1], "qualname": cls.__qualname__,
                "init": [(p.name, p.kind.name, repr(p.default).replace(L.__name__, "L"))
                         for p in sig.parameters.values()],
                **{a: _declared(L, cls, a) for a in ("arg_constraints", "support")}}
    got = same_as_torch(run)
    assert got["qualname"] == name


def test_the_relaxations_and_their_bases_declare_rsample_as_pytorchs():
    # PyTorch's LogitRelaxedBernoulli has rsample but leaves has_rsample False
    names = [("relaxed_bernoulli", "LogitRelaxedBernoulli"),
             ("relaxed_bernoulli", "RelaxedBernoulli"),
             ("relaxed_categorical", "ExpRelaxedCategorical"),
             ("relaxed_categorical", "RelaxedOneHotCategorical")]
    got = same_as_torch(lambda L: [getattr(getattr(L.distributions, m), n).has_rsample
                                   for m, n in names])
    assert got == [False, True, True, True]


def test_relaxations_validate_their_base_as_pytorchs_do():
    # with validation off by default and asked for: RelaxedBernoulli checks its own
    # parameters (its base validates by default), RelaxedOneHotCategorical's base does
    def run(L):
        D = L.distributions
        t, bad = L.tensor(0.5), L.tensor([0.2, -0.8])
        D.Distribution.set_default_validate_args(False)
        try:
            return [re.search(r"of distribution (\w+)", raises(
                        lambda: law(t, probs=bad, validate_args=True))["message"]).group(1)
                    for law in (D.RelaxedBernoulli, D.RelaxedOneHotCategorical)]
        finally:
            D.Distribution.set_default_validate_args(True)
    assert same_as_torch(run) == ["RelaxedBernoulli", "ExpRelaxedCategorical"]


def test_a_dependent_constraint_knows_only_what_it_was_given():
    def run(L):
        c = L.distributions.constraints
        made = c.dependent(is_discrete=True)
        return [c.is_dependent(made), made.is_discrete,
                raises(lambda: made.event_dim), raises(lambda: c.dependent.is_discrete),
                raises(lambda: made.check(L.zeros(1)))]
    got = same_as_torch(run)
    assert got[2]["message"] == ".event_dim cannot be determined statically"


def test_joined_constraints_check_each_part_as_pytorchs():
    def run(L):
        c = L.distributions.constraints
        cat = c.cat([c.positive, c.nonnegative_integer], dim=0, lengths=[2, 1])
        stack = c.stack([c.real, c.boolean], dim=-1)
        v = L.tensor([1.0, -2.0, 3.0])
        s = L.tensor([[0.5, 1.0], [2.0, 3.0]])
        return {"cat": [cat.check(v).tolist(), cat.is_discrete, cat.event_dim],
                "stack": [stack.check(s).tolist(), stack.is_discrete, stack.event_dim],
                "bad part": raises(lambda: c.stack([c.real, 1])),
                "bad lengths": raises(lambda: c.cat([c.real], lengths=[1, 2]))}
    got = same_as_torch(run)
    assert got["bad part"]["message"] == "All elements of cseq must be Constraint instances"
