"""``torch.export.export`` on JAX's exporter.

The Module's forward runs once under ``jax.export.export`` through
:func:`hookgrad.func.functional_call` (the functional mode: no tape, the state passed in as
arrays), so the program is a function of (parameters and buffers, the Tensors among the
inputs). Non-Tensor inputs are constants of the program, as PyTorch's ``ConstantArgument``
inputs are, and calls check they are unchanged. Forward pre-hooks and forward hooks run
while the forward is traced, so what they compute is part of the program (PyTorch traces
them too); backward hooks are not exported (the program is for inference).

Dimensions ``dynamic_shapes`` marks become JAX symbolic dimensions. When the forward
cannot keep one symbolic (it asks for its size as a Python int, or makes it equal to a
static size), the trace is tried again without it: ``Dim.AUTO`` dimensions then become
static quietly, and a ``Dim`` or ``Dim.DYNAMIC`` one raises PyTorch's
``UserError: Constraints violated (...)``.
"""
from __future__ import annotations

import re

import jax

from .. import _random, func
from .._tensor import Tensor
from .._dynamo.exc import UserError
from ..fx.experimental.symbolic_shapes import ConstraintViolationError
from ..nn import Module
from ..utils import _pytree as pytree
from . import dynamic_shapes as ds
from .exported_program import CallInfo, ExportedProgram
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec,
                              OutputKind, OutputSpec, TensorArgument)

__all__ = ["export"]

_EXPORTING = [0]

_DRAFT_HINT = ("\n\nThe error above occurred when calling torch.export.export. hookgrad does "
               "not implement draft_export, which would list the other errors of the call.")


def is_exporting() -> bool:
    """Whether an export is tracing a forward now."""
    return _EXPORTING[0] > 0


def export(mod: Module, args: tuple, kwargs: dict | None = None, *, dynamic_shapes=None,
           strict: bool = False, preserve_module_call_signature: tuple = (),
           prefer_deferred_runtime_asserts_over_guards: bool = False) -> ExportedProgram:
    """Exports ``mod``'s forward, called with the example ``args`` and ``kwargs``, as a
    program that runs without the Module's Python code.

    ::

        export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
               preserve_module_call_signature=())

    ``dynamic_shapes`` marks input dimensions whose size may change: a dict keyed by the
    forward's argument names (or a tuple in argument order) giving, per Tensor, a dict
    ``{dim: Dim(...)}`` or a tuple of per-dimension specs (a :class:`Dim`, ``Dim.AUTO``,
    ``Dim.DYNAMIC``, ``Dim.STATIC``, an int or None). Every other dimension is fixed at the
    example's size. ``strict`` is accepted; hookgrad traces by running the forward, as
    PyTorch's non-strict mode does, either way. ``prefer_deferred_runtime_asserts_over_guards``
    is accepted too: hookgrad's checks of sizes are the call-time guards of ``ep.module()``
    either way.

    Returns an :class:`ExportedProgram`; ``.module()`` runs it.
    """
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}{_DRAFT_HINT}")
    if preserve_module_call_signature:
        raise NotImplementedError(
            "hookgrad does not implement torch.export.export(preserve_module_call_signature=)"
            " yet: it keeps the calling convention of submodules for torch.export.unflatten, "
            "which hookgrad lacks (see docs/api_coverage.md for what it covers)")
    kwargs = dict(kwargs or {})
    combined = ds.combine_args(mod, args, kwargs)
    dims_of = ds.per_tensor_dims(dynamic_shapes, combined)
    leaves, in_spec = pytree.tree_flatten((args, kwargs))
    names = _leaf_names(combined, args, kwargs)
    tensor_pos = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
    tensors = [(names[i], leaves[i], dims_of.get(id(leaves[i]), (None, None))[1]
                or [None] * leaves[i].ndim) for i in tensor_pos]
    state = _state(mod)
    kinds = {ds.hint_kind(s) for _, _, specs in tensors for s in specs} - {None}
    frees = [{"DIM", "DYNAMIC", "AUTO"}] + ([{"DIM", "DYNAMIC"}] if "AUTO" in kinds else [])
    # sizes from 1, else from 2 (a forward asking "size > 1?" is decided then, as PyTorch's
    # trace decides it by assuming dynamic sizes are not 0 or 1)
    attempts = [(free, floor) for free in frees for floor in (1, 2)] if kinds else []
    first_error = None
    for free, floor in attempts:
        symbols, in_dims = _symbolic_dims(tensors, free, floor)
        try:
            exported, out = _trace(mod, state, leaves, in_spec, tensor_pos, tensors, in_dims,
                                   symbols)
            break
        except Exception as e:  # noqa: BLE001 - tried again below without the symbols
            first_error = first_error or e
    else:
        symbols, in_dims = _symbolic_dims(tensors, set(), 1)
        exported, out = _trace(mod, state, leaves, in_spec, tensor_pos, tensors, in_dims,
                               symbols)
        if first_error is not None:  # static worked: the forward specialized a dimension
            raise _violation(first_error, tensors, {"DIM", "DYNAMIC"})
    call = CallInfo(
        in_spec=in_spec, out_spec=out["spec"], leaf_names=names, tensor_pos=tensor_pos,
        constants={i: v for i, v in enumerate(leaves) if i not in set(tensor_pos)},
        dims=in_dims,
        dtypes=[str(t._data.dtype) for _, t, _ in tensors], symbols=symbols,
        out_constants=out["constants"], n_out=out["n"], mutated=out["mutated"],
        forward_arg_names=list(combined), uses_rng=out["uses_rng"])
    sig = _signature(mod, state, names, leaves, tensor_pos, out)
    return ExportedProgram(exported, state, sig, call, example_inputs=(args, kwargs))


def _state(mod):
    """fqn -> Tensor: the parameters, then the buffers (each once, by first name)."""
    out = dict(mod.named_parameters())
    out.update(mod.named_buffers())
    return out


def _leaf_names(combined, args, kwargs):
    """A name per flat input leaf of ``(args, kwargs)``: the forward's parameter it is bound
    to (``kwargs``' key), with the path inside it (``x[0]``)."""
    positional = list(combined)[:len(args)]
    out = []
    for path, _ in pytree.tree_flatten_with_path((args, kwargs))[0]:
        where, key = path[0].idx, path[1]
        if where == 1:
            name = str(key.key)
        else:
            name = positional[key.idx] if key.idx < len(positional) else f"args_{key.idx}"
        out.append(name + pytree.keystr(path[2:]))
    return out


def _symbolic_dims(tensors, free, floor):
    """(symbol -> [display name, lower, upper or None]) and, per Tensor, its dimensions:
    an int, or ``(symbol, a, b)`` for ``a * symbol + b``. Only the kinds in ``free``
    (``"DIM"``, ``"DYNAMIC"``, ``"AUTO"``) become symbols, none below ``floor``."""
    symbols, roots, rows = {}, {}, []
    for path, t, specs in tensors:
        row = []
        for i, (size, spec) in enumerate(zip(t.shape, specs)):
            kind = ds.hint_kind(spec)
            if isinstance(spec, int) and not isinstance(spec, bool):
                if spec != size:
                    raise ds._user_error(f"Static shape constraint of {spec} does not match "
                                         f"input size of {size}, for {path}.size()[{i}]")
                row.append(size)
            elif kind is None or kind not in free:
                row.append(size)
            elif kind == "DIM":
                row.append(_named_dim(spec, size, path, symbols, roots, floor))
            elif size < 2:   # PyTorch specializes sizes 0 and 1
                if kind == "DYNAMIC":
                    raise _violation(None, [(path, t, [None] * i + [spec])], {"DYNAMIC"})
                row.append(size)
            else:
                sym = f"_dim{len(symbols)}"
                symbols[sym] = [f"{path}.size()[{i}]", floor, None]
                row.append((sym, 1, 0))
        rows.append(row)
    return symbols, rows


def _named_dim(dim, size, path, symbols, roots, floor):
    root, a, b = dim._root_linear()
    name = root.__name__
    prev = roots.setdefault(name, root)
    if (prev.min, prev.max) != (root.min, root.max):
        raise ds._user_error(f"Found different definitions {root!r} and {prev!r} for the "
                             f"same symbolic dimension {name}!")
    if not dim.min <= size <= dim.max:
        raise ConstraintViolationError(f"{size} not in range [{dim.min}, {dim.max}]"
                                       f"{_DRAFT_HINT}")
    if (size - b) % a or (size - b) // a < 2:   # PyTorch specializes sizes 0 and 1
        raise _violation(None, [(path, _Sized(size), [dim])], {"DIM"})
    symbols.setdefault(name, [name, max(root.min, floor), _upper(root)])
    return (name, a, b)


def _upper(dim):
    return None if dim.max == ds.int_oo else dim.max


class _Sized:
    """Stands for an input whose one named dimension has the size ``size``."""

    def __init__(self, size):
        self.shape = (size,)


def _violation(error, tensors, kinds):
    """PyTorch's ``UserError: Constraints violated (...)`` for the marked dimensions the
    forward made static (those the failed trace's message names, else all of them)."""
    marked = []   # (display name, the example's size, the Dim or None)
    for path, t, specs in tensors:
        for i, (size, spec) in enumerate(zip(t.shape, specs)):
            kind = ds.hint_kind(spec)
            if kind in kinds:
                root = spec._root_linear()[0] if kind == "DIM" else None
                name = root.__name__ if root is not None else f"{path}.size()[{i}]"
                value = (size - spec._root_linear()[2]) // spec._root_linear()[1] \
                    if root is not None else size
                if all(m[0] != name for m in marked):
                    marked.append((name, value, root))
    text = "" if error is None else str(error)
    named = [m for m in marked if re.search(rf"\b{re.escape(m[0])}\b", text)] or marked
    lines = [f"Constraints violated ({', '.join(m[0] for m in named)})! hookgrad's trace "
             "needed them as constants."]
    for name, value, _ in named:
        lines.append(f"  - You marked {name} as dynamic but your code specialized it to be a "
                     f"constant ({value}). If you're using Dim.DYNAMIC, replace it with either "
                     "Dim.STATIC or Dim.AUTO.")
    if error is not None:
        lines.append(f"The trace with symbolic sizes failed with {type(error).__name__}: "
                     f"{text.splitlines()[0] if text else ''}")
    fixes = [f"  {name} = {value}" for name, value, root in named if root is not None]
    if fixes:
        lines += ["Suggested fixes:", *fixes]
    err = ds._user_error("\n".join(lines) + _DRAFT_HINT)
    if error is not None:
        err.__cause__ = error
    return err


def _jax_shapes(tensors, in_dims, symbols):
    names = sorted({d[0] for row in in_dims for d in row if not isinstance(d, int)})
    exprs = {}
    if names:
        constraints = []
        for n in names:
            _, lo, hi = symbols[n]
            if lo > 1:
                constraints.append(f"{n} >= {lo}")
            if hi is not None:
                constraints.append(f"{n} <= {hi}")
        exprs = dict(zip(names, jax.export.symbolic_shape(", ".join(names),
                                                          constraints=constraints)))
    return [jax.ShapeDtypeStruct(
        tuple(d if isinstance(d, int) else d[1] * exprs[d[0]] + d[2] for d in row),
        t._data.dtype) for (_, t, _), row in zip(tensors, in_dims)]


def _trace(mod, state, leaves, in_spec, tensor_pos, tensors, in_dims, symbols):
    """``jax.export.export`` of the forward over (state arrays, input arrays); returns it
    and what the trace learned of the output (its structure, constants, written buffers)."""
    out = {}

    def program(state_arrays, input_arrays, key_data):
        vals = list(leaves)
        for pos, a in zip(tensor_pos, input_arrays):
            vals[pos] = Tensor._wrap(a)
        args, kwargs = pytree.tree_unflatten(vals, in_spec)
        given = dict(state_arrays)
        with func.rng_key(key_data):   # random ops draw from a key passed in per call
            key = _random.GLOBAL.peek()
            result = func.functional_call(mod, given, args, kwargs)
            out["uses_rng"] = _random.GLOBAL.peek() is not key
        out["mutated"] = [k for k in state if given[k] is not state_arrays[k]]
        flat, out["spec"] = pytree.tree_flatten(result)
        out["n"] = len(flat)
        out["constants"] = {i: v for i, v in enumerate(flat)
                            if not isinstance(v, (Tensor, jax.Array, jax.core.Tracer))}
        arrays = [v._data if isinstance(v, Tensor) else v for i, v in enumerate(flat)
                  if i not in out["constants"]]
        return [given[k] for k in out["mutated"]], arrays

    state_avals = [jax.ShapeDtypeStruct(t.shape, t._data.dtype) for t in state.values()]
    input_avals = _jax_shapes(tensors, in_dims, symbols)
    _EXPORTING[0] += 1
    try:
        exported = jax.export.export(
            jax.jit(lambda s, x, k: program(dict(zip(state, s)), x, k)))(
            state_avals, input_avals, jax.ShapeDtypeStruct(*_key_data_shape()))
    finally:
        _EXPORTING[0] -= 1
    return exported, out


def _key_data_shape():
    data = jax.random.key_data(_random.GLOBAL.get())
    return data.shape, data.dtype


def _signature(mod, state, names, leaves, tensor_pos, out):
    params = dict(mod.named_parameters())
    persistent = set(mod.state_dict(keep_vars=True))
    specs = []
    for fqn in state:
        arg = TensorArgument(("p_" if fqn in params else "b_") + fqn.replace(".", "_"))
        if fqn in params:
            specs.append(InputSpec(InputKind.PARAMETER, arg, fqn))
        else:
            specs.append(InputSpec(InputKind.BUFFER, arg, fqn, persistent=fqn in persistent))
    tensors = set(tensor_pos)
    for i, v in enumerate(leaves):
        name = re.sub(r"\W+", "_", names[i]).strip("_")
        arg = TensorArgument(name) if i in tensors else ConstantArgument(name, v)
        specs.append(InputSpec(InputKind.USER_INPUT, arg, None))
    outputs = [OutputSpec(OutputKind.BUFFER_MUTATION, TensorArgument(f"buffer_{k}"), fqn)
               for k, fqn in enumerate(out["mutated"])]
    for i in range(out["n"]):
        arg = ConstantArgument(f"output_{i}", out["constants"][i]) if i in out["constants"] \
            else TensorArgument(f"output_{i}")
        outputs.append(OutputSpec(OutputKind.USER_OUTPUT, arg, None))
    return ExportGraphSignature(specs, outputs)
