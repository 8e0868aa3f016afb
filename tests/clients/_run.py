"""Run one client-library scenario in this process and print its result as JSON.

``python -m tests.clients._run LIB MODULE F1,F2,...``: LIB is ``torch`` (real PyTorch) or
``hookgrad`` (``torch`` bound to hookgrad first); each MODULE.F() returns plain Python
(tensors turned into lists); the last line is ``RESULT {F: result or {"error": ...}}``.
"""
import importlib
import json
import sys
import traceback


def plain(x):
    if hasattr(x, "detach") and hasattr(x, "tolist"):
        return x.detach().tolist()
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if hasattr(x, "tolist"):
        return x.tolist()
    return x


def main(lib, module, functions):
    if lib == "hookgrad":
        import hookgrad.as_torch
        hookgrad.as_torch.install()
    else:
        import torch  # noqa: F401 - the real one
    mod = importlib.import_module(module)
    results = {}
    for name in functions.split(","):
        try:
            results[name] = plain(getattr(mod, name)())
        except Exception:  # noqa: BLE001 - reported to the test, which fails on it
            results[name] = {"error": traceback.format_exc(limit=-6)}
    print("RESULT " + json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:4])
