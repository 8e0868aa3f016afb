"""A steady compiled call's checks, as source terms written once per program.

``hookgrad._compile.steady`` writes each program's steady call as one straight-line
function. Its checks compare, on every call, the guarded Python values (``Guards``: a
dict's item each), the roots (closure cells' and globals' values, by identity), the
context a program was traced in (grad mode, saved-tensor hooks, anomaly mode), the
optimizer's state and option objects, and the batch (each argument a plain Tensor as
keyed). Read as C-level maps and loops over what ``_Steady`` holds, each map, tuple,
attribute read and call costs more than the handful of items it reads; here each item is
one subscript or attribute read and one comparison over objects bound as default arguments
(fast locals). :func:`fixed` and :func:`batch` give those terms (source text) and the
objects they name. Each term is true only where its item is as the program was planned
with; anything else sends the call to the item-wise checks, which decide (an absent key,
an empty cell, a guard added since, a root rebound, a batch unlike the keyed one). Only
names and indices go into the source: every value is bound.
"""

from .._autograd.saved import open_contexts

__all__ = ["fixed", "batch", "define"]


def fixed(guards, guarded, roots, reader, cell_roots, global_roots, ctx, state, optimizers):
    """``(terms, bound)``: the terms, over a call's record ``r`` (a ``replay.Replay``), that
    are all true where the guarded values in ``guards``'s dicts are ``guarded``,
    ``roots``'s reader is ``reader`` with its cells and globals holding ``cell_roots`` and
    ``global_roots``, the context (``state``: the grad-mode, saved-tensor-hook and anomaly
    state objects) is ``ctx`` (``_Steady.ctx``), and the optimizer (``optimizers``: none or
    one) holds the flat state and the option objects of its one param group that the
    record holds; or None where one of those is not in the form they read. A term may
    raise KeyError (a key gone) or ValueError (an empty cell): false too."""
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
                 _x2=ctx[2], _x3=ctx[3], _open=open_contexts)
    # no saved-tensor hooks, as when traced: none where no such context is open in any
    # thread (one list read, not two thread-local ones); the key's other parts by identity
    terms += ["(not _open[0] or not _sv.stack and _sv.mutation_ctx is None)",
              "_gm.enabled is _x0", "_sv.disabled_message is _x1", "_an.enabled is _x2",
              "_an.check_nan is _x3"]
    if optimizers:
        terms += _options(optimizers[0], bound)
    return terms, bound


def _options(opt, bound):
    """The terms comparing the optimizer ``opt``'s flat state and its one group's option
    objects with the record's (``replay.group_record``: the values in the group's order
    then), each option read by its key (``K0``...) and compared by identity with the
    record's item at its index then: a key gone raises KeyError, one added changes the
    length, one moved compares another item (false: the item-wise check decides)."""
    keys = list(opt.param_groups[0])
    bound.update(_opt=opt, _nk=len(keys))
    bound.update({f"K{j}": k for j, k in enumerate(keys)})
    # ``_flat_state()``'s answer read as the attribute it returns: no call on each step
    return ["_opt._flat is r.states[0]", "len(_opt.param_groups) == 1",
            "len(_rg := r.groups[0][1]) == 1",
            "len(_g := _opt.param_groups[0]) == _nk",
            "len(_o := _rg[0]) == _nk",
            *(f"_g[K{j}] is _o[{j}]" for j in range(len(keys)))]


def batch(specs, state_ids, arr_type):
    """``(terms, bound)``: the terms, over a call's positional arguments ``args`` (as many
    as ``specs``: each a plain Tensor's class, ``requires_grad`` and aval, ``replay.basis``'s
    ``plain`` spec), that are all true where each is such a Tensor and no Tensor is passed
    twice, each setting ``a<i>`` to the argument and ``x<i>`` to its array (else the
    item-wise check, ``replay._arguments``, decides). ``state_ids``: the state Tensors'
    ids (a state Tensor passed is keyed as one); ``arr_type``: the state arrays' type."""
    n = len(specs)
    bound = {"_ids": state_ids, "_T": arr_type}
    terms = [f"len(args) == {n}", "not kwargs"]
    for i, (cls, rg, aval) in enumerate(specs):
        bound[f"C{i}"], bound[f"R{i}"], bound[f"A{i}"] = cls, rg, aval
        terms += [
            # a plain Tensor as keyed (its class, ``requires_grad`` and aval), with no
            # node, not a state Tensor (keyed as one)
            f"type(a{i} := args[{i}]) is C{i}", f"a{i}._requires_grad is R{i}",
            f"a{i}.grad_fn is None", f"id(a{i}) not in _ids",
            # nothing set on it but ``.grad`` (None), read by identity: a Tensor's ``==``
            # is elementwise
            f"(not (_d := a{i}.__dict__) or len(_d) == 1 and "
            f"_d.get('_grad', _d) is None)",
            # its array of the state's type (not a tracer, nor a meta value): a deferred or
            # host-held one is computed or copied first, by ``Tensor._data``, which gives
            # any other array as it is
            f"((x{i} := a{i}._arr).__class__ is _T or (x{i} := a{i}._data).__class__ is _T)",
            f"x{i}.aval == A{i}"]
    if n == 2:   # one Tensor twice: one comparison, not a set
        terms.append("a0 is not a1")
    elif n > 2:
        terms.append(f"len(set(map(id, args))) == {n}")
    return terms, bound


def define(source, bound, name, scope):
    """The function ``name`` that ``source`` defines, its defaults read from ``bound`` and
    its other names from ``scope`` (its globals)."""
    scope = dict(scope, **bound)
    exec(compile(source, f"<hookgrad steady {name}>", "exec"), scope)
    return scope[name]
