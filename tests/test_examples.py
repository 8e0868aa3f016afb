"""The examples and the notebook run and show what they claim."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import hookgrad as hg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(name):
    path = os.path.join(ROOT, "examples", name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def png_ok(path):
    """The file exists and decodes to a picture that is not blank (with matplotlib)."""
    mpimg = pytest.importorskip("matplotlib.image")
    img = mpimg.imread(path)
    return img.ndim == 3 and min(img.shape[:2]) > 100 and img.std() > 0.01


@pytest.fixture(autouse=True)
def empty_cwd(tmp_path, monkeypatch):
    """Every example runs in an empty working directory, its temporary directory moved
    into ``tmp``; nothing may appear in the working directory unasked."""
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp
    assert os.listdir(cwd) == [], "an example wrote into the working directory"


def default_folder(tmp, name):
    return os.path.join(tmp, "hookgrad-examples", name)


def falls(losses, k=3):
    return sum(losses[-k:]) < sum(losses[:k])


def test_grad_cam_heat_is_highest_in_the_planted_square(empty_cwd, capsys):
    res = load("grad_cam").main(steps=40)    # no --out: the folder it names, not the cwd
    folder = default_folder(empty_cwd, "grad_cam")
    assert f"writing grad_cam.png to {folder} (--out DIR to choose)" in capsys.readouterr().out
    assert falls(res["losses"])
    cam, mask = res["cam"], res["mask"]
    assert cam.shape == (16, 16) and abs(cam.max() - 1.0) < 1e-4 and cam.min() >= 0.0
    peak = np.unravel_index(cam.argmax(), cam.shape)
    assert mask[peak], (peak, np.argwhere(mask))
    assert cam[mask].mean() > 3 * cam[~mask].mean()
    assert res["png"] == os.path.join(folder, "grad_cam.png") and png_ok(res["png"])


def test_activation_patching_finds_the_planted_layer(tmp_path):
    mod = load("activation_patching")
    res = mod.main(steps=70, out=str(tmp_path / "patch"), verbose=False)
    assert falls(res["losses"])
    assert res["found_layer"] == mod.PLANTED
    grid, last = res["restored"], mod.SEQ - 1
    # the answer sits at SRC before the planted block and at the last position after it;
    # patching anywhere else restores (almost) nothing: the report is not trivially 100%
    assert grid[: mod.PLANTED + 1, mod.SRC].min() > 0.9
    assert grid[mod.PLANTED + 1:, last].min() > 0.9
    assert grid[mod.PLANTED + 1:, mod.SRC].max() < 0.1
    assert grid[: mod.PLANTED + 1, last].max() < 0.1
    others = [p for p in range(mod.SEQ) if p not in (mod.SRC, last)]
    assert np.abs(grid[:, others]).max() < 0.1
    assert res["png"] == str(tmp_path / "patch" / "activation_patching.png")
    assert png_ok(res["png"])


def test_gradient_monitoring_trains_and_records_norms(tmp_path):
    losses, norms, png = load("gradient_monitoring").main(
        steps=15, out=str(tmp_path / "gm"), verbose=False)
    assert losses[-1] < 0.6 * losses[0]
    assert all(len(v) == 15 and min(v) > 0 for v in norms.values())
    assert png_ok(png)


def test_saved_tensor_offload_reports_memory_saved(capsys):
    rows = load("saved_tensor_offload").main(width=32, batch=8)
    plain, off, ckpt = rows["plain"], rows["offload hooks"], rows["checkpoint"]
    assert all(r["same"] for r in rows.values())
    assert plain["count"] > 0 and plain["device"] > 0 and plain["host"] == 0
    assert off["count"] == plain["count"] and off["device"] == 0
    assert off["host"] == plain["device"]
    assert 0 < ckpt["device"] < plain["device"]
    assert f"offloading frees {plain['device']:,} bytes" in capsys.readouterr().out


def test_compiled_training_matches_eager(tmp_path):
    res, png = load("compiled_training").main(steps=12, out=str(tmp_path / "ct"),
                                              verbose=False)
    eager, compiled = res["eager"]["losses"], res["compiled"]["losses"]
    assert falls(compiled)
    assert np.allclose(eager, compiled, rtol=1e-4, atol=1e-6)
    assert len(res["compiled"]["log"]) == 12   # the host hook ran once per compiled step
    assert np.allclose(res["eager"]["log"], res["compiled"]["log"], rtol=1e-4)
    assert png_ok(png)


def test_gradient_reversal_flips_the_gradient_and_hides_the_domain():
    mod = load("gradient_reversal")
    x = hg.tensor([1.0, -2.0], requires_grad=True)
    (mod.grad_reverse(x, 0.5) * hg.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [-1.5, -2.0]
    rows = mod.main(steps=300, verbose=False)
    for r in rows.values():
        assert falls(r["losses"])
    with_, without = rows["with reversal"], rows["without"]
    assert with_["domain_acc"] < without["domain_acc"] - 0.15   # the domains look alike
    assert with_["target_acc"] > without["target_acc"] + 0.05   # and the target gains


def test_dp_sgd_hooks_and_vmap_agree():
    mod = load("dp_sgd")
    res = mod.main(steps=6, verbose=False, batch=16)
    assert max(res["gaps"]) < 1e-5
    assert res["losses"][-1] < res["losses"][0]
    # each example's gradient is clipped to norm CLIP before the sum: one of norm 10 is
    # scaled down by 10/CLIP, one of norm 0.5 is kept
    grads = {"w": np.array([[6.0, 8.0], [0.3, 0.4]], np.float32)}
    out = mod.privatize(grads, {"w": np.zeros(2, np.float32)})
    expected = (grads["w"][0] * mod.CLIP / 10.0 + grads["w"][1]) / 2
    assert np.allclose(out["w"], expected)


def test_memory_tracker_counts_bytes_and_flops():
    stats = load("memory_tracker").main(batch=4, verbose=False)
    conv, linear = stats["Sequential.0"], stats["Sequential.4"]
    assert conv["params"] == (3 * 8 * 9 + 8) * 4 and linear["params"] == (512 * 10 + 10) * 4
    assert conv["activations"] == 4 * 8 * 16 * 16 * 4 and linear["activations"] == 4 * 10 * 4
    assert linear["flops"] == 2 * 4 * 512 * 10 and conv["flops"] == 2 * 4 * 8 * 16 * 16 * 27
    assert conv["param_grads"] == conv["params"] and linear["param_grads"] == linear["params"]
    assert conv["grad_input"] == 4 * 3 * 16 * 16 * 4   # x requires grad
    assert linear["grad_input"] == 4 * 512 * 4


def test_finetune_checkpoint_round_trips(tmp_path):
    res = load("finetune_checkpoint").main(str(tmp_path), steps=15, verbose=False)
    assert res["loaded_ok"] and res["round_trip"] and res["torch_reads"] in (True, None)
    assert res["writer"] in ("torch.save", "hookgrad.save")
    assert falls(res["losses"])
    assert res["changed"] == ["4.bias", "4.weight"]   # the frozen backbone kept its values
    assert res["updates"] == 2 * 15
    assert sorted(os.listdir(tmp_path)) == ["cwd", "finetuned.pt", "pretrained.pt", "tmp"]


def test_finetune_checkpoint_removes_its_temporary_folder(empty_cwd, capsys):
    res = load("finetune_checkpoint").main(steps=2)
    assert res["round_trip"]
    out = capsys.readouterr().out
    assert "(temporary, removed at the end; --out DIR keeps them)" in out
    assert os.listdir(empty_cwd) == []
    if res["writer"] == "hookgrad.save":
        assert "a PyTorch checkpoint loads the same way" in out


# the port: each import line of the PyTorch script and the hookgrad line that replaced it
PORT = {"import hookgrad as torch": "import torch",
        "import hookgrad.nn as nn": "import torch.nn as nn",
        "import hookgrad.nn.functional as F": "import torch.nn.functional as F",
        "from hookgrad.utils.data import": "from torch.utils.data import"}


def unported_text(name):
    """Example ``name`` with its imports changed back: the PyTorch script it ports."""
    with open(os.path.join(ROOT, "examples", name + ".py"), encoding="utf-8") as f:
        text = f.read()
    for ours, theirs in PORT.items():
        text, n = re.subn("^" + re.escape(ours), theirs, text, flags=re.M)
        assert n == 1, ours
    assert not re.search(r"^(import|from) hookgrad", text, re.M)
    return text


def unported(name):
    """The unported script as a module of this process (its definitions, not its run)."""
    mod = type(os)("unported_" + name)
    exec(compile(unported_text(name), name + " (unported)", "exec"), mod.__dict__)  # noqa: S102
    return mod


# Runs the unported script's ``main`` in a fresh interpreter and prints its results as JSON.
# Its DataLoader forks PyTorch's worker processes; forked from a pytest-xdist worker (a
# process with threads) they deadlock, so the script gets a process of its own.
RUN_UNPORTED = """
import json, sys, torch
sys.path.insert(0, sys.argv[1])
import unported_script as mod
assert mod.torch is torch, mod.torch
print(json.dumps(dict(mod.main(epochs=2, out=sys.argv[2], verbose=False), torch=torch.__file__)))
"""


def run_unported(name, folder, out):
    """``main(epochs=2, out=out)`` of the unported script, in a fresh Python process."""
    with open(os.path.join(folder, "unported_script.py"), "w", encoding="utf-8") as f:
        f.write(unported_text(name))
    done = subprocess.run([sys.executable, "-c", RUN_UNPORTED, str(folder), str(out)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_ported_training_script_trains_eager_and_compiled_alike(tmp_path):
    mod = load("ported_training")
    eager = mod.main(epochs=2, out=str(tmp_path / "e"), verbose=False)
    compiled = mod.main(epochs=2, compile=True, out=str(tmp_path / "c"), verbose=False)
    assert len(eager["losses"]) == 2 * 2048 // 64
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-4, atol=1e-5)
    # the hook reading .item() ran on every compiled step, with that step's values
    np.testing.assert_allclose(compiled["grad_norms"], eager["grad_norms"], rtol=1e-4)
    assert len(eager["grad_norms"]) == len(eager["losses"])
    assert falls(eager["losses"]) and eager["accuracy"] > 0.85
    assert eager["lr"] == compiled["lr"] == pytest.approx(0.2 * 0.5 ** 2)
    assert os.path.exists(eager["checkpoint"]) and os.path.exists(compiled["checkpoint"])


def test_ported_training_script_runs_unported_on_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    ours = load("ported_training").main(epochs=2, out=str(tmp_path / "hg"), verbose=False)
    theirs = run_unported("ported_training", tmp_path, tmp_path / "pt")
    assert theirs["torch"] == torch.__file__   # PyTorch's own, not hookgrad bound as torch
    # the same script learns the same rule (the numbers differ: PyTorch's PRNG is not ours)
    assert len(theirs["losses"]) == len(ours["losses"])
    assert len(theirs["grad_norms"]) == len(ours["grad_norms"])
    assert theirs["lr"] == pytest.approx(ours["lr"])
    assert falls(theirs["losses"]) and theirs["accuracy"] > 0.85
    assert os.path.exists(theirs["checkpoint"])
    # and hookgrad's checkpoint is a PyTorch checkpoint: the same model in both
    mod = unported("ported_training")
    assert mod.torch is torch
    theirs_net, ours_net = mod.Net(), load("ported_training").Net()
    theirs_net.load_state_dict(torch.load(ours["checkpoint"], weights_only=True))
    ours_net.load_state_dict(hg.load(ours["checkpoint"], weights_only=True))
    x = np.random.default_rng(0).standard_normal((8, 20)).astype(np.float32)
    np.testing.assert_allclose(theirs_net(torch.from_numpy(x)).detach().numpy(),
                               ours_net(hg.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_every_example_is_tested_and_documented():
    names = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py"))
    tested = open(__file__).read()
    for name in names:
        doc = load(name).__doc__
        assert doc and "Run: python examples/" + name + ".py" in doc, name
        if "writes" in doc.lower() or "checkpoint" in name:   # what writes files says where
            assert "[--out DIR]" in doc, name
        assert f'load("{name}")' in tested, name


def test_readme_first_lines_are_the_two_commands():
    # the quick start itself runs as a script in tests/test_docs.py
    lines = open(os.path.join(ROOT, "README.md")).read().splitlines()
    assert lines[3] == "pip install -e . && python -m hookgrad"
    assert lines[4] == 'pip install -e ".[test]" && pytest -n 2 --dist loadfile'
