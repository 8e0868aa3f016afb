"""``torch.export.save`` / ``torch.export.load``: an exported program in one zip file.

The archive holds the serialized ``jax.export.Exported`` (``program.bin``), the state and
example inputs as :func:`hookgrad.save` writes them (``state.pt``), and, in JSON, the
signature and the calling convention (``meta.json``); ``extra/<name>`` the caller's extra
files. A loaded program runs in a fresh process without the Module's Python source. The
format is hookgrad's, not PyTorch's PT2 archive (docs/differences.md). JAX's serializer
needs the ``flatbuffers`` package (``pip install flatbuffers``, hookgrad's ``export``
extra).
"""
from __future__ import annotations

import io
import json
import os
import zipfile

from .. import _missing
from ..serialization import load as _load_state
from ..serialization import save as _save_state
from ..utils import _pytree as pytree
from .exported_program import CallInfo, ExportedProgram
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec,
                              OutputKind, OutputSpec, TensorArgument)

__all__ = ["save", "load"]

_FORMAT = "hookgrad-export/1"
_ROOT = "hookgrad_export/"


def save(ep: ExportedProgram, f, *, extra_files: dict | None = None,
         opset_version: dict | None = None, pickle_protocol: int = 2) -> None:
    """Saves ``ep`` to ``f`` (a path or a writable binary file); :func:`load` reads it.

    ``extra_files``: name -> str or bytes, stored beside the program.
    """
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    state = io.BytesIO()
    _save_state({"state": ep._state, "example_inputs": ep._example_inputs}, state,
                pickle_protocol=pickle_protocol)
    meta = {"format": _FORMAT, "signature": _signature_json(ep.graph_signature),
            "call": _call_json(ep._call)}
    with _open_zip(f, "w") as z:
        z.writestr(_ROOT + "program.bin", bytes(_jax_serializer(ep._exported.serialize)()))
        z.writestr(_ROOT + "state.pt", state.getvalue())
        z.writestr(_ROOT + "meta.json", json.dumps(meta))
        for name, content in (extra_files or {}).items():
            z.writestr(_ROOT + "extra/" + name,
                       content.encode() if isinstance(content, str) else content)


def load(f, *, extra_files: dict | None = None,
         expected_opset_version: dict | None = None) -> ExportedProgram:
    """Loads an ExportedProgram that :func:`save` wrote. ``extra_files``: a dict whose keys
    name the extra files to read; their contents (str) are filled in."""
    import jax
    with _open_zip(f, "r") as z:
        names = set(z.namelist())
        if _ROOT + "meta.json" not in names:
            raise RuntimeError("the file is not an exported program saved by hookgrad's "
                               "torch.export.save (PyTorch's PT2 archives are not read)")
        meta = json.loads(z.read(_ROOT + "meta.json"))
        exported = _jax_serializer(jax.export.deserialize)(
            bytearray(z.read(_ROOT + "program.bin")))
        saved = _load_state(io.BytesIO(z.read(_ROOT + "state.pt")), weights_only=False)
        for name in list(extra_files or {}):
            path = _ROOT + "extra/" + name
            if path in names:
                extra_files[name] = z.read(path).decode()
    if meta.get("format") != _FORMAT:
        raise RuntimeError(f"unknown exported-program format {meta.get('format')!r} (this "
                           f"hookgrad reads {_FORMAT!r})")
    return ExportedProgram(exported, saved["state"], _signature_from(meta["signature"]),
                           _call_from(meta["call"]), example_inputs=saved["example_inputs"])


def _jax_serializer(fn):
    """``fn`` (JAX's serializer or deserializer); a missing ``flatbuffers`` package, which
    it imports, raises an error saying what to install."""
    try:
        import flatbuffers  # noqa: F401
    except ImportError:
        raise ImportError("torch.export.save and torch.export.load need the 'flatbuffers' "
                          "package, which JAX's serializer of exported programs uses: pip "
                          "install flatbuffers (or hookgrad[export])") from None
    return fn


def _open_zip(f, mode):
    if isinstance(f, (str, os.PathLike)):
        f = os.fspath(f)
    return zipfile.ZipFile(f, mode)


def _arg_json(arg):
    if isinstance(arg, ConstantArgument):
        return {"constant": arg.name, "value": arg.value}
    return {"tensor": arg.name}


def _arg_from(d):
    return ConstantArgument(d["constant"], d["value"]) if "constant" in d \
        else TensorArgument(d["tensor"])


def _signature_json(sig):
    return {"inputs": [[s.kind.name, _arg_json(s.arg), s.target, s.persistent]
                       for s in sig.input_specs],
            "outputs": [[s.kind.name, _arg_json(s.arg), s.target] for s in sig.output_specs]}


def _signature_from(d):
    return ExportGraphSignature(
        [InputSpec(InputKind[k], _arg_from(a), t, p) for k, a, t, p in d["inputs"]],
        [OutputSpec(OutputKind[k], _arg_from(a), t) for k, a, t in d["outputs"]])


def _call_json(call):
    d = {k: getattr(call, k) for k in CallInfo.__dataclass_fields__}
    d["in_spec"] = pytree.treespec_dumps(call.in_spec)
    d["out_spec"] = pytree.treespec_dumps(call.out_spec)
    d["constants"] = [[k, v] for k, v in call.constants.items()]
    d["out_constants"] = [[k, v] for k, v in call.out_constants.items()]
    try:
        json.dumps(d)
    except TypeError as e:
        raise RuntimeError("hookgrad saves exported programs whose non-Tensor inputs and "
                           f"outputs are None, bools, numbers or strings ({e})") from None
    return d


def _call_from(d):
    d = dict(d)
    d["in_spec"] = pytree.treespec_loads(d["in_spec"])
    d["out_spec"] = pytree.treespec_loads(d["out_spec"])
    d["constants"] = {k: v for k, v in d["constants"]}
    d["out_constants"] = {k: v for k, v in d["out_constants"]}
    d["dims"] = [[x if isinstance(x, int) else tuple(x) for x in row] for row in d["dims"]]
    return CallInfo(**d)


__getattr__ = _missing.module_getattr(__name__)
