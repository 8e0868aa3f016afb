"""``torch.masked``'s reductions and normalizations over strided Tensors with a ``mask``.

Each one fills the masked-out elements with the identity of its reduction (0 for ``sum``,
1 for ``prod``, -inf for ``amax``, NaN for ``median`` ...) and runs the ordinary op, so a
fully masked slice gives that identity (``mean``, ``var`` and ``std`` count the elements
and give NaN there). Gradients flow to the masked-in elements only, through the ordinary
ops' nodes, as PyTorch's do.
"""
import builtins

import hookgrad as _t
from hookgrad import _errors

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "norm", "var", "std", "logsumexp", "logaddexp", "softmax", "log_softmax",
           "softmin", "normalize"]

_PROMOTED = ("uint8", "bool", "int8", "int16", "int32")


def _reduction_identity(op_name, input, *args):
    """The value that leaves ``op_name``'s reduction unchanged, as a 0-dim Tensor of
    ``input``'s dtype; None where there is none (``mean``, ``var``, ``std``)."""
    dtype = input.dtype
    op_name = op_name.rsplit(".", 1)[-1]
    is_float, is_int = _t.is_floating_point(input), _t.is_signed(input) or dtype == _t.uint8
    if op_name in ("sum", "cumsum"):
        return _t.tensor(0, dtype=dtype)
    if op_name in ("prod", "cumprod"):
        return _t.tensor(1, dtype=dtype)
    if op_name in ("amax", "argmax", "logaddexp", "logsumexp"):
        if is_float:
            return _t.tensor(-float("inf"), dtype=dtype)
        if op_name == "logsumexp" and _t.is_complex(input):
            return _t.tensor(complex(-float("inf"), 0), dtype=dtype)
        if is_int:
            return _t.tensor(_t.iinfo(dtype).min, dtype=dtype)
    elif op_name in ("amin", "argmin"):
        if is_float:
            return _t.tensor(float("inf"), dtype=dtype)
        if is_int:
            return _t.tensor(_t.iinfo(dtype).max, dtype=dtype)
    elif op_name in ("mean", "var", "std"):
        return None
    elif op_name == "norm":
        if (args[0] if args else 2) == -float("inf"):
            if not is_float:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return _t.tensor(float("inf"), dtype=dtype)
        return _t.tensor(0, dtype=dtype)
    elif op_name == "median":
        return _t.tensor(float("nan"), dtype=dtype if is_float else _t.float32)
    raise NotImplementedError(f"identity of {op_name} on {dtype} input")


def _canonical_dim(dim, ndim):
    """``dim`` as a sorted tuple of non-negative dims (None and ``()`` mean all)."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise _errors.dim_out_of_range(d, ndim)
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, *args, **kwargs):
    """``mask`` broadcast to ``input``'s shape, as bool."""
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = _t.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=_t.bool)


def _where(mask, input, fill_value):
    return _t.where(mask, input, fill_value)


def _combine_input_and_mask(op, input, mask, *args):
    """``input`` with its masked-out elements replaced by ``op``'s identity."""
    if mask is None:
        return input
    return _where(_input_mask(input, mask=mask), input,
                  _reduction_identity(op.__name__, input, *args))


def _promoted(input, dtype):
    if dtype is not None:
        return dtype
    return _t.int64 if str(input.dtype).rsplit(".", 1)[-1] in _PROMOTED else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the sum of the elements of ``input`` along ``dim`` that ``mask`` keeps;
    a fully masked slice sums to 0. Integer inputs sum as int64 unless ``dtype`` is given."""
    dtype = _promoted(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    return _t.sum(_combine_input_and_mask(sum, input, mask), dim_, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the product of the elements of ``input`` along ``dim`` that ``mask`` keeps;
    a fully masked slice gives 1."""
    dtype = _promoted(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    result = _combine_input_and_mask(prod, input, mask).to(dtype=dtype)
    for d in reversed(dim_):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    """Returns the cumulative sum of ``input`` along ``dim``, masked-out elements counting
    as 0."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return _t.cumsum(_combine_input_and_mask(sum, input, mask), dim_, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Returns the cumulative product of ``input`` along ``dim``, masked-out elements
    counting as 1."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return _t.cumprod(_combine_input_and_mask(prod, input, mask), dim_, dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the maximum of the elements of ``input`` along ``dim`` that ``mask`` keeps;
    a fully masked slice gives -inf (the dtype's minimum for integers)."""
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine_input_and_mask(amax, input, mask)
    dim_ = _canonical_dim(dim, mask_input.ndim)
    return _t.amax(mask_input, dim_, bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the minimum of the elements of ``input`` along ``dim`` that ``mask`` keeps;
    a fully masked slice gives inf (the dtype's maximum for integers)."""
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine_input_and_mask(amin, input, mask)
    dim_ = _canonical_dim(dim, mask_input.ndim)
    return _t.amin(mask_input, dim_, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the index of the maximum among the elements ``mask`` keeps, in ``dtype``
    (``input``'s by default)."""
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine_input_and_mask(argmax, input, mask)
    return _t.argmax(mask_input, dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the index of the minimum among the elements ``mask`` keeps, in ``dtype``
    (``input``'s by default)."""
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine_input_and_mask(argmin, input, mask)
    return _t.argmin(mask_input, dim, bool(keepdim)).to(dtype=dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the mean of the elements of ``input`` along ``dim`` that ``mask`` keeps;
    a fully masked slice gives NaN. The dtype must be floating point or complex."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    count, total, _ = _count_and_sum(input, dim, keepdim, dtype, mask)
    return total / count


def _count_and_sum(input, dim, keepdim, dtype, mask):
    """How many elements ``mask`` keeps along ``dim``, their sum, and the canonical mask."""
    if mask is None:
        count = sum(_t.ones(input.shape, dtype=_t.int64), dim, keepdim=keepdim)
        return count, sum(input, dim, keepdim=keepdim, dtype=dtype), None
    inmask = _input_mask(input, mask=mask)
    return (inmask.sum(dim=dim, keepdim=bool(keepdim)),
            sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask), inmask)


def _nanmedian(input, dim, keepdim):
    # the lower median of the non-NaN values along dim (NaN where all are NaN): sorting puts
    # NaNs last, and the gradient reaches the chosen element through sort and gather
    if input.ndim == 0:
        return input
    ordered = _t.sort(input, dim).values
    count = (~_t.isnan(input)).sum(dim=dim, keepdim=True)
    index = _t.clamp((count - 1) // 2, min=0)
    out = _t.gather(ordered, dim, index)
    return out if keepdim else out.squeeze(dim)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Returns the (lower) median of the elements of ``input`` along ``dim`` that ``mask``
    keeps; a fully masked slice gives NaN (an error for integer inputs)."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    is_float = _t.is_floating_point(input)
    if not is_float:
        input = input.to(dtype=_t.float32)
    output = _nanmedian(_combine_input_and_mask(median, input, mask), dim_, keepdim)
    if is_float:
        return output
    if not _t.isnan(output).any():
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not "
                     "floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns ``log(sum(exp(x)))`` over the elements of ``input`` along ``dim`` that
    ``mask`` keeps; a fully masked slice gives -inf."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)
    mask_input = _combine_input_and_mask(logsumexp, input, mask)
    return _t.logsumexp(mask_input, dim_, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """Returns ``log(exp(input) + exp(other))`` where masked-out elements of either count
    as -inf."""
    dtype = input.dtype if dtype is None else dtype
    return _t.logaddexp(_combine_input_and_mask(logaddexp, input, input_mask),
                        _combine_input_and_mask(logaddexp, other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Returns the vector ``ord``-norm of the elements of ``input`` along ``dim`` that
    ``mask`` keeps; a fully masked slice gives 0 (inf for ``ord=-inf``)."""
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine_input_and_mask(norm, input, mask, ord)
    return _t.linalg.vector_norm(mask_input, ord, _canonical_dim(dim, input.ndim),
                                 bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, *, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _t.float32
    compute_dtype = dtype
    if not (compute_dtype.is_floating_point or compute_dtype.is_complex):
        compute_dtype = _t.float32
    count, sample_total, inmask = _count_and_sum(input, dim, True, dtype, mask)
    x = _t.subtract(input, _t.divide(sample_total, count))
    squares = x * x.conj() if x.is_complex() else x * x
    total = sum(squares, dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        real = _t.float32 if compute_dtype == _t.complex64 else (
            _t.float64 if compute_dtype == _t.complex128 else compute_dtype)
        count = _t.subtract(count.to(real), correction)
        count = _t.maximum(count, count.new_zeros([]))
    output = _t.divide(total, count).to(dtype=dtype)
    return _t.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Returns the variance of the elements of ``input`` along ``dim`` that ``mask`` keeps,
    divided by ``count - correction`` (``correction`` 1 by default, or 0 with
    ``unbiased=False``); a fully masked slice gives NaN."""
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim,
                    dtype=dtype, mask=mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Returns the standard deviation of the elements of ``input`` along ``dim`` that
    ``mask`` keeps (the square root of :func:`var`)."""
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim,
                    dtype=dtype, mask=mask, take_sqrt=True)


def softmax(input, dim, *, dtype=None, mask=None):
    """Returns the softmax of ``input`` along ``dim`` over the elements ``mask`` keeps;
    masked-out elements get 0 (a fully masked slice gives NaN)."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return _t.nn.functional.softmax(_combine_input_and_mask(amax, input, mask), dim_,
                                    dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Returns the log-softmax of ``input`` along ``dim`` over the elements ``mask`` keeps;
    masked-out elements get -inf."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return _t.nn.functional.log_softmax(_combine_input_and_mask(amax, input, mask), dim_,
                                        dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """Returns the softmin of ``input`` along ``dim`` over the elements ``mask`` keeps;
    masked-out elements get 0."""
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return _t.nn.functional.softmin(_combine_input_and_mask(amin, input, mask), dim_,
                                    dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """Returns ``input`` divided by its masked ``ord``-norm along ``dim`` (at least
    ``eps``); masked-out elements get 0."""
    dtype = input.dtype if dtype is None else dtype
    mask_input = _combine_input_and_mask(sum, input, mask)
    nrm_ = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _t.divide(mask_input, _t.maximum(nrm_, nrm_.new_full([], eps)))
