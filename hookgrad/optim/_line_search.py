"""The strong-Wolfe line search of ``LBFGS(line_search_fn="strong_wolfe")``: bracketing
then zooming with safeguarded cubic interpolation (Nocedal & Wright, Algorithms 3.5 and
3.6), with the constants and safeguards PyTorch uses so that the steps agree."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

__all__ = ["strong_wolfe"]


class _Point(NamedTuple):
    t: float     # step length along the direction
    f: float     # loss there
    g: object    # flat gradient there (a JAX array)
    gtd: float   # directional derivative g·d


def cubic_minimizer(a, b, lo=None, hi=None) -> float:
    """The minimiser of the cubic matching ``f`` and ``gtd`` at points ``a`` and ``b``,
    clipped to ``[lo, hi]`` (by default the interval between them); its midpoint where
    the cubic has no minimum."""
    if lo is None:
        lo, hi = min(a.t, b.t), max(a.t, b.t)
    d1 = a.gtd + b.gtd - 3 * (a.f - b.f) / (a.t - b.t)
    disc = d1 * d1 - a.gtd * b.gtd
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    near, far = (a, b) if a.t <= b.t else (b, a)  # measured back from the larger step
    t = far.t - (far.t - near.t) * ((far.gtd + d2 - d1) / (far.gtd - near.gtd + 2 * d2))
    return min(max(t, lo), hi)


def _safeguard(t, a, b, stuck):
    """Keep a zoom trial ``t`` at least a tenth of the bracket away from its ends (at
    once if it left the bracket, else on the second close call in a row)."""
    lo, hi = min(a, b), max(a, b)
    margin = 0.1 * (hi - lo)
    if min(hi - t, t - lo) >= margin:
        return t, False
    if not (stuck or t >= hi or t <= lo):
        return t, True
    return (hi - margin if abs(t - hi) < abs(t - lo) else lo + margin), False


def strong_wolfe(evaluate, t, d_norm, start, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                 max_ls=25) -> tuple[float, Any, float, int]:
    """A step ``t`` along the direction satisfying the strong Wolfe conditions.

    ``evaluate(t) -> (loss, flat_grad, gtd)`` at ``x + t d``; ``start`` is the point at
    ``t = 0`` as ``(0, loss, flat_grad, gtd)``. Returns ``(loss, flat_grad, t, evals)``.
    """
    start = _Point(*start)

    def armijo_fails(p, worse_than):
        return p.f > start.f + c1 * p.t * start.gtd or p.f >= worse_than

    def curvature_holds(p):
        return abs(p.gtd) <= -c2 * start.gtd

    prev, cur = start, _Point(t, *evaluate(t))
    evals, n = 1, 0
    bracket = None
    while n < max_ls:  # phase 1: grow the step until an interval holds a good one
        if armijo_fails(cur, prev.f if n > 1 else math.inf):
            bracket = [prev, cur]
            break
        if curvature_holds(cur):
            return cur.f, cur.g, cur.t, evals
        if cur.gtd >= 0:  # past a minimum: it lies between the last two steps
            bracket = [prev, cur]
            break
        t = cubic_minimizer(prev, cur, cur.t + 0.01 * (cur.t - prev.t), cur.t * 10)
        prev, cur = cur, _Point(t, *evaluate(t))
        evals += 1
        n += 1
    if bracket is None:  # out of evaluations: the better of the start and the last try
        bracket = [start, cur]
    low = 0 if bracket[0].f <= bracket[1].f else 1
    stuck = False
    while n < max_ls:  # phase 2: zoom into the bracket
        a, b = bracket
        if abs(b.t - a.t) * d_norm < tolerance_change:
            break
        t, stuck = _safeguard(cubic_minimizer(a, b), a.t, b.t, stuck)
        p = _Point(t, *evaluate(t))
        evals += 1
        n += 1
        high = 1 - low
        if armijo_fails(p, bracket[low].f):
            bracket[high] = p
            low = 0 if bracket[0].f <= bracket[1].f else 1
            continue
        if curvature_holds(p):
            bracket[low] = p
            break
        if p.gtd * (bracket[high].t - bracket[low].t) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = p
    best = bracket[low]
    return best.f, best.g, best.t, evals
