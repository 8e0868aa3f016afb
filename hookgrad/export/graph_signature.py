"""``torch.export.graph_signature``: what each input and output of an exported program is.

An :class:`ExportGraphSignature` lists the exported program's flat inputs (the lifted
parameters and buffers, then the user's inputs) and outputs (buffers the forward wrote,
then the user's outputs), each an :class:`InputSpec` / :class:`OutputSpec` naming its kind
and, for state, the fully qualified name of the parameter or buffer it stands for.

In hookgrad the program is a StableHLO module (``jax.export``), not an FX graph: the argument
names are hookgrad's (``p_<fqn>``, ``b_<fqn>``, the forward's parameter names for user
inputs, ``output_<i>`` for outputs) rather than the names of FX nodes.
"""
from __future__ import annotations

import dataclasses
from enum import Enum, auto
from typing import Any, Optional, Union

from .. import _missing

__all__ = ["ConstantArgument", "CustomObjArgument", "ExportBackwardSignature",
           "ExportGraphSignature", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "SymBoolArgument", "SymFloatArgument", "SymIntArgument", "TensorArgument"]


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class TokenArgument:
    name: str


@dataclasses.dataclass
class SymIntArgument:
    name: str


@dataclasses.dataclass
class SymFloatArgument:
    name: str


@dataclasses.dataclass
class SymBoolArgument:
    name: str


@dataclasses.dataclass
class CustomObjArgument:
    name: str
    class_fqn: str
    fake_val: Optional[Any] = None


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: Union[int, float, bool, str, None]


ArgumentSpec = Union[TensorArgument, SymIntArgument, SymFloatArgument, SymBoolArgument,
                     ConstantArgument, CustomObjArgument, TokenArgument]


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: ArgumentSpec
    target: Optional[str]
    persistent: Optional[bool] = None

    def __post_init__(self):
        if self.kind == InputKind.BUFFER and self.persistent is None:
            raise AssertionError("Failed to specify persistent flag on BUFFER.")

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{self.arg.name}: {self.kind.name}{target}{persistent}"


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: ArgumentSpec
    target: Optional[str]

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        return f"{self.arg.name}: {self.kind.name}{target}"


@dataclasses.dataclass
class ExportBackwardSignature:
    gradients_to_parameters: dict[str, str]
    gradients_to_user_inputs: dict[str, str]
    loss_output: str


def _name(arg):
    """A user input's or output's entry: its name, or the value of a constant."""
    return arg.value if isinstance(arg, ConstantArgument) else arg.name


def _targets(kind: InputKind) -> property:
    """A property: the targets of the inputs of ``kind``, in the program's order."""
    def get(self) -> tuple[str, ...]:
        return tuple(s.target for s in self._inputs(kind))
    return property(get)


def _names_to_targets(kind) -> property:
    """A property: ``{name: target}`` over the input (an ``InputKind``) or output specs of
    ``kind``."""
    def get(self) -> dict[str, str]:
        specs = self._inputs(kind) if isinstance(kind, InputKind) else self._outputs(kind)
        return {s.arg.name: s.target for s in specs}
    return property(get)


@dataclasses.dataclass
class ExportGraphSignature:
    """The kinds of an exported program's inputs and outputs.

    ``input_specs`` come in the program's order: parameters, buffers, then the user's
    inputs (a non-Tensor user input is a :class:`ConstantArgument` holding the value it
    was exported with). ``output_specs``: ``BUFFER_MUTATION`` outputs (new values of
    buffers the forward wrote in place, e.g. BatchNorm's running statistics in training
    mode), then ``USER_OUTPUT`` ones.
    """
    input_specs: list[InputSpec]
    output_specs: list[OutputSpec]

    def _inputs(self, kind):
        return [s for s in self.input_specs if s.kind == kind]

    def _outputs(self, kind):
        return [s for s in self.output_specs if s.kind == kind]

    parameters = _targets(InputKind.PARAMETER)
    buffers = _targets(InputKind.BUFFER)

    @property
    def non_persistent_buffers(self) -> tuple[str, ...]:
        return tuple(s.target for s in self._inputs(InputKind.BUFFER) if s.persistent is False)

    lifted_tensor_constants = _targets(InputKind.CONSTANT_TENSOR)
    lifted_custom_objs = _targets(InputKind.CUSTOM_OBJ)

    @property
    def user_inputs(self) -> tuple:
        return tuple(_name(s.arg) for s in self._inputs(InputKind.USER_INPUT))

    @property
    def user_outputs(self) -> tuple:
        return tuple(_name(s.arg) for s in self._outputs(OutputKind.USER_OUTPUT))

    inputs_to_parameters = _names_to_targets(InputKind.PARAMETER)
    inputs_to_buffers = _names_to_targets(InputKind.BUFFER)
    inputs_to_lifted_tensor_constants = _names_to_targets(InputKind.CONSTANT_TENSOR)
    inputs_to_lifted_custom_objs = _names_to_targets(InputKind.CUSTOM_OBJ)
    buffers_to_mutate = _names_to_targets(OutputKind.BUFFER_MUTATION)
    parameters_to_mutate = _names_to_targets(OutputKind.PARAMETER_MUTATION)
    user_inputs_to_mutate = _names_to_targets(OutputKind.USER_INPUT_MUTATION)

    @property
    def backward_signature(self) -> Optional[ExportBackwardSignature]:
        return None  # hookgrad exports inference programs: no joint forward-backward graph

    @property
    def assertion_dep_token(self) -> Optional[dict[int, str]]:
        return None

    @property
    def input_tokens(self) -> tuple[str, ...]:
        return tuple(s.arg.name for s in self._inputs(InputKind.TOKEN))

    @property
    def output_tokens(self) -> tuple[str, ...]:
        return tuple(s.arg.name for s in self._outputs(OutputKind.TOKEN))

    def __str__(self):
        lines = ["# inputs", *map(str, self.input_specs), "", "# outputs",
                 *map(str, self.output_specs)]
        return "\n".join(lines) + "\n"

    # renaming FX nodes: there are no FX nodes in a StableHLO program
    replace_all_uses = _missing.not_implemented(
        "torch.export.graph_signature.ExportGraphSignature.replace_all_uses")
    get_replace_hook = _missing.not_implemented(
        "torch.export.graph_signature.ExportGraphSignature.get_replace_hook")


__getattr__ = _missing.module_getattr(__name__)
