"""The notebooks run and show what they claim; the committed files stay stripped.

Each notebook ends with a ``checks`` dict of what it computed. With nbclient and ipykernel
installed the notebook runs in a real kernel (figures come back as PNG outputs); without
them its code cells run in a fresh namespace with matplotlib's Agg backend (figures are
saved from the open figure objects; HOOKGRAD_NOTEBOOKS=exec forces this). Either way the
same assertions apply.
"""
import base64
import contextlib
import glob
import importlib.util
import io
import json
import os
import shutil
import warnings

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK_DIR = os.path.join(ROOT, "notebooks")
_MARK = "__HOOKGRAD_CHECKS__"


def _tool():
    spec = importlib.util.spec_from_file_location("nb_tool", os.path.join(ROOT, "tools", "notebooks.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _load(name):
    with open(os.path.join(NOTEBOOK_DIR, name), encoding="utf-8") as f:
        return json.load(f)


def _have_kernel():
    if os.environ.get("HOOKGRAD_NOTEBOOKS") == "exec":
        return False
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


def _run_in_kernel(name):
    import nbclient
    import nbformat

    nb = nbformat.read(os.path.join(NOTEBOOK_DIR, name), as_version=4)
    # figures come back as PNG outputs whatever MPLBACKEND says
    nb.cells.insert(0, nbformat.v4.new_code_cell("%matplotlib inline"))
    nb.cells.append(nbformat.v4.new_code_cell(
        "import json as _json, hookgrad as _hg\n"
        f"print({_MARK!r} + _json.dumps({{'checks': checks, 'hookgrad': _hg.__file__}}))"))
    # the kernel starts in the repository root, so it imports this checkout's hookgrad
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": ROOT}}).execute()
    pngs, payload, printed = [], None, {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "image/png" in out.get("data", {}):
                pngs.append(base64.b64decode(out["data"]["image/png"]))
            if out.get("output_type") == "stream" and _MARK in out.get("text", ""):
                payload = json.loads(out["text"].split(_MARK, 1)[1])
            elif out.get("output_type") == "stream" and out.get("name") == "stdout":
                printed[cell.get("id")] = printed.get(cell.get("id"), "") + out["text"]
    assert payload is not None, "the checks cell printed nothing"
    assert os.path.dirname(payload["hookgrad"]).startswith(ROOT), payload["hookgrad"]
    return payload["checks"], pngs, printed


def _run_in_namespace(name):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    ns, printed = {"__name__": "__main__"}, {}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*")   # plt.show on Agg
        for cell in _load(name)["cells"]:
            if cell["cell_type"] == "code":
                code = compile("".join(cell["source"]), f"{name}:{cell['id']}", "exec")
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(code, ns)  # noqa: S102 - our own notebook
                printed[cell["id"]] = out.getvalue()
    pngs = []
    for num in plt.get_fignums():
        buf = io.BytesIO()
        plt.figure(num).savefig(buf, format="png")
        pngs.append(buf.getvalue())
    plt.close("all")
    return json.loads(json.dumps(ns["checks"])), pngs, printed


def run_notebook(name):
    """(checks, PNG bytes of each figure, {cell id: what it printed}) of notebook
    ``name``."""
    return _run_in_kernel(name) if _have_kernel() else _run_in_namespace(name)


def assert_pictures(pngs, at_least):
    import matplotlib.image

    assert len(pngs) >= at_least, f"expected {at_least} figures, got {len(pngs)}"
    for png in pngs:
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
        assert pixels.shape[0] > 50 and pixels.shape[1] > 50
        assert pixels.std() > 0.01            # not a blank canvas


# --- the committed files ---------------------------------------------------------------

def test_every_notebook_is_tested():
    assert sorted(os.path.basename(p) for p in glob.glob(os.path.join(NOTEBOOK_DIR, "*.ipynb"))) \
        == sorted(CHECKS)


@pytest.mark.parametrize("name", sorted(glob.glob(os.path.join(NOTEBOOK_DIR, "*.ipynb"))),
                         ids=os.path.basename)
def test_committed_notebook_has_ids_and_no_outputs(name):
    assert _tool().problems(_load(name)) == []


def test_strip_tool_finds_and_fixes_outputs_and_missing_ids():
    tool = _tool()
    nb = _load("hook_tour.ipynb")
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
    code["execution_count"] = 3
    del nb["cells"][0]["id"]
    found = tool.problems(nb)
    assert any("has outputs" in m for m in found) and any("no id" in m for m in found)
    assert tool.problems(tool.strip(nb, "hook_tour")) == []
    assert nb["cells"][0]["id"] == "hook_tour-0" and code["outputs"] == []


# --- running them ----------------------------------------------------------------------

def check_grad_cam(checks, pngs, printed):
    assert checks["loss_last"] < 0.1 * checks["loss_first"]
    # the first call creates Adam's state: it traces the step twice and keeps one program
    assert checks["trace_count"] == 1
    assert "train_step.trace_count 1" in printed["train"]
    assert checks["accuracy"] >= 0.9
    # the heat peaks on the planted square (one miss allowed across machines' float noise)
    assert checks["peak_total"] == 8 and checks["peak_hits"] >= 7
    assert checks["compiled_max_diff"] < 1e-4
    assert checks["cam_trace_count"] == 1       # the compiled Grad-CAM is one program
    assert "cam_compiled.trace_count 1" in printed["compiled"]
    assert_pictures(pngs, 3)


def check_activation_patching(checks, pngs, printed):
    layer, last = checks["planted_layer"], -1
    assert checks["loss_last"] < 0.1 * checks["loss_first"] and checks["accuracy"] >= 0.9
    assert checks["found_layer"] == layer
    resid, attn = checks["resid_post"], checks["attn_out"]
    # before the planted layer the answer sits at position 0, from it on at the last one
    for lay in range(len(resid)):
        here, there = (0, last) if lay < layer else (last, 0)
        assert resid[lay][here] > 0.9 and abs(resid[lay][there]) < 0.1, (lay, resid[lay])
    assert attn[layer][last] > 0.9
    assert all(abs(attn[lay][last]) < 0.5 for lay in range(len(attn)) if lay != layer)
    assert_pictures(pngs, 1)


def check_gradient_monitoring(checks, pngs, printed):
    assert checks["eager_loss_last"] < 0.85 * checks["eager_loss_first"]
    assert checks["loss_gap"] < 1e-4 and checks["norm_gap"] < 1e-4   # eager == compiled
    # the host hooks ran on every compiled call: 60 steps + 1 warm-up + 20 timed
    assert set(checks["grad_norm_counts"].values()) == {81}
    assert sorted(checks["grad_norm_counts"]) == ["0", "2", "4", "6"]
    assert set(checks["dead_counts"].values()) == {81}
    assert "compiled steps in" in printed["compiled"]
    assert "(trace_count 1)" in printed["compiled"]   # one program, the loggers host calls
    assert checks["speedup"] > 1.0
    assert_pictures(pngs, 3)


GRAPH_HOOK_ORDER = ["pre-hook on loss node", "post-hook on loss node",
                    "full backward hook on Linear 2", "tensor hook on ReLU output",
                    "post-accumulate-grad on weight 0"]


def check_autograd_graph(checks, pngs, printed):
    assert {"MeanBackward0", "PowBackward0", "SubBackward0", "AddmmBackward0", "TBackward0",
            "ReluBackward0", "BackwardHookFunctionBackward",
            "torch::autograd::AccumulateGrad"} \
        == set(checks["node_names"])
    assert checks["hooked_nodes"] == 5
    assert checks["eager_order"] == GRAPH_HOOK_ORDER
    assert checks["traced_order"] == GRAPH_HOOK_ORDER
    assert checks["trace_count"] == 2 and checks["hooks_on_third_call"] == 0
    assert "2 traces; 5 hooks ran in the first, 5 in the second, 0 on the third call" \
        in printed["compiled"]
    has_graphviz = importlib.util.find_spec("graphviz") is not None and shutil.which("dot")
    assert checks["rendered_with_graphviz"] == bool(has_graphviz)
    assert_pictures(pngs, 1)


def check_hook_tour(checks, pngs, printed):
    assert checks["log"] == ["tensor", "pre", "post"]
    assert printed["module-hooks"].count("grad_input") == 1
    # the first call's hooks (keep a Tensor, print) run on the host after its program:
    # the print shows once, as eagerly; removing them makes a second program
    assert printed["compiled"].count("grad_input hookgrad.Size([16, 8])") == 1
    assert printed["compiled"].count("grad_input") == 1
    assert checks["loss_last"] < checks["loss_first"] and checks["trace_count"] == 2
    assert_pictures(pngs, 1)


CHECKS = {
    "grad_cam.ipynb": check_grad_cam,
    "activation_patching.ipynb": check_activation_patching,
    "gradient_monitoring.ipynb": check_gradient_monitoring,
    "autograd_graph.ipynb": check_autograd_graph,
    "hook_tour.ipynb": check_hook_tour,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_notebook_runs_and_shows_what_it_claims(name):
    CHECKS[name](*run_notebook(name))


def test_autograd_graph_hook_order_is_pytorchs():
    torch = pytest.importorskip("torch")
    cell = next(c for c in _load("autograd_graph.ipynb")["cells"] if c.get("id") == "step")
    ns = {"torch": torch, "nn": torch.nn}
    exec("".join(cell["source"]), ns)  # noqa: S102 - our own notebook, run on PyTorch
    ns["loss"].backward()
    assert ns["fired"] == GRAPH_HOOK_ORDER
