"""torch.autograd's smaller names against PyTorch's: engine flags, the layout policy, the
removed ``variable``, the legacy NestedIOFunction and the module's typing re-exports."""
import collections.abc
import typing

import pytest

import hookgrad
from hookgrad._autograd import grad_mode
from tests.differential import raises, same_as_torch, torch


def test_engine_flags_follow_their_setters():
    def run(L):
        flags = [L.autograd.is_multithreading_enabled(), L.autograd.is_view_replay_enabled()]
        with L.autograd.set_multithreading_enabled(False):
            flags.append(L.autograd.is_multithreading_enabled())
        with L.autograd.grad_mode._force_original_view_tracking(True):
            flags.append(L.autograd.is_view_replay_enabled())
        return flags + [L.autograd.is_multithreading_enabled(),
                        L.autograd.is_view_replay_enabled()]

    assert same_as_torch(run) == [True, False, False, True, True, False]


def _layout_enabled(L):
    return (grad_mode._is_grad_layout_enforcement_enabled() if L is hookgrad
            else L._C._is_grad_layout_enforcement_enabled())


def test_enforce_grad_layout_policy_sets_restores_and_decorates():
    def run(L):
        seen = [_layout_enabled(L)]
        with L.autograd.enforce_grad_layout_policy(False):
            seen.append(_layout_enabled(L))
        seen.append(_layout_enabled(L))

        @L.autograd.enforce_grad_layout_policy(False)
        def inside():
            return _layout_enabled(L)

        seen += [_layout_enabled(L), inside(), _layout_enabled(L)]
        p = L.ones(2, 3, requires_grad=True)
        with L.autograd.enforce_grad_layout_policy(False):
            (p * 2).sum().backward()
        return seen + [p.grad.tolist()]

    assert same_as_torch(run)[:6] == [True, False, True, True, False, True]


def test_variable_is_removed():
    got = same_as_torch(lambda L: [raises(L.autograd.variable, L.ones(1)),
                                   L.autograd.variable.Variable is L.autograd.Variable])
    assert got == [{"raises": "RuntimeError", "message": "torch.autograd.variable(...) is "
                    "deprecated, use torch.tensor(...) instead"}, True]


def test_nested_io_function_is_a_function_that_does_not_run():
    assert issubclass(hookgrad.autograd.NestedIOFunction, hookgrad.autograd.Function)
    assert hookgrad.autograd.function.NestedIOFunction is hookgrad.autograd.NestedIOFunction

    class Double(hookgrad.autograd.NestedIOFunction):
        def forward_extended(self, x):
            return x * 2

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        double = Double()  # PyTorch's warning for any instantiated Function
    with pytest.raises(NotImplementedError, match="torch.autograd.function.NestedIOFunction"):
        double(hookgrad.ones(2))  # PyTorch's raises too: its legacy path is gone


def test_typing_names_are_pytorchs():
    names = {"Mapping": collections.abc.Mapping, "Sequence": collections.abc.Sequence,
             "cast": typing.cast, "overload": typing.overload}
    for name, obj in names.items():
        assert getattr(hookgrad.autograd, name) is obj
        if torch is not None:
            assert getattr(torch.autograd, name) is obj


def test_variable_module_holds_the_class_the_function_shadows():
    def run(L):
        import importlib
        module = importlib.import_module(L.__name__ + ".autograd.variable")
        return [module.Variable is L.autograd.Variable, type(module.Variable).__name__,
                module.Variable.__module__.split(".", 1)[1], callable(L.autograd.variable),
                L.autograd.variable is not module]

    assert same_as_torch(run) == [True, "VariableMeta", "autograd.variable", True, True]
