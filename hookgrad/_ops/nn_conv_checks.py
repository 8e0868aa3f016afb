"""PyTorch's argument errors of a convolution, worded as its kernels word them and raised in
their order: the weight against the input and ``groups``, the bias, the dilation, the
kernel against the padded input, a transposed convolution's output padding.
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


def shape_error(shape, weight, bias, nd, transposed, groups):
    """The error PyTorch's convolution kernel raises for an input of the batched ``shape``
    (what it names: an unbatched input has N=1 there) and ``bias``, or None."""
    if groups <= 0:
        return RuntimeError("non-positive groups is not supported")
    if weight.ndim != nd + 2:
        return RuntimeError("weight should have at least three dimensions" if nd == 1 else
                            f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional "
                            f"input {list(shape)}, but got {weight.ndim}-dimensional "
                            f"weight of size {list(weight.shape)} instead")
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


def dilation_error(input, nd, dilation):
    """PyTorch's words for a non-positive dilation (XLA's would name its own convolution):
    a negative one is refused first; a zero one by the batch-of-one kernel's check (a 1-d
    convolution runs as a 2-d one of height 1) or, for a larger batch, another."""
    if min(dilation) < 0:
        raise RuntimeError("dilation should be greater than zero")
    if input.ndim == nd + 2 and input.shape[0] > 1:
        raise RuntimeError("non-positive dilation is not supported")
    got = [1, *dilation] if nd == 1 else list(dilation)
    raise RuntimeError(f"dilation should be greater than zero, but got {got}")
