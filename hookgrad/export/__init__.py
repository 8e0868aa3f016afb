"""``hookgrad.export``, PyTorch's ``torch.export``: a Module's forward as a program that runs
without its Python code, built on JAX's exporter (``jax.export``).

::

    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    ep.module()(x2)                       # another batch size: same values as model(x2)
    torch.export.save(ep, "model.pt2")    # loads in a fresh process, no model source needed

The program is StableHLO (``ep.exported`` is the ``jax.export.Exported``), not an ATen FX
graph; docs/differences.md lists what follows from that.
"""
import dataclasses

from .. import _missing
from ..utils import _pytree
from . import dynamic_shapes, exported_program, graph_signature, unflatten  # noqa: F401
from ._serialize import load, save
from ._trace import export
from .dynamic_shapes import AdditionalInputs, Constraint, Dim, ShapesCollection, dims
from .exported_program import (CustomDecompTable, ExportedProgram, ModuleCallEntry,
                               ModuleCallSignature, default_decompositions)
from .graph_signature import ExportBackwardSignature, ExportGraphSignature
from .unflatten import FlatArgsAdapter, UnflattenedModule

__all__ = ["AdditionalInputs", "Constraint", "CustomDecompTable", "default_decompositions",
           "Dim", "dims", "draft_export", "export", "ExportBackwardSignature",
           "ExportedProgram", "ExportGraphSignature", "FlatArgsAdapter", "load",
           "ModuleCallEntry", "ModuleCallSignature", "register_dataclass", "save",
           "ShapesCollection", "unflatten", "UnflattenedModule"]

unflatten = unflatten.unflatten  # the function, as ``torch.export.unflatten``

draft_export = _missing.not_implemented("torch.export.draft_export")


def register_dataclass(cls, *, serialized_type_name: str | None = None) -> None:
    """Registers the dataclass ``cls`` as a pytree node (its fields are its children), so
    instances can be inputs and outputs of an exported program."""
    if not dataclasses.is_dataclass(cls):
        raise ValueError(f"Class {cls} must be a dataclass")
    names = [f.name for f in dataclasses.fields(cls) if f.init]

    def flatten(obj):
        return [getattr(obj, n) for n in names], names

    def unflatten_(values, context):
        return cls(**dict(zip(context, values)))
    _pytree.register_pytree_node(cls, flatten, unflatten_,
                                 serialized_type_name=serialized_type_name)


__getattr__ = _missing.module_getattr(__name__)
