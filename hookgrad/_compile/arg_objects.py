"""Plain objects passed to a compiled step (transformers' KV cache), and the attributes
the step sets on them, done again after each run.

A ``DynamicCache`` passed to a compiled ``forward`` holds a list of layers, each holding
``keys`` and ``values`` Tensors that the forward replaces (``self.keys = cat([self.keys,
k])``); ``generate`` passes a new cache on every call. As Dynamo does, such an object is:

- **keyed by its structure**, not its identity: its class, and per attribute (through
  lists, tuples, dicts and the objects they hold, a few levels down) a plain value (a
  number, string, ``None``, a dtype or device), a Tensor by its position among the
  object's Tensors, or any other object by identity. A new cache of the same structure
  and shapes finds the program the last one traced; a cache one token longer traces one
  more (a program per length: PyTorch's shapes are static here, and padding would change
  the shape the model's Python sees);
- **read**: its Tensors are inputs of the program, by position, as a Tensor argument;
- **written**: an attribute the trace set to a Tensor it computed (no grad, no alias of
  the state) or to a plain value is taken back at the trace's end; the program returns
  the Tensors, and after each run they are set, with the plain values, on the objects
  found by the same path from that call's arguments.

Anything else the trace did to such an object (an attribute deleted, set to another
object, a list appended to) stays an effect: the step runs eagerly, with the warning,
once per signature.
"""
import jax

from .._device import device as _Device
from .._dtype import dtype as _Dtype
from .._tensor import Tensor
from .state import _Same, _is_optimizer, _user_function

__all__ = ["walk", "found", "where", "holders", "at", "put"]

_Tracer = jax.core.Tracer
_DEPTH = 4          # objects inside the argument followed (the cache, its list, a layer)
_MAX_NODES = 512    # past this, the object keeps its old treatment (by identity)
_MISSING = object()
_CONSTANTS = (int, float, complex, bool, str, bytes, type(None), _Dtype, _Device)


def _constant(x):
    """Whether ``x`` is a plain value: keyed, and replayed, by value."""
    return type(x) in _CONSTANTS or isinstance(x, (_Dtype, _Device))


class _NotPlain(Exception):
    """The argument holds what this module does not key (a Module, an optimizer)."""


def _is_object(v):
    d = getattr(v, "__dict__", None)
    return type(d) is dict and not isinstance(v, type) and _user_function(type(v))


def walk(v, module_cls):
    """``(key, tensors, objects, ids)`` of argument ``v`` if it is a plain object of the
    user's (or a library's) class, else None: its structural key, the distinct Tensors it
    holds in order (the key names them by position), ``(path, object, attributes)`` of
    each object in it, the attributes as they are now, and the ids of those objects and
    of the lists and dicts in it."""
    if not _is_object(v) or _is_optimizer(v) or \
            (module_cls is not None and isinstance(v, module_cls)):
        return None
    w = _Walker(module_cls)
    try:
        key = w.node(v, (), 0)
    except _NotPlain:
        return None
    return key, w.tensors, w.objects, w.ids


class _Walker:
    def __init__(self, module_cls):
        self.module_cls = module_cls
        self.tensors, self.index, self.objects, self.n = [], {}, [], 0
        self.ids = set()

    def node(self, x, path, depth):
        self.n += 1
        if self.n > _MAX_NODES:
            raise _NotPlain
        if isinstance(x, Tensor):
            j = self.index.get(id(x))
            if j is None:
                j = self.index[id(x)] = len(self.tensors)
                self.tensors.append(x)
            return ("T", j)
        t = type(x)
        if _constant(x):
            return ("v", t, x)
        if self.module_cls is not None and isinstance(x, self.module_cls) or \
                (depth and _is_optimizer(x)):
            raise _NotPlain   # a Module's state is walked as a Module's
        if depth >= _DEPTH:
            return ("id", _Same((x,)))
        self.ids.add(id(x))
        if t in (list, tuple):
            return (t, tuple(self.node(v, path + (("i", i),), depth + 1)
                             for i, v in enumerate(x)))
        if t is dict:
            items = dict(x)
            self.objects.append((path, x, items))
            return (dict, tuple((self._key(k), self.node(v, path + (("k", k),), depth + 1))
                                for k, v in items.items()))
        if _is_object(x):
            attrs = dict(x.__dict__)
            self.objects.append((path, x, attrs))
            return ("o", t, tuple((k, self.node(v, path + (("a", k),), depth + 1))
                                  for k, v in attrs.items()))
        return ("id", _Same((x,)))

    @staticmethod
    def _key(k):
        return ("v", type(k), k) if _constant(k) else ("id", _Same((k,)))


def at(root, path):
    """The object at ``path`` (``walk``'s) from ``root``."""
    for kind, k in path:
        root = getattr(root, k) if kind == "a" else root[k]
    return root


def where(plan):
    """``id(object) -> (argument leaf, path)`` of the argument objects of ``plan``."""
    return {id(obj): (j, path) for j, objects, _ in plan.arg_objects
            for path, obj, _ in objects}


def holders(plan):
    """The ids of what ``plan``'s argument objects hold (objects, lists, dicts): their
    plain values are keyed by the structure, not guarded (``hookgrad._compile.guards``)."""
    return set().union(*(ids for _, _, ids in plan.arg_objects))


def found(plan):
    """The attributes the trace set on ``plan``'s argument objects, taken back, as
    ``("set", (argument leaf, path), [(name, value)])`` effects (``after_run``; a dict's
    items are its names), where a value is a Tensor the program computes or a plain
    value; [] (nothing taken back) if any change is not one of those: the watch then
    finds it, and the step runs eagerly."""
    if not plan.arg_objects:
        return []
    state = {id(t) for t in plan.state.tensors}
    out, changed = [], []
    for j, objects, _ in plan.arg_objects:
        for path, obj, before in objects:
            now = _items(obj)
            if len(now) == len(before) and all(now.get(k, _MISSING) is v
                                               for k, v in before.items()):
                continue
            if any(k not in now for k in before):
                return []   # an attribute deleted
            sets = [(k, v) for k, v in now.items() if before.get(k, _MISSING) is not v]
            if not all(_replayable(v, state) for _, v in sets):
                return []
            out.append(("set", (j, path), sets))
            changed.append((obj, before))
    for obj, before in changed:   # taken back: the run's values are set after each run
        d = _items(obj)
        d.clear()
        d.update(before)
    return out


def _items(holder):
    return holder if type(holder) is dict else holder.__dict__


def put(holder, name, value):
    """Set ``name`` of ``holder`` (an attribute, or a dict's item) to ``value``."""
    if type(holder) is dict:
        holder[name] = value
    else:
        setattr(holder, name, value)


def _replayable(v, state):
    if _constant(v):
        return True
    # a Tensor this trace made, not one the state or an argument holds (an alias of one
    # shares its storage eagerly; a Tensor with a graph cannot be made again)
    if type(v) is not Tensor or id(v) in state or not isinstance(v._data, _Tracer) or \
            v._requires_grad or v.grad_fn is not None:
        return False
    return v._view is None or id(v._view.base) not in state
