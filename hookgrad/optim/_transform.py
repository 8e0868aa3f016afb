"""``TransformOptimizer``: the base of the built-in optimizers, whose math is an optax
``GradientTransformation`` and whose state is the optax state.

The state is kept in blocks (``hookgrad.optim._blocks``): one optax state, with one
``count``, for the parameters of a group that have stepped together, as optax keeps it;
PyTorch's semantics still hold: a parameter whose ``.grad`` is None is skipped and its
``step`` does not advance (its block splits), and a parameter's state is shown under
PyTorch's names (``optimizer.state[p]["exp_avg"]``, ``state[p]["step"]``).

A subclass describes its algorithm to this class:

- ``_static(group)``: the group's structural options (hashable): which optax pieces the
  chain has (``maximize``, ``nesterov``, ``amsgrad``, ``momentum != 0``, ...);
- ``_hyperparams(group)``: the group's numeric options under their group keys (``lr``,
  ``betas``, ...), fed to the jitted update as arguments (dynamic: changing
  ``group["lr"]`` does not recompile); ``_value_static`` names those among them whose
  value also picks the structure (``momentum``: 0 or not), which compiled mode keys on
  instead of feeding them;
- ``_transformation(static, **hp)``: the optax transformation built from them (wrapped
  in ``optax.inject_hyperparams``, so the values are traced inputs);
- ``_derive(static, hp, count)``: values computed from the options and the block's
  step count (bias corrections, PyTorch's first momentum step), optional;
- ``_to_torch(static, inner_state)`` / ``_from_torch(static, inner_state, d, count)``:
  one parameter's state under PyTorch's names, both ways (``state``, ``state_dict``,
  ``load_state_dict``, and a change of structural options between steps); by default
  they map ``_torch_names`` (``{PyTorch's name: (chain part, optax state field)}``);
  ``_entry_shape(name, shape)`` where an entry's shape is not its parameter's.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable, MutableMapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.extend.core import Literal as _Literal

from .. import _dtype
from .._jax_trace import no_trace as _clean
from .._ops import tiered
from .._tensor import Tensor
from ._blocks import Block, Params, Placed, map_params, shared_key, stack
from ._state_view import _Slot, _StateView
from .optimizer import Optimizer, _to_tensor


class _FlatState:
    """A compiled step's optimizer state as its program returned it, and ``layout``: the
    parameters each group listed then (the state's positions refer to them)."""

    __slots__ = ("treedef", "leaves", "layout")

    def __init__(self, treedef, leaves, layout):
        self.treedef, self.leaves, self.layout = treedef, leaves, layout

    def placed(self, param_groups):
        """Whether ``param_groups`` list the parameters this state was made for, in order."""
        return len(param_groups) == len(self.layout) and all(
            len(g["params"]) == len(ps) and all(map(operator.is_, g["params"], ps))
            for g, ps in zip(param_groups, self.layout))


def _number(v):
    # Python numbers become floats: jit sees them as weakly typed array arguments, so a new
    # value (an LR schedule) reuses the compiled update instead of recompiling
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, (bool, int, float)):
        return float(v)
    if isinstance(v, (tuple, list)):  # betas
        return tuple(_number(x) for x in v)
    return v


def _as_hparam_array(v):
    v = _number(v)
    if isinstance(v, tuple):
        return tuple(_scalar_array(x) for x in v)
    return _scalar_array(v)


def _scalar_array(v):
    if isinstance(v, (int, float)):
        return _cached_scalar(type(v), v)
    return jnp.asarray(v)


@functools.lru_cache(maxsize=1024)
def _cached_scalar(kind, v):
    # one device scalar per hyperparameter value: building it costs a dispatch per step
    return jnp.asarray(v)


def _as_array(v):
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, jax.Array):
        return v
    return _to_tensor(v)._data


def replace_part(inner, name: str, **fields) -> Any:
    """``named_chain`` state ``inner`` with fields of its part ``name`` replaced (the
    mapping type is kept: it is part of the pytree structure)."""
    out = type(inner)(inner)
    out[name] = out[name]._replace(**fields)
    return out


def gradient_parts(maximize: bool, weight_decay=None) -> list[tuple[str, Any]]:
    """A chain's first named parts: PyTorch's ``g = ±grad (+ weight_decay * p)`` (no L2
    term where ``weight_decay`` is None)."""
    parts = [("maximize", optax.scale(-1.0))] if maximize else []
    if weight_decay is not None:
        parts.append(("weight_decay", optax.add_decayed_weights(weight_decay)))
    return parts


def _write_param(p, arr):
    """Replace a parameter's data in place: same object, version bumped (as an in-place op
    would, but without the leaf check: the optimizer writes outside autograd)."""
    p._write_(arr)


@functools.lru_cache(maxsize=None)
def _update_fn(cls, statics):
    """The jitted pure update of one step for an optimizer class and the blocks' static
    options: ``(params, grads, states, hparams) -> (new_params, new_states)``, each a tuple
    per block (``params``, ``grads``: a tuple of arrays; ``hparams``: its group's dict)."""

    def update(params, grads, states, hparams):
        new_params, new_states = [], []
        for static, ps, gs, s, hp in zip(statics, params, grads, states, hparams):
            values = cls._hp_for(static, hp, s.count, ps[0].dtype)
            tx = cls._tx(static, values)
            ps = Params(ps)
            updates, s = tx.update(Params(gs), s._replace(hyperparams=values), ps)
            new_params.append(tuple(optax.apply_updates(ps, updates)))
            new_states.append(s._replace(hyperparams={}))
        return tuple(new_params), tuple(new_states)

    return tiered.jit(update)


@functools.lru_cache(maxsize=None)
def _init_fn(cls, static):
    """The optax ``init`` of blocks: ``(hparams, (Params, ...)) -> states``, and it jitted.
    NOTE: one program for a group's first step; eagerly, an ``init`` per block would
    compile a zeros program per block's shapes."""

    def init(hp, blocks):
        return tuple(cls._tx(static, cls._hp_for(static, hp, 0, b[0].dtype)).init(b)
                     ._replace(hyperparams={}) for b in blocks)

    return init, tiered.jit(init)


def _init_states(cls, static, hp, blocks):
    """The blocks' first states. optax's inits make constants (zeros, a count, an initial
    accumulator value): those are built with NumPy from the traced init, so a first step
    compiles no init program (~0.1 s in every fresh process); anything else runs the
    jitted init."""
    init, jitted = _init_fn(cls, static)
    if not _clean():  # inside a JAX trace (a compiled step): part of its program
        return jitted(hp, blocks)
    closed, shapes = jax.make_jaxpr(init, return_shape=True)(hp, blocks)
    arrays = _constants(closed.jaxpr)
    if arrays is None:
        return jitted(hp, blocks)
    return jax.tree.unflatten(jax.tree.structure(shapes), [jax.device_put(a) for a in arrays])


def _constants(jaxpr):
    """The outputs of ``jaxpr`` as NumPy arrays, when each is a literal or a literal
    broadcast (and none weakly typed); else None."""
    filled = {}
    for e in jaxpr.eqns:
        if e.primitive.name == "broadcast_in_dim" and e.invars[0].__class__ is _Literal:
            filled[e.outvars[0]] = e.invars[0].val
    out = []
    for v in jaxpr.outvars:
        av = v.aval
        if av.weak_type:
            return None
        if v.__class__ is _Literal:
            val = v.val
        elif v in filled:
            val = filled[v]
        else:
            return None
        out.append(np.full(av.shape, val, av.dtype))
    return out


class TransformOptimizer(Optimizer):
    """An optimizer whose update is an optax transformation, with one optax state per
    parameter shown under PyTorch's names (see the module docstring)."""

    _keeps_step = True  # PyTorch keeps a ``step`` entry in each parameter's state
    _value_static = ()  # hyper-parameters whose value (e.g. zero or not) is structural

    def __init__(self, params, defaults):
        self._setup_storage()
        super().__init__(params, defaults)

    def _setup_storage(self):
        self._blocks = {}        # id(param) -> its _blocks.Block (see ``_blocks``)
        self._extra_state = {}   # loaded state under keys that are not our parameters
        self._hp_override = None  # traced hyper-parameters while hookgrad.compile traces
        self._skip = None         # a 0-d bool array: keep the old values where set (_skip_if)

    # Between the calls of a compiled step the state stays as the program returned it, its
    # leaves and treedef (``_load_flat_state``): a call passes them straight back in.
    # Anything else that reads the state builds the blocks from them first.
    @property
    def _blocks(self):
        if self._flat is not None:
            flat, self._flat = self._flat, None
            self._install_states(flat.treedef.unflatten(flat.leaves), flat.layout)
        return self._block_dict

    @_blocks.setter
    def _blocks(self, blocks):
        self._flat = None
        self._block_dict = blocks

    def _set_block(self, block):
        self._blocks.update(dict.fromkeys(block.ids, block))

    def _drop(self, pid):
        """Forget the state of the parameter ``pid``; the rest of its block keeps theirs."""
        block = self._blocks.pop(pid)
        keep = tuple(i for i, q in enumerate(block.ids) if q != pid)
        if keep:
            self._set_block(block.take(keep))

    def _fresh_blocks(self, static, hp, params):
        """New blocks (one per dtype) for ``params`` of one group, as their first step."""
        by_dtype = {}
        for p in params:
            by_dtype.setdefault(p._data.dtype, []).append(p)
        states = _init_states(type(self), static, hp,
                              tuple(Params(p._data for p in ps) for ps in by_dtype.values()))
        return [Block(static, tuple(map(id, ps)), st)
                for ps, st in zip(by_dtype.values(), states)]

    # ---------------------------------------------------------------- subclass API
    def _static(self, group):
        raise NotImplementedError

    def _hyperparams(self, group):
        raise NotImplementedError

    @staticmethod
    def _transformation(static, **hp):
        raise NotImplementedError

    @staticmethod
    def _derive(static, hp, count):
        return hp

    # PyTorch's name of each state entry -> (its chain part, the field of that part's optax
    # state), in PyTorch's order: what the default ``_to_torch`` / ``_from_torch`` map
    _torch_names: dict[str, tuple[str, str]] = {}

    @classmethod
    def _to_torch(cls, static, inner):
        out = {}
        for name, (part, field) in cls._torch_names.items():
            value = getattr(inner[part], field)
            if value is not None:  # None: an entry this parameter's shape does not have
                out[name] = value
        return out

    @classmethod
    def _from_torch(cls, static, inner, d, count):
        for name, (part, field) in cls._torch_names.items():
            if name in d and getattr(inner[part], field) is not None:
                inner = replace_part(inner, part, **{field: d[name]})
        return inner

    @staticmethod
    def _entry_shape(name, shape):
        """The shape PyTorch gives the state entry ``name`` of a parameter of ``shape``
        (``()`` for a per-parameter scalar such as NAdam's ``mu_product``)."""
        return shape

    @staticmethod
    def _count_from_torch(static, d):
        """The step count of a loaded state that has no ``step`` entry."""
        return 0

    # ---------------------------------------------------------------- optax plumbing
    @classmethod
    def _hp_for(cls, static, hp, count, dtype):
        # in the parameter's dtype: optax state dtypes then stay put from step to step
        return {k: jnp.asarray(v, dtype) for k, v in cls._derive(static, hp, count).items()}

    @classmethod
    def _tx(cls, static, values):
        return optax.inject_hyperparams(functools.partial(cls._transformation, static))(
            **values)

    def _group_hp(self, index, group):
        hp = {k: _number(v) for k, v in self._hyperparams(group).items()}
        if self._hp_override is not None:  # traced inputs while hookgrad.compile traces
            hp.update(self._hp_override[index])
        return hp

    def _init_state(self, static, hp, arrs):
        """A fresh optax state over ``arrs`` (a ``Params``)."""
        cls = type(self)
        state = cls._tx(static, cls._hp_for(static, hp, 0, arrs[0].dtype)).init(arrs)
        # the hyper-parameters are fed anew each step: keeping a copy per parameter would
        # only add arrays to pass in and out of the jitted update (each costs dispatch time)
        return state._replace(hyperparams={})

    # ---------------------------------------------------------------- PyTorch-named state
    def _export(self, slot):
        """A parameter's state (a ``_Slot``) as ``{name: array}`` under PyTorch's names."""
        out = {}
        if self._keeps_step:
            out["step"] = jnp.asarray(slot.state.count,
                                      _dtype.to_jax(_dtype.get_default_dtype()))
        out.update(type(self)._to_torch(slot.static, slot.state.inner_state))
        return out

    def _import_one(self, p, group, d):
        """A slot for ``p`` in ``group`` from a PyTorch-named state dict (validated)."""
        cls = type(self)
        static = self._static(group)
        hp = {k: _number(v) for k, v in self._hyperparams(group).items()}
        arr = p._data
        template = self._init_state(static, hp, Params((arr,)))
        fresh = map_params(lambda x: x[0], template)
        values = {}
        for k, v in d.items():
            if v is None:
                continue
            a = _as_array(v)
            if k == "step":
                values[k] = a
                continue
            want = cls._entry_shape(k, arr.shape)
            if a.shape != want:
                raise ValueError(f"loaded optimizer state {k!r} has shape {tuple(a.shape)}, but "
                                 f"expected {tuple(want)} for a parameter of shape "
                                 f"{tuple(arr.shape)}")
            values[k] = a.astype(arr.dtype)
        if "step" in values:
            count = jnp.round(jnp.asarray(values["step"])).astype(jnp.int32).reshape(())
        else:
            count = jnp.asarray(cls._count_from_torch(static, values), jnp.int32)
        inner = cls._from_torch(static, fresh.inner_state, values, count)
        return _Slot(static, fresh._replace(count=count, inner_state=inner), template)

    def _import_mapping(self, mapping, groups):
        """Blocks (``{id(param): Block}``) and state under other keys from ``{param: {name:
        value}}``; raises before anything is assigned. Parameters of one group and dtype
        whose ``step`` (and other shared entries) are equal share a block."""
        where = {id(p): (i, g) for i, g in enumerate(groups) for p in g["params"]}
        buckets, extra = {}, {}
        for key, d in mapping.items():
            if isinstance(key, Tensor) and id(key) in where:
                if d:
                    index, group = where[id(key)]
                    slot = self._import_one(key, group, d)
                    bucket = (index, slot.static, key._data.dtype,
                              shared_key(slot.template, slot.state))
                    buckets.setdefault(bucket, []).append((id(key), slot))
            else:
                extra[key] = d
        blocks = {}
        for items in buckets.values():
            block = _merge([pid for pid, _ in items], [slot for _, slot in items])
            blocks.update(dict.fromkeys(block.ids, block))
        return blocks, extra

    @property
    def state(self) -> MutableMapping[Tensor, dict[str, Any]]:
        """Per-parameter state under PyTorch's names: ``state[p]`` is a new dict of
        Tensors read from the optax state (``{}`` for a parameter not stepped yet).
        Mutating that dict does not change the optimizer; assign ``state[p] = {...}``."""
        return _StateView(self)

    @state.setter
    def state(self, mapping) -> None:
        blocks, extra = self._import_mapping(mapping, self.param_groups)
        self._blocks, self._extra_state = blocks, extra

    def _state_storage(self):
        return self._blocks, self._extra_state

    def _restore_storage(self, storage) -> None:
        self._blocks, self._extra_state = storage

    def _install(self, state, param_groups, state_dict):
        blocks, extra = self._import_mapping(state, param_groups)
        self.param_groups = param_groups
        self._blocks, self._extra_state = blocks, extra

    # ---------------------------------------------------------------- the step
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Perform one optimization step.

        .. code-block:: python

            step(closure: Callable[[], float] | None = None) -> float | None

        Parameters whose ``.grad`` is None are skipped. Each parameter is updated in place
        (the same Tensor object, its ``_version`` bumped). ``closure`` re-evaluates the
        model and returns the loss; it runs with grad mode on.
        """
        return self._step_with(closure, self._apply_updates)

    def _apply_updates(self):
        statics, params, grads, states, hparams, targets = [], [], [], [], [], []
        for index, group in enumerate(self.param_groups):
            present = {id(p): p for p in group["params"] if p.grad is not None}
            if not present:
                continue
            hp = self._group_hp(index, group)
            for block in self._stepping(group, present, hp):
                ps = [present[pid] for pid in block.ids]
                statics.append(block.static)
                params.append(tuple(p._data for p in ps))
                grads.append(tuple(p.grad._data for p in ps))
                states.append(block.state)
                hparams.append(hp)
                targets.append((block, ps))
        if not targets:
            return
        fn = _update_fn(type(self), tuple(statics))
        new_params, new_states = fn(tuple(params), tuple(grads), tuple(states), tuple(hparams))
        if self._skip is not None:
            keep = functools.partial(jnp.where, self._skip)
            new_params, new_states = jax.tree_util.tree_map(
                keep, (tuple(params), tuple(states)), (new_params, new_states))
        for (block, ps), nps, st in zip(targets, new_params, new_states):
            for p, arr in zip(ps, nps):
                _write_param(p, arr)
            self._set_block(Block(block.static, block.ids, st))

    def _skip_if(self, skip, args, kwargs):
        """``step(*args, **kwargs)``, leaving parameters and state as they were where the
        0-d bool Tensor ``skip`` is set: GradScaler's skipped step as a select, so a compiled
        step needs no host sync (a first step's fresh state stays, at count 0)."""
        self._skip = skip._data
        try:
            return self.step(*args, **kwargs)
        finally:
            self._skip = None

    def _stepping(self, group, present, hp):
        """The blocks of the parameters ``present`` (``{id: param}``, those with a
        ``.grad``) of ``group``: a block with skipped parameters is split (they keep their
        count), parameters without state get fresh blocks."""
        static = self._static(group)
        blocks = self._blocks
        out, seen, missing = [], set(), []
        for pid, p in present.items():
            block = blocks.get(pid)
            if block is None:
                missing.append(p)
                continue
            if id(block) in seen:
                continue
            seen.add(id(block))
            keep = tuple(i for i, q in enumerate(block.ids) if q in present)
            if len(keep) < len(block.ids):
                self._set_block(block.take(tuple(i for i in range(len(block.ids))
                                                 if i not in keep)))
                block = block.take(keep)
            if block.static != static:  # e.g. momentum turned on: carry the state over
                slots = [self._import_one(present[q], group,
                                          self._export(_Slot(block.static, block.part(q))))
                         for q in block.ids]
                block = _merge(block.ids, slots)
            out.append(block)
        if missing:
            out.extend(self._fresh_blocks(static, hp, missing))
        return out

    # ---------------------------------------------------------------- compiled mode
    def _state_arrays(self):
        """``{"state": [[_blocks.Placed per block] per group], "hparams": [{name: 0-d array}
        per group]}`` (see ``hookgrad.optim.optimizer``)."""
        blocks = self._blocks
        state = []
        for group in self.param_groups:
            where = {id(p): i for i, p in enumerate(group["params"])}
            placed, seen = [], set()
            for p in group["params"]:
                block = blocks.get(id(p))
                if block is not None and id(block) not in seen:
                    seen.add(id(block))
                    if not all(map(where.__contains__, block.ids)):
                        # a parameter left the group: the others' state, as a block of theirs
                        block = block.take([i for i, q in enumerate(block.ids) if q in where])
                    placed.append(Placed(block.static, tuple(map(where.__getitem__, block.ids)),
                                         block.state))
            state.append(placed)
        return {"state": state, "hparams": self._hparam_arrays()}

    def _hparam_arrays(self):
        """The ``"hparams"`` part of ``_state_arrays()``."""
        return [{k: _as_hparam_array(v) for k, v in self._hyperparams(g).items()
                 if k not in self._value_static} for g in self.param_groups]

    def _load_state_arrays(self, tree):
        """Install a tree of ``_state_arrays()``'s layout; traced ``hparams`` are read by
        ``step()`` until the next call with concrete ones."""
        self._install_states(tree["state"])
        hp = tree.get("hparams")
        leaves = jax.tree_util.tree_leaves(hp)
        traced = any(isinstance(x, jax.core.Tracer) for x in leaves)
        self._hp_override = list(hp) if traced else None

    def _install_states(self, states, layout=None):
        """Install per-group ``Placed`` states, whose positions index the parameters each
        group lists (``layout``: as they were listed when the states were made)."""
        blocks = {}
        if layout is None:
            layout = [group["params"] for group in self.param_groups]
        for params, placed in zip(layout, states):
            for pl in placed:
                block = Block(pl.static, tuple(id(params[i]) for i in pl.index), pl.state)
                blocks.update(dict.fromkeys(block.ids, block))
        self._blocks = blocks

    def _load_flat_state(self, treedef, leaves, layout=None):
        """Install the ``"state"`` part of ``_state_arrays()`` as its flattening (concrete
        arrays), as a compiled step's program returned it; hyper-parameters are read from
        ``param_groups`` again. ``layout``: the parameters each group lists, where the
        caller knows them unchanged since the last state's (a steady compiled step)."""
        if layout is None:
            layout = [tuple(g["params"]) for g in self.param_groups]
        self._flat = _FlatState(treedef, leaves, layout)
        self._hp_override = None

    def _flat_state(self):
        """The state as ``_load_flat_state`` installed it (``.treedef``, ``.leaves``), or
        None once anything else has read or changed it. Compared by identity: the same
        object means the same state."""
        return self._flat


def _merge(ids, slots) -> Block:
    """One block of parameters ``ids`` from their ``_Slot``s (same static options and
    shared entries; the first one's are kept)."""
    return Block(slots[0].static, tuple(ids),
                 stack(slots[0].template, [slot.state for slot in slots]))
