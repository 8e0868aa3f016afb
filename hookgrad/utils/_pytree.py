"""PyTorch's Python pytree API (``torch.utils._pytree``): flatten nested containers into a
list of leaves and a :class:`TreeSpec` that rebuilds them.

The nodes are PyTorch's, not JAX's: ``list``, ``tuple``, ``dict`` (keys in insertion
order, where JAX sorts them), ``OrderedDict``, ``defaultdict``, ``deque`` and namedtuples,
plus what :func:`register_pytree_node` adds. Everything else is a leaf, ``None`` and
Tensors included (a Tensor is a JAX pytree node, but not one of these).
"""
from __future__ import annotations

import collections
import dataclasses
import json
import operator
from collections import OrderedDict, defaultdict, deque
from typing import Any, Callable, NamedTuple

from .. import _missing

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "TreeSpec", "LeafSpec", "keystr",
           "key_get", "register_pytree_node", "tree_is_leaf", "tree_flatten",
           "tree_flatten_with_path", "tree_unflatten", "tree_iter", "tree_leaves",
           "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "treespec_dumps", "treespec_loads",
           "treespec_pprint", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance"]

PyTree = Any
Context = Any
FlattenFn = Callable[[PyTree], "tuple[list, Context]"]
UnflattenFn = Callable[[list, Context], PyTree]


class NodeDef(NamedTuple):
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Callable | None


SUPPORTED_NODES: dict[type, NodeDef] = {}


# ------------------------------------------------------------------------------ keys


class _Key:
    """An entry of a key path, one field (``_field``) that ``str`` shows as source text
    (``_text``) and ``get`` reads a container at (``_read(container, value)``)."""
    _field, _text, _read = "", "", None

    def __str__(self):
        return self._text.format(getattr(self, self._field))

    def get(self, container):
        return type(self)._read(container, getattr(self, self._field))


@dataclasses.dataclass(frozen=True)
class SequenceKey(_Key):
    idx: int
    _field, _text, _read = "idx", "[{!r}]", operator.getitem


@dataclasses.dataclass(frozen=True)
class MappingKey(_Key):
    key: Any
    _field, _text, _read = "key", "[{!r}]", operator.getitem


@dataclasses.dataclass(frozen=True)
class GetAttrKey(_Key):
    name: str
    _field, _text, _read = "name", ".{}", getattr


def keystr(kp) -> str:
    """The key path ``kp`` as source text: ``['a'][0].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The item of ``obj`` at key path ``kp``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ------------------------------------------------------------------------- registry


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make instances of ``cls`` pytree nodes: ``flatten_fn(node) -> (children, context)``
    and ``unflatten_fn(children, context) -> node``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    if serialized_type_name is not None:
        _SERIALIZED[cls] = (serialized_type_name, to_dumpable_context, from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


# how treespec_dumps names a node type and writes its context: (name, to, from)
_SERIALIZED = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}
_NAMEDTUPLES = {}  # namedtuple class -> its serialized name (_register_namedtuple)


def _register_namedtuple(cls, *, serialized_type_name):
    """Name the namedtuple class ``cls`` for :func:`treespec_dumps`."""
    _NAMEDTUPLES[cls] = serialized_type_name
    SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


_register_pytree_node = register_pytree_node


def _seq_keys(flatten):
    def with_keys(node):
        children, ctx = flatten(node)
        return [(SequenceKey(i), c) for i, c in enumerate(children)], ctx
    return with_keys


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _dict_flatten_with_keys(d):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _list_flatten(xs):
    return list(xs), None


def _tuple_flatten(xs):
    return list(xs), None


def _namedtuple_flatten(t):
    return list(t), type(t)


def _namedtuple_flatten_with_keys(t):
    return [(GetAttrKey(f), v) for f, v in zip(t._fields, t)], type(t)


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _deque_flatten(d):
    return list(d), d.maxlen


def _with_mapping_keys(flatten, keys_of):
    def with_keys(node):
        values, ctx = flatten(node)
        return [(MappingKey(k), v) for k, v in zip(keys_of(ctx), values)], ctx
    return with_keys


_BUILTIN = [
    (tuple, _tuple_flatten, lambda v, c: tuple(v), _seq_keys(_tuple_flatten)),
    (list, _list_flatten, lambda v, c: list(v), _seq_keys(_list_flatten)),
    (dict, _dict_flatten, _dict_unflatten, _dict_flatten_with_keys),
    (OrderedDict, _dict_flatten, lambda v, c: OrderedDict(zip(c, v)),
     _dict_flatten_with_keys),
    (defaultdict, _defaultdict_flatten, lambda v, c: defaultdict(c[0], zip(c[1], v)),
     _with_mapping_keys(_defaultdict_flatten, lambda c: c[1])),
    (deque, _deque_flatten, lambda v, c: deque(v, maxlen=c), _seq_keys(_deque_flatten)),
    # namedtuples: one entry for every class (see _node_type); the context is the class
    (collections.namedtuple, _namedtuple_flatten, lambda v, c: c(*v),
     _namedtuple_flatten_with_keys),
]
def _namedtuple_to_context(cls):
    if cls not in _NAMEDTUPLES:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {cls} because "
                                  "we didn't register a serializated_type_name. Please register "
                                  "using `_register_namedtuple`.")
    return _NAMEDTUPLES[cls]


def _defaultdict_to_context(ctx):
    factory, keys = ctx
    return {"default_factory_module": factory.__module__,
            "default_factory_name": factory.__qualname__, "dict_context": keys}


def _defaultdict_from_context(d):
    import importlib
    module = importlib.import_module(d["default_factory_module"])
    return [getattr(module, d["default_factory_name"]), d["dict_context"]]


_SERIAL_NAMES = {tuple: "builtins.tuple", list: "builtins.list", dict: "builtins.dict",
                 OrderedDict: "collections.OrderedDict", deque: "collections.deque",
                 defaultdict: "collections.defaultdict",
                 collections.namedtuple: "collections.namedtuple"}
_CONTEXT_FNS = {defaultdict: (_defaultdict_to_context, _defaultdict_from_context),
                collections.namedtuple: (_namedtuple_to_context,
                                         lambda name: SERIALIZED_TYPE_TO_PYTHON_TYPE[name])}
for _row in _BUILTIN:
    register_pytree_node(_row[0], _row[1], _row[2], flatten_with_keys_fn=_row[3],
                         serialized_type_name=_SERIAL_NAMES[_row[0]],
                         to_dumpable_context=_CONTEXT_FNS.get(_row[0], (None, None))[0],
                         from_dumpable_context=_CONTEXT_FNS.get(_row[0], (None, None))[1])


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def is_namedtuple_instance(obj) -> bool:
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj) -> bool:
    """Whether ``obj`` is a namedtuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _node_type(tree):
    t = type(tree)
    if t not in SUPPORTED_NODES and is_namedtuple_class(t):
        return collections.namedtuple
    return t


def tree_is_leaf(tree, is_leaf=None) -> bool:
    """Whether ``tree`` is a leaf: not a registered node, or ``is_leaf(tree)``."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) not in SUPPORTED_NODES


# ------------------------------------------------------------------------- TreeSpec


class TreeSpec:
    """The structure of a pytree: its node ``type``, the ``context`` its flatten function
    returned, and one ``children_specs`` entry per child. A leaf's spec has type None."""

    def __init__(self, type, context, children_specs):
        self.type, self.context, self.children_specs = type, context, list(children_specs)
        self.num_children = len(self.children_specs)
        self.num_leaves = (1 if type is None
                           else sum(s.num_leaves for s in self.children_specs))
        self.num_nodes = 1 + sum(s.num_nodes for s in self.children_specs)

    def is_leaf(self) -> bool:
        return self.type is None

    def child(self, index) -> TreeSpec:
        return self.children_specs[index]

    def children(self) -> list:
        return list(self.children_specs)

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return ((self.type, self.context, self.children_specs)
                == (other.type, other.context, other.children_specs))

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self.children_specs)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        name = "namedtuple" if self.type is collections.namedtuple else self.type.__name__
        pad = " " * (indent + 2)
        kids = f",\n{pad}".join(c.__repr__(indent + 2) for c in self.children_specs)
        return f"TreeSpec({name}, {self.context!r}, [{kids}])"

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have its nodes)."""
        if self.is_leaf():
            return [tree]
        node = SUPPORTED_NODES[_node_type(tree)] if not tree_is_leaf(tree) else None
        if node is None or node.type is not self.type:
            raise ValueError(f"Node type mismatch; expected {self.type!r}, but got "
                             f"{type(tree)!r}.")
        children, context = node.flatten_fn(tree)
        if len(children) != self.num_children:
            raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                             f"{len(children)}.")
        if context != self.context:
            raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        return [x for c, s in zip(children, self.children_specs) for x in s.flatten_up_to(c)]

    def unflatten(self, leaves):
        """The pytree of this structure holding ``leaves``."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self!r}).")
        return self._build(iter(leaves))

    def _build(self, it):
        if self.is_leaf():
            return next(it)
        children = [s._build(it) for s in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)


def LeafSpec() -> TreeSpec:  # noqa: N802 - PyTorch's name; a leaf's TreeSpec
    """The spec of a single leaf (``*``)."""
    return TreeSpec(None, None, [])


# ------------------------------------------------------------------------- flatten


def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return LeafSpec()
    node = SUPPORTED_NODES[_node_type(tree)]
    children, context = node.flatten_fn(tree)
    return TreeSpec(node.type, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)``: the leaves of ``tree`` in order, and its :class:`TreeSpec`."""
    leaves = []
    return leaves, _flatten(tree, is_leaf, leaves)


def tree_unflatten(leaves, treespec):
    """The pytree of ``treespec``'s structure holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be "
                        f"instance of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree, is_leaf=None):
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree, is_leaf=None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def _with_path(tree, is_leaf, path, out):
    if tree_is_leaf(tree, is_leaf):
        out.append((path, tree))
        return
    node = SUPPORTED_NODES[_node_type(tree)]
    if node.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node.type}. "
                         "Please pass a flatten_with_keys_fn argument to "
                         "register_pytree_node.")
    for key, child in node.flatten_with_keys_fn(tree)[0]:
        _with_path(child, is_leaf, path + (key,), out)


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], spec)``."""
    out = []
    _with_path(tree, is_leaf, (), out)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


# ------------------------------------------------------------------------- map


def tree_map(func, tree, *rests, is_leaf=None):
    """A pytree of ``tree``'s structure whose leaves are ``func(leaf, *leaves of rests)``;
    each of ``rests`` must have ``tree``'s structure (or hold subtrees at its leaves)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on the leaves for its side effects; returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for xs in zip(*flat):
        func(*xs)
    return tree


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """Like :func:`tree_map`, with each leaf's key path as ``func``'s first argument."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    flat = [[p for p, _ in pairs], [x for _, x in pairs]] + [spec.flatten_up_to(r)
                                                           for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*flat))


def _pred(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple)) or hasattr(type_or_types_or_pred,
                                                                   "__args__"):
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def _only(type_or_types_or_pred, func):
    pred = _pred(type_or_types_or_pred)
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map` applying ``func`` only to the leaves of the given types (or for
    which the predicate holds); other leaves pass through."""
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None) -> bool:
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None) -> bool:
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    check = _pred(type_or_types)
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if check(x))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None) -> bool:
    check = _pred(type_or_types)
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if check(x))


def treespec_pprint(treespec) -> str:
    """The structure with each leaf drawn as ``*``: ``([*, *], {'a': *})``."""
    return repr(treespec.unflatten(_Star() for _ in range(treespec.num_leaves)))


class _Star:
    def __repr__(self):
        return "*"


DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1


def _spec_to_json(spec):
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    if spec.type not in _SERIALIZED:
        raise NotImplementedError(f"No registered serialization name for {spec.type} found. "
                                  "Please update your _register_pytree_node call with a "
                                  "`serialized_type_name` kwarg.")
    name, to_context, _ = _SERIALIZED[spec.type]
    if to_context is not None:
        context = to_context(spec.context)
    else:
        try:
            context = json.dumps(spec.context)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json dump-"
                            "able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    return {"type": name, "context": context,
            "children_spec": [_spec_to_json(c) for c in spec.children_specs]}


def _json_to_spec(d):
    if d["type"] is None:
        return LeafSpec()
    cls = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(d["type"])
    if cls is None:
        raise NotImplementedError(f"No registered type name {d['type']} found. Please "
                                  "register the type with _register_pytree_node.")
    from_context = _SERIALIZED[cls][2] if cls in _SERIALIZED else None
    context = (from_context(d["context"]) if from_context is not None
               else json.loads(d["context"]))
    node_type = collections.namedtuple if is_namedtuple_class(cls) else cls
    return TreeSpec(node_type, context, [_json_to_spec(c) for c in d["children_spec"]])


def treespec_dumps(treespec, protocol=None) -> str:
    """``treespec`` as a JSON string (PyTorch's format, protocol 1)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"treespec_dumps(treespec, protocol): Expected `treespec` to be "
                        f"instance of TreeSpec but got item of type {type(treespec)}.")
    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return json.dumps([protocol, _spec_to_json(treespec)])


def treespec_loads(serialized: str) -> TreeSpec:
    """The TreeSpec that :func:`treespec_dumps` wrote."""
    protocol, data = json.loads(serialized)
    if protocol != 1:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: [1]")
    return _json_to_spec(data)

__getattr__ = _missing.module_getattr(__name__)
