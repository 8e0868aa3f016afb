"""A PyTorch name hookgrad lacks fails clearly, and docs/api_coverage.md is current."""
import importlib
import importlib.util
import os

import pytest

import hookgrad
import hookgrad.nn as nn
import hookgrad.nn.functional as F
from hookgrad import _tensor_missing

from .differential import same_as_torch, torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool():
    spec = importlib.util.spec_from_file_location(
        "api_coverage", os.path.join(ROOT, "tools", "api_coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("get, torch_name", [
    (lambda: hookgrad.foo, "torch.foo"),
    (lambda: nn.Foo, "torch.nn.Foo"),
    (lambda: F.foo, "torch.nn.functional.foo"),
    (lambda: hookgrad.optim.Foo, "torch.optim.Foo"),
    (lambda: hookgrad.autograd.foo, "torch.autograd.foo"),
    (lambda: hookgrad.utils.foo, "torch.utils.foo"),
    (lambda: hookgrad.Tensor.to_sparse, "torch.Tensor.to_sparse"),
    (lambda: hookgrad.distributed.rpc, "torch.distributed.rpc"),
    (lambda: hookgrad.distributed.tensor.redistribute, "torch.distributed.tensor.redistribute"),
    (lambda: hookgrad.utils.data.foo, "torch.utils.data.foo"),
    (lambda: hookgrad.nn.init.foo, "torch.nn.init.foo"),
    (lambda: hookgrad.nn.utils.foo, "torch.nn.utils.foo"),
    (lambda: hookgrad.func.foo, "torch.func.foo"),
    (lambda: hookgrad.distributions.foo, "torch.distributions.foo"),
    (lambda: hookgrad.cuda.foo, "torch.cuda.foo"),
    (lambda: hookgrad.ones(2).to_sparse_csr, "torch.Tensor.to_sparse_csr"),
    (lambda: hookgrad._foreach_clamp_min, "torch._foreach_clamp_min"),
    (lambda: hookgrad._foreach_acos_, "torch._foreach_acos_"),
])
def test_a_missing_name_says_hookgrad_lacks_it(get, torch_name):
    with pytest.raises(AttributeError, match=rf"hookgrad does not implement {torch_name} "
                       r"yet \(see docs/api_coverage.md"):
        get()


def test_missing_names_are_still_attribute_errors():
    t = hookgrad.ones(2)
    assert not hasattr(t, "foo") and getattr(nn, "Foo", 3) == 3
    with pytest.raises(AttributeError, match=r"^'Tensor' object has no attribute '_foo'$"):
        t._foo  # private probes (copy, pickle, NumPy) keep the terse message


@pytest.mark.parametrize("name", _tensor_missing.NAMES)
def test_each_tensor_name_hookgrad_lacks_says_so(name):
    t = hookgrad.ones(2)
    for owner, obj in (("'Tensor' object", t), ("type object 'Tensor'", hookgrad.Tensor)):
        with pytest.raises(AttributeError, match=rf"^{owner} has no attribute '{name}': "
                           rf"hookgrad does not implement torch.Tensor.{name} yet"):
            getattr(obj, name)
    assert not hasattr(t, name)
    assert torch is None or hasattr(torch.Tensor, name)
    t.__dict__[name] = 3  # a non-data descriptor: an instance may set the name, as PyTorch's
    assert getattr(t, name) == 3


def test_a_name_no_tensor_has_is_pythons_plain_attribute_error():
    def scenario(L):
        got = []
        for obj in (L.ones(2), L.Tensor):
            with pytest.raises(AttributeError) as e:
                obj.no_such_name
            got.append(str(e.value))
        return got
    want = ["'Tensor' object has no attribute 'no_such_name'",
            "type object 'Tensor' has no attribute 'no_such_name'"]
    assert same_as_torch(scenario) == want


def test_tensor_has_no_getattr_fallback():
    # a Python ``__getattr__`` on the class (or its metaclass) turns off CPython's
    # specialized attribute reads for every Tensor
    assert type(hookgrad.Tensor) is type
    assert all("__getattr__" not in vars(k) for k in hookgrad.Tensor.__mro__)


def test_tensor_missing_names_are_current():
    # PyTorch's names from the installed pinned torch, else from docs/api_coverage.md
    tool = _tool()
    with open(tool.TENSOR_MISSING) as f:
        assert f.read() == tool.build_tensor_missing(), "stale: run python tools/api_coverage.py"


def test_coverage_document_is_current():
    tool = _tool()
    with open(tool.DOC) as f:
        assert f.read() == tool.build(), "stale: run python tools/api_coverage.py"


def test_coverage_document_lists_statuses_and_reads_back():
    # without the pinned torch, the document's own name lists are re-checked
    tool = _tool()
    names = {ns: [] for ns, _ in tool.NAMESPACES}
    names["torch.nn"] = ["Linear", "NoSuchLayer", "Embedding"]
    text = tool.render(names)
    nn_part = text.split("## `torch.nn`")[1].split("## `")[0]
    implemented = nn_part.split("### implemented")[1].split("###")[0]
    missing = nn_part.split("### missing")[1].split("###")[0]
    assert "`Linear`" in implemented and "`NoSuchLayer`" in missing
    assert "| `Embedding` | `sparse=True` gives dense gradients |" in nn_part
    assert tool.names_from_doc(text)["torch.nn"] == sorted(names["torch.nn"])


def _public_modules():
    import pkgutil
    return [m.name for m in pkgutil.walk_packages(hookgrad.__path__, "hookgrad.")
            if not any(part.startswith("_") for part in m.name.split("."))]


@pytest.mark.parametrize("name", _public_modules())
def test_every_public_module_says_what_hookgrad_lacks(name):
    # hookgrad.nn.modules.linear.foo as much as hookgrad.nn.foo: the PyTorch path is named
    mod = importlib.import_module(name)
    torch_name = "torch" + name[len("hookgrad"):]
    if name == "hookgrad.ops":  # as torch.ops: every name is an operator namespace
        assert getattr(mod, "not_a_name").__name__ == "torch.ops.not_a_name"
        with pytest.raises(AttributeError, match="hookgrad does not implement "
                                                 "torch.ops.aten.not_a_name"):
            getattr(mod.aten, "not_a_name")
        return
    # (hookgrad.autograd.graph and its siblings are the internal modules themselves)
    with pytest.raises(AttributeError, match=r"^module 'hookgrad\.[\w.]+' has no attribute "
                       rf"'not_a_name': hookgrad does not implement {torch_name}.not_a_name"):
        getattr(mod, "not_a_name")
