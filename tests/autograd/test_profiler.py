"""hookgrad.profiler and hookgrad.autograd.profiler against PyTorch's: schedules, when traces
are handed over, record_function ranges in exported Chrome traces, trace files."""
import gzip
import json
import os
import warnings

import pytest

import hookgrad
from hookgrad.autograd import profiler as autograd_profiler
from tests.differential import raises, same_as_torch

SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
             dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
             dict(wait=2, warmup=1, active=1, skip_first=1, skip_first_wait=1)]


@pytest.mark.parametrize("kwargs", SCHEDULES)
def test_schedule_actions_match_torch(kwargs):
    same_as_torch(lambda L: [L.profiler.schedule(**kwargs)(step).name for step in range(16)])


def test_schedule_errors_and_warning_match_torch():
    def run(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            L.profiler.schedule(wait=1, warmup=0, active=1)
        return [raises(lambda: L.profiler.schedule(wait=-1, warmup=1, active=1)),
                raises(lambda: L.profiler.schedule(wait=1, warmup=1, active=0)),
                raises(L.profiler.schedule(wait=1, warmup=1, active=1), -1),
                [str(w.message) for w in caught], [w.filename for w in caught]]

    got = same_as_torch(run)
    assert got[0]["message"] == ("Invalid profiler schedule arguments. Got wait=-1 (need >= "
                                 "0), warmup=1 (need >= 0), active=1 (need > 0), repeat=0 "
                                 "(need >= 0), skip_first=0 (need >= 0).")
    assert got[2]["message"] == "Step must be non-negative. Got -1."
    assert got[4] == [__file__]


def test_enums_match_torch():
    same_as_torch(lambda L: [[(n, m.value) for n, m in
                              L.profiler.ProfilerActivity.__members__.items()],
                             [(n, m.value) for n, m in
                              L.profiler.ProfilerAction.__members__.items()],
                             L.autograd.ProfilerActivity.CPU.name])


def _traced(L, prof_factory, path):
    with prof_factory() as prof:
        with L.profiler.record_function("hg_block") as rf:
            (L.ones(4) * 3).sum().item()
    prof.export_chrome_trace(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        names = {e.get("name") for e in json.load(f)["traceEvents"]}
    return [rf.name, rf.args, "hg_block" in names]


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_record_function_ranges_reach_the_exported_trace(tmp_path, suffix):
    got = same_as_torch(lambda L: _traced(L, L.profiler.profile,
                                          str(tmp_path / (L.__name__ + suffix))))
    assert got == ["hg_block", None, True]


def test_autograd_profiler_profile_records_and_exports(tmp_path):
    got = same_as_torch(lambda L: _traced(L, L.autograd.profiler.profile,
                                          str(tmp_path / (L.__name__ + ".json"))))
    assert got == ["hg_block", None, True]


def test_record_function_decorates_and_keeps_results():
    def run(L):
        @L.profiler.record_function("scaled")
        def scaled(x, k=2):
            return x * k

        with L.autograd.profiler.record_function("outer", "meta") as rf:
            out = scaled(L.arange(3.0), k=3)
        return [out.tolist(), rf.name, rf.args, scaled.__name__]

    assert same_as_torch(run) == [[0.0, 3.0, 6.0], "outer", "meta", "scaled"]


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")  # PyTorch's, on events
@pytest.mark.parametrize("kwargs", [dict(wait=1, warmup=1, active=2, repeat=1),
                                    dict(wait=0, warmup=1, active=1, repeat=2, skip_first=1)])
def test_schedule_hands_each_recording_to_on_trace_ready_as_torch_does(kwargs):
    def run(L):
        ready, actions = [], []
        prof = L.profiler.profile(
            schedule=L.profiler.schedule(**kwargs),
            on_trace_ready=lambda p: ready.append(p.step_num))
        with prof:
            for _ in range(6):
                actions.append(prof.current_action.name)
                L.ones(2).sum().item()
                prof.step()
        return [ready, actions, prof.step_num]

    got = same_as_torch(run)
    assert got[0] == ([4] if kwargs["wait"] else [3, 5])


def test_tensorboard_trace_handler_writes_named_trace_files(tmp_path):
    def run(L):
        out = tmp_path / L.__name__
        with L.profiler.profile(on_trace_ready=L.profiler.tensorboard_trace_handler(
                str(out), worker_name="w0", use_gzip=True)):
            L.ones(2).sum().item()
        files = os.listdir(out)
        return [len(files), files[0].startswith("w0."), files[0].endswith(".pt.trace.json.gz")]

    assert same_as_torch(run) == [1, True, True]


def test_disabled_and_reentered_autograd_profiler():
    def run(L):
        with L.autograd.profiler.profile(enabled=False) as prof:
            L.ones(1).sum()
        again = L.autograd.profiler.profile()
        with again:
            inner = raises(again.__enter__)
        return [prof, inner]

    got = same_as_torch(run)
    assert got == [None, {"raises": "RuntimeError",
                          "message": "Profiler context manager is not reentrant"}]


def test_event_tables_are_not_implemented():
    with hookgrad.profiler.profile() as prof:
        hookgrad.ones(1).sum().item()
    for call in (prof.key_averages, prof.events, autograd_profiler.profile().table):
        with pytest.raises(NotImplementedError, match="hookgrad does not implement torch"):
            call()
    with pytest.raises(NotImplementedError, match="torch.autograd.profiler.emit_nvtx"):
        autograd_profiler.emit_nvtx()


def test_kineto_is_not_there():
    """hookgrad's profilers record JAX traces (docs/differences.md)."""
    assert hookgrad.autograd.kineto_available() is False
    assert hookgrad.profiler.kineto_available() is False
    assert hookgrad.profiler.ProfilerActivity.CPU in hookgrad.profiler.supported_activities()


def test_itt_behaves_as_a_build_without_it():
    """PyTorch's CPU wheel has ITT; hookgrad answers as PyTorch does without it."""
    itt = hookgrad.profiler.itt
    assert itt.is_available() is False
    for call in (lambda: itt.range_push("a"), itt.range_pop, lambda: itt.mark("a"),
                 lambda: itt.range("step {}", 1).__enter__()):
        with pytest.raises(RuntimeError, match="^ITT functions not installed. Are you sure "
                                               "you have a ITT build\\?$"):
            call()


def test_one_profiler_at_a_time():
    with hookgrad.profiler.profile():
        with pytest.raises(RuntimeError, match="^Profiler is already enabled: hookgrad's "
                                               "profilers record a JAX trace"):
            with hookgrad.autograd.profiler.profile():
                pass
