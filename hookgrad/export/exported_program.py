"""``torch.export.exported_program``: :class:`ExportedProgram`, what ``torch.export.export``
returns.

hookgrad's exported program is a ``jax.export.Exported``: the Module's forward lowered to
StableHLO as a function of (parameters and buffers, the Tensors among the inputs), with
the symbolic dimensions ``dynamic_shapes`` asked for. Beside it the ExportedProgram keeps
the state it was exported with and what it needs to call it as the Module was called (the
input and output structures, the values of non-Tensor inputs).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, Optional

from .. import _missing
from .graph_signature import ExportGraphSignature, InputKind

__all__ = ["ExportedProgram", "ModuleCallEntry", "ModuleCallSignature",
           "default_decompositions"]


@dataclasses.dataclass
class ModuleCallSignature:
    inputs: list
    outputs: list
    in_spec: Any
    out_spec: Any
    forward_arg_names: Optional[list[str]] = None


@dataclasses.dataclass
class ModuleCallEntry:
    fqn: str
    signature: Optional[ModuleCallSignature] = None


@dataclasses.dataclass
class CallSpec:
    """The structure of the inputs ``(args, kwargs)`` and of the output."""
    in_spec: Any
    out_spec: Any


@dataclasses.dataclass
class ValueRange:
    """The sizes a symbolic dimension may take: ``[lower, upper]`` (``upper`` None: no
    bound; printed ``int_oo`` as PyTorch does)."""
    lower: int
    upper: Optional[int]

    def __repr__(self):
        return f"VR[{self.lower}, {'int_oo' if self.upper is None else self.upper}]"


@dataclasses.dataclass
class CallInfo:
    """How to call the exported function as the Module was called (all JSON-able but the
    two TreeSpecs): per flat input leaf its name; which leaves are Tensors and, per Tensor,
    its dtype and dimensions (an int, or ``[symbol, a, b]`` for ``a * symbol + b``); the
    values of the other leaves; per output leaf whether the program returns it (else its
    constant value); the buffers the forward writes."""
    in_spec: Any
    out_spec: Any
    leaf_names: list
    tensor_pos: list
    constants: dict
    dims: list
    dtypes: list
    symbols: dict            # symbol -> [display name, lower, upper or None]
    out_constants: dict      # output leaf position -> value
    n_out: int
    mutated: list            # fqns of the buffers the forward writes, in output order
    forward_arg_names: list
    uses_rng: bool           # random ops drew from the key passed in (dropout in training)


class ExportedProgram:
    """A Module's forward exported by :func:`torch.export.export`.

    ``ep.module()`` is a Module that runs the program with the exported state;
    ``ep.state_dict`` holds that state; ``ep.graph_signature`` says what each input and
    output of the program is; ``str(ep)`` shows the program (StableHLO, in hookgrad, where
    PyTorch shows an ATen FX graph).
    """

    def __init__(self, exported, state, graph_signature: ExportGraphSignature, call: CallInfo,
                 example_inputs=None):
        self._exported = exported
        self._state = dict(state)
        self._graph_signature = graph_signature
        self._call = call
        self._example_inputs = example_inputs
        self._jitted = None

    # ------------------------------------------------------------------ the program
    @property
    def exported(self) -> Any:
        """The ``jax.export.Exported`` (hookgrad's addition): serialize it, call it from JAX
        with ``(state arrays, input arrays)``."""
        return self._exported

    @property
    def graph_module(self) -> _StableHLOModule:
        """The program's text as StableHLO (PyTorch's is an FX ``GraphModule``)."""
        return _StableHLOModule(self._exported.mlir_module())

    @property
    def graph(self) -> _StableHLOModule:
        return self.graph_module

    @property
    def dialect(self) -> str:
        return "STABLEHLO"

    @property
    def graph_signature(self) -> ExportGraphSignature:
        return self._graph_signature

    @property
    def call_spec(self) -> CallSpec:
        return CallSpec(self._call.in_spec, self._call.out_spec)

    @property
    def range_constraints(self) -> dict:
        """symbol -> the sizes it may take, for each symbolic dimension of the program."""
        return {s: ValueRange(lo, hi) for s, (_, lo, hi) in self._call.symbols.items()}

    @property
    def example_inputs(self) -> Any:
        return self._example_inputs

    @property
    def module_call_graph(self) -> list[ModuleCallEntry]:
        sig = ModuleCallSignature([], [], self._call.in_spec, self._call.out_spec,
                                  list(self._call.forward_arg_names))
        return [ModuleCallEntry("", sig)]

    # ------------------------------------------------------------------ the state
    @property
    def state_dict(self) -> dict:
        """The parameters and persistent buffers the program was exported with."""
        drop = set(self._graph_signature.non_persistent_buffers)
        return {k: v for k, v in self._state.items() if k not in drop}

    @property
    def constants(self) -> dict:
        """The non-persistent buffers (PyTorch also lifts tensor constants here)."""
        return {k: self._state[k] for k in self._graph_signature.non_persistent_buffers}

    @property
    def tensor_constants(self) -> dict:
        return self.constants

    def named_parameters(self) -> Iterator[tuple[str, Any]]:
        return self._named(self._graph_signature.parameters)

    def named_buffers(self) -> Iterator[tuple[str, Any]]:
        return self._named(self._graph_signature.buffers)

    def parameters(self) -> Iterator[Any]:
        return (p for _, p in self.named_parameters())

    def buffers(self) -> Iterator[Any]:
        return (b for _, b in self.named_buffers())

    def _named(self, names) -> Iterator[tuple[str, Any]]:
        return ((name, self._state[name]) for name in names)

    # ------------------------------------------------------------------ running it
    def module(self, check_guards=True) -> Any:
        """A Module running this program with its state; its ``state_dict()`` has the
        original fully qualified names. Calls check the inputs as the export's guards do
        (``AssertionError: Guard failed: ...``) unless ``check_guards=False``."""
        from ._unlift import ExportedModule
        return ExportedModule(self, check_guards=check_guards)

    def run_decompositions(self, decomp_table=None,
                           decompose_custom_triton_ops=False) -> ExportedProgram:
        """Returns the program itself: a StableHLO program is already made of XLA's core
        operations, so there is nothing to decompose (docs/differences.md)."""
        return self

    def validate(self) -> None:
        """Checks that the state matches what the program takes (shapes and dtypes)."""
        for spec, aval in zip(self._state_order(), self._exported.in_avals):
            t = self._state[spec]
            if tuple(t.shape) != tuple(aval.shape) or t._data.dtype != aval.dtype:
                raise RuntimeError(f"the exported program takes {spec} as {aval.dtype}"
                                   f"{list(aval.shape)}, but the state holds {t._data.dtype}"
                                   f"{list(t.shape)}")

    def _state_order(self):
        return [s.target for s in self._graph_signature.input_specs
                if s.kind in (InputKind.PARAMETER, InputKind.BUFFER)]

    def _run(self, state_arrays, input_arrays):
        """The program's (written buffers, outputs); a program that draws random numbers
        gets a key split from hookgrad's global one, so each call draws new ones."""
        import jax
        import jax.numpy as jnp
        from .. import _random
        if self._jitted is None:
            self._jitted = jax.jit(self._exported.call)
        key = self._exported.in_avals[-1]
        if self._call.uses_rng:
            new, sub = _random.split(_random.GLOBAL.get())
            _random.GLOBAL.set(new)
            key_data = jax.random.key_data(sub)
        else:
            key_data = jnp.zeros(key.shape, key.dtype)
        return self._jitted(state_arrays, input_arrays, key_data)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def __str__(self):
        def indent(text):
            return "\n".join("    " + line for line in text.splitlines())
        ranges = {s: r for s, r in self.range_constraints.items()}
        return (f"ExportedProgram:\n{indent(self._exported.mlir_module())}\n\n"
                f"Graph signature: \n{indent(str(self._graph_signature))}\n"
                f"Range constraints: {ranges}\n")

    def __repr__(self):
        return str(self)


class _StableHLOModule:
    """An exported program's StableHLO text, where PyTorch has an FX ``GraphModule``."""

    def __init__(self, text):
        self.code = text

    def print_readable(self, print_output=True) -> str:
        if print_output:
            print(self.code)
        return self.code

    def __str__(self):
        return self.code


class CustomDecompTable(dict):
    """A table of operator decompositions for :meth:`ExportedProgram.run_decompositions`:
    hookgrad's programs are StableHLO with nothing to decompose, so the table starts empty
    and is not used (docs/differences.md)."""

    def copy(self):
        return CustomDecompTable(self)

    def materialize(self) -> dict:
        return dict(self)


def default_decompositions() -> CustomDecompTable:
    """The decomposition table ``run_decompositions`` uses by default: empty in hookgrad
    (there are no ATen operators in a StableHLO program)."""
    return CustomDecompTable()


__getattr__ = _missing.module_getattr(__name__)
