"""``optimizer.state`` of the optax-backed optimizers, read and written under PyTorch's
names: a mapping view over the optimizer's optax state blocks (``_transform.py``), one
``_Slot`` (a parameter's optax state) at a time.
"""
from __future__ import annotations

from collections.abc import MutableMapping

import jax

from .._tensor import Tensor


class _Slot:
    """One parameter's optax state and the structural options it was built with;
    ``template``, where known: a fresh state over a one-parameter ``Params`` (see
    ``_blocks.stack``)."""

    __slots__ = ("static", "state", "template")

    def __init__(self, static, state, template=None):
        self.static = static
        self.state = state
        self.template = template


class _StateView(MutableMapping):
    """``optimizer.state`` of a ``TransformOptimizer``: ``{param: {name: Tensor}}`` under
    PyTorch's names, read from the optax states (parameters without state are left out,
    and a missing parameter reads as ``{}``, as with PyTorch's ``defaultdict``)."""

    __slots__ = ("_opt",)

    def __init__(self, opt):
        self._opt = opt

    def _exported(self, key):
        block = self._opt._blocks.get(id(key))
        if block is None:
            return {}
        slot = _Slot(block.static, block.part(id(key)))
        # SparseAdam's ``step`` is a Python int, as PyTorch keeps it
        return {k: Tensor._wrap(v) if isinstance(v, jax.Array) else v
                for k, v in self._opt._export(slot).items()}

    def __getitem__(self, key):
        if isinstance(key, Tensor):
            return self._exported(key)
        return self._opt._extra_state.get(key, {})

    def __contains__(self, key):
        if isinstance(key, Tensor):
            return bool(self._exported(key))
        return key in self._opt._extra_state

    def __setitem__(self, key, value):
        opt = self._opt
        blocks, extra = opt._import_mapping({key: value}, opt.param_groups)
        if key in extra:
            opt._extra_state[key] = value
        else:
            if id(key) in opt._blocks:
                opt._drop(id(key))
            opt._blocks.update(blocks)

    def __delitem__(self, key):
        opt = self._opt
        if isinstance(key, Tensor) and id(key) in opt._blocks:
            opt._drop(id(key))
        else:
            del opt._extra_state[key]

    def __iter__(self):
        opt = self._opt
        for group in opt.param_groups:
            for p in group["params"]:
                if self._exported(p):
                    yield p
        yield from list(opt._extra_state)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return repr(dict(self.items()))
