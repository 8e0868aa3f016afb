"""A basic-index write (ints, unit-step slices, None, Ellipsis) as a box at positions:
the template normalized (``boxed``), its position-free form and positions
(``setitem_positions``), the region's shape (``box_shape``) and the one
``dynamic_update_slice`` that every position of a box shares (``setitem_box``).
"""
import functools

import jax
import jax.numpy as jnp


def consumed(k):
    """How many dimensions of the indexed tensor the template entry ``k`` indexes."""
    tag = k[0]
    return k[2] if tag == "M" else 1 if tag in ("I", "S", "A") else 0


def setitem_box(x, v, *starts, box):
    """``x[index] = v`` for an index of ints, unit-step slices and None (``box``: per
    entry ``("I",)``, ``("S", size)`` or ``("N",)``; the ints and slice starts are
    ``starts``): one ``dynamic_update_slice`` of the region, whatever its position."""
    indexed, region, at = [], [], []
    it = iter(starts)
    for k in box:
        if k[0] == "N":
            indexed.append(1)
            continue
        at.append(next(it))
        region.append(1 if k[0] == "I" else k[1])
        if k[0] == "S":
            indexed.append(k[1])
    rest = x.shape[len(at):]
    v = jnp.broadcast_to(jnp.asarray(v).astype(x.dtype), (*indexed, *rest))
    return jax.lax.dynamic_update_slice(x, v.reshape(*region, *rest), (*at, *[0] * len(rest)))


def setitem_positions(template):
    """The position-free form of a ``template`` that ``boxed`` normalized (None for
    any other)."""
    box, starts = [], []
    for k in template:
        if k[0] == "I":
            box.append(("I",))
            starts.append(k[1])
        elif k[0] == "S" and k[3] == 1:
            box.append(("S", k[2] - k[1]))
            starts.append(k[1])
        elif k[0] == "N":
            box.append(("N",))
        else:
            return None
    return setitem_box, {"box": tuple(box)}, tuple(starts)


@functools.lru_cache(maxsize=1024)
def box_shape(shape, box):
    """The shape of a write's region (``box``: ``setitem_positions``'s form) in an array
    of ``shape``, as ``setitem_box`` indexes it: no positions, so loops share it."""
    out, dims = [], 0
    for k in box:
        if k[0] == "N":
            out.append(1)
            continue
        if k[0] == "S":
            out.append(k[1])
        dims += 1
    return (*out, *shape[dims:])


def boxed(shape, template):
    """``template`` (ints, slices, None, Ellipsis; bounds checked) with every int made
    non-negative, every slice's bounds explicit and Ellipsis spelled out, so that the
    write's positions can be told from its shape (``setitem_positions``)."""
    if any(k[0] not in ("I", "S", "N", "E") for k in template):
        return template
    out, dim = [], 0
    for k in template:
        if k[0] == "E":
            n = len(shape) - sum(map(consumed, template))
            out += [("S", 0, shape[d], 1) for d in range(dim, dim + n)]
            dim += n
        elif k[0] == "N":
            out.append(k)
        else:
            size = shape[dim]
            if k[0] == "I":
                out.append(("I", k[1] + size if k[1] < 0 else k[1]))
            else:
                if k[3] is not None and k[3] <= 0:
                    return template  # the op raises PyTorch's error
                start, stop, step = slice(*k[1:]).indices(size)
                out.append(("S", start, max(stop, start), step))
            dim += 1
    return tuple(out)
