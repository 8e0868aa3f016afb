"""The dtypes of PyTorch's einsum steps: it contracts the operands pairwise, left to
right, summing a label out of one operand alone (``sum``: integers and bools become
int64), multiplying a pair that shares no label to sum (``mul``: promoted), and running
``bmm`` on a pair that does, which has no bool kernel and takes one dtype only. hookgrad
computes einsum as one JAX call; this walk gives it PyTorch's errors and result dtype.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._dtype import torch_kind


def _labels(equation):
    """Each operand's labels (the ellipsis left out: its dims are output dims, never
    summed) with the dims they name, and the output's labels."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if not arrow:  # implicit output: the labels seen once, in order
        seen = "".join(terms).replace(".", "")
        rhs = "".join(sorted(c for c in set(seen) if seen.count(c) == 1))
    return terms, set(rhs.replace(".", ""))


def _term_sizes(term, shape):
    """``{label: size}`` of one operand (a label before ``...`` counts dims from the
    start, after it from the end)."""
    head, dots, tail = term.partition("...")
    if len(head) + len(tail) > len(shape) or not dots and len(term) != len(shape):
        return None  # the caller's error: subscripts that do not fit the operand
    sizes = {c: shape[i] for i, c in enumerate(head)}
    if dots:
        sizes.update({c: shape[len(shape) - len(tail) + i] for i, c in enumerate(tail)})
    return sizes


def _summed(dtype):
    return dtype if jnp.issubdtype(dtype, jnp.inexact) else np.dtype(np.int64)


def _bmm(left, right):
    """``bmm``'s dtype checks, in PyTorch's order."""
    if left == np.bool_:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if left != right:
        raise RuntimeError(f"expected scalar type {torch_kind(left)} but found "
                           f"{torch_kind(right)}")


def result_dtype(equation, operands):
    """The dtype of PyTorch's ``einsum(equation, *operands)`` with two or more operands,
    raising the error its steps raise (``bmm`` of bools or of two dtypes, after its check
    of the labels' sizes); None where the subscripts do not fit (the caller raises)."""
    terms, out = _labels(equation)
    every = [_term_sizes(term, tuple(x.shape)) for term, x in zip(terms, operands)]
    if len(terms) != len(operands) or None in every:
        return None
    ops, seen = [], {}
    for i, (sizes, x) in enumerate(zip(every, operands)):
        for c, n in sizes.items():
            if n != 1 and seen.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} "
                                   f"which does not broadcast with previously seen size "
                                   f"{seen[c]}")
        ops.append((np.dtype(x.dtype.np), {c for c, n in sizes.items()
                                           if c not in out and n != 1}))
    counts = {}  # for each label to sum, how many operands have it with a size over 1
    for _, big in ops:
        for c in big:
            counts[c] = counts.get(c, 0) + 1
    while len(ops) > 1:
        (da, a), (db, b), ops = ops[0], ops[1], ops[2:]
        pair, alone_a, alone_b = set(), set(), set()
        for c in counts:
            if c in a and c in b:
                counts[c] -= 1
                if counts[c] == 1:
                    pair.add(c)
                    counts[c] = 0
            elif counts[c] == 1 and (c in a or c in b):
                (alone_a if c in a else alone_b).add(c)
                counts[c] = 0
        if alone_a:
            da, a = _summed(da), a - alone_a
        if alone_b:
            db, b = _summed(db), b - alone_b
        if pair:
            _bmm(da, db)
            ops.insert(0, (da, (a | b) - pair))
        else:
            ops.insert(0, (np.dtype(jnp.promote_types(da, db)), a | b))
    return ops[0][0]
