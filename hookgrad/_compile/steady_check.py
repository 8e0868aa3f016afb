"""A steady compiled call's fixed checks, unrolled once per program.

``hookgrad._compile.steady.rerun`` compares, on every call, the guarded Python values
(``Guards``: a dict's item each), the roots (closure cells' and globals' values, by
identity) and the context a program was traced in (grad mode, saved-tensor hooks,
anomaly mode). Read as C-level maps, each map and the tuple it builds cost more than the
handful of items it reads. :func:`build` writes them instead as one expression over
objects bound as default arguments (fast locals): one subscript or attribute read and
one comparison per item, no call. The function it returns answers True only where every
item is as the program was planned with; False sends the call to ``rerun``'s item-wise
checks, which decide (an absent key, an empty cell, a guard added since, a root rebound).
Only names and indices go into the source: every value is an argument's default.
"""

__all__ = ["build"]


def build(guards, guarded, roots, reader, cell_roots, global_roots, ctx, state):
    """A function of no arguments that is True where the guarded values in ``guards``'s
    dicts are ``guarded``, ``roots``'s reader is ``reader`` with its cells and globals
    holding ``cell_roots`` and ``global_roots``, and the context (``state``: the grad-mode,
    saved-tensor-hook and anomaly state objects) is ``ctx`` (``_Steady.ctx``); or None
    where one of those is not in the form it reads."""
    if guarded is None or guards.cells or len(guards.dicts) != len(guarded) or \
            reader is None or ctx is None:
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
    params = ", ".join(f"{name}={name}" for name in bound)
    body = "\n            and ".join(terms)
    source = (f"def fixed({params}):\n"
              f"    try:\n"
              f"        return ({body})\n"
              f"    except (KeyError, ValueError):   # a key gone, an empty cell\n"
              f"        return False\n")
    scope = dict(bound)
    exec(compile(source, "<hookgrad steady check>", "exec"), scope)
    return scope["fixed"]
