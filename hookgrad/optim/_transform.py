"""``TransformOptimizer``: the base of the built-in optimizers, whose math is an optax
``GradientTransformation`` and whose state is the optax state, one per parameter.

One state per parameter (not one per group) is what makes PyTorch's semantics hold: a
parameter whose ``.grad`` is None is skipped and its ``step`` does not advance, and a
parameter's state can be shown under PyTorch's names (``optimizer.state[p]["exp_avg"]``).

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
- ``_derive(static, hp, count)``: values computed from the options and the parameter's
  step count (bias corrections, PyTorch's first momentum step), optional;
- ``_to_torch(static, inner_state)`` / ``_from_torch(static, inner_state, d, count)``:
  the state under PyTorch's names, both ways (``state``, ``state_dict``,
  ``load_state_dict``, and a change of structural options between steps).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, MutableMapping
from typing import Any

import jax
import jax.numpy as jnp
import optax

from .. import _dtype
from .._tensor import Tensor
from .optimizer import Optimizer, _to_tensor


class _Slot:
    """A parameter's optax state and the structural options it was built with."""

    __slots__ = ("static", "state")

    def __init__(self, static, state):
        self.static = static
        self.state = state


class _FlatState:
    __slots__ = ("treedef", "leaves")

    def __init__(self, treedef, leaves):
        self.treedef, self.leaves = treedef, leaves


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


def _write_param(p, arr):
    """Replace a parameter's data in place: same object, version bumped (as an in-place op
    would, but without the leaf check: the optimizer writes outside autograd)."""
    p._write_(arr)


@functools.lru_cache(maxsize=None)
def _update_fn(cls, statics):
    """The jitted pure update of one step for an optimizer class and the groups' static
    options: ``(params, grads, states, hparams) -> (new_params, new_states)``, each a tuple
    per group (of a tuple per parameter; ``hparams`` a dict per group)."""

    def update(params, grads, states, hparams):
        new_params, new_states = [], []
        for static, ps, gs, ss, hp in zip(statics, params, grads, states, hparams):
            out_p, out_s = [], []
            for p, g, s in zip(ps, gs, ss):
                values = cls._hp_for(static, hp, s.count, p.dtype)
                tx = cls._tx(static, values)
                updates, s = tx.update(g, s._replace(hyperparams=values), p)
                out_p.append(optax.apply_updates(p, updates))
                out_s.append(s._replace(hyperparams={}))
            new_params.append(tuple(out_p))
            new_states.append(tuple(out_s))
        return tuple(new_params), tuple(new_states)

    return jax.jit(update)


@functools.lru_cache(maxsize=None)
def _init_fn(cls, static):
    """The jitted optax ``init`` of several parameters at once: ``(hparams, arrays) ->
    states``. NOTE: one program for a group's first step; eagerly, an ``init`` per
    parameter would compile a zeros program per parameter shape."""

    def init(hp, arrs):
        return tuple(cls._tx(static, cls._hp_for(static, hp, 0, a.dtype)).init(a)
                     ._replace(hyperparams={}) for a in arrs)

    return jax.jit(init)


class TransformOptimizer(Optimizer):
    """An optimizer whose update is an optax transformation, with one optax state per
    parameter shown under PyTorch's names (see the module docstring)."""

    _keeps_step = True  # PyTorch keeps a ``step`` entry in each parameter's state
    _value_static = ()  # hyper-parameters whose value (e.g. zero or not) is structural

    def __init__(self, params, defaults):
        self._setup_storage()
        super().__init__(params, defaults)

    def _setup_storage(self):
        self._slots = {}         # id(param) -> _Slot (see the ``_slots`` property)
        self._extra_state = {}   # loaded state under keys that are not our parameters
        self._hp_override = None  # traced hyper-parameters while hookgrad.compile traces

    # Between the calls of a compiled step the state stays as the program returned it, its
    # leaves and treedef (``_load_flat_state``): a call passes them straight back in.
    # Anything else that reads the state builds the per-parameter slots from them first.
    @property
    def _slots(self):
        if self._flat is not None:
            flat, self._flat = self._flat, None
            self._install_states(flat.treedef.unflatten(flat.leaves))
        return self._slot_dict

    @_slots.setter
    def _slots(self, slots):
        self._flat = None
        self._slot_dict = slots

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

    @staticmethod
    def _to_torch(static, inner):
        return {}

    @staticmethod
    def _from_torch(static, inner, d, count):
        return inner

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

    def _init_state(self, static, hp, arr):
        cls = type(self)
        state = cls._tx(static, cls._hp_for(static, hp, 0, arr.dtype)).init(arr)
        # the hyper-parameters are fed anew each step: keeping a copy per parameter would
        # only add arrays to pass in and out of the jitted update (each costs dispatch time)
        return state._replace(hyperparams={})

    # ---------------------------------------------------------------- PyTorch-named state
    def _export(self, slot):
        """A slot's state as ``{name: array}`` under PyTorch's names."""
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
        fresh = self._init_state(static, hp, arr)
        values = {}
        for k, v in d.items():
            if v is None:
                continue
            a = _as_array(v)
            if k == "step":
                values[k] = a
                continue
            if a.shape != arr.shape:
                raise ValueError(f"loaded optimizer state {k!r} has shape {tuple(a.shape)}, but "
                                 f"its parameter has shape {tuple(arr.shape)}")
            values[k] = a.astype(arr.dtype)
        if "step" in values:
            count = jnp.round(jnp.asarray(values["step"])).astype(jnp.int32).reshape(())
        else:
            count = jnp.asarray(cls._count_from_torch(static, values), jnp.int32)
        inner = cls._from_torch(static, fresh.inner_state, values, count)
        return _Slot(static, fresh._replace(count=count, inner_state=inner))

    def _import_mapping(self, mapping, groups):
        """Slots (and state under other keys) from ``{param: {name: value}}``; raises before
        anything is assigned."""
        where = {id(p): g for g in groups for p in g["params"]}
        slots, extra = {}, {}
        for key, d in mapping.items():
            if isinstance(key, Tensor) and id(key) in where:
                if d:
                    slots[id(key)] = self._import_one(key, where[id(key)], d)
            else:
                extra[key] = d
        return slots, extra

    @property
    def state(self) -> MutableMapping[Tensor, dict[str, Any]]:
        """Per-parameter state under PyTorch's names: ``state[p]`` is a new dict of
        Tensors read from the optax state (``{}`` for a parameter not stepped yet).
        Mutating that dict does not change the optimizer; assign ``state[p] = {...}``."""
        return _StateView(self)

    @state.setter
    def state(self, mapping) -> None:
        slots, extra = self._import_mapping(mapping, self.param_groups)
        self._slots, self._extra_state = slots, extra

    def _install(self, state, param_groups, state_dict):
        slots, extra = self._import_mapping(state, param_groups)
        self.param_groups = param_groups
        self._slots, self._extra_state = slots, extra

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
            present = [p for p in group["params"] if p.grad is not None]
            if not present:
                continue
            static = self._static(group)
            hp = self._group_hp(index, group)
            ps, gs, ss = [], [], []
            missing = [p for p in present if id(p) not in self._slots]
            fresh = dict(zip(map(id, missing), _init_fn(type(self), static)(
                hp, tuple(p._data for p in missing)))) if missing else {}
            for p in present:
                slot = self._slots.get(id(p))
                if slot is None:
                    st = fresh[id(p)]
                elif slot.static != static:  # e.g. momentum turned on: carry the state over
                    st = self._import_one(p, group, self._export(slot)).state
                else:
                    st = slot.state
                ps.append(p._data)
                gs.append(p.grad._data)
                ss.append(st)
            statics.append(static)
            params.append(tuple(ps))
            grads.append(tuple(gs))
            states.append(tuple(ss))
            hparams.append(hp)
            targets.append((static, present))
        if not targets:
            return
        fn = _update_fn(type(self), tuple(statics))
        new_params, new_states = fn(tuple(params), tuple(grads), tuple(states), tuple(hparams))
        for (static, present), nps, nss in zip(targets, new_params, new_states):
            for p, arr, st in zip(present, nps, nss):
                _write_param(p, arr)
                self._slots[id(p)] = _Slot(static, st)

    # ---------------------------------------------------------------- compiled mode
    def _state_arrays(self):
        """``{"state": [[optax state or None per param] per group], "hparams": [{name:
        0-d array} per group]}`` (see ``hookgrad.optim.optimizer``)."""
        slots = self._slots
        state = [[slots[id(p)].state if id(p) in slots else None for p in g["params"]]
                 for g in self.param_groups]
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

    def _install_states(self, states):
        slots = dict(self._slots)
        for group, sts in zip(self.param_groups, states):
            for p, st in zip(group["params"], sts):
                if st is None:
                    slots.pop(id(p), None)
                    continue
                old = slots.get(id(p))
                slots[id(p)] = _Slot(old.static if old is not None else self._static(group), st)
        self._slots = slots

    def _load_flat_state(self, treedef, leaves):
        """Install the ``"state"`` part of ``_state_arrays()`` as its flattening (concrete
        arrays), as a compiled step's program returned it; hyper-parameters are read from
        ``param_groups`` again."""
        self._flat = _FlatState(treedef, leaves)
        self._hp_override = None

    def _flat_state(self):
        """The state as ``_load_flat_state`` installed it (``.treedef``, ``.leaves``), or
        None once anything else has read or changed it. Compared by identity: the same
        object means the same state."""
        return self._flat


class _StateView(MutableMapping):
    """``optimizer.state`` of a ``TransformOptimizer``: ``{param: {name: Tensor}}`` under
    PyTorch's names, read from the optax states (parameters without state are left out,
    and a missing parameter reads as ``{}``, as with PyTorch's ``defaultdict``)."""

    __slots__ = ("_opt",)

    def __init__(self, opt):
        self._opt = opt

    def _exported(self, key):
        slot = self._opt._slots.get(id(key))
        if slot is None:
            return {}
        return {k: Tensor._wrap(v) for k, v in self._opt._export(slot).items()}

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
        slots, extra = opt._import_mapping({key: value}, opt.param_groups)
        if key in extra:
            opt._extra_state[key] = value
        else:
            opt._slots.pop(id(key), None)
            opt._slots.update(slots)

    def __delitem__(self, key):
        opt = self._opt
        if isinstance(key, Tensor) and id(key) in opt._slots:
            del opt._slots[id(key)]
        else:
            del opt._extra_state[key]

    def __iter__(self):
        opt = self._opt
        for group in opt.param_groups:
            for p in group["params"]:
                slot = opt._slots.get(id(p))
                if slot is not None and opt._export(slot):
                    yield p
        yield from list(opt._extra_state)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return repr(dict(self.items()))
