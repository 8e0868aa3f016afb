"""set_num_threads and friends: recorded and read back (docs/differences.md)."""
import pytest

from tests.differential import raises, same_as_torch


def test_thread_counts_are_recorded():
    import hookgrad
    before = hookgrad.get_num_threads()
    assert before >= 1
    try:
        hookgrad.set_num_threads(3)
        hookgrad.set_num_interop_threads(2)
        assert hookgrad.get_num_threads() == 3 and hookgrad.get_num_interop_threads() == 2
    finally:
        hookgrad._threads._counts.update(intra=None, inter=None)
    same_as_torch(lambda L: raises(L.set_num_threads, 0))
    with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
        hookgrad.set_num_threads(0)
