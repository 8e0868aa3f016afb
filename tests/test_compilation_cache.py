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


def _run(tmp_path, **env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("HOOKGRAD_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR")}
    full.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), PYTHONPATH=ROOT, **env)
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=full, capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
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
