"""What a node saved, under PyTorch's names: ``grad_fn._saved_self``, ``_raw_saved_self``.

An op row names its saved values in one string, ``names="self other -> other self"``:
before the arrow, PyTorch's schema names of the forward's positional arguments; after
it, the values PyTorch saves, in the order its pack hooks see them. An entry is a name
or ``name=source``, the source being an argument name, a static argument, ``result`` /
``result<k>`` (an output), a Python literal, or ``<arg>_sym_sizes`` /
``<arg>_sym_strides`` / ``<arg>_sym_numel`` / ``<arg>_dim`` / ``<arg>_scalar_type`` /
``<arg>_sym_argsize_minus_1`` (its last size; ``_minus_2`` the one before) (read from what
the node kept of the argument); ``src:tuple`` makes an int static a 1-tuple,
``src:int`` a 1-tuple static its int, ``src:first`` a tuple's first entry, ``src:enum`` a
loss reduction its number (``mean`` -> 1).
Nothing here runs while an op records: the string is parsed on first use and the values
are read when an attribute is asked for.
"""
import ast
import math

import numpy as np

from .. import _views
from .._tensor import Tensor
from .._autograd.saved import FREED_MESSAGE, SavedTensor as _Saved, _as_tensor
from .._autograd import saved as _saved_mod
from .stages import record
from .op import _LIVE
from .op_node import _CONST, ALL, INEXACT, OUT, SAVED_NAMES, expose_saved

(_ARG, _OUT, _STATIC, _LIT, _SIZES, _STRIDES, _NUMEL, _DTYPE, _STATIC_TUPLE, _NDIM,
 _LAST, _SECOND_LAST) = range(12)
_DERIVED = (("_sym_sizes", _SIZES), ("_sym_strides", _STRIDES), ("_sym_numel", _NUMEL),
            ("_scalar_type", _DTYPE), ("_dim", _NDIM), ("_sym_argsize_minus_1", _LAST),
            ("_sym_argsize_minus_2", _SECOND_LAST))


class Spec:
    """An op's ``names`` string, parsed: ``entries`` is ``[(name, kind, where)]`` in pack
    order; ``pack`` the argument positions (and ``"result"``, the output) packed, in
    that order; ``saves_result`` whether ``"result"`` is among them."""

    __slots__ = ("args", "entries", "by_name", "pack", "saves_result")

    def __init__(self, text, op):
        head, _, tail = text.partition("->")
        self.args = head.split()
        self.entries = [self._entry(e, op) for e in tail.split()]
        self.by_name = {e[0]: e for e in self.entries}
        # ("extra", k): output k (of the kernel, for an op with ``extras``, which packs them
        # under hooks)
        self.pack = tuple(where if kind == _ARG else "result" if where == 0 else ("extra", where)
                          for _, kind, where in self.entries if kind in (_ARG, _OUT))
        self.saves_result = "result" in self.pack

    def _entry(self, text, op):
        name, _, src = text.partition("=")
        src, _, conv = (src or name).partition(":")
        if conv:  # ``dim=dim:tuple``: PyTorch keeps an int list where hookgrad has an int
            return name, _STATIC_TUPLE, (src, conv)
        if src in self.args:
            return name, _ARG, self.args.index(src)
        if src == "result":
            return name, _OUT, 0
        if src.startswith("result") and src[6:].isdigit():
            return name, _OUT, int(src[6:])
        for suffix, kind in _DERIVED:
            if src.endswith(suffix) and src[:-len(suffix)] in self.args:
                return name, kind, self.args.index(src[:-len(suffix)])
        try:
            return name, _LIT, ast.literal_eval(src)
        except (ValueError, SyntaxError):
            return name, _STATIC, src  # a static argument of the call


def default_names(op):
    """What an op saves when its row names nothing: its one argument ``self`` (or its
    result, for ``OUT``), by PyTorch's convention for unary ops."""
    if op.save is OUT:
        return "self -> result"
    if op.save is ALL:
        return "self -> self"
    return "self ->"


def spec_of(op):
    s = op._spec
    if s is None:
        s = op._spec = Spec(op.names if op.names is not None else default_names(op), op)
    return s


# --------------------------------------------------------------------------- reading


def saved_attribute(node, attr):
    """``node._saved_<name>`` / ``node._raw_saved_<name>``; AttributeError otherwise."""
    raw = attr.startswith("_raw_saved_")
    name = attr[11:] if raw else attr[7:]
    entry = spec_of(node._site.op).by_name.get(name)
    if entry is None:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    _, kind, where = entry
    if raw:
        if kind not in (_ARG, _OUT):
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
        return SavedTensor._of(node, kind, where)
    if kind == _LIT:
        return where
    if kind == _STATIC:
        return dict(node._site.key).get(where)
    if kind == _STATIC_TUPLE:
        v = dict(node._site.key).get(where[0])
        if where[1] == "tuple":
            return (v,) if isinstance(v, int) else v
        if where[1] == "enum":  # a loss reduction, as PyTorch's at::Reduction number
            return _REDUCTIONS.get(v, v)
        if isinstance(v, tuple) and (len(v) == 1 or where[1] == "first" and v):
            return v[0]  # "int": a 1-tuple's int; "first": the first entry
        return v
    if node._freed:  # NOTE: sizes go with the freed values (PyTorch keeps those)
        raise RuntimeError(FREED_MESSAGE)
    if kind == _ARG:
        return _arg_value(node, where)
    if kind == _OUT:
        return _out_value(node, where)
    if kind == _STRIDES:
        return _strides(node, where)
    shape, dtype = _arg_meta(node, where)
    if kind == _DTYPE:
        from .._dtype import from_jax
        return from_jax(dtype)
    return _FROM_SHAPE[kind](tuple(shape))


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def saved_names(node):
    """The ``_saved_*`` and ``_raw_saved_*`` attributes of ``node`` (for ``dir``)."""
    return names_of_op(node._site.op)


def names_of_op(op):
    """The ``_saved_*`` and ``_raw_saved_*`` attributes of ``op``'s nodes."""
    out = []
    for name, kind, _ in spec_of(op).entries:
        out.append("_saved_" + name)
        if kind in (_ARG, _OUT):
            out.append("_raw_saved_" + name)
    return out


def contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(tuple(shape)):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


# what a derived entry reads from the argument's shape
_FROM_SHAPE = {_SIZES: tuple, _STRIDES: contiguous_strides, _NUMEL: math.prod, _NDIM: len,
               _LAST: lambda shape: shape[-1], _SECOND_LAST: lambda shape: shape[-2]}


def _stored(node, i):
    stored = node._stored
    return stored[i] if stored is not None and i < len(stored) else None


def _const(node, i):
    """The Python value of non-Tensor argument ``i``."""
    k = sum(1 for s in node._stored[:i] if s is _CONST)
    return node._consts[k]


def _arg_value(node, i):
    """A saved argument as PyTorch returns it: the Tensor itself (if unmodified), or None
    where it was not saved; Python numbers of binary arithmetic as 0-d Tensors."""
    s = _stored(node, i)
    c = s.__class__
    if c is tuple:
        _saved_mod.unpack_plain(s, node, False)  # the version and detach checks
        return s[1]
    if c is _Saved:
        return s.unpack(node, True)
    if s is _CONST:
        v = _const(node, i)
        if v is not None and node._site.op.scalar_edges:  # PyTorch wraps the number into a Tensor
            from .._factory import tensor
            return tensor(v)
        return v
    return None  # only its shape was kept: not saved


def _strides(node, i):
    """Argument ``i``'s strides as it was recorded; empty when it needs no gradient (its
    strides serve only its own formula, and PyTorch keeps them only for it)."""
    if i not in node._site.want:
        return ()
    s = _stored(node, i)
    if s.__class__ is tuple and s[1] is not None:
        return tuple(s[1].stride())
    return contiguous_strides(_arg_meta(node, i)[0])


def _arg_meta(node, i):
    s = _stored(node, i)
    c = s.__class__
    if c is tuple:
        return s[0].shape, s[0].dtype
    if c is _Saved:
        return s.shape, None
    if s is _CONST:
        v = _const(node, i)
        return np.shape(v), np.asarray(v).dtype
    return s.shape, s.dtype  # an aval


def _out_value(node, k):
    """Output ``k`` as saved: a new Tensor equal to it, whose grad_fn is ``node``."""
    s = node._out_saved
    extra = node._extra
    if k and node._site.op.extras is not None:  # packed under hooks, else computed again
        if extra is not None:
            return extra[k - 1].unpack(node, True)
        vals = node._unpack(False)
        return _as_tensor(record.extras_fn(node._site.op, node._site.key)(*vals)[k - 1], None, 0)
    if k and node._site.op.save is OUT and extra is not None:  # kept for the backward
        e = extra[k - 1]
        if e.__class__ is tuple:
            return _as_tensor(_saved_mod.unpack_output(e, node, False), node, k)
        return e.unpack(node, True)
    if k == 0 and s is not None:
        if s.__class__ is tuple:
            data, ref, version = s
            _saved_mod.unpack_output(s, node, False)
            t = _as_tensor(data, node, 0)
            out = ref()
            if out is None:
                t._version = version
                return t
            # NOTE: PyTorch's unpacked output shares the output's storage and version
            # counter: a later in-place write to either shows in both
            return _views.alias(t, out, diff=False, shared=True)
        return s.unpack(node, True)
    # NOTE: hookgrad keeps the inputs here; the output is computed again from them
    res = recompute(node)
    res = res[k] if isinstance(res, tuple) else res
    return _as_tensor(res, node if res.dtype in INEXACT else None, k)


def recompute(node):
    """The op's outputs, from what ``node`` kept of its arguments."""
    vals = node._unpack(False)
    if len(vals) != len(node._stored):
        raise RuntimeError(f"{type(node).__name__}: the output is not saved and cannot be "
                           "computed again from what the node kept")
    key = node._site.key
    return node._site.op.forward_fn(key)(*vals)


# --------------------------------------------------------------------------- SavedTensor


class SavedTensor:
    """A value a node saved for backward (``grad_fn._raw_saved_self``): its ``data``, its
    ``unpack_hook``, ``unpack()``, and ``register_hooks(pack_hook, unpack_hook)`` to pack
    it now and unpack it in backward.

    Example::

        >>> y = x * x
        >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 2, lambda t: t / 2)
    """

    __slots__ = ("_node", "_get", "_set")

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")

    @classmethod
    def _make(cls, node, get, set_):
        self = object.__new__(cls)
        self._node, self._get, self._set = node, get, set_
        return self

    @classmethod
    def _of(cls, node, kind, where):
        """The SavedTensor of an op node's argument ``where`` or output ``where``."""
        if node._freed:
            raise RuntimeError(FREED_MESSAGE)
        if kind == _ARG:
            def get():
                return None if node._freed else _stored(node, where)

            def set_(s):
                node._stored[where] = s
        else:
            def get():
                return None if node._freed or where else node._out_saved

            def set_(s):
                node._out_saved = s
        return cls._make(node, get, set_)

    def _value(self):
        s = self._get()
        if self._node is not None and getattr(self._node, "_freed", False):
            raise RuntimeError(FREED_MESSAGE)
        return s

    @property
    def data(self):
        """The packed object (with hooks), else the saved Tensor: the original input, or a
        detached Tensor for an output."""
        s = self._value()
        c = s.__class__
        if c is _Saved:
            if s.unpack_hook is not None:
                return s.packed
            t = s.ref() if s.ref is not None else None
            if t is not None and not s.is_output:
                return t
            return Tensor._wrap(s.data)
        if c is tuple:
            if len(s) == 4:
                return s[1]
            return Tensor._wrap(s[0])
        return None

    @property
    def unpack_hook(self):
        s = self._value()
        return s.unpack_hook if s.__class__ is _Saved else None

    def unpack(self):
        """The saved value (unpack hook applied), as a Tensor."""
        s = self._value()
        c = s.__class__
        node = self._node
        if c is _Saved:
            return s.unpack(node, True)
        if c is tuple:
            return (_saved_mod.unpack_plain(s, node, True) if len(s) == 4 else
                    _saved_mod.unpack_output(s, node, True))
        return None

    def register_hooks(self, *args, **kwargs):
        """``register_hooks(pack_hook, unpack_hook)``: pack the saved value now with
        ``pack_hook``; backward unpacks it with ``unpack_hook``."""
        if len(args) + len(kwargs) != 2 or not all(callable(a) for a in
                                                   (*args, *kwargs.values())):
            raise TypeError("register_hooks(): incompatible function arguments. The following "
                            "argument types are supported:\n    1. (self: torch._C._autograd."
                            "SavedTensor, arg0: collections.abc.Callable, arg1: collections."
                            f"abc.Callable) -> None\n\nInvoked with: {args} {kwargs}")
        pack, unpack = (*args, *kwargs.values())
        s = self._value()
        if s is None or (s.__class__ is not tuple and s.__class__ is not _Saved):
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if s.__class__ is _Saved and s.unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at "
                               "a time.")
        if s.__class__ is tuple:
            s = _to_saved(s, self._node)
        tensor = s.ref() if s.ref is not None else None
        if tensor is None or s.is_output:  # PyTorch packs a Tensor on the saved data
            tensor = _as_tensor(s.data, self._node if s.is_output else s.edge, s.nr) \
                if not s.is_output else Tensor._wrap(s.data)
        s.set_hooks(tensor, pack, unpack)
        self._set(s)
        node = self._node
        if hasattr(node, "_has_saved"):
            node._has_saved = 2  # packed values: no fused backward through this node

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


SavedTensor.__module__ = "hookgrad.autograd"


def _to_saved(s, node):
    """A plain saved tuple as a SavedTensor object (to give it hooks)."""
    sv = object.__new__(_Saved)
    if len(s) == 4:
        data, t, version, edge = s
        sv.is_output, sv.nr = False, t._output_nr
        sv.edge = edge[0] if edge is not None else None
        sv.ref = lambda: t
    else:
        data, ref, version = s
        sv.is_output, sv.nr, sv.edge, sv.ref = True, 0, None, ref
    sv.data, sv.version, sv.shape = data, version, data.shape
    sv.mutation_ctx = sv.unpack_hook = sv.packed = None
    return sv


def function_saved(node):
    """A custom Function node's ``_raw_saved_tensors``."""
    saved = node._saved
    if saved is None:
        return ()
    if node._freed:
        raise RuntimeError(FREED_MESSAGE)

    def slot(i):
        def get():
            return None if node._freed else node._saved[i]

        def set_(s):
            node._saved = node._saved[:i] + (s,) + node._saved[i + 1:]
        return SavedTensor._make(node, get, set_)
    return tuple(slot(i) for i in range(len(saved)))


SAVED_NAMES.attribute = saved_attribute
SAVED_NAMES.listing = saved_names
SAVED_NAMES.pack_order = lambda op: spec_of(op).pack
SAVED_NAMES.of_op = names_of_op
for _made in list(_LIVE):  # the ops made so far; later ones expose theirs when made
    expose_saved(_made)
