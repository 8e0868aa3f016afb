"""``hookgrad.futures`` (PyTorch's Future semantics, thread safety) and
``hookgrad.multiprocessing`` (Python's, plus ``spawn`` and sharing strategies)."""
import logging
import os
import threading
import time

import pytest

import hookgrad
import hookgrad.multiprocessing as mp
from hookgrad.futures import Future, collect_all, wait_all
from tests.differential import raises, same_as_torch


def _semantics(L):
    F = L.futures.Future
    out = []
    f = F()
    out.append(f.done())
    f.set_result(3)
    out += [f.done(), f.value(), f.wait(), raises(f.set_result, 4),
            raises(f.set_exception, ValueError("x"))]
    g = F()
    out.append(raises(g.set_exception, 3))
    g.set_exception(ValueError("bad"))
    out += [g.done(), raises(g.wait), raises(g.value)]
    h = F()
    plus = h.then(lambda fut: fut.wait() + 1)
    boom = h.then(lambda fut: 1 / 0)
    seen = []
    h.add_done_callback(lambda fut: seen.append(fut.value()))
    out.append(plus.done())
    h.set_result(1)
    out += [plus.wait(), raises(boom.wait), seen]
    late = h.then(lambda fut: fut.value() * 10)  # added after completion: runs at once
    out.append(late.wait())
    failed = F()
    chained = failed.then(lambda fut: fut.wait())
    failed.set_exception(KeyError("k"))
    out.append(raises(chained.wait))
    return out


def test_future_semantics_as_torch():
    out = same_as_torch(_semantics)
    assert out[:4] == [False, True, 3, 3] and out[10:12] == [False, 2] and out[-2] == 10
    with pytest.raises(RuntimeError, match="Attempting to mark a completed Future as complete "
                                           "again"):
        f = Future()
        f.set_result(1)
        f.set_result(2)
    with pytest.raises(AssertionError, match="3 is of type <class 'int'>, not an Exception"):
        Future().set_exception(3)
    with pytest.raises(RuntimeError, match="Got the following error when running the "
                                           "callback: ZeroDivisionError: division by zero"):
        f = Future()
        child = f.then(lambda fut: 1 / 0)
        f.set_result(0)
        child.wait()


def test_failing_done_callback_is_logged_and_the_rest_run(caplog):
    f = Future()
    seen = []
    f.add_done_callback(lambda fut: 1 / 0)
    f.add_done_callback(lambda fut: seen.append(fut.wait()))
    with caplog.at_level(logging.ERROR, logger="hookgrad.futures"):
        f.set_result(5)
    assert seen == [5] and "ZeroDivisionError" in caplog.text


def test_collect_all_and_wait_all():
    def fn(L):
        fu = L.futures
        a, b = fu.Future(), fu.Future()
        both = fu.collect_all([a, b])
        a.set_result(1)
        partial = both.done()
        b.set_result(2)
        c, d = fu.Future(), fu.Future()
        c.set_result(1)
        d.set_exception(ValueError("v"))
        return [partial, [x.wait() for x in both.wait()], fu.collect_all([]).wait(),
                raises(fu.collect_all([c, d]).wait), raises(fu.wait_all, [c, d]),
                fu.wait_all([a, b])]
    assert same_as_torch(fn)[:3] == [False, [1, 2], []]
    with pytest.raises(TypeError, match="expected a list of Futures, got int"):
        collect_all([1])


def test_futures_across_threads():
    futures = [Future() for _ in range(8)]
    done = collect_all(futures)
    counted = []
    for f in futures:
        f.add_done_callback(lambda fut: counted.append(fut.value()))

    def finish(i):
        time.sleep(0.01 * (i % 3))
        futures[i].set_result(i)
    threads = [threading.Thread(target=finish, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    assert wait_all(futures) == list(range(8))
    for t in threads:
        t.join()
    assert done.wait() == futures and sorted(counted) == list(range(8))


# --------------------------------------------------------------------------- multiprocessing
def test_multiprocessing_names_and_sharing_strategy():
    same_as_torch(lambda L: [L.multiprocessing.get_sharing_strategy(),
                             sorted(L.multiprocessing.get_all_sharing_strategies()),
                             raises(L.multiprocessing.set_sharing_strategy, "nope")])
    assert mp.cpu_count() == os.cpu_count() and mp.Process and mp.Queue and mp.get_context
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy 'nope'"):
        mp.set_sharing_strategy("nope")


@pytest.mark.slow  # each spawned process imports hookgrad and JAX
def test_spawn_runs_each_rank_and_reports_a_failure(tmp_path):
    from tests._spawn_targets import fail_on_one, write_rank
    mp.spawn(write_rank, args=(str(tmp_path),), nprocs=2)
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0", "10"]
    with pytest.raises(mp.ProcessRaisedException,
                       match="-- Process 1 terminated with the following error:\n"
                             "(.|\n)*ValueError: rank one failed") as info:
        mp.spawn(fail_on_one, nprocs=2)
    assert info.value.error_index == 1
    context = mp.start_processes(write_rank, args=(str(tmp_path),), nprocs=1, join=False)
    while not context.join(timeout=60):
        pass
    assert hookgrad.multiprocessing is mp


def test_future_is_generic_for_annotations():
    # libraries annotate with Future[Tensor] (captum) at import time
    assert hookgrad.futures.Future[int] is not None
    assert isinstance(hookgrad.futures.Future[int](), hookgrad.futures.Future)
