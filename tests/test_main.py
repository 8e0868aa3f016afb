"""``python -m hookgrad``: the tour runs, says what it promises and draws its pictures."""
import contextlib
import io
import os
import re
import subprocess
import sys

import pytest

import hookgrad
from hookgrad.__main__ import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args):
    return subprocess.run([sys.executable, "-m", "hookgrad", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_help_lists_the_options():
    res = _run("--help")
    assert res.returncode == 0, res.stderr
    for option in ("--steps", "--mode", "--plot", "--quick", "--device"):
        assert option in res.stdout
    assert "eager,compiled,both" in res.stdout


def test_bad_options_are_refused_by_argparse(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--mode", "fast"])
    assert e.value.code == 2
    assert "invalid choice: 'fast'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--steps", "1"])
    assert "--steps must be at least 2, got 1" in capsys.readouterr().err


@pytest.fixture(scope="module")
def quick_tour(tmp_path_factory):
    """One in-process ``--quick --plot DIR`` run, shared by the checks below."""
    plots = tmp_path_factory.mktemp("plots")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = main(["--quick", "--plot", str(plots)])
    return result, out.getvalue(), plots


def test_first_line_names_versions_and_device(quick_tour):
    import jax
    first = quick_tour[1].splitlines()[0]
    assert first.startswith(f"hookgrad {hookgrad.__version__} · JAX {jax.__version__}")
    assert "device cpu" in first or "device cuda" in first


def test_both_modes_train_and_the_loss_falls(quick_tour):
    result, text, _ = quick_tour
    for mode in ("eager", "compiled"):
        losses = result["losses"][mode]
        assert len(losses) == 40
        assert sum(losses[-5:]) < sum(losses[:5]), (mode, losses)
        m = re.search(rf"^{mode}: 40 steps, loss ([\d.]+) -> ([\d.]+)", text, re.M)
        assert m and float(m.group(2)) < float(m.group(1))
    # the compiled phase continues from where eager stopped, and says so
    assert sum(result["losses"]["compiled"][-5:]) < sum(result["losses"]["eager"][:5])
    assert "It continues training the model eager left (not a fresh start)" in text
    assert min(result["ms"]["eager"] + result["ms"]["compiled"]) > 0
    assert re.search(r"speed-up of hookgrad\.compile over eager, same step and hooks: "
                     r"[\d.]+x per step \(median", text)


def test_output_explains_one_time_compilation(quick_tour):
    text = quick_tour[1]
    assert "first calls on new shapes run in NumPy while XLA compiles it" in text
    assert re.search(r"first calls [\d.]+ s \(one-time compilation\)", text)


def test_module_table_has_every_module(quick_tour):
    text = quick_tour[1]
    header = next(line for line in text.splitlines() if "fwd ms" in line)
    for col in ("bwd ms", "|grad out|", "act mean", "dead"):
        assert col in header
    rows = {line.split()[0]: line.split() for line in text.splitlines()
            if line.startswith("  ") and len(line.split()) == 7}
    for name in ("conv1", "relu1", "pool1", "conv2", "fc1", "fc2"):
        fwd, bwd, grad = rows[name][2:5]
        assert float(fwd) > 0 and float(bwd) > 0 and float(grad) > 0, rows[name]


def test_grad_cam_heat_sits_on_the_shape(quick_tour):
    result, text, _ = quick_tour
    # the shape covers a small part of the picture; the heat on it is well above chance
    assert result["cam_on_shape"] > 1.5 * result["shape_area"]
    # the text and the plotted picture's title give the same measure, each named
    assert f"on average {result['cam_on_shape']:.0%} of a picture's heat lies on its shape" in text
    assert re.search(r"\(the plotted \w+: \d+% of its heat on the shape\)", text)


def test_plots_exist_and_decode(quick_tour):
    mpimg = pytest.importorskip("matplotlib.image")
    result, text, plots = quick_tour
    names = sorted(os.path.basename(p) for p in result["plots"])
    assert names == ["grad_cam.png", "grad_norms.png", "loss.png"]
    for name in names:
        img = mpimg.imread(os.path.join(plots, name))
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
        assert img.std() > 0.01   # not a blank canvas
    assert str(plots) in text


def test_ends_saying_where_examples_and_docs_are(quick_tour):
    last = quick_tour[1].strip().splitlines()[-2:]
    assert "examples" in last[0] and "docs" in last[1]


def test_plot_without_matplotlib_fails_before_training_with_the_install_command(
        tmp_path, monkeypatch, capsys):
    import importlib.util
    from hookgrad import _tour
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else find_spec(name, *a))
    monkeypatch.setattr(_tour, "tour", lambda args: pytest.fail("trained before failing"))
    with pytest.raises(SystemExit) as e:
        main(["--quick", "--plot", str(tmp_path / "p")])
    assert e.value.code == 2
    assert "needs matplotlib, which is not installed; install it with pip install " \
           "'hookgrad[plot]'" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "p")


def test_plot_extra_names_matplotlib_pinned_as_ci_installs_it():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["plot"]
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        pin = re.search(r"matplotlib==[\w.]+", f.read()).group(0)
    assert extra == [pin]


def test_traced_value_error_says_what_to_do_and_shows_the_users_frames():
    import traceback
    import hookgrad.nn as nn
    m = nn.Linear(3, 1)
    norms = []

    @hookgrad.compile(fullgraph=True)   # by default such a step runs eagerly
    def step(x):
        loss = m(x).sum()
        norms.append(loss.item())    # a read in the step (a hook's runs on the host)
        loss.backward()

    with pytest.raises(hookgrad.compile.TracedValueError) as e:
        step(hookgrad.randn(2, 3))
    first = str(e.value).splitlines()[0]
    assert first == (".item() inside a hookgrad.compile step: mark the hook that reads the "
                     "value @hookgrad.compile.host_hook, or move the read outside the step.")
    text = "".join(traceback.format_exception(e.value))
    assert "JAX_TRACEBACK_FILTERING" not in text and "jax/_src" not in text
    files = [f.filename for f in traceback.extract_tb(e.value.__traceback__)]
    assert files[-1] == __file__                      # the line that called .item()
    pkg = os.path.dirname(hookgrad.__file__)
    assert sum(f.startswith(pkg) for f in files) <= 1   # at most compile's own raise
    assert "hookgrad.compile.TracedValueError" in text
