"""The op table's rows as PyTorch's ATen overloads: ``torch.ops.aten.mm.default``.

A dispatch mode (``stages/modes.py``) receives an op call's row as the ``func`` PyTorch
would pass, named as ATen names it (``aten.mul.Tensor``), comparable and hashable by that
name, and callable: calling it runs the row. A row's ATen name is its own when it is one
(``sin``, ``mm``, ``var_mean`` -> ``var_mean.correction`` by ``_NAMES``), else the
name ``_NAMES`` gives; rows PyTorch has no ATen op for keep their own name
(``linear.default``, where PyTorch's decomposes into ``t`` and ``addmm``), as
docs/differences.md says. A node's backward run as one op is named as PyTorch's backward
op (``threshold_backward.default``), else ``<forward>_backward.default``; functions that
are no row (factories, ``detach``) have ``FunctionOverload`` s.
"""
from .. import _factory, _tensor
from .._tensor import Tensor
from . import derivatives
from .dispatch import apply
from .registry import OPS
from .stages import modes

# binary ops whose ATen overload for a Tensor (or a wrapped Python number) is ``Tensor``
_BINARY = frozenset({
    "add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge", "remainder", "fmod",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "xlogy", "copysign"})
# comparisons, whose ATen overload for a Python number is ``Scalar`` (not a wrapped Tensor)
_COMPARE = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
# rows whose ATen name is not ``<row>.default`` (or ``<row>.Tensor`` for the binary ops)
_NAMES = {
    "add_alpha": "add.Tensor", "sub_alpha": "sub.Tensor", "div_floor": "div.Tensor_mode",
    "div_trunc": "div.Tensor_mode", "rsub": "rsub.Scalar", "rsub_tensor": "rsub.Tensor",
    "pow": "pow.Tensor_Scalar", "pow_tensor": "pow.Tensor_Tensor", "rpow": "pow.Scalar",
    "sum_dim": "sum.dim_IntList", "mean_dim": "mean.dim", "prod_dim": "prod.dim_int",
    "var": "var.correction", "std": "std.correction", "var_mean": "var_mean.correction",
    "std_mean": "std_mean.correction", "max_all": "max.default", "max_dim": "max.dim",
    "min_all": "min.default", "min_dim": "min.dim", "squeeze_dim": "squeeze.dim",
    "squeeze_dims": "squeeze.dims", "transpose": "transpose.int", "select": "select.int",
    "slice": "slice.Tensor", "split": "split.Tensor", "unbind": "unbind.int",
    "softmax": "_softmax.default", "log_softmax": "_log_softmax.default",
    "where": "where.self", "masked_fill": "masked_fill.Scalar",
    "masked_fill_tensor": "masked_fill.Tensor", "scatter": "scatter.src",
    "scatter_value": "scatter.value", "fill": "fill.Scalar", "fill_tensor": "fill.Tensor",
    "clamp_tensor": "clamp.Tensor", "reshape": "view.default", "_reshape_alias": "view.default",
    "layer_norm": "native_layer_norm.default", "group_norm": "native_group_norm.default",
    "batch_norm_train": "native_batch_norm.default",
    "batch_norm_eval": "native_batch_norm.default", "clone": "clone.default",
    "max_pool2d": "max_pool2d_with_indices.default", "nll_loss": "nll_loss_forward.default",
    "nll_loss2d": "nll_loss2d_forward.default", "to_dtype": "_to_copy.default",
}
# the ATen op of a row's backward run as one op (JAX's vjp), where it is not
# ``<forward>_backward`` (``derivatives.py`` runs PyTorch's formula for the others)
_BACKWARD_NAMES = {
    "relu": "threshold_backward", "softmax": "_softmax_backward_data",
    "log_softmax": "_log_softmax_backward_data", "nll_loss": "nll_loss_backward",
    "nll_loss2d": "nll_loss2d_backward", "embedding": "embedding_dense_backward",
}
_BACKWARD = "_backward"


def aten_name(op_name):
    """``(packet, overload)``: the ATen name of the row ``op_name``."""
    backward = op_name.endswith(_BACKWARD)
    base = op_name[:-len(_BACKWARD)] if backward else op_name
    if backward and base in _BACKWARD_NAMES:
        return _BACKWARD_NAMES[base], "default"
    name = _NAMES.get(base)
    if name is None:
        if "." in base:
            name = base
        else:
            name = base + (".Tensor" if base in _BINARY else ".default")
    packet, _, overload = name.partition(".")
    if backward:
        return packet + _BACKWARD, "default"
    return packet, overload


class FunctionSchema:
    """What a schema says that hookgrad knows: the operator's name and overload name."""

    def __init__(self, name, overload_name, is_mutable):
        self.name, self.overload_name, self.is_mutable = name, overload_name, is_mutable
        self.arguments, self.returns = [], []

    def __str__(self):
        suffix = f".{self.overload_name}" if self.overload_name else ""
        return f"{self.name}{suffix}(...)"


class OpOverloadPacket:
    """``torch.ops.aten.<name>``: the overloads of one ATen operator that rows have."""

    def __init__(self, name):
        self.__name__ = name
        self._qualified_op_name = f"aten::{name}"
        self._overloads = {}

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, overload):
        found = self.__dict__["_overloads"].get(overload)
        if found is None:
            raise AttributeError(f"The underlying op of 'aten.{self.__name__}' has no "
                                 f"overload name '{overload}'")
        return found

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"

    def __str__(self):
        return f"aten.{self.__name__}"

    def __call__(self, *args, **kwargs):
        return next(iter(self._overloads.values()))(*args, **kwargs)


class OpOverload:
    """One ATen overload (``aten.mm.default``) of an op-table row; calling it runs the
    row (its in-place form, ``aten.mul_.Tensor``, writes into the first argument)."""

    def __init__(self, op, packet, overload, inplace):
        self._op, self._inplace = op, inplace
        self._overloadname = overload
        self.overloadpacket = packet
        self.__name__ = f"{packet.__name__}.{overload}"
        # as PyTorch's: the default overload's name is the operator's
        self._schema = FunctionSchema(f"aten::{packet.__name__}",
                                      "" if overload == "default" else overload, inplace)
        self.namespace = "aten"

    def name(self):
        over = self._schema.overload_name
        return f"aten::{self.overloadpacket.__name__}" + (f".{over}" if over else "")

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other.__name__ == self.__name__

    def __hash__(self):
        return hash(self.__name__)

    def __repr__(self):
        return f"<OpOverload(op='aten.{self.overloadpacket.__name__}', " \
               f"overload='{self._overloadname}')>"

    def __str__(self):
        return f"aten.{self.__name__}"

    def __call__(self, /, *args, **kwargs):
        return apply(self._op, args, kwargs or None, out=args[0] if self._inplace else None)


class FunctionOverload(OpOverload):
    """The ATen overload of a function hookgrad runs as no row (``aten.rand.default``,
    ``aten.detach.default``): calling it runs the function."""

    def __init__(self, fn, packet, overload):
        super().__init__(None, packet, overload, False)
        self._fn = fn

    def __call__(self, /, *args, **kwargs):
        return self._fn(*args, **kwargs)


_PACKETS = {}
_OF = {}  # (op, in place) -> its OpOverload, (ATen name, function) -> its FunctionOverload


def _packet(name):
    found = _PACKETS.get(name)
    if found is None:
        found = _PACKETS[name] = OpOverloadPacket(name)
    return found


def overload(op, inplace=False, args=None):
    """The OpOverload of the row ``op`` (``inplace``: its in-place form) called on
    ``args``: a comparison with a Python number is ATen's ``Scalar`` overload."""
    if args is not None and op.name in _COMPARE and len(args) > 1 and \
            not isinstance(args[1], Tensor):
        return _scalar_overload(op, inplace)
    found = _OF.get((op, inplace))
    if found is None:
        name, over = aten_name(op.name)
        packet = _packet(name + ("_" if inplace else ""))
        found = _OF[(op, inplace)] = OpOverload(op, packet, over, inplace)
        packet._overloads.setdefault(over, found)
    return found


def _scalar_overload(op, inplace):
    found = _OF.get((op, inplace, "Scalar"))
    if found is None:
        packet = _packet(op.name + ("_" if inplace else ""))
        found = _OF[(op, inplace, "Scalar")] = OpOverload(op, packet, "Scalar", inplace)
        packet._overloads.setdefault("Scalar", found)
    return found


def function_overload(name, fn):
    """The overload ``name`` (``"rand.default"``) that runs the function ``fn``."""
    found = _OF.get((name, fn))
    if found is None:
        packet, _, over = name.partition(".")
        packet = _packet(packet)
        found = _OF[(name, fn)] = FunctionOverload(fn, packet, over)
        packet._overloads.setdefault(over, found)
    return found


def packet(name):
    """``torch.ops.aten.<name>``, or None when no row is that ATen operator."""
    if not _PACKETS.get(name):
        inplace = name.endswith("_")
        for op in OPS.values():  # NOTE: once per new name; rows' overloads are then known
            overload(op, inplace)
    return _PACKETS.get(name)


modes.OVERLOAD[0] = overload
modes.FUNCTION[0] = function_overload
# the functions that are no row but reach the modes (``modes.call``), under their names
for _name, _fn in (*_factory.SEEN.items(), ("detach.default", _tensor._detached),
                   ("new_empty_strided.default", derivatives.new_empty_strided)):
    function_overload(_name, _fn)
del _name, _fn
