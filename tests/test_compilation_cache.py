"""JAX's persistent compilation cache: on at import in a user cache directory, off with
``HOOKGRAD_COMPILATION_CACHE=0``, and a user's own JAX setting is kept. Each case runs in a
fresh process, since the setting is made when hookgrad is imported."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
import json, jax
hits = []
jax.monitoring.register_event_listener(
    lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
import hookgrad
x = hookgrad.arange(5.0, requires_grad=True)
(x.sin() * 3).sum().backward()
print(json.dumps({"dir": jax.config.jax_compilation_cache_dir,
                  "min_time": jax.config.jax_persistent_cache_min_compile_time_secs,
                  "hits": len(hits)}))
"""


def _env(tmp_path, **env):
    """A fresh install's environment: hookgrad's own requirements only (``filelock``,
    which JAX's bounded cache needs, made unimportable)."""
    hidden = tmp_path / "no_filelock"
    hidden.mkdir(exist_ok=True)
    (hidden / "filelock.py").write_text("raise ImportError('filelock is not installed')\n")
    full = {k: v for k, v in os.environ.items()
            if k not in ("HOOKGRAD_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    full.update(XDG_CACHE_HOME=str(tmp_path / "xdg"),
                PYTHONPATH=os.pathsep.join([str(hidden), ROOT]), **env)
    return full


def _run(tmp_path, **env):
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=_env(tmp_path, **env),
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "arning" not in out.stderr, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_cache_is_on_by_default_and_a_second_process_reads_it(tmp_path):
    first = _run(tmp_path)
    where = tmp_path / "xdg" / "hookgrad" / "xla"
    assert first["dir"] == str(where) and first["min_time"] == 0.0
    assert any(where.iterdir())  # the programs were written
    second = _run(tmp_path)
    assert second["hits"] > 0  # and read back by a fresh process


def test_a_directory_can_be_named(tmp_path):
    got = _run(tmp_path, HOOKGRAD_COMPILATION_CACHE=str(tmp_path / "mine"))
    assert got["dir"] == str(tmp_path / "mine")
    assert any((tmp_path / "mine").iterdir())


@pytest.mark.parametrize("value", ["0", "off"])
def test_the_setting_turns_it_off(tmp_path, value):
    got = _run(tmp_path, HOOKGRAD_COMPILATION_CACHE=value)
    assert got["dir"] is None and got["min_time"] == 1.0  # JAX's own defaults
    assert not (tmp_path / "xdg").exists()


def test_a_users_jax_setting_is_kept(tmp_path):
    got = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=str(tmp_path / "theirs"))
    assert got["dir"] == str(tmp_path / "theirs") and got["min_time"] == 1.0


def test_two_processes_share_one_cache_at_once(tmp_path):
    """Two processes compiling the same programs into one directory at the same time:
    neither waits on a lock or warns, and a third reads what they wrote."""
    env = _env(tmp_path, HOOKGRAD_COMPILATION_CACHE=str(tmp_path / "shared"))
    both = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=env, cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    for proc in both:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "arning" not in err, err
    assert not [p for p in (tmp_path / "shared").iterdir() if p.name.endswith(".tmp")]
    third = _run(tmp_path, HOOKGRAD_COMPILATION_CACHE=str(tmp_path / "shared"))
    assert third["hits"] > 0


def test_an_entry_is_read_whole_and_kept_in_memory(tmp_path):
    from hookgrad._compilation_cache import DirectoryCache
    cache = DirectoryCache(str(tmp_path), memory_bytes=10)
    assert cache.get("k") is None
    cache.put("k", b"12345")
    assert (tmp_path / "k-cache").read_bytes() == b"12345"
    (tmp_path / "k-cache").unlink()
    assert cache.get("k") == b"12345"  # from memory
    cache.put("big", b"x" * 11)  # over the memory budget: on disk only
    (tmp_path / "big-cache").unlink()
    assert cache.get("big") is None


def test_prune_removes_the_least_recently_used_first(tmp_path):
    from hookgrad._compilation_cache import prune
    for i, name in enumerate(["old", "mid", "new"]):
        (tmp_path / f"{name}-cache").write_bytes(b"x" * 100)
        os.utime(tmp_path / f"{name}-cache", (1000 + i, 1000 + i))
    prune(str(tmp_path), max_bytes=250)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid-cache", "new-cache"]


def test_a_directory_is_scanned_at_most_once_an_hour(tmp_path):
    """Every process start would otherwise list and stat the whole directory (half a
    second of CPU when it is full); the stamp file is not an entry prune removes."""
    from hookgrad._compilation_cache import prune, prune_due
    assert prune_due(str(tmp_path), every=3600, now=10_000)
    assert not prune_due(str(tmp_path), every=3600, now=10_000 + 3599)
    assert prune_due(str(tmp_path), every=3600, now=10_000 + 3601)
    (tmp_path / "a-cache").write_bytes(b"x" * 100)
    prune(str(tmp_path), max_bytes=0)
    assert [p.name for p in tmp_path.iterdir()] == ["hookgrad-pruned"]


def test_an_unwritable_directory_is_not_scanned(tmp_path):
    from hookgrad._compilation_cache import prune_due
    assert not prune_due(str(tmp_path / "missing"))


def test_the_tour_prints_no_warning_on_a_fresh_install(tmp_path):
    """``python -m hookgrad --quick`` with an empty cache and without filelock: stderr
    holds the progress bars and nothing else."""
    out = subprocess.run([sys.executable, "-m", "hookgrad", "--quick"],
                         env=_env(tmp_path, HOOKGRAD_COMPILATION_CACHE=str(tmp_path / "c")),
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "arning" not in out.stderr, out.stderr
