"""A steady compiled call's checks, unrolled once per program.

``hookgrad._compile.steady.rerun`` compares, on every call, the guarded Python values
(``Guards``: a dict's item each), the roots (closure cells' and globals' values, by
identity), the context a program was traced in (grad mode, saved-tensor hooks, anomaly
mode), the optimizer's state and option objects, and the batch (each argument a plain
Tensor as keyed). Read as C-level maps and loops over what ``_Steady`` holds, each map,
tuple, attribute read and call costs more than the handful of items it reads.
:func:`build` and :func:`build_batch` write them instead as straight-line code over
objects bound as default arguments (fast locals): one subscript or attribute read and one
comparison per item. Each answers True (or the arrays) only where every item is as the
program was planned with; anything else sends the call to the item-wise checks, which
decide (an absent key, an empty cell, a guard added since, a root rebound, a batch unlike
the keyed one). Only names and indices go into the source: every value is a default.
"""

from operator import is_

__all__ = ["build", "build_batch"]


def build(guards, guarded, roots, reader, cell_roots, global_roots, ctx, state, optimizers):
    """A function of a call's record (a ``replay.Replay``) that is True where the guarded
    values in ``guards``'s dicts are ``guarded``, ``roots``'s reader is ``reader`` with its
    cells and globals holding ``cell_roots`` and ``global_roots``, the context (``state``:
    the grad-mode, saved-tensor-hook and anomaly state objects) is ``ctx``
    (``_Steady.ctx``), and the optimizer (``optimizers``: none or one) holds the flat
    state and the option objects of its one param group that the record holds; or None
    where one of those is not in the form it reads."""
    if guarded is None or guards.cells or len(guards.dicts) != len(guarded) or \
            reader is None or ctx is None or len(optimizers) > 1 or \
            optimizers and len(optimizers[0].param_groups) != 1:
        return None
    _, cells, dicts, names = reader
    bound = {"_roots": roots, "_reader": reader, "_dicts": guards.dicts,
             "_cells": guards.cells, "_n": len(guarded), "_guarded": guarded}
    terms = ["_roots._reader is _reader", "len(_dicts) == _n", "not _cells"]
    if guarded:   # the values as one tuple (compared as ``Guards.values()``'s are)
        reads = []
        for i, (d, k) in enumerate(zip(guards.dicts, guards.keys)):
            bound[f"d{i}"], bound[f"k{i}"] = d, k
            reads.append(f"d{i}[k{i}]")
        terms.append(f"({', '.join(reads)},) == _guarded")
    for i, (cell, root) in enumerate(zip(cells, cell_roots)):
        bound[f"c{i}"], bound[f"r{i}"] = cell, root
        terms.append(f"c{i}.cell_contents is r{i}")
    for i, (g, name, root) in enumerate(zip(dicts, names, global_roots)):
        bound[f"g{i}"], bound[f"n{i}"], bound[f"v{i}"] = g, name, root
        # an unbound name (a builtin's) is None to ``_Roots._read``: a ``get`` there
        terms.append(f"g{i}.get(n{i}) is None" if root is None else f"g{i}[n{i}] is v{i}")
    grad_mode, saved, anomaly = state
    bound.update(_gm=grad_mode, _sv=saved, _an=anomaly, _x0=ctx[0], _x1=ctx[1],
                 _x2=ctx[2], _x3=ctx[3])
    # no saved-tensor hooks, as when traced; the key's other parts by identity
    terms += ["not _sv.stack", "_sv.mutation_ctx is None", "_gm.enabled is _x0",
              "_sv.disabled_message is _x1", "_an.enabled is _x2", "_an.check_nan is _x3"]
    if optimizers:   # its flat state, and its group's option objects by identity (as
        # ``replay._same_options``: one group)
        bound.update(_opt=optimizers[0], _is=is_)
        terms += ["_opt._flat_state() is r.states[0]", "len(_opt.param_groups) == 1",
                  "len(r.groups[0][1]) == 1",
                  "len(_g := _opt.param_groups[0]) == len(_o := r.groups[0][1][0])",
                  "all(map(_is, _g.values(), _o))"]
    params = ", ".join(f"{name}={name}" for name in bound)
    body = "\n            and ".join(terms)
    source = (f"def fixed(r, {params}):\n"
              f"    try:\n"
              f"        return ({body})\n"
              f"    except (KeyError, ValueError):   # a key gone, an empty cell\n"
              f"        return False\n")
    return _define(source, bound, "fixed")


# one argument's check: a plain Tensor as keyed (its class, ``requires_grad`` and aval),
# with no node, nothing set on it but ``.grad`` (None), not a state Tensor (keyed as
# one), its array of the state's type (not a tracer, nor a meta value: a deferred or
# host-held one is computed or copied first, by ``Tensor._data``, which gives any other
# array as it is)
_ARG = """\
    if type(a{i}) is not C{i} or a{i}._requires_grad is not R{i} or \\
            a{i}.grad_fn is not None or id(a{i}) in _ids:
        return None
    d = a{i}.__dict__   # (by identity: a Tensor's ``==`` is elementwise)
    if d and (len(d) != 1 or d.get("_grad", d) is not None):
        return None
    x{i} = a{i}._arr
    if x{i}.__class__ is not _T:
        x{i} = a{i}._data   # a deferred value computed, a host-held one copied
        if x{i}.__class__ is not _T:
            return None
    if x{i}.aval != A{i}:
        return None
"""


def build_batch(specs, state_ids, arr_type):
    """A function of a call's positional arguments (as many as ``specs``: each a plain
    Tensor's class, ``requires_grad`` and aval, ``replay.basis``'s ``plain`` spec) that
    returns their arrays where each is such a Tensor and no Tensor is passed twice, else
    None (``replay._arguments`` decides). ``state_ids``: the state Tensors' ids;
    ``arr_type``: the state arrays' type."""
    n = len(specs)
    bound = {"_ids": state_ids, "_T": arr_type}
    for i, (cls, rg, aval) in enumerate(specs):
        bound[f"C{i}"], bound[f"R{i}"], bound[f"A{i}"] = cls, rg, aval
    names = ", ".join(f"a{i}" for i in range(n))
    lines = [f"def batch(args, {', '.join(f'{k}={k}' for k in bound)}):",
             f"    {names}, = args"]
    if n == 2:   # one Tensor twice: one comparison, not a set
        lines.append("    if a0 is a1:\n        return None")
    elif n > 2:
        lines.append(f"    if len(set(map(id, args))) != {n}:\n        return None")
    lines += [_ARG.format(i=i) for i in range(n)]
    lines.append(f"    return [{', '.join(f'x{i}' for i in range(n))}]")
    return _define("\n".join(lines) + "\n", bound, "batch")


def _define(source, bound, name):
    """The function ``name`` that ``source`` defines, its defaults read from ``bound``."""
    scope = dict(bound)
    exec(compile(source, f"<hookgrad steady {name}>", "exec"), scope)
    return scope[name]
