"""The symbolic-shape names on plain numbers (PyTorch's eager results) and the Sym*
classes, against PyTorch."""
import pytest

import hookgrad
from tests.differential import raises, same_as_torch


def test_sym_helpers_compute_on_numbers():
    def run(L):
        return [L.sym_int(2.7), L.sym_int(-2.7), L.sym_int(5), L.sym_float(2), L.sym_not(1),
                L.sym_not(False), L.sym_max(1, 2.0), L.sym_max(3, 2), L.sym_min(3, 2),
                L.sym_min(1.5, 2), L.sym_sum([1, 2, 3]), L.sym_sum(1.5, 2), L.sym_sum(()),
                L.sym_ite(True, 1, 2), L.sym_ite(False, 1.0, 2.5), L.sym_sqrt(4),
                L.sym_sqrt(2.0), L.sym_fresh_size(3), L.sym_fresh_size(2.5)]
    got = same_as_torch(run)
    assert got[:3] == [2, -2, 5] and got[6] == 2.0 and got[15] == 2.0
    assert [type(v) for v in (got[0], got[3], got[6], got[7], got[17])] == [int, float, float,
                                                                           int, int]


def test_sym_helpers_reject_what_pytorch_rejects():
    same_as_torch(lambda L: [raises(L.sym_max, "a", 1), raises(L.sym_min, 1, None),
                             raises(L.sym_ite, 1, 2, 3), raises(L.sym_ite, True, 2, 3.0),
                             raises(L.sym_sqrt, -1)])
    with pytest.raises(AssertionError, match="expected SymBool or bool, got <class 'int'>"):
        hookgrad.sym_ite(1, 2, 3)


def test_constrain_range_checks_eagerly():
    def run(L):
        return [L.sym_constrain_range(3, min=0, max=5), L.sym_constrain_range(-10),
                L.sym_constrain_range_for_size(3, min=2), L.sym_constrain_range_for_size(1),
                L.sym_constrain_range_for_size(3, min=-1),
                raises(lambda: L.sym_constrain_range(3, min=4, max=5)),
                raises(lambda: L.sym_constrain_range(3, min=5, max=2)),
                raises(lambda: L.sym_constrain_range(3, max=2)),
                raises(lambda: L.sym_constrain_range_for_size(-1)),
                raises(lambda: L.sym_constrain_range_for_size(3, max=2))]
    got = same_as_torch(run)
    assert got[:5] == [None] * 5
    for call, match in [
            (lambda: hookgrad.sym_constrain_range(3, min=4, max=5),
             r"Invalid value range for 3 between \[4, 5\]"),
            (lambda: hookgrad.sym_constrain_range_for_size(-1),
             r"Invalid value range for -1 between \[0, 9223372036854775807\]"),
            (lambda: hookgrad.sym_constrain_range(3, min=5, max=2),
             "Max must be greater than or equal to min. Got min=5 max=2"),
            (lambda: hookgrad.sym_constrain_range_for_size(3, max=2),
             "must be greater than 2. got: 2")]:
        with pytest.raises(RuntimeError, match=match):
            call()


def test_sizes_are_plain_ints_never_sym_numbers():
    def run(L):
        x = L.ones(2, 3)
        return [isinstance(x.shape[0], L.SymInt), isinstance(3, L.SymInt),
                isinstance(2.0, L.SymFloat), isinstance(True, L.SymBool),
                [c.__name__ for c in (L.SymInt, L.SymFloat, L.SymBool)]]
    assert same_as_torch(run)[:4] == [False] * 4
    # PyTorch's take a compiler node; hookgrad makes none (docs/differences.md)
    for cls in (hookgrad.SymInt, hookgrad.SymFloat, hookgrad.SymBool):
        with pytest.raises(NotImplementedError, match=f"hookgrad does not implement "
                                                      f"torch.{cls.__name__}"):
            cls(3)
