"""The examples and the notebook run and show what they claim."""
import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gradient_monitoring_trains_and_records_norms():
    losses, norms = load("gradient_monitoring").main(steps=15, verbose=False)
    assert losses[-1] < 0.6 * losses[0]
    assert all(len(v) == 15 for v in norms.values())


def test_grad_cam_map_is_normalised():
    cam = load("grad_cam").main(verbose=False)
    assert tuple(cam.shape) == (1, 8, 8)
    assert abs(cam.max().item() - 1.0) < 1e-4 and cam.min().item() >= 0.0


def test_activation_patching_last_relu_restores_everything():
    effects = load("activation_patching").main(verbose=False)
    assert abs(effects[3] - 1.0) < 1e-5  # patching the last hidden activation fixes the output


def test_saved_tensor_offload_same_gradients():
    stats, same = load("saved_tensor_offload").main(verbose=False)
    assert stats["count"] > 0 and same


def test_compiled_training_loss_falls():
    losses = load("compiled_training").main(steps=15, verbose=False)
    assert losses[-1] < losses[0]


def test_notebook_cells_run():
    nb = json.load(open(os.path.join(ROOT, "notebooks", "hook_tour.ipynb")))
    ns = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec("".join(cell["source"]), ns)  # noqa: S102 - our own notebook
    assert ns["log"] == ["tensor", "pre", "post"]


def test_readme_first_lines_and_snippet():
    text = open(os.path.join(ROOT, "README.md")).read()
    lines = text.splitlines()
    assert lines[3] == "pip install -e . && python -m hookgrad"
    assert lines[4] == 'pip install -e ".[test]" && pytest'
    snippet = text.split("```python\n", 1)[1].split("```", 1)[0]
    ns = {}
    exec(snippet, ns)  # noqa: S102 - our own README
    assert ns["x"].grad.tolist() == [4.0, 8.0, 12.0]
    x, y = ns["torch"].randn(16, 4), ns["torch"].randn(16, 1)
    losses = [ns["step"](x, y).item() for _ in range(3)]
    assert losses[2] < losses[0]
