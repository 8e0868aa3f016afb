"""Operator schemas for custom ops: inferred from type annotations or parsed from text.

A schema reads as PyTorch writes it, ``foo(Tensor x, SymInt n) -> Tensor``. hookgrad
uses it to know which arguments are Tensors (or lists of Tensors), which are mutated,
and what the op returns; both ``hookgrad.library.custom_op`` and the older
``hookgrad._custom_op.impl.custom_op`` build one.
"""
import collections.abc
import inspect
import typing
from types import GenericAlias

import jax

from .._dtype import device, dtype
from .._tensor import Tensor

__all__ = ["Arg", "Schema", "infer_schema", "parse_schema"]


class Arg:
    """One argument: schema ``type`` (``"Tensor"``, ``"Tensor?"``, ``"Tensor[]"``,
    ``"SymInt"``...), ``name``, ``default`` (text, or None), ``kwarg_only``, and
    ``is_write`` (mutated by the op)."""

    __slots__ = ("type", "name", "default", "kwarg_only", "is_write")

    def __init__(self, type, name, default=None, kwarg_only=False, is_write=False):
        self.type, self.name, self.default = type, name, default
        self.kwarg_only, self.is_write = kwarg_only, is_write

    def is_tensor_like(self):
        return self.type.startswith("Tensor")

    def is_tensor_list(self):
        return self.is_tensor_like() and self.type.endswith("[]")

    def __str__(self, alias="a"):
        t = self.type
        if self.is_write:
            t = f"Tensor({alias}!)" + t[len("Tensor"):]
        s = f"{t} {self.name}"
        return s if self.default is None else f"{s}={self.default}"


class Schema:
    """A parsed schema: ``name``, ``args`` (list of ``Arg``), ``returns`` (types)."""

    def __init__(self, name, args, returns):
        self.name, self.args, self.returns = name, list(args), list(returns)

    @property
    def flat_all(self):
        return self.args

    def is_mutable(self):
        return any(a.is_write for a in self.args)

    def is_functional(self):
        return bool(self.returns) and not self.is_mutable()

    def __str__(self):
        parts = []
        star = False
        for i, a in enumerate(self.args):
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(a.__str__(f"a{i}"))
        if len(self.returns) == 1 and not self._tuple_return:
            ret = self.returns[0]
        else:
            ret = "(" + ", ".join(self.returns) + ")"
        return f"{self.name}({', '.join(parts)}) -> {ret}"

    _tuple_return = False


def _seq_types(t):
    return (typing.Sequence[t], typing.List[t], GenericAlias(collections.abc.Sequence, (t,)),
            GenericAlias(list, (t,)))


def _param_types():
    # (python type, schema type, list variant, list-of-optional variant, optional list)
    table = [(Tensor, "Tensor", True, True, False), (jax.Array, "Tensor", True, True, False),
             (int, "SymInt", True, False, True), (float, "float", True, False, True),
             (bool, "bool", True, False, True), (str, "str", False, False, False),
             (dtype, "ScalarType", False, False, False), (device, "Device", False, False, False)]
    out = {}
    for py_t, name, lst, opt_lst, lst_opt in table:
        out.setdefault(py_t, name)
        out.setdefault(typing.Optional[py_t], name + "?")
        if lst:
            for s in _seq_types(py_t):
                out.setdefault(s, name + "[]")
        if opt_lst:
            for s in _seq_types(typing.Optional[py_t]):
                out.setdefault(s, name + "?[]")
        if lst_opt:
            for s in _seq_types(py_t):
                out.setdefault(typing.Optional[s], name + "[]?")
    return out


_PARAM_TYPES = _param_types()
_RETURN_TYPES = {Tensor: "Tensor", jax.Array: "Tensor", typing.List[Tensor]: "Tensor[]",
                 list[Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool"}
_VALID_PARAM_NAMES = sorted(set(_PARAM_TYPES.values()))


def _resolve(ann, fn, error):
    if isinstance(ann, str):
        try:
            return eval(ann, fn.__globals__)  # noqa: S307 - annotations are code by definition
        except Exception as e:  # noqa: BLE001
            error(f"Unsupported type annotation {ann}. It is not a type. ({type(e).__name__}: {e})")
    return ann


def infer_schema(fn, *, mutates_args, op_name=None):
    """The schema of ``fn`` from its type annotations (PyTorch's ``infer_schema``)::

        >>> def f(x: hookgrad.Tensor, n: int) -> hookgrad.Tensor: ...
        >>> str(infer_schema(f, mutates_args=(), op_name="f"))
        'f(Tensor x, SymInt n) -> Tensor'
    """
    sig = inspect.signature(fn)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    unknown = isinstance(mutates_args, str)
    if unknown and mutates_args != "unknown":
        raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                         "that are mutated or the string 'unknown'. ")
    mutated = () if unknown else tuple(mutates_args)
    args = []
    for name, p in sig.parameters.items():
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        ann = _resolve(p.annotation, fn, error)
        t = _PARAM_TYPES.get(ann)
        if t is None:
            if typing.get_origin(ann) is tuple:
                error(f"Parameter {name} has unsupported type {p.annotation}. We do not support "
                      "Tuple inputs in schema. As a workaround, please try to use List instead. "
                      f"The valid types are: {_VALID_PARAM_NAMES}.")
            error(f"Parameter {name} has unsupported type {p.annotation}. The valid types are: "
                  f"{_VALID_PARAM_NAMES}.")
        write = (unknown and t.startswith("Tensor")) or name in mutated
        if write and not t.startswith("Tensor"):
            error(f"Parameter {name} is in mutable_args but only Tensors or collections of "
                  "Tensors can be mutated")
        default = None
        if p.default is not inspect.Parameter.empty:
            d = p.default
            if d is None or isinstance(d, (int, float, bool)):
                default = str(d)
            elif isinstance(d, (str, device)):
                default = f'"{d}"'
            elif isinstance(d, dtype):
                default = str(d).split(".")[-1]
            else:
                error(f"Parameter {name} has an unsupported default value type {type(d)}. "
                      "Please file an issue on GitHub so we can prioritize this.")
        args.append(Arg(t, name, default, p.kind == p.KEYWORD_ONLY, write))
    if not unknown:
        missing = set(mutated) - set(sig.parameters)
        if missing:
            error(f"{missing} in mutates_args were not found in the custom op's signature. "
                  "mutates_args should contain the names of all args that the custom op mutates, "
                  "or just the string 'unknown' if you don't know.")
    schema = Schema(op_name or "", args, ())
    ret = _resolve(sig.return_annotation, fn, error)
    if ret is None or ret is type(None):
        return schema
    if ret is inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")
    if typing.get_origin(ret) is tuple:
        items = typing.get_args(ret)
        if any(r not in _RETURN_TYPES for r in items):
            error(f"Return has unsupported type {ret}. The valid types are: "
                  f"{sorted(set(_RETURN_TYPES.values()))}.")
        schema.returns = [_RETURN_TYPES[r] for r in items]
        schema._tuple_return = True
        return schema
    if ret not in _RETURN_TYPES:
        error(f"Return has unsupported type {ret}. The valid types are: "
              f"{sorted(set(_RETURN_TYPES.values()))}.")
    schema.returns = [_RETURN_TYPES[ret]]
    return schema


def _split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_schema(text, name=""):
    """Parse ``"(Tensor x, int n) -> (Tensor, Tensor)"`` (optionally with the op name
    in front) into a ``Schema``."""
    text = text.strip()
    if "->" not in text or "(" not in text:
        raise RuntimeError(f"Expected a schema like '(Tensor x) -> Tensor', got: {text}")
    head, ret = text.rsplit("->", 1)
    head = head.strip()
    op = head[:head.index("(")].strip() or name
    inner = head[head.index("(") + 1:head.rindex(")")]
    args = []
    kw = False
    for part in _split_top(inner):
        if part == "*":
            kw = True
            continue
        decl, _, default = part.partition("=")
        t, _, arg_name = decl.strip().rpartition(" ")
        write = "!" in t
        if "(" in t:  # alias annotation: Tensor(a!) -> Tensor
            t = t[:t.index("(")] + t[t.index(")") + 1:]
        t = {"int": "SymInt", "int[]": "SymInt[]", "int?": "SymInt?"}.get(t, t)
        args.append(Arg(t, arg_name, default.strip() or None, kw, write))
    ret = ret.strip()
    schema = Schema(op, args, ())
    if ret.startswith("("):
        items = _split_top(ret[1:-1])
        schema.returns = [r.split(" ")[0] for r in items]
        schema._tuple_return = True
    else:
        schema.returns = [ret.split(" ")[0]]
    schema.returns = [{"int": "SymInt"}.get(r, r) for r in schema.returns]
    return schema
