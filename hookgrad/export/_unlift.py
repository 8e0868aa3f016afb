"""``ExportedProgram.module()``: the exported program as a Module again.

The state is registered under its original fully qualified names (empty submodules stand
for the original ones), so ``state_dict()``/``load_state_dict()`` work as on the original
Module. A call checks the inputs against what the program was exported for — PyTorch's
guards, with PyTorch's ``AssertionError: Guard failed: ...`` — then runs the
``jax.export.Exported`` on (state, input Tensors), writes back the buffers the forward
wrote, and rebuilds the output's structure.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._tensor import Tensor
from ..nn import Module
from ..utils import _pytree as pytree

__all__ = ["ExportedModule"]


class ExportedModule(Module):
    """The Module ``ExportedProgram.module()`` returns."""

    def __init__(self, program, check_guards=True):
        super().__init__()
        object.__setattr__(self, "_program", program)
        object.__setattr__(self, "_check_guards", check_guards)
        sig = program.graph_signature
        persistent = {s.target: s.persistent for s in sig.input_specs}
        # (owner module, kind, name) of each tensor the program takes, in its order
        object.__setattr__(self, "_slots", [])
        for fqn in program._state_order():
            owner, name = self._owner(fqn)
            t = program._state[fqn]
            if fqn in sig.parameters:
                owner.register_parameter(name, t)
                self._slots.append((owner, "_parameters", name))
            else:
                owner.register_buffer(name, t, persistent=persistent.get(fqn) is not False)
                self._slots.append((owner, "_buffers", name))

    # the program was traced in one mode: switching modes cannot change it (as PyTorch's)
    def train(self, mode: bool = True) -> ExportedModule:
        raise NotImplementedError("Calling train() is not supported yet.")

    def eval(self) -> ExportedModule:
        raise NotImplementedError("Calling eval() is not supported yet.")

    def _owner(self, fqn):
        mod = self
        *path, name = fqn.split(".")
        for part in path:
            child = mod._modules.get(part)
            if child is None:
                child = Module()
                mod.add_module(part, child)
            mod = child
        return mod, name

    def forward(self, *args, **kwargs) -> Any:
        program = self._program
        call = program._call
        leaves = self._check_inputs(args, kwargs) if self._check_guards else \
            call.in_spec.flatten_up_to((args, kwargs))
        state = [getattr(owner, kind)[name]._data for owner, kind, name in self._slots]
        inputs = [_array(leaves[p]) for p in call.tensor_pos]
        try:
            new_buffers, outs = program._run(state, inputs)
        except (TypeError, ValueError) as e:  # what the guards would have caught
            raise RuntimeError(f"the exported program cannot run on these inputs (the call "
                               f"skipped its guards: check_guards=False): {e}") from None
        for fqn, value in zip(call.mutated, new_buffers):
            self.get_buffer(fqn)._write_(value)
        it = iter(outs)
        flat = [call.out_constants[i] if i in call.out_constants else Tensor._wrap(next(it))
                for i in range(call.n_out)]
        return pytree.tree_unflatten(flat, call.out_spec)

    def _check_inputs(self, args, kwargs):
        """The flat input leaves, after PyTorch's guards on them."""
        call = self._program._call
        leaves, spec = pytree.tree_flatten((tuple(args), dict(kwargs)))
        expected = call.in_spec.children_specs[1].context
        if sorted(kwargs) != sorted(expected):
            raise ValueError(f"Ran into a kwarg keyword mismatch: Got the following keywords "
                             f"{sorted(kwargs)} but expected {sorted(expected)}")
        if spec != call.in_spec:
            raise ValueError(
                f"Trying to flatten user inputs with exported input tree spec: \n"
                f"{call.in_spec}\nbut actually got inputs with tree spec of: \n{spec}.\n"
                "Please check that the inputs have the same number and type of args and "
                "kwargs as the ones you used when tracing.")
        tensors = set(call.tensor_pos)
        for pos, v in enumerate(leaves):
            if pos not in tensors and (isinstance(v, Tensor) or v != call.constants[pos]):
                raise AssertionError(f"Guard failed: {call.leaf_names[pos]} == "
                                     f"{call.constants[pos]!r}")
        seen = {}   # symbol -> (its value, where it was read)
        for k, pos in enumerate(call.tensor_pos):
            _check_tensor(call, k, call.leaf_names[pos], leaves[pos], seen)
        return leaves


def _check_tensor(call, k, name, t, seen):
    if not isinstance(t, Tensor):
        raise AssertionError(f"Guard failed: isinstance({name}, torch.Tensor)")
    dims = call.dims[k]
    if t.ndim != len(dims):
        raise AssertionError(f"Guard failed: {name}.dim() == {len(dims)}")
    for i, (size, d) in enumerate(zip(t.shape, dims)):
        where = f"{name}.size()[{i}]"
        if isinstance(d, int):
            if size != d:
                raise AssertionError(f"Guard failed: {where} == {d}")
            continue
        sym, a, b = d
        _, lo, hi = call.symbols[sym]
        if (size - b) % a:
            raise AssertionError(f"Guard failed: ({where} - {b}) % {a} == 0")
        value = (size - b) // a
        if sym in seen:
            if seen[sym][0] != value:
                raise AssertionError(f"Guard failed: {where} == {seen[sym][1]}")
            continue
        seen[sym] = (value, where)
        if value < lo:
            raise AssertionError(f"Guard failed: {where} >= {a * lo + b}")
        if hi is not None and value > hi:
            raise AssertionError(f"Guard failed: {where} <= {a * hi + b}")
    if str(t._data.dtype) != call.dtypes[k]:
        raise RuntimeError(
            f"the exported program takes {name} as {call.dtypes[k]}, but got "
            f"{t._data.dtype}: hookgrad's exported programs are compiled for their inputs' "
            f"dtypes (export again with a {t._data.dtype} example; docs/differences.md)")


def _array(t):
    return t._data if isinstance(t, Tensor) else jnp.asarray(t)
