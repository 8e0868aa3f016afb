"""A base's list of its aliases (``hookgrad/_views.py``'s ``alias``): every live view
follows a write to the base, dead ones are dropped, and a base with many live views pays
O(1) a view for the list, amortized (a loop holding ``x[i]`` for every row)."""
import hookgrad
from tests.differential import py, same_as_torch


class _CountingList(list):
    """An alias list that counts the walks over it (dropping dead aliases walks it)."""

    walks = 0

    def __iter__(self):
        _CountingList.walks += 1
        return super().__iter__()


def test_many_live_views_walk_the_alias_list_a_logarithmic_number_of_times():
    x = hookgrad.randn(4096, 4) * 1.0   # an XLA array: the index reads are views of it
    rows = [x[0]]
    object.__setattr__(x, "_views", _CountingList(x._views))
    _CountingList.walks = 0
    rows += [x[i] for i in range(1, 4096)]
    assert len(x._views) == 4096
    assert _CountingList.walks <= 8  # 32, 64, ..., 4096: one walk at each power of two


def test_dead_views_are_dropped():
    x = hookgrad.zeros(64, 3)
    keep = x[1]
    for _ in range(5):
        for i in range(64):
            x[i].sum()          # a view made and dropped at once
    assert len(x._views) < 64 and any(r() is keep for r in x._views)


def test_every_live_view_follows_a_write_of_the_base():
    def run(L):
        x = L.arange(200.0).reshape(100, 2) * 1.0
        rows = [x[i] for i in range(100)]
        cols = [x[:, j] for j in range(2)] + [x.view(200)[3:7], x.t()[1]]
        x.add_(1.0)
        x[5, 1] = -3.0
        return ([py(r) for r in rows], [py(c) for c in cols], x._version,
                sorted({v._version for v in rows + cols}))
    same_as_torch(run)
