"""The op table (tests/ops/_op_table.py) as a source of fuzz steps: a row is drawn, its
call rendered as plain PyTorch source, so a row added to the table is fuzzed as it is.

A row's ``call(L, *args)`` is run once with ``L`` a symbolic library ``P`` and symbolic
arguments (``Sym``): attribute access, calls, operators and indexing record the source
they stand for (``L.sin(a1)``, ``(a1 + 2.5)``, ``a1.gather(0, L.tensor([[0, 1]]))``). A
row the symbols cannot render (control flow on a value, a numpy call, iteration) is left
out of the draw with the reason; ``catalog()`` says which. What a row returns (shapes,
which outputs carry a gradient) is read from hookgrad running the row on its own arrays
when it is first drawn, and again on negated values to tell a data-dependent shape.
"""
import functools
import math

import numpy as np

from tests.ops import _op_table as T


class Unrenderable(Exception):
    """The row's call does something a source expression cannot stand for."""


class Sym:
    """A value of the rendered program: ``src`` is its source expression."""

    __slots__ = ("src",)

    def __init__(self, src):
        object.__setattr__(self, "src", src)

    def __setattr__(self, name, value):
        raise Unrenderable(f"assigns {name}: a statement")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise Unrenderable(f"reads {name}")
        return Sym(f"{self.src}.{name}")

    def __call__(self, *args, **kw):
        parts = [render(a) for a in args] + [f"{k}={render(v)}" for k, v in kw.items()]
        return Sym(f"{self.src}({', '.join(parts)})")

    def __getitem__(self, i):
        body = ", ".join(_index(v) for v in i) if isinstance(i, tuple) and i else _index(i)
        return Sym(f"{self.src}[{body}]")

    def __bool__(self):
        raise Unrenderable("control flow on a value")

    def __iter__(self):
        raise Unrenderable("iterates a value")

    def __len__(self):
        raise Unrenderable("takes len() of a value")

    def __float__(self):
        raise Unrenderable("converts a value to a number")

    __int__ = __index__ = __float__
    __hash__ = object.__hash__

    def __array__(self, *a, **k):
        raise Unrenderable("passes a value to numpy")

    def __neg__(self):
        return Sym(f"(-{self.src})")

    def __invert__(self):
        return Sym(f"(~{self.src})")

    def __abs__(self):
        return Sym(f"abs({self.src})")


def _binop(op, reflected=False):
    def f(self, other):
        a, b = (render(other), self.src) if reflected else (self.src, render(other))
        return Sym(f"({a} {op} {b})")
    return f


for _name, _op in [("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"),
                   ("floordiv", "//"), ("mod", "%"), ("pow", "**"), ("matmul", "@"),
                   ("and", "&"), ("or", "|"), ("xor", "^")]:
    setattr(Sym, f"__{_name}__", _binop(_op))
    setattr(Sym, f"__r{_name}__", _binop(_op, True))
for _name, _op in [("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                   ("ge", ">=")]:
    setattr(Sym, f"__{_name}__", _binop(_op))


def render(v):
    """Source for a call argument: a symbol, a constant or a container of them."""
    if isinstance(v, Sym):
        return v.src
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return repr(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else f"float('{v}')"
    if isinstance(v, complex) and math.isfinite(v.real) and math.isfinite(v.imag):
        return repr(v)  # ``1j``, ``(1+2j)``
    if isinstance(v, list):
        return f"[{', '.join(render(x) for x in v)}]"
    if isinstance(v, tuple):
        return f"({render(v[0])},)" if len(v) == 1 else f"({', '.join(render(x) for x in v)})"
    raise Unrenderable(f"passes a {type(v).__name__} constant")


def _index(i):
    if isinstance(i, slice):
        parts = (i.start, i.stop) + (() if i.step is None else (i.step,))
        return ":".join("" if p is None else render(p) for p in parts)
    if i is Ellipsis:
        return "..."
    return render(i)


def const(a):
    """An integer or boolean index input as ``L.tensor(...)`` source."""
    return f"L.tensor({np.asarray(a).tolist()!r})"


class Drawable:
    """A row that renders; what its call returns is read when it is first drawn."""

    def __init__(self, row):
        self.row, self.id = row, row.id

    def expr(self, args, path=()):
        """Source of the call with ``args`` (source strings, one per input spec), of
        output ``path`` (indices into a tuple or list result)."""
        res = self.row.call(Sym("L"), *(Sym(a) for a in args))
        for k in path:  # a Python list of results, or a Sym whose value is a tuple
            res = res[k]
        return render(res)

    @functools.cached_property
    def outputs(self):
        """``[(path, shape, differentiable)]`` of the tensors the row returns; a shape is
        None where it depends on the values (it differs on the negated inputs)."""
        arrays = T.arrays_for(self.row)
        res = _outputs(_run(self.row, arrays))
        try:
            other = _outputs(_run(self.row, [-a if a.dtype.kind == "f" else a
                                             for a in arrays]))
        except Exception:  # noqa: BLE001 - the negated values are outside the row's domain
            other = res
        return [(p, s if s == s2 else None, g) for (p, s, g), (_, s2, _) in zip(res, other)]


def _outputs(res, path=()):
    import hookgrad
    if isinstance(res, (tuple, list)):
        return [o for k, v in enumerate(res) for o in _outputs(v, path + (k,))]
    if isinstance(res, hookgrad.Tensor):
        return [(path, tuple(res.shape), bool(res.requires_grad) and res.dtype.is_floating_point)]
    return []


def _run(row, arrays):
    import hookgrad
    return row.call(hookgrad, *T.tensors(hookgrad, row, arrays))


# factorizations and solves: the fuzzer's inputs (arithmetic rows, rank 2) are singular or
# rank-deficient, where their results are not unique (tests/ops covers them on generic input)
_NOT_UNIQUE = ("cholesky", "cholesky_inverse", "cholesky_solve", "det", "inverse", "logdet",
               "matrix_exp", "matrix_power", "pinverse", "qr", "slogdet", "svd",
               "lu", "lu_solve", "lu_unpack", "triangular_solve", "geqrf")
_NOT_UNIQUE_REASON = "a factorization or solve: not unique on the fuzzer's rank-2 inputs"


def _not_unique(row_id):
    head, *form = row_id.split(" ")
    head = head.split(".method")[0]
    if head in ("linalg.norm", "linalg.matrix_norm") and form[:1] in (["nuc"], ["-2"]):
        return True  # a sum of, or the least, singular values: one is 0 on rank-2 inputs
    return head.removeprefix("linalg.") in _NOT_UNIQUE or head in (
        "linalg.eigh", "linalg.eigvalsh", "linalg.inv", "linalg.inv_ex", "linalg.lstsq",
        "linalg.lu", "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu_solve",
        "linalg.matrix_rank", "linalg.pinv", "linalg.solve", "linalg.solve_ex",
        "linalg.solve_triangular", "linalg.svdvals", "linalg.cholesky_ex")


@functools.lru_cache(maxsize=None)
def catalog():
    """``(drawable, left_out)``: the rows the fuzzer draws from, and ``{row id: reason}``
    for the rest (rendering only: nothing runs)."""
    drawable, left_out = [], {}
    for row in T.ROWS:
        if _not_unique(row.id):
            left_out[row.id] = _NOT_UNIQUE_REASON
            continue
        try:
            render(row.call(Sym("L"), *(Sym(f"x{k}") for k in range(len(row.inputs)))))
        except Unrenderable as e:
            left_out[row.id] = str(e)
        except Exception as e:  # noqa: BLE001 - any other failure to render is a reason too
            left_out[row.id] = f"{type(e).__name__} while rendering"
        else:
            drawable.append(Drawable(row))
    return drawable, left_out


def summary():
    """One line: how many rows are drawn and why the others are left out."""
    drawable, left_out = catalog()
    reasons = {}
    for rid, why in left_out.items():
        reasons.setdefault(why, []).append(rid)
    why = "; ".join(f"{r}: {', '.join(ids)}" for r, ids in sorted(reasons.items()))
    return (f"op table: {len(drawable)} of {len(T.ROWS)} rows drawn"
            + (f", {len(left_out)} left out ({why})" if left_out else ""))


def family(row_id):
    """A row's family for counting: its id up to the first ``.`` or space."""
    return row_id.replace(" ", ".").split(".")[0]
