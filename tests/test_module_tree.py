"""Every module path of PyTorch 2.13 (tools/torch_modules.txt: the public ones and the
private ones libraries import) imports under ``hookgrad.as_torch`` or fails with hookgrad's
"does not implement torch.X yet"; in a module that imports, each name of PyTorch's
``__all__`` is there or is an ``AttributeError`` (hookgrad's message), nothing else."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(ROOT, "tools", "torch_modules.txt")

# one process walks the whole list with ``import torch`` bound to hookgrad
_WALK = r"""
import importlib, json, sys
import hookgrad.as_torch
hookgrad.as_torch.install()
mods = {p[0]: p[1:] for p in (l.split() for l in open(sys.argv[1])) if p and p[0][0] != "#"}
out = {"imported": [], "missing": [], "wrong": {}}
for path, names in mods.items():
    try:
        mod = importlib.import_module(path)
    except ModuleNotFoundError as e:
        if f"hookgrad does not implement {path} yet" in str(e) or (
                "hookgrad does not implement torch." in str(e) and path.startswith(e.name)):
            out["missing"].append(path)
        else:
            out["wrong"][path] = f"{type(e).__name__}: {e}"
        continue
    except Exception as e:
        out["wrong"][path] = f"{type(e).__name__}: {e}"
        continue
    out["imported"].append(path)
    for n in names:
        try:
            getattr(mod, n)
        except AttributeError as e:
            if not str(e).endswith("(see docs/api_coverage.md for what it covers)"):
                out["wrong"][f"{path}.{n}"] = f"AttributeError: {e}"
        except Exception as e:
            out["wrong"][f"{path}.{n}"] = f"{type(e).__name__}: {e}"
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def walk():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _WALK, LIST], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_module_imports_or_says_hookgrad_lacks_it(walk):
    assert walk["wrong"] == {}
    with open(LIST) as f:
        n = sum(1 for line in f if line.strip() and not line.startswith("#"))
    assert len(walk["imported"]) + len(walk["missing"]) == n


def test_the_paths_libraries_import_are_there(walk):
    needed = ["torch", "torch.nn.modules.batchnorm", "torch.nn.modules.conv",
              "torch.nn.modules.module", "torch.utils.model_zoo", "torch.jit",
              "torch._dynamo", "torch._dynamo.eval_frame", "torch.utils._pytree",
              "torch.utils._python_dispatch", "torch._C", "torch.overrides", "torch.compiler",
              "torch.nn.attention", "torch.nn.attention.flex_attention", "torch.version",
              "torch.accelerator", "torch.distributed._functional_collectives",
              "torch.distributed.checkpoint"]
    assert [m for m in needed if m not in walk["imported"]] == []


def test_private_bases_sit_at_pytorchs_paths():
    code = ("import hookgrad.as_torch; hookgrad.as_torch.install(); import torch\n"
            "from torch.nn.modules.batchnorm import _BatchNorm, _NormBase\n"
            "from torch.nn.modules.conv import _ConvNd\n"
            "from torch.nn.modules.module import Module\n"
            "from torch.utils.model_zoo import load_url\n"
            "nn = torch.nn\n"
            "assert all(issubclass(c, _BatchNorm) for c in (nn.BatchNorm1d, nn.BatchNorm2d, "
            "nn.BatchNorm3d))\n"
            "assert issubclass(_BatchNorm, _NormBase) and issubclass(nn.Conv2d, _ConvNd)\n"
            "assert Module is nn.Module and load_url is torch.hub.load_state_dict_from_url\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
