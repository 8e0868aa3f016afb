"""``torch.export.dynamic_shapes``: which input dimensions an exported program leaves free.

A dimension marked with a :class:`Dim` (or ``Dim.DYNAMIC`` / ``Dim.AUTO``) becomes a
symbolic dimension of ``jax.export`` (:func:`jax.export.symbolic_shape`), so the exported
program runs at every size in the Dim's range; every other dimension keeps the size of the
example input. One difference: JAX's symbolic dimensions are at least 1, so a Dim's range
starts at 1 where PyTorch's may start at 0 (docs/differences.md).
"""
from __future__ import annotations

import inspect
import re
from typing import Any, Union

from .. import _missing
from .._dynamo.exc import UserError
from .._tensor import Tensor
from ..utils import _pytree as pytree

__all__ = ["AdditionalInputs", "Constraint", "Dim", "ShapesCollection", "dims",
           "refine_dynamic_shapes_from_suggested_fixes"]

_LINEAR_ONLY = "(Only increasing linear operations with integer coefficients are supported.)"


class _IntInfinity:
    """The unbounded maximum of a Dim (PyTorch's ``int_oo``): greater than every int."""

    def __repr__(self):
        return "int_oo"

    def __eq__(self, other):
        return isinstance(other, _IntInfinity)

    def __hash__(self):
        return hash("int_oo")

    def __gt__(self, other):
        return not isinstance(other, _IntInfinity)

    def __ge__(self, other):
        return True

    def __lt__(self, other):
        return False

    def __le__(self, other):
        return isinstance(other, _IntInfinity)


int_oo = _IntInfinity()


class _DimHint:
    """``Dim.AUTO`` (dynamic where the program allows, else static), ``Dim.DYNAMIC`` (must be
    dynamic) or ``Dim.STATIC`` (the example's size)."""

    def __init__(self, kind):
        self.type = kind

    def __repr__(self):
        return f"DimHint({self.type})"

    def __call__(self, min=None, max=None):  # noqa: A002 - PyTorch's names
        raise NotImplementedError(f"hookgrad does not implement torch.export.Dim.{self.type}"
                                  "(min=, max=) yet: use a named Dim(name, min=, max=) for a "
                                  "bounded dynamic dimension (see docs/api_coverage.md)")


class Dim:
    """A symbolic dimension: ``Dim(name, *, min=None, max=None)``.

    Marks an input dimension as dynamic in :func:`torch.export.export`'s ``dynamic_shapes``;
    the exported program then accepts any size in ``[min, max]`` there. Dims with the same
    name are the same size. ``2 * d``, ``d + 1`` and ``d - 1`` are dimensions derived from
    ``d``.
    """

    AUTO = _DimHint("AUTO")
    DYNAMIC = _DimHint("DYNAMIC")
    STATIC = _DimHint("STATIC")

    def __init__(self, name: str, *, min: int | None = None,  # noqa: A002
                 max: int | None = None) -> None:  # noqa: A002
        lo = 0 if min is None else min
        hi = int_oo if max is None else max
        if hi < lo:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise AssertionError(f"Dim name must be a valid identifier, got {name}")
        self.__name__ = name
        self.min = lo
        self.max = hi

    def _root_linear(self):
        return self, 1, 0

    def _derive(self, a, b):
        root, a0, b0 = self._root_linear()
        a, b = a0 * a, b0 * a + b
        name = root.__name__ if a == 1 else f"{a}*{root.__name__}"
        name = name if b == 0 else f"{name} {'+' if b > 0 else '-'} {abs(b)}"
        return _DerivedDim(name, root, a, b)

    def __add__(self, other) -> Dim:
        if type(other) is not int:
            raise NotImplementedError(f"Attempted to add {other} to {self.__name__}, where an "
                                      f"integer was expected. {_LINEAR_ONLY}")
        return self._derive(1, other)

    def __radd__(self, other) -> Dim:
        return self + other

    def __sub__(self, other) -> Dim:
        if type(other) is not int:
            raise NotImplementedError(f"Attempted to subtract {other} from {self.__name__}, "
                                      f"where an integer was expected. {_LINEAR_ONLY}")
        return self._derive(1, -other)

    def __rsub__(self, other) -> Dim:
        raise NotImplementedError(f"Attempted to negate {self.__name__}. {_LINEAR_ONLY}")

    def __mul__(self, other) -> Dim:
        if type(other) is not int or other <= 0:
            raise NotImplementedError(f"Attempted to multiply {other} with {self.__name__}, "
                                      f"where a positive integer was expected. {_LINEAR_ONLY}")
        return self._derive(other, 0)

    def __rmul__(self, other) -> Dim:
        return self * other

    def __repr__(self):
        lo = None if self.min == 2 else self.min
        hi = None if self.max == int_oo else self.max
        bounds = "".join(f", {k}={v}" for k, v in (("min", lo), ("max", hi)) if v is not None)
        return f"Dim('{self.__name__}'{bounds})"


class _DerivedDim(Dim):
    """``a * root + b`` for a Dim ``root`` (``a`` > 0): its range is the root's, mapped."""

    def __init__(self, name, root, a, b):
        self.__name__ = name
        self.root, self._a, self._b = root, a, b

    def _root_linear(self):
        return self.root, self._a, self._b

    @property
    def min(self) -> int:
        return self._a * self.root.min + self._b

    @property
    def max(self) -> int | _IntInfinity:
        hi = self.root.max
        return hi if hi == int_oo else self._a * hi + self._b

    def __repr__(self):
        return self.__name__


Constraint = Union[Dim, _DimHint]


def dims(*names: str, min: int | None = None, max: int | None = None) -> tuple:  # noqa: A002
    """One :class:`Dim` per name, all with the same ``min`` and ``max``."""
    return tuple(Dim(name, min=min, max=max) for name in names)


class ShapesCollection:
    """Builds ``dynamic_shapes`` by Tensor: ``shapes[tensor] = {0: dim}`` for the Tensors
    that appear (anywhere) in the inputs; :meth:`dynamic_shapes` gives the structure."""

    def __init__(self):
        self._shapes = {}

    def __setitem__(self, t, shape):
        if not isinstance(t, Tensor):
            raise AssertionError(f"Cannot assign shape to non-tensor or non-_IntWrapper type "
                                 f"{type(t)}")
        if id(t) in self._shapes and self._shapes[id(t)] != shape:
            raise AssertionError(f"Shapes assigned to input do not match: expected "
                                 f"{self._shapes[id(t)]}, got {shape}")
        self._shapes[id(t)] = shape

    def __getitem__(self, t):
        return self._shapes.setdefault(id(t), {})

    def __len__(self):
        return len(self._shapes)

    def dynamic_shapes(self, m, args, kwargs=None) -> Any:
        """The ``dynamic_shapes`` structure of ``m``'s inputs ``args``/``kwargs``."""
        found = set()

        def pick(t):
            if isinstance(t, Tensor) and id(t) in self._shapes:
                found.add(id(t))
                return self._shapes[id(t)]
            return None
        out = pytree.tree_map(pick, combine_args(m, args, kwargs))
        if found != set(self._shapes):
            raise ValueError("Some tensors that were assigned shapes were not found in args. "
                             "Maybe such tensors were copied when passing them as args? Maybe "
                             "such tensors are contained in classes that were not registered "
                             "with pytree?")
        return out


class AdditionalInputs:
    """Infers ``dynamic_shapes`` from several example inputs: a dimension whose size differs
    between them is ``Dim.DYNAMIC``, one that does not is static."""

    def __init__(self):
        self._examples = []

    def add(self, args, kwargs=None) -> None:
        """Another example of ``args`` (a tuple) and ``kwargs`` (a dict or None)."""
        if type(args) is not tuple:
            raise AssertionError(f"Representative args {args} must be a tuple")
        if kwargs is not None and type(kwargs) is not dict:
            raise AssertionError(f"Representative kwargs {kwargs} must be None or a dict")
        self._examples.append((args, kwargs))

    def dynamic_shapes(self, m, args, kwargs=None) -> Any:
        """The ``dynamic_shapes`` merging the shapes of ``args``/``kwargs`` and of every
        added example."""
        first, *others = [
            pytree.tree_map(lambda t: tuple(t.shape) if isinstance(t, Tensor) else t,
                            combine_args(m, a, k))
            for a, k in [(args, kwargs), *self._examples]]

        def mark(v, *other_vs):
            if not all(type(v) is type(o) for o in other_vs):
                raise ValueError("The following inputs were found to have differing types, "
                                 f"so they cannot be marked as dynamic: {(v,) + other_vs}.")
            same = all(o == v for o in other_vs)
            if isinstance(v, int) and not isinstance(v, bool):
                return None if same else Dim.DYNAMIC
            if not same:
                raise ValueError("The following inputs were found to have differing values, "
                                 f"but they cannot be marked as dynamic: {(v,) + other_vs}.")
            return None
        return pytree.tree_map(mark, first, *others, is_leaf=lambda i: type(i) is int)

    def verify(self, ep) -> None:
        """Runs ``ep.module()``'s input checks on every added example."""
        module = ep.module()
        for args, kwargs in self._examples:
            module._check_inputs(args, kwargs or {})


def refine_dynamic_shapes_from_suggested_fixes(msg: str, dynamic_shapes) -> Any:
    """``dynamic_shapes`` with the fixes a constraint-violation message suggests applied
    (``name = 8`` makes the Dim ``name`` static; ``name = Dim('name', min=.., max=..)``
    narrows it; ``name = other + 1`` derives it from another Dim)."""
    fixes = {}
    for line in msg.split("Suggested fixes:", 1)[-1].splitlines():
        m = re.fullmatch(r"\s*(\w+) = (.+?)\s*", line)
        if m:
            fixes[m.group(1)] = m.group(2)
    roots = {}

    def collect(d):
        if isinstance(d, Dim):
            root = d._root_linear()[0]
            roots[root.__name__] = root
        return d
    pytree.tree_map(collect, dynamic_shapes, is_leaf=lambda d: isinstance(d, Dim))
    names = dict(roots, Dim=Dim)
    new_roots = {}
    for name, fix in fixes.items():
        # a Dim expression of the message ("Dim('b', max=8)", "a + 1"), over its Dims only
        new_roots[name] = int(fix) if fix.lstrip("-").isdigit() else \
            eval(fix, {"__builtins__": {}}, names)  # noqa: S307

    def apply(d):
        if not isinstance(d, Dim):
            return d
        root, a, b = d._root_linear()
        new = new_roots.get(root.__name__, root)
        return new if (a, b) == (1, 0) else new * a + b
    return pytree.tree_map(apply, dynamic_shapes, is_leaf=lambda d: isinstance(d, Dim))


def combine_args(mod, args, kwargs) -> dict:
    """``args`` and ``kwargs`` bound to the names of ``mod.forward``'s parameters, in order
    (the keys a dict ``dynamic_shapes`` must have)."""
    kwargs = kwargs or {}
    fn = mod.forward if hasattr(mod, "forward") else mod
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {**{f"args_{i}": a for i, a in enumerate(args)}, **kwargs}
    return dict(bound.arguments)


def _user_error(msg):
    err = UserError(msg)
    err.msg = msg
    return err


_VALIDATION = ("For more information about this error, see: https://pytorch.org/docs/main/"
               "generated/exportdb/index.html#dynamic-shapes-validation")


def per_tensor_dims(dynamic_shapes, combined) -> dict:
    """id(Tensor) -> (path, [spec per dim]) for every Tensor of ``combined`` (see
    :func:`combine_args`), where a spec is None (static), an int (static, checked), a
    :class:`Dim` or a ``Dim`` hint; PyTorch's ``UserError`` when ``dynamic_shapes`` does not
    match the inputs."""
    if dynamic_shapes is None:
        dynamic_shapes = {k: None for k in combined}
    if isinstance(dynamic_shapes, dict):
        got, expected = list(dynamic_shapes), list(combined)
        if sorted(got) != sorted(expected):
            raise _user_error(
                f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the "
                f"arg names {expected} of `inputs`, but here they are {got}. Alternatively, you "
                "could also ignore arg names entirely and specify `dynamic_shapes` as a "
                f"list/tuple matching `inputs`. {_VALIDATION}")
        pairs = [(k, combined[k], dynamic_shapes[k]) for k in expected]
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(combined):
            raise _user_error(
                "Detected mismatch between the structure of `inputs` and `dynamic_shapes`: "
                f"`inputs` has {len(combined)} elements, but `dynamic_shapes` has "
                f"{len(dynamic_shapes)} elements\n{_VALIDATION}")
        pairs = [(k, v, s) for (k, v), s in zip(combined.items(), dynamic_shapes)]
    else:
        raise AssertionError("expected dynamic_shapes to be dict, tuple, or list, got "
                             f"{type(dynamic_shapes)}")
    out = {}
    for name, value, spec in pairs:
        _walk(f"{name}", value, spec, out)
    return out


def _walk(path, value, spec, out):
    if isinstance(value, Tensor):
        out[id(value)] = (path, _tensor_spec(path, value, spec))
        return
    if pytree.tree_is_leaf(value):
        if spec is not None and not isinstance(spec, _DimHint):
            raise _user_error(f"Unexpected dynamic shape {spec!r} specified at "
                              f"`dynamic_shapes` for the non-Tensor input {path}: hookgrad "
                              "exports non-Tensor inputs as constants (pass None)")
        return
    children, spec_tree = pytree.tree_flatten(value, is_leaf=lambda v: v is not value)
    keys = list(value.keys()) if isinstance(value, dict) else range(len(children))
    if spec is None:
        specs = [None] * len(children)
    elif isinstance(spec, dict) and isinstance(value, dict):
        specs = [spec.get(k) for k in keys]
    elif isinstance(spec, (tuple, list)) and len(spec) == len(children):
        specs = list(spec)
    else:
        raise _user_error(f"Detected mismatch between the structure of `inputs` and "
                          f"`dynamic_shapes`: {path} is a {type(value).__name__} of "
                          f"{len(children)} elements, but its spec is {spec!r}\n{_VALIDATION}")
    for k, child, s in zip(keys, children, specs):
        _walk(f"{path}[{k!r}]", child, s, out)


def _tensor_spec(path, t, spec):
    if spec is None or isinstance(spec, _DimHint) and spec.type == "STATIC":
        return [None] * t.ndim
    if isinstance(spec, _DimHint):
        return [spec] * t.ndim
    if isinstance(spec, dict):
        bad = [d for d in spec if not isinstance(d, int) or not 0 <= d < t.ndim]
        if bad:
            raise _user_error(f"Dimension #{bad[0]} specified at `dynamic_shapes` for {path} is "
                              f"out of bounds for a Tensor of {t.ndim} dimensions "
                              f"{tuple(t.shape)}\n{_VALIDATION}")
        dims_ = [spec.get(i) for i in range(t.ndim)]
    elif isinstance(spec, (tuple, list)):
        if len(spec) != t.ndim:
            raise _user_error(
                f"Expected dynamic shape spec {spec} specified at `dynamic_shapes` for {path} "
                f"to have the same length as the actual tensor shape {tuple(t.shape)} "
                f"(expected {t.ndim}, but got {len(spec)} instead)")
        dims_ = list(spec)
    else:
        raise _user_error(
            f"Unexpected input tensor shape {spec} specified at `dynamic_shapes` for {path} "
            "(expected either a list/tuple of dimensions, or a dict mapping indices to "
            "dimensions, where each dimension is an int, a Dim, Dim.AUTO, Dim.STATIC, or "
            "Dim.DYNAMIC)")
    for i, d in enumerate(dims_):
        if d is not None and not isinstance(d, (int, Dim, _DimHint)):
            raise _user_error(
                f"Unexpected dimension #{i} in input tensor shape {spec} specified at "
                f"`dynamic_shapes` for {path} (expected None, an int, a Dim, Dim.AUTO, "
                f"Dim.STATIC, or Dim.DYNAMIC, but got {d!r} instead)")
    return [None if isinstance(d, _DimHint) and d.type == "STATIC" else d for d in dims_]


def hint_kind(spec) -> str | None:
    """'AUTO' or 'DYNAMIC' for a hint, 'DIM' for a Dim, None for a static dimension."""
    if isinstance(spec, _DimHint):
        return spec.type
    return "DIM" if isinstance(spec, Dim) else None


__getattr__ = _missing.module_getattr(__name__)
