"""Shape, layout and indexing ops: view/reshape, permutes, joins and splits, gather/scatter,
``x[idx]`` and ``x[idx] = v``.

None of these keep Tensors saved except index-taking ops, which keep their (integer)
indices: their backward needs only shapes.
"""
import builtins

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Size, Tensor
from .dispatch import Op, apply
from .registry import defop, register, to_tensor_like


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
        shape = shape[0]
    return tuple(int(s) for s in shape)


def _dim(d, ndim):
    return d + ndim if d < 0 else d


VIEW = defop("view", lambda x, shape: jnp.reshape(x, shape), "ViewBackward0", ())
RESHAPE = defop("reshape", lambda x, shape: jnp.reshape(x, shape), "ViewBackward0", ())
PERMUTE = defop("permute", lambda x, dims: jnp.transpose(x, dims), "PermuteBackward0", ())
TRANSPOSE = defop("transpose", lambda x, d0, d1: jnp.swapaxes(x, d0, d1), "TransposeBackward0",
                  ())
T = defop("t", lambda x: x.T, "TBackward0", ())
SQUEEZE = defop("squeeze", lambda x, dim: jnp.squeeze(x, dim), "SqueezeBackward0", ())
SQUEEZE_DIM = defop("squeeze_dim", lambda x, dim: jnp.squeeze(x, dim), "SqueezeBackward1", ())
UNSQUEEZE = defop("unsqueeze", lambda x, dim: jnp.expand_dims(x, dim), "UnsqueezeBackward0", ())
EXPAND = defop("expand", lambda x, shape: jnp.broadcast_to(x, shape), "ExpandBackward0", ())
REPEAT = defop("repeat", lambda x, reps: jnp.tile(x, reps), "RepeatBackward0", ())
FLIP = defop("flip", lambda x, dims: jnp.flip(x, dims), "FlipBackward0", ())
ROLL = defop("roll", lambda x, shifts, dims: jnp.roll(x, shifts, dims), "RollBackward0", ())
TRIL = defop("tril", lambda x, k: jnp.tril(x, k), "TrilBackward0", ())
TRIU = defop("triu", lambda x, k: jnp.triu(x, k), "TriuBackward0", ())
NARROW = defop("narrow", lambda x, dim, start, length: jax.lax.slice_in_dim(
    x, start, start + length, axis=dim), "SliceBackward0", ())
CLONE = defop("clone", lambda x: jnp.array(x, copy=True), "CloneBackward0", ())
ALIAS = defop("alias", lambda x: x, "AliasBackward0", ())
TO_DTYPE = defop("to_dtype", lambda x, dtype: x.astype(dtype), "ToCopyBackward0", ())
TO_DEVICE = defop("to_device", lambda x, device: jax.device_put(x, device), "ToCopyBackward0",
                  (), jit=False)
CAT = defop("cat", lambda *xs, dim: jnp.concatenate(xs, axis=dim), "CatBackward0", ())
STACK = defop("stack", lambda *xs, dim: jnp.stack(xs, axis=dim), "StackBackward0", ())
SPLIT = defop("split", lambda x, sections, dim: tuple(jnp.split(x, sections, axis=dim)),
              "SplitBackward0", ())
SPLIT_SIZES = defop("split_with_sizes", lambda x, sections, dim: tuple(
    jnp.split(x, sections, axis=dim)), "SplitWithSizesBackward0", ())
UNBIND = defop("unbind", lambda x, dim: tuple(jnp.moveaxis(x, dim, 0)), "UnbindBackward0", ())
GATHER = defop("gather", lambda x, idx, dim: jnp.take_along_axis(x, idx, axis=dim),
               "GatherBackward0", {0: (1,)})
INDEX_SELECT = defop("index_select", lambda x, idx, dim: jnp.take(x, idx, axis=dim),
                     "IndexSelectBackward0", {0: (1,)})
TAKE = defop("take", lambda x, idx: jnp.take(x.reshape(-1), idx), "TakeBackward0", {0: (1,)})


def _scatter_add(x, idx, src, dim):
    # positions along every other dim are those of idx itself
    grids = jnp.meshgrid(*[jnp.arange(s) for s in idx.shape], indexing="ij")
    grids[dim] = idx
    src = src[tuple(slice(0, s) for s in idx.shape)]
    return x.at[tuple(grids)].add(src)


def _scatter(x, idx, src, dim):
    grids = jnp.meshgrid(*[jnp.arange(s) for s in idx.shape], indexing="ij")
    grids[dim] = idx
    if jnp.ndim(src) == 0:
        return x.at[tuple(grids)].set(jnp.asarray(src, x.dtype))
    src = src[tuple(slice(0, s) for s in idx.shape)]
    return x.at[tuple(grids)].set(src)


SCATTER_ADD = defop("scatter_add", _scatter_add, "ScatterAddBackward0", {0: (), 2: (1,)})
SCATTER = defop("scatter", _scatter, "ScatterBackward0", {0: (1,), 2: (1,)})


def view(self, *shape):
    from .._dtype import as_dtype
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size)):
        return self.to(as_dtype(shape[0]))  # view(dtype)
    shape = _shape_arg(shape)
    if builtins.sum(1 for s in shape if s == -1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    return apply(VIEW, (self,), {"shape": shape})


def reshape(input, *shape):
    return apply(RESHAPE, (input,), {"shape": _shape_arg(shape)})


def view_as(self, other):
    return view(self, other.shape)


def reshape_as(self, other):
    return reshape(self, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    n = input.ndim
    if n == 0:
        return reshape(input, (1,))
    s, e = _dim(start_dim, n), _dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input.shape
    new = shp[:s] + (int(np.prod(shp[s:e + 1])),) + shp[e + 1:]
    return reshape(input, new)


def unflatten(input, dim, sizes):
    n = input.ndim
    d = _dim(dim, n)
    shp = input.shape
    return reshape(input, shp[:d] + tuple(sizes) + shp[d + 1:])


def permute(input, *dims):
    return apply(PERMUTE, (input,), {"dims": tuple(_dim(d, input.ndim) for d in _shape_arg(dims))})


def transpose(input, dim0, dim1):
    n = input.ndim
    return apply(TRANSPOSE, (input,), {"d0": _dim(dim0, n), "d1": _dim(dim1, n)})


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return apply(T, (input,))


def _T(self):
    return permute(self, tuple(range(self.ndim - 1, -1, -1)))


def _mT(self):
    return transpose(self, -2, -1)


def squeeze(input, dim=None):
    if dim is None:
        return apply(SQUEEZE, (input,), {"dim": None})
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = tuple(_dim(d, input.ndim) for d in dims if input.shape[d] == 1)
    return apply(SQUEEZE_DIM, (input,), {"dim": dims})


def unsqueeze(input, dim):
    return apply(UNSQUEEZE, (input,), {"dim": _dim(dim, input.ndim + 1)})


def expand(self, *sizes):
    sizes = _shape_arg(sizes)
    lead = len(sizes) - self.ndim
    full = tuple(self.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return apply(EXPAND, (self,), {"shape": full})


def expand_as(self, other):
    return expand(self, other.shape)


def broadcast_to(input, size):
    return expand(input, tuple(size))


def repeat(self, *sizes):
    return apply(REPEAT, (self,), {"reps": _shape_arg(sizes)})


def flip(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return apply(FLIP, (input,), {"dims": dims})


def roll(input, shifts, dims=None):
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else shifts
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else dims
    return apply(ROLL, (input,), {"shifts": shifts, "dims": dims})


def tril(input, diagonal=0):
    return apply(TRIL, (input,), {"k": diagonal})


def triu(input, diagonal=0):
    return apply(TRIU, (input,), {"k": diagonal})


def narrow(input, dim, start, length):
    d = _dim(dim, input.ndim)
    start = _dim(int(start), input.shape[d])
    return apply(NARROW, (input,), {"dim": d, "start": start, "length": int(length)})


def clone(input, *, memory_format=None):
    return apply(CLONE, (input,))


def cat(tensors, dim=0):
    tensors = [to_tensor_like(t) for t in tensors]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    return apply(CAT, tuple(tensors), {"dim": _dim(dim, tensors[0].ndim)})


def stack(tensors, dim=0):
    tensors = [to_tensor_like(t) for t in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    return apply(STACK, tuple(tensors), {"dim": _dim(dim, tensors[0].ndim + 1)})


def split(tensor, split_size_or_sections, dim=0):
    d = _dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        cuts = tuple(range(size, n, size))
        op = SPLIT
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
        cuts = tuple(np.cumsum(sizes)[:-1].tolist())
        op = SPLIT_SIZES
    out = apply(op, (tensor,), {"sections": cuts, "dim": d})
    return out if isinstance(out, tuple) else (out,)


def chunk(input, chunks, dim=0):
    n = input.shape[_dim(dim, input.ndim)]
    size = -(-n // chunks)
    return split(input, builtins.max(size, 1), dim)


def unbind(input, dim=0):
    out = apply(UNBIND, (input,), {"dim": _dim(dim, input.ndim)})
    return out if isinstance(out, tuple) else (out,)


def gather(input, dim, index, *, sparse_grad=False):
    return apply(GATHER, (input, index), {"dim": _dim(dim, input.ndim)})


def index_select(input, dim, index):
    return apply(INDEX_SELECT, (input, index), {"dim": _dim(dim, input.ndim)})


def take(input, index):
    return apply(TAKE, (input, index))


def scatter_add(input, dim, index, src):
    return apply(SCATTER_ADD, (input, index, src), {"dim": _dim(dim, input.ndim)})


def scatter(input, dim, index, src=None, value=None):
    src = value if src is None else src
    return apply(SCATTER, (input, index, to_tensor_like(src)), {"dim": _dim(dim, input.ndim)})


def _scatter_add_(self, dim, index, src):
    return apply(SCATTER_ADD, (self, index, src), {"dim": _dim(dim, self.ndim)}, out=self)


def _scatter_(self, dim, index, src=None, value=None):
    src = value if src is None else src
    return apply(SCATTER, (self, index, to_tensor_like(src)), {"dim": _dim(dim, self.ndim)},
                 out=self)


def contiguous(self, memory_format=None):
    return self


def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``."""
    from .. import _dtype
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, _dtype.dtype) or (isinstance(a, type) and a in (float, int, bool)):
            dtype = a
        elif isinstance(a, (str, _dtype.device)):
            device = a
        elif a is not None:
            dtype = a
    out = self
    if dtype is not None:
        jd = _dtype.to_jax(dtype)
        if jd != out._data.dtype:
            out = apply(TO_DTYPE, (out,), {"dtype": jd})
    if device is not None:
        dev = _dtype.device(device) if not isinstance(device, _dtype.device) else device
        if dev != out.device:
            out = apply(TO_DEVICE, (out,), {"device": _dtype.jax_device(dev)})
    return out


def _cast(dt):
    def method(self, memory_format=None):
        return to(self, dt)
    return method


def cpu(self):
    return to(self, "cpu")


def cuda(self, device=None, non_blocking=False):
    return to(self, "cuda" if device is None else device)


def nonzero(input, *, as_tuple=False):
    """Indices of non-zero elements (data-dependent shape: eager only)."""
    idx = np.nonzero(np.asarray(input._data))
    if as_tuple:
        return tuple(Tensor._wrap(jnp.asarray(i)) for i in idx)
    return Tensor._wrap(jnp.asarray(np.stack(idx, axis=1)))


def masked_select(input, mask):
    b = jnp.broadcast_shapes(input.shape, mask.shape)
    flat_mask = np.asarray(jnp.broadcast_to(mask._data, b)).reshape(-1)
    idx = Tensor._wrap(jnp.asarray(np.nonzero(flat_mask)[0]))
    return take(expand(input, b), idx)


# --------------------------------------------------------------------------- indexing


def _parse_index(idx):
    """Split an index into a hashable template and the integer-array leaves it uses."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    template = []
    arrays = []
    for k in idx:
        if isinstance(k, Tensor) or isinstance(k, (np.ndarray, jax.Array)) or (
                isinstance(k, list)):
            arr = k._data if isinstance(k, Tensor) else jnp.asarray(k)
            if arr.dtype == jnp.bool_:
                # boolean masks have data-dependent shapes: turn into integer indices eagerly
                if isinstance(arr, jax.core.Tracer):
                    raise RuntimeError("boolean-mask indexing has a data-dependent shape and "
                                       "cannot be traced; use hookgrad.where instead")
                for a in np.nonzero(np.asarray(arr)):
                    template.append(("A", len(arrays)))
                    arrays.append(Tensor._wrap(jnp.asarray(a)))
                continue
            template.append(("A", len(arrays)))
            arrays.append(k if isinstance(k, Tensor) else Tensor._wrap(arr))
        elif isinstance(k, slice):
            template.append(("S", _int_or_none(k.start), _int_or_none(k.stop),
                             _int_or_none(k.step)))
        elif k is None:
            template.append(("N",))
        elif k is Ellipsis:
            template.append(("E",))
        elif isinstance(k, (bool, np.bool_)):
            template.append(("B", bool(k)))
        else:
            template.append(("I", int(k)))
    return tuple(template), arrays


def _int_or_none(v):
    return None if v is None else int(v)


def _build_index(template, arrays):
    out = []
    for k in template:
        tag = k[0]
        if tag == "A":
            out.append(arrays[k[1]])
        elif tag == "S":
            out.append(slice(k[1], k[2], k[3]))
        elif tag == "N":
            out.append(None)
        elif tag == "E":
            out.append(Ellipsis)
        elif tag == "B":
            out.append(None if k[1] else np.zeros((0,), np.int32))
        else:
            out.append(k[1])
    return tuple(out)


def _getitem(x, *arrays, template):
    return x[_build_index(template, arrays)]


def _setitem(x, v, *arrays, template):
    return x.at[_build_index(template, arrays)].set(jnp.asarray(v, x.dtype))


def _index_node_name(template):
    if any(k[0] == "A" for k in template):
        return "IndexBackward0"
    basic = [k for k in template if k[0] in ("I", "S")]
    if not basic:
        return "AliasBackward0" if not any(k[0] == "N" for k in template) \
            else "UnsqueezeBackward0"
    return "SelectBackward0" if basic[-1][0] == "I" else "SliceBackward0"


_GETITEM = {}


def _getitem_op(name):
    op = _GETITEM.get(name)
    if op is None:
        op = _GETITEM[name] = Op("getitem", _getitem, name, {0: ()})
    return op


SETITEM = defop("setitem", _setitem, "CopySlices", {})
SETITEM_ADV = defop("index_put", _setitem, "IndexPutBackward0", {})


def __getitem__(self, idx):
    template, arrays = _parse_index(idx)
    return apply(_getitem_op(_index_node_name(template)), (self, *arrays), {"template": template})


def __setitem__(self, idx, value):
    template, arrays = _parse_index(idx)
    op = SETITEM_ADV if any(k[0] == "A" for k in template) else SETITEM
    apply(op, (self, to_tensor_like(value), *arrays), {"template": template}, out=self)


def index_put_(self, indices, values, accumulate=False):
    if accumulate:
        template, arrays = _parse_index(tuple(indices))
        return apply(INDEX_ADD, (self, to_tensor_like(values), *arrays), {"template": template},
                     out=self)
    __setitem__(self, tuple(indices), values)
    return self


INDEX_ADD = defop("index_put_acc", lambda x, v, *arrays, template: x.at[
    _build_index(template, arrays)].add(jnp.asarray(v, x.dtype)), "IndexPutBackward0", {})


def index_add(input, dim, index, source, *, alpha=1):
    d = _dim(dim, input.ndim)
    template = tuple([("S", None, None, None)] * d + [("A", 0)])
    src = source if alpha == 1 else source * alpha
    return apply(INDEX_ADD, (input, src, index), {"template": template})


for _f in (reshape, flatten, unflatten, permute, transpose, t, squeeze, unsqueeze, broadcast_to,
           flip, roll, tril, triu, narrow, clone, split, chunk, unbind, gather, index_select,
           take, scatter_add, scatter, nonzero, masked_select, index_add):
    register(_f)
for _f in (cat, stack):
    register(_f, method=False)
register(cat, "concat", method=False)
register(cat, "concatenate", method=False)
for _f in (view, view_as, reshape_as, expand, expand_as, repeat, contiguous, to, cpu, cuda,
           __getitem__, __setitem__, index_put_):
    register(_f, function=False)
register(transpose, "swapaxes")
register(_scatter_add_, "scatter_add_", function=False)
register(_scatter_, "scatter_", function=False)
for _name, _dt in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                   ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                   ("bool", "bool"), ("short", "int16"), ("byte", "uint8")):
    from .. import _dtype as _d
    register(_cast(getattr(_d, _dt)), _name, function=False)
TENSOR_PROPERTIES = {"T": _T, "mT": _mT}


def _inplace_tril(self, diagonal=0):
    return apply(TRIL, (self,), {"k": diagonal}, out=self)


def _inplace_triu(self, diagonal=0):
    return apply(TRIU, (self,), {"k": diagonal}, out=self)


register(_inplace_tril, "tril_", function=False)
register(_inplace_triu, "triu_", function=False)


def movedim(input, source, destination):
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    n = input.ndim
    perm = list(np.moveaxis(np.arange(n), [_dim(s, n) for s in src], [_dim(d, n) for d in dst]))
    return permute(input, tuple(int(p) for p in perm))


register(movedim)
register(movedim, "moveaxis")
