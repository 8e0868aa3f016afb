"""Writing a compiled step's outputs back: which executable runs (donating or not), the
state Tensors' arrays, ``.grad``s and versions, the optimizers' states, and the values
the step returns. A planned call (``CompiledFunction._run``) and a steady re-run
(``hookgrad._compile.steady``) both write back through these."""
import sys

from . import arg_objects as _arg_objects
from . import trace as _trace
from . import tune as _tune
from .state import _opt_load, _Split
from .._tensor import Tensor, _fresh, _set_arr, _set_rg, _set_version, wrap_as
from .._watch import WRITES as _WRITES

_setattr, _new = object.__setattr__, object.__new__

__all__ = ["executable", "state", "optimizers", "outputs", "output"]


def executable(entry, exe, get, flat, held):
    """``exe``, or the program that donates nothing where an item of ``flat`` that ``get``
    picks (a buffer ``exe`` donates) has more holders than ``held``: a user's alias
    (``old = p.detach()``) must stay readable."""
    if get is None or _most_refs(get, flat) <= held:
        return exe
    plain = entry.exe_plain
    if plain is None:
        plain = entry.exe_plain = _tune.jit(entry.fn, (), entry.options, entry.layout)
    return plain


def state(entry, tensors, res):
    """The program's outputs into the state Tensors ``tensors``: their arrays, ``.grad``s
    and versions, counted as one write (``hookgrad._watch.writes``)."""
    _WRITES[0] += 1
    for i, k in entry.data_out:
        _set_arr(tensors[i], res[k])
    for i, k in entry.grad_out:
        _set_arr(tensors[i]._grad, res[k])
    for i in entry.grad_none:
        tensors[i]._grad = None
    for i, k, rg in entry.grad_new:
        g = Tensor._wrap(res[k])
        _set_rg(g, rg)
        tensors[i]._grad = g
    for i, dv, gv in entry.versions:
        t = tensors[i]
        if dv:
            _set_version(t, t._version + dv)
        if gv:
            g = t._grad
            _set_version(g, g._version + gv)


def optimizers(entry, opts, opt_trees, res, flat):
    """The optimizers' new states from the program's outputs ``res`` (an entry of a state
    passed through unchanged is read from its inputs, ``flat``)."""
    for opt, (_, _, in_def, tree), (treedef, spec), take in zip(
            opts, opt_trees, entry.opt_out, entry.opt_take):
        leaves = take(res) if take is not None else \
            [flat[j] if kind == "in" else res[j] for kind, j in spec]
        if type(in_def) is _Split:   # kept flat: the next call passes it straight in
            opt._load_flat_state(treedef, leaves)
        else:
            new = treedef.unflatten(leaves)
            _opt_load(opt, dict(tree, state=new) if isinstance(tree, dict) and
                      "state" in tree else new)


def outputs(entry, res, got, leaves=None, made=None):
    """What the step returns, from the program's outputs ``res``, the values its Python
    read (``got``: ``hookgrad._compile.speculate``), the call's argument leaves (an
    argument object returned: ``hookgrad._compile.arg_objects``) and the Tensors set on
    them (``made``: by output position; returned, they are those)."""
    out = []
    for s in entry.user_spec:
        if s[0] == "T":
            out.append(made[s[1]] if made and s[1] in made and s[2] is Tensor else
                       output(s[2], res[s[1]]))
        elif s[0] == "A":
            out.append(res[s[1]])
        elif s[0] == "P":
            out.append(got[s[1]])
        elif s[0] == "R":
            out.append(_arg_objects.at(leaves[s[1][0]], s[1][1]))
        else:
            out.append(s[1])
    return entry.user_build(out)


def output(cls, arr):
    """A Tensor of class ``cls`` the step returns, holding ``arr``."""
    if cls is Tensor:   # ``Tensor._wrap``'s fill, without its call (each steady call)
        t = _new(Tensor)
        _fresh(t, arr, None, 0, False)
    else:
        t = wrap_as(cls, arr)
    _setattr(t, "_compiled_out", True)   # fresh: an uncounted write
    return t


def _most_refs(get, flat):
    """The largest reference count of the items of ``flat`` that ``get`` (an
    ``items_getter``) picks, counted in C."""
    return max(map(sys.getrefcount, get(flat)))


def _calibrate():
    # the count :func:`_most_refs` gives an item held by its holder and ``flat`` alone
    # (the references of the count itself depend on the interpreter)
    flat = [object(), object()]
    holders = list(flat)
    held = {_most_refs(_trace.items_getter(p), flat) for p in ((0, 1), (1,))}
    del holders
    if len(held) != 1:
        raise ImportError(f"reference counts differ by how they are taken: {held}")
    return held.pop()


# an item of a program's inputs held by its holder (a Tensor, an optimizer) and the list
HELD = _calibrate()
