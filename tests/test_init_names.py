"""A wrong keyword to a constructor names the class PyTorch's message names: the class
itself where PyTorch writes out its ``__init__`` (``Conv2d.__init__() got an unexpected
keyword argument``), the base where PyTorch's class inherits one (``_BatchNorm``,
``_MaxPoolNd``, ``_LazyNormBase``), for every public class of nn, optim, distributions
and utils.data that PyTorch builds with a Python ``__init__`` taking no ``**kwargs``."""
import importlib
import inspect
import re

import pytest

torch = pytest.importorskip("torch")

_MODULES = ["nn", "optim", "optim.lr_scheduler", "optim.swa_utils", "distributions",
            "distributions.transforms", "distributions.constraints",
            "distributions.relaxed_bernoulli", "distributions.relaxed_categorical",
            "utils.data"]


def _strict(init):
    # a Python __init__ that rejects an unknown keyword before its body runs
    if not inspect.isfunction(init):
        return False
    return all(p.kind is not p.VAR_KEYWORD for p in inspect.signature(init).parameters.values())


def _pairs():
    seen, out = set(), []
    for m in _MODULES:
        tm, hm = (importlib.import_module(f"{L}.{m}") for L in ("torch", "hookgrad"))
        found = [(n, getattr(tm, n)) for n in dir(tm) if not n.startswith("_")]
        found += [(type(v).__name__, type(v)) for n, v in found
                  if isinstance(v, torch.distributions.constraints.Constraint)]
        for name, tc in found:
            if not isinstance(tc, type) or tc in seen or not _strict(tc.__init__):
                continue
            hc = getattr(hm, name, None)
            if hc is None and name.startswith("_"):
                hc = next((type(v) for v in vars(hm).values()
                           if type(v).__name__ == name), None)
            if isinstance(hc, type):
                seen.add(tc)
                out.append(pytest.param(tc, hc, id=f"{m}.{name}"))
    assert len(out) > 150, "the walk found too few classes to check"
    return out


@pytest.mark.filterwarnings("ignore:`NLLLoss2d` has been deprecated:FutureWarning")
@pytest.mark.parametrize("torch_cls,cls", _pairs())
def test_a_wrong_keyword_names_the_class_pytorch_names(torch_cls, cls):
    with pytest.raises(TypeError) as want:
        torch_cls(bogus_keyword=1)
    with pytest.raises(TypeError, match=f"^{re.escape(str(want.value))}$"):
        cls(bogus_keyword=1)
