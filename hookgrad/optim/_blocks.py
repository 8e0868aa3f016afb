"""How ``TransformOptimizer`` lays out its optax state: in blocks, as optax keeps it.

optax keeps one state for a whole tree of parameters: one ``count`` for all of them, one
bias correction per step. PyTorch keeps a ``step`` per parameter, because a parameter
whose ``.grad`` is None is skipped and its step does not advance. A :class:`Block` holds
both: the parameters of one group (and one dtype) that have stepped together so far, and
one optax state over a :class:`Params` of them. A step that skips some of a block's
parameters splits it in two, each part keeping the count it had; ``state[p]`` and
``state_dict()`` read a parameter's own part (:meth:`Block.part`), with the shared count
as its ``step``. In a compiled step the per-parameter counters would each be a kernel of
their own; a block's are one.
"""
from __future__ import annotations

import jax
import numpy as np

_tu = jax.tree_util


@_tu.register_pytree_with_keys_class
class Params(tuple):
    """A block's arrays (its parameters, their gradients, or a state entry of each) as one
    pytree node: optax keeps one state for it, and parameter ``i``'s part of an entry is
    ``entry[i]`` (on a key path: ``SequenceKey(i)``)."""

    __slots__ = ()

    def tree_flatten_with_keys(self):
        return tuple((_tu.SequenceKey(i), x) for i, x in enumerate(self)), None

    def tree_flatten(self):
        return tuple(self), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children)


def is_params(x) -> bool:
    return type(x) is Params


def map_params(f, state):
    """``state`` with each per-parameter entry (a :class:`Params`) ``x`` replaced by
    ``f(x)``; the shared entries (``count``, NAdam's ``mu_product``) are kept."""
    return _tu.tree_map(lambda x: f(x) if type(x) is Params else x, state, is_leaf=is_params)


class Block:
    """Parameters (by ``id``) that have stepped together, their optax state over a
    :class:`Params` of them, and the structural options it was built with."""

    __slots__ = ("static", "ids", "state")

    def __init__(self, static, ids, state):
        self.static, self.ids, self.state = static, ids, state

    def take(self, keep) -> Block:
        """The block of the parameters at positions ``keep`` (their count is this one's)."""
        return Block(self.static, tuple(self.ids[i] for i in keep),
                     map_params(lambda x: Params(x[i] for i in keep), self.state))

    def part(self, pid):
        """The optax state of the parameter ``pid`` alone (its arrays, the shared count)."""
        i = self.ids.index(pid)
        return map_params(lambda x: x[i], self.state)


def stack(template, states):
    """One block state from per-parameter states (as :meth:`Block.part` gives them), which
    share their scalars (the first one's are kept). ``template``: a state over a
    one-parameter :class:`Params`, for where the per-parameter entries are."""
    return _tu.tree_map(lambda t, *xs: Params(xs) if type(t) is Params else xs[0],
                        template, *states, is_leaf=is_params)


def shared_key(template, state):
    """The shared entries (count, ...) of a per-parameter state, as a hashable value:
    parameters whose states have equal keys can share one block. A traced value gets a key
    of its own (it cannot be compared)."""
    kinds = [is_params(x) for x in _tu.tree_leaves(template, is_leaf=is_params)]
    treedef = _tu.tree_structure(template, is_leaf=is_params)
    key = []
    for per_param, v in zip(kinds, treedef.flatten_up_to(state)):
        if per_param:
            continue
        if isinstance(v, jax.core.Tracer):
            return object()
        a = np.asarray(v)
        key.append((a.dtype.str, a.shape, a.tobytes()))
    return treedef, tuple(key)


class BlockKey:
    """The key path entry of a block's state: ``positions``, its parameters' positions in
    their group (``SequenceKey(i)`` of a ``Params`` below it is the parameter at
    ``positions[i]``)."""

    __slots__ = ("positions",)

    def __init__(self, positions):
        self.positions = positions

    def __eq__(self, other):
        return type(other) is BlockKey and other.positions == self.positions

    def __hash__(self):
        return hash(self.positions)

    def __str__(self):
        return f".block{list(self.positions)}"


@_tu.register_pytree_with_keys_class
class Placed:
    """A block in ``_state_arrays()``: its state, with its structural options and its
    parameters' positions in their group as static data (part of a program's treedef, so
    a new split of the parameters keys a new program)."""

    __slots__ = ("static", "index", "state")

    def __init__(self, static, index, state):
        self.static, self.index, self.state = static, index, state

    def tree_flatten_with_keys(self):
        return ((BlockKey(self.index), self.state),), (self.static, self.index)

    def tree_flatten(self):
        return (self.state,), (self.static, self.index)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(aux[0], aux[1], children[0])
