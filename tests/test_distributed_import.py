"""Importing hookgrad starts no JAX backend, so ``init_process_group`` (which starts
``jax.distributed``, possible only before any backend exists) can follow ``import torch``
as in a PyTorch script. Checked in a fresh process: JAX's backends are created on first
use and kept for the life of the process."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_SCRIPT = textwrap.dedent("""
    import importlib, pkgutil, sys
    from jax._src import xla_bridge  # JAX's own record of the backends it started
    import hookgrad, hookgrad.as_torch
    public = [m.name for m in pkgutil.walk_packages(hookgrad.__path__, "hookgrad.")
              if not any(p.startswith("_") for p in m.name.split(".")[1:])]
    for name in public:
        importlib.import_module(name)
    hookgrad.as_torch.install()
    for name in public:
        importlib.import_module("torch" + name[len("hookgrad"):])
    import torch
    imported = xla_bridge.backends_are_initialized()
    # what libraries ask while they import (transformers, accelerate): on a machine with
    # no GPU or TPU to find, answered without starting a backend
    from jax._src import hardware_utils
    accelerator = bool(hardware_utils.has_visible_nvidia_gpu()
                       or hardware_utils.num_available_amd_gpus(stop_at=1)
                       or hardware_utils.num_available_tpu_chips_and_device_id()[0])
    torch.cuda.is_available(), torch.accelerator.current_accelerator()
    torch.backends.mps.is_available()
    asked = xla_bridge.backends_are_initialized()
    print(len(public), imported, accelerator, asked)
""")


def _run(script, **env):
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, **env))
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


def test_importing_every_public_module_starts_no_jax_backend():
    n, imported, accelerator, asked = _run(_SCRIPT, JAX_PLATFORMS="")
    assert int(n) > 100  # the walk found the package's modules
    assert imported == "False"
    # with a GPU or TPU present, is_available() asks JAX's backends (docs/distributed.md)
    assert asked == ("True" if accelerator == "True" else "False")


def test_the_first_array_starts_the_backend():
    # the probe above can fail: making an array starts JAX's backend
    _, started = _run("import hookgrad\nfrom jax._src import xla_bridge\n"
                      "t = hookgrad.ones(2)\nprint(t.sum().item(), "
                      "xla_bridge.backends_are_initialized())")
    assert started == "True"
