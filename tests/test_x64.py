"""JAX's 64-bit mode: on at import, so dtypes are PyTorch's (int64 integers, float64 on
request, float32 by default); off with ``HOOKGRAD_X64=0`` or when the user set
``JAX_ENABLE_X64``. Each case runs in a fresh process: the mode is set at import."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
import json, jax
import hookgrad as torch
x = torch.randn(3, requires_grad=True)
(x.double() * 2).sum().backward() if jax.config.read("jax_enable_x64") else None
print(json.dumps({"x64": jax.config.read("jax_enable_x64"),
                  "ints": str(torch.tensor([1, 2]).dtype), "arange": str(torch.arange(3).dtype),
                  "argmax": str(x.argmax().dtype), "floats": str(torch.tensor([1.5]).dtype),
                  "param": str(torch.nn.Linear(2, 2).weight.dtype),
                  "grad": str(x.grad.dtype) if x.grad is not None else None}))
"""


def _run(**env):
    full = {k: v for k, v in os.environ.items() if k not in ("HOOKGRAD_X64", "JAX_ENABLE_X64")}
    full.update(PYTHONPATH=ROOT, **env)
    out = subprocess.run([sys.executable, "-c", PROGRAM], env=full, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_on_by_default_with_pytorchs_dtypes():
    got = _run()
    assert got == {"x64": True, "ints": "hookgrad.int64", "arange": "hookgrad.int64",
                   "argmax": "hookgrad.int64", "floats": "hookgrad.float32",
                   "param": "hookgrad.float32", "grad": "hookgrad.float32"}


@pytest.mark.parametrize("env", [{"HOOKGRAD_X64": "0"}, {"HOOKGRAD_X64": "off"},
                                 {"JAX_ENABLE_X64": "0"}])
def test_left_off_when_asked(env):
    got = _run(**env)
    assert got["x64"] is False and got["ints"] == "hookgrad.int32"
    assert got["floats"] == got["param"] == "hookgrad.float32"


def test_the_users_jax_setting_wins():
    assert _run(JAX_ENABLE_X64="1")["x64"] is True


def test_configure_reads_the_environment_it_is_given():
    import jax
    from hookgrad import _x64
    before = jax.config.read("jax_enable_x64")
    try:
        jax.config.update("jax_enable_x64", False)
        assert _x64.configure({"HOOKGRAD_X64": "false"}) is False
        assert jax.config.read("jax_enable_x64") is False
        assert _x64.configure({}) is True and jax.config.read("jax_enable_x64") is True
    finally:
        jax.config.update("jax_enable_x64", before)
