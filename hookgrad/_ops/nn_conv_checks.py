"""PyTorch's argument errors of a convolution, worded as its kernels word them and raised in
their order: the weight's rank and ``groups``, each parameter's length and sign, the weight
against the input and ``groups``, the bias, the kernel against the padded input, a zero
dilation, a transposed convolution's output padding.
"""
from __future__ import annotations


def output_padding_error(output_padding, stride, dilation):
    if all(o < s or o < d for o, s, d in zip(output_padding, stride, dilation)):
        return None
    # PyTorch's kernel names each spatial dim; a 1-d convolution runs as a 2-d one of height 1
    rows = [(0, 1, 1)] if len(stride) == 1 else []
    rows += list(zip(output_padding, stride, dilation))
    dims = ("depth", "height", "width")[-len(rows):]
    got = " ".join(f"{what}_{dim}: {v[k]}" for k, what in
                   enumerate(("output_padding", "stride", "dilation"))
                   for dim, v in zip(dims, rows))
    return RuntimeError("output padding must be smaller than either stride or dilation, but "
                        f"got {got}")


def kernel_error(spatial, pads, dilation, k):
    padded = [s + lo + hi for s, (lo, hi) in zip(spatial, pads)]
    eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, k)]
    if any(e > p for e, p in zip(eff, padded)):
        return RuntimeError(f"Calculated padded input size per channel: "
                            f"({' x '.join(map(str, padded))}). Kernel size: "
                            f"({' x '.join(map(str, eff))}). Kernel size can't be greater "
                            f"than actual input size")
    return None


def param_error(nd, weight, groups, params):
    """The error PyTorch's convolution raises for its parameters, or None: ``params`` are
    ``(name, value as given)`` of stride, padding, dilation and output padding, in that
    order (an ``nd``-d function's number stands for ``nd`` of them). Each must have one
    value or one per spatial dim of the weight (PyTorch counts them from the weight)."""
    if weight.ndim < 3:
        return RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        return RuntimeError("non-positive groups is not supported")
    dim = weight.ndim - 2
    got = {}
    for name, v in params:
        got[name] = vals = list(v) if isinstance(v, (list, tuple)) else [v] * nd
        if len(vals) not in (1, dim):
            return RuntimeError(f"expected {name} to be a single integer value or a list of "
                                f"{dim} values to match the convolution dimensions, but got "
                                f"{name}={vals}")
    if min(got["padding"]) < 0:
        return RuntimeError("negative padding is not supported")
    if min(got["output_padding"]) < 0:
        return RuntimeError("negative output_padding is not supported")
    if min(got["stride"]) <= 0:
        return RuntimeError("non-positive stride is not supported")
    if min(got["dilation"]) < 0:
        return RuntimeError("dilation should be greater than zero")
    return None


def shape_error(shape, weight, bias, nd, transposed, groups):
    """The error PyTorch's convolution kernel raises for an input of the batched ``shape``
    (what it names: an unbatched input has N=1 there) and ``bias``, or None."""
    if weight.ndim != nd + 2:  # (parameters of one value each: their lengths passed)
        return RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                            f"dimensional weight {list(weight.shape)}, but got {len(shape)}-"
                            f"dimensional input of size {list(shape)} instead")
    # PyTorch checks the weight against groups before the input's channels; its message
    # for an indivisible weight prints the size in double brackets
    if weight.shape[0] < groups:
        return RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                            f"dimension 0, but got weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        return RuntimeError("Given groups=%d, expected weight to be divisible by %d at "
                            "dimension 0, but got weight of size [%s] instead"
                            % (groups, groups, list(weight.shape)))
    c = shape[-nd - 1]
    if transposed:
        if c != weight.shape[0]:
            return RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                                f"expected input{list(shape)} to have {weight.shape[0]} "
                                f"channels, but got {c} channels instead")
    elif c != weight.shape[1] * groups:
        return RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                            f"expected input{list(shape)} to have "
                            f"{weight.shape[1] * groups} channels, but got {c} channels "
                            "instead")
    out = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and tuple(bias.shape) != (out,):
        given = "transposed=1, weight" if transposed else "weight"
        return RuntimeError(f"Given {given} of size {list(weight.shape)}, expected bias to be "
                            f"1-dimensional with {out} elements, but got bias of size "
                            f"{list(bias.shape)} instead")
    return None


def dilation_error(shape, nd, dilation, transposed):
    """PyTorch's words for a zero dilation (XLA's would name its own convolution), or None:
    its kernels check it last. A transposed convolution's names each spatial dim; a plain
    one's is the batch-of-one kernel's check or, for a larger batch, another (a 1-d
    convolution runs as a 2-d one of height 1)."""
    if min(dilation) > 0:
        return None
    got = [1, *dilation] if nd == 1 else list(dilation)
    if transposed:
        # (a batch of several takes oneDNN's kernel on CPU, whose error names no argument)
        dims = ("depth", "height", "width")[-len(got):]
        return RuntimeError("dilation should be greater than zero, but got " + ", ".join(
            f"dilation_{dim}: {v}" for dim, v in zip(dims, got)))
    if shape[0] > 1:
        return RuntimeError("non-positive dilation is not supported")
    return RuntimeError(f"dilation should be greater than zero, but got {got}")
