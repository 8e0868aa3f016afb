"""Sharded compiled steps: ``hookgrad.compile(step, mesh=..., in_shardings=...,
param_shardings=...)``.

The step is traced as always (hooks run on tracers of the *global* arrays); what changes is
where the program's inputs and outputs live. :class:`Config` holds ``compile``'s sharding
arguments, checked when ``compile`` is called. When a program is traced, :class:`Layout`
gives every flat input a ``NamedSharding``:

- a state Tensor: the first ``param_shardings`` rule matching its name in
  ``named_parameters()`` / ``named_buffers()`` of the step's top-level Modules (a rule set
  a Module carries, ``DistributedDataParallel``'s or ``fully_shard``'s, comes after the
  step's own); its ``.grad`` is sharded as it is;
- an optimizer's state leaf: the sharding of the parameter it belongs to where it has that
  parameter's shape (Adam's moments), replicated otherwise (step counts, hyper-parameters);
- an argument: its ``in_shardings`` entry (replicated without one);
- the PRNG key: replicated.

The program is ``jax.jit`` with these ``in_shardings`` and, for every state array it
writes back, the same ``out_shardings``: what a call writes is where the next call reads
it, so a training loop moves nothing after its first call (:meth:`Layout.place` moves an
input only where its sharding differs, and counts the moves of state). XLA's SPMD
partitioner inserts the collectives; nothing here communicates.
"""
import inspect
import math
import re

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

from .host_hook import _flatten_containers
from .state import SHARDING_ATTR, _state_part

# the attribute through which a Module (``DistributedDataParallel``, ``fully_shard``) asks
# for a sharding: a :class:`Config` (its ``mesh``, ``rules`` and ``batch_axis``)
MODULE_ATTR = SHARDING_ATTR


def auto_mesh(mesh, what="mesh"):
    """``mesh`` with ``Auto`` axes: GSPMD propagates shardings through the traced step (an
    ``Explicit`` mesh would make every op of the step check its operands' shardings)."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"{what} must be a jax.sharding.Mesh (e.g. from "
                        f"hookgrad.distributed.init_device_mesh), got {type(mesh).__name__}")
    if all(t == AxisType.Auto for t in mesh.axis_types):
        return mesh
    return Mesh(mesh.devices, mesh.axis_names, axis_types=(AxisType.Auto,) * mesh.devices.ndim)


def same_mesh(a, b):
    return (a.axis_names == b.axis_names and a.devices.shape == b.devices.shape
            and all(x == y for x, y in zip(a.devices.flat, b.devices.flat)))


def _axes(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def as_spec(value, mesh, what):
    """A ``PartitionSpec`` from a rule's or argument's sharding (a ``PartitionSpec``, a
    tuple of axis names, a ``NamedSharding`` on ``mesh``, ``None``: replicated), its axes
    checked against ``mesh``."""
    if isinstance(value, NamedSharding):
        if not same_mesh(value.mesh, mesh):
            raise ValueError(f"{what}: its NamedSharding is on a mesh {_mesh_str(value.mesh)} "
                             f"but the step's mesh is {_mesh_str(mesh)}. Use one mesh for "
                             "every sharding of a step (or give a PartitionSpec)")
        value = value.spec
    if value is None:
        return PartitionSpec()
    if isinstance(value, str):
        value = PartitionSpec(value)
    elif isinstance(value, (tuple, list)) and not isinstance(value, PartitionSpec):
        value = PartitionSpec(*value)
    if not isinstance(value, PartitionSpec):
        raise TypeError(f"{what}: expected a PartitionSpec, NamedSharding, tuple of mesh axis "
                        f"names or None, got {type(value).__name__}")
    seen = set()
    for entry in value:
        for ax in _axes(entry):
            if ax not in mesh.axis_names:
                raise ValueError(f"{what}: {value} names mesh axis {ax!r}, but the mesh has "
                                 f"axes {tuple(mesh.axis_names)}. Name one of those axes, "
                                 "or build the mesh with this one")
            if ax in seen:
                raise ValueError(f"{what}: {value} uses mesh axis {ax!r} twice")
            seen.add(ax)
    return value


def _mesh_str(mesh):
    return "{" + ", ".join(f"{n!r}: {s}" for n, s in mesh.shape.items()) + "}"


def check_fits(shape, spec, mesh, what):
    """Raise a ``ValueError`` naming ``what`` unless ``spec`` can shard ``shape``."""
    if len(spec) > len(shape):
        raise ValueError(f"{what} of shape {tuple(shape)}: sharding {spec} has {len(spec)} "
                         f"entries but the array has {len(shape)} dimension(s)")
    for d, entry in enumerate(spec):
        axes = _axes(entry)
        n = math.prod(mesh.shape[a] for a in axes)
        if n > 1 and shape[d] % n:
            names = " x ".join(f"{a!r} ({mesh.shape[a]})" for a in axes)
            raise ValueError(f"{what} of shape {tuple(shape)}: dimension {d} (size {shape[d]}) "
                             f"is not divisible by mesh axis {names}, as sharding {spec} needs. "
                             f"Make it a multiple of {n}, or shard another dimension")


class Config:
    """Sharding asked for by ``compile`` (``mesh``, ``in_shardings``, ``param_shardings``)
    or by a Module (``rules``, ``batch_axis``: each array argument's first dimension is
    split over that mesh axis unless ``in_shardings`` says otherwise)."""

    def __init__(self, mesh, in_shardings=None, param_shardings=None, batch_axis=None,
                 source="compile"):
        mesh = getattr(mesh, "jax_mesh", mesh)   # a hookgrad.distributed.DeviceMesh
        if mesh is None:
            mesh = _mesh_of(in_shardings)
            if mesh is None:
                raise ValueError(f"{source}: in_shardings/param_shardings need a mesh: pass "
                                 "mesh=jax.sharding.Mesh(...) (or NamedShardings)")
        self.mesh = auto_mesh(mesh)
        self.source = source
        self.replicated = NamedSharding(self.mesh, PartitionSpec())
        if batch_axis is not None and batch_axis not in self.mesh.axis_names:
            raise ValueError(f"{source}: batch axis {batch_axis!r} is not an axis of the mesh "
                             f"{_mesh_str(self.mesh)}")
        self.batch_axis = batch_axis
        self.args = self._arg_specs(in_shardings)
        self.rules = self._rules(param_shardings)

    def _arg_specs(self, value):
        if value is None:
            return None
        if isinstance(value, (tuple, list)) and not isinstance(value, PartitionSpec):
            return tuple(as_spec(v, self.mesh, f"{self.source}: in_shardings[{i}]")
                         for i, v in enumerate(value))
        return as_spec(value, self.mesh, f"{self.source}: in_shardings")   # every argument

    def _rules(self, value):
        if value is None:
            return []
        if callable(value):
            return value
        items = value.items() if isinstance(value, dict) else value
        rules = []
        for item in items:
            if not (isinstance(item, (tuple, list)) and len(item) == 2 and
                    isinstance(item[0], str)):
                raise TypeError(f"{self.source}: param_shardings must be a dict or a sequence of "
                                "(name regex, PartitionSpec) pairs, or a callable (name, "
                                f"tensor) -> PartitionSpec; got the item {item!r}")
            pattern, spec = item
            spec = as_spec(spec, self.mesh,
                           f"{self.source}: param_shardings rule '{pattern}'")
            rules.append((re.compile(pattern), pattern, spec))
        return rules

    def rule_for(self, name, tensor):
        """``(spec, rule description)`` for a state Tensor named ``name``, or None."""
        if callable(self.rules):
            spec = self.rules(name, tensor)
            what = f"{self.source}: param_shardings({name!r})"
            return (as_spec(spec, self.mesh, what), what) if spec is not None else None
        for rx, pattern, spec in self.rules:
            if rx.search(name):
                return spec, f"{self.source}: param_shardings rule '{pattern}'"
        return None


def _mesh_of(in_shardings):
    vals = in_shardings if isinstance(in_shardings, (tuple, list)) else (in_shardings,)
    for v in vals:
        if isinstance(v, NamedSharding):
            return v.mesh
    return None


def configs(cf_config, modules):
    """The step's own config and those its Modules carry, one mesh between them."""
    found = [cf_config] if cf_config is not None else []
    for m in modules:
        c = m.__dict__.get(MODULE_ATTR)
        if c is not None and c not in found:
            found.append(c)
    for c in found[1:]:
        if not same_mesh(c.mesh, found[0].mesh):
            raise ValueError(f"{c.source} asks for the mesh {_mesh_str(c.mesh)} but "
                             f"{found[0].source} for {_mesh_str(found[0].mesh)}: one step "
                             "runs on one mesh. Build both from the same Mesh")
    return found


def named_state(modules):
    """``{id(tensor): name}``: the parameters' and buffers' names in the step's top-level
    Modules (as ``named_parameters()`` / ``named_buffers()`` give them)."""
    children = {id(c) for m in modules for c in m._modules.values() if c is not None}
    names = {}
    for top in modules:
        if id(top) in children:
            continue
        stack = [("", top)]
        while stack:
            prefix, mod = stack.pop()
            for d in (mod._parameters, mod._buffers):
                for n, t in d.items():
                    if t is not None:
                        names.setdefault(id(t), prefix + n)
            stack.extend((prefix + n + ".", c) for n, c in reversed(mod._modules.items())
                         if c is not None)
    return names


def _in_block(path):
    """Where an optimizer keeps its state in blocks (``hookgrad.optim._blocks``): the
    positions in the group of the parameters of the block ``path`` is in, and the path
    within that block (its first key standing for the group); else ``(None, path)``."""
    for i, key in enumerate(path):
        positions = getattr(key, "positions", None)
        if positions is not None:
            return positions, path[:1] + path[i + 1:]
    return None, path


class Layout:
    """Where each input and output of one traced program lives (built before the trace:
    a bad sharding raises before anything changes; :meth:`finish` adds the outputs)."""

    __slots__ = ("mesh", "ins", "outs", "tensor_sh", "writeback", "what")

    def __init__(self, cfgs, plan, fn):
        self.mesh = mesh = cfgs[0].mesh
        rep = cfgs[0].replicated
        st = plan.state
        names = named_state(st.modules)
        owners, arg_names = _arg_owners(plan, fn)
        arg_only = _arg_only(plan)
        self.tensor_sh, what_t = [], []
        for i, t in enumerate(plan.tensors):
            if id(t) in arg_only:
                what = arg_names[owners[arg_only[id(t)]]]
                spec = self._arg_spec(cfgs, owners[arg_only[id(t)]], t._data, what)
            else:
                name = names.get(id(t))
                what = f"parameter {name!r}" if name is not None else "a Tensor the step reads"
                spec = PartitionSpec()
                for c in cfgs:
                    found = None if name is None else c.rule_for(name, t)
                    if found is not None:
                        spec, rule = found
                        what = f"{what} ({rule})"
                        break
            check_fits(t._data.shape, spec, mesh, what)
            self.tensor_sh.append(NamedSharding(mesh, spec))
            what_t.append(what)
        ins, self.what, self.writeback = [], [], {}
        grads_in = set(plan.grads_in)
        for i, t in enumerate(plan.tensors):
            state = id(t) not in arg_only
            for is_grad in ((False, True) if i in grads_in else (False,)):
                if state:
                    self.writeback[len(ins)] = (i, is_grad)
                ins.append(self.tensor_sh[i])
                self.what.append(what_t[i] + ("'s .grad" if is_grad else ""))
        for opt, (start, n, treedef, _) in zip(plan.optimizers, plan.opt_trees):
            shapes = [np.shape(v) for v in plan.flat[start:start + n]]
            ins.extend(self._opt_leaves(opt, plan, treedef.unflatten(list(range(n))), shapes,
                                        rep))
            self.what.extend([f"the state of {type(opt).__name__}"] * n)
        for j, slot in enumerate(plan.arg_slots):
            if slot[0] == "a":
                v = plan.arg_leaves[j]
                what = arg_names[owners[j]]
                spec = self._arg_spec(cfgs, owners[j], v, what)
                check_fits(np.shape(v), spec, mesh, what)
                ins.append(NamedSharding(mesh, spec))
                self.what.append(what)
        self.ins = ins

    @staticmethod
    def _arg_spec(cfgs, owner, value, what):
        for c in cfgs:
            if c.args is not None:
                if isinstance(c.args, PartitionSpec):
                    return c.args
                if isinstance(owner, int):
                    if owner >= len(c.args):
                        raise ValueError(f"{c.source}: in_shardings has {len(c.args)} entries "
                                         f"but the step got an argument at position {owner} "
                                         f"({what}): give one sharding per positional "
                                         "argument")
                    return c.args[owner]
        for c in cfgs:
            if c.batch_axis is not None and np.ndim(value) >= 1:
                return PartitionSpec(c.batch_axis)
        return PartitionSpec()

    def _opt_leaves(self, opt, plan, tree, shapes, rep):
        """A sharding per leaf of an optimizer's state: a leaf with the shape of the
        parameter it is filed under (the last sequence index on its path within its
        parameter group) is sharded like it; the rest are replicated."""
        out = [rep] * len(shapes)
        part = _state_part(tree)
        if not isinstance(part, (list, tuple)):
            return out
        ids = plan.state.tensor_ids if plan.state is not None else {}
        for path, idx in jax.tree_util.tree_flatten_with_path(part)[0]:
            gi = getattr(path[0], "idx", None)
            if gi is None or gi >= len(opt.param_groups):
                continue
            params = opt.param_groups[gi]["params"]
            block, path = _in_block(path)
            for key in reversed(path[1:]):
                pi = getattr(key, "idx", None)
                if block is not None and pi is not None:
                    # a state in blocks: its innermost index is the parameter's in the block
                    pi = block[pi] if pi < len(block) else None
                    if pi is None or pi >= len(params) or \
                            tuple(params[pi].shape) != tuple(shapes[idx]):
                        break
                if pi is not None and pi < len(params) and \
                        tuple(params[pi].shape) == tuple(shapes[idx]):
                    ti = ids.get(id(params[pi]))
                    if ti is not None:
                        out[idx] = self.tensor_sh[ti]
                    break
        return out

    def finish(self, entry, plan):
        """The outputs' shardings: state written back as its input; the rest unspecified."""
        outs = [None] * entry.n_out
        sh = self.tensor_sh
        rep = NamedSharding(self.mesh, PartitionSpec())
        for i, k in entry.data_out:
            outs[k] = sh[i]
        for i, k in entry.grad_out:
            outs[k] = sh[i]
        for i, k, _ in entry.grad_new:
            outs[k] = sh[i]
        shapes = entry.jaxpr.out_avals
        for opt, (treedef, spec) in zip(plan.optimizers, entry.opt_out):
            picked = self._opt_leaves(opt, plan, treedef.unflatten(list(range(len(spec)))),
                                      [shapes[k].shape if kind == "out" else ()
                                       for kind, k in spec], rep)
            for (kind, k), s in zip(spec, picked):
                if kind == "out":
                    outs[k] = s
        if entry.key_out is not None:
            outs[entry.key_out] = rep
        if entry.key_in:
            self.ins = self.ins + [rep]
            self.what = self.what + ["the PRNG key"]
        self.outs = outs

    def place(self, plan, flat, counter):
        """Move each input whose sharding is not the program's there (all checked before
        any is moved); state Tensors keep the moved array, so later calls move nothing.
        ``counter`` (a one-item list) counts the state arrays moved."""
        moves = []
        for k, (a, s) in enumerate(zip(flat, self.ins)):
            cur = getattr(a, "sharding", None)
            if cur is s or cur == s:
                continue
            if isinstance(cur, NamedSharding) and not same_mesh(cur.mesh, self.mesh):
                raise ValueError(f"{self.what[k]} is sharded over the mesh "
                                 f"{_mesh_str(cur.mesh)} but the step runs on "
                                 f"{_mesh_str(self.mesh)}: mismatched meshes. device_put it "
                                 "onto the step's mesh, or pass it unsharded")
            if cur is None or not cur.is_equivalent_to(s, a.ndim):
                moves.append(k)
        if not moves:
            return
        moved = jax.device_put([flat[k] for k in moves], [self.ins[k] for k in moves])
        base = plan.flat
        for k, a in zip(moves, moved):
            flat[k] = a
            if base is not None and base is not flat and k < len(base):
                base[k] = a
            wb = self.writeback.get(k)
            if wb is not None:
                counter[0] += 1
                t = plan.tensors[wb[0]]
                if wb[1]:
                    t._grad._data = a
                else:
                    t._data = a

def _arg_only(plan):
    """``{id(tensor): index of its argument leaf}`` for Tensors only an argument holds."""
    walked = plan.found.state.tensor_ids if plan.found is not None else {}
    out = {}
    for j, (v, slot) in enumerate(zip(plan.arg_leaves, plan.arg_slots)):
        if slot[0] == "t" and id(v) not in walked:
            out.setdefault(id(v), j)
    return out


def _arg_owners(plan, fn):
    """For each argument leaf, its positional index or keyword name; and each owner's
    description for messages (``argument 'x' (position 0)``)."""
    n_pos = plan.n_args
    args, kwargs = plan.rebuild(list(plan.arg_leaves))
    owners = []
    for i, a in enumerate(args):
        owners.extend([i] * len(_flatten_containers(a)[0]))
    for name, v in kwargs.items():
        owners.extend([name] * len(_flatten_containers(v)[0]))
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    names = {}
    for i in range(n_pos):
        names[i] = (f"argument {params[i]!r} (position {i})" if i < len(params) and
                    params[i] not in ("args", "kwargs") else f"argument {i}")
    for name in kwargs:
        names[name] = f"argument {name!r}"
    return owners, names
