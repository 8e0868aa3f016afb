"""``hookgrad.func``: hookgrad Modules as pure functions of their parameters, for JAX.

::

    params = hookgrad.func.state(model)                 # {name: jax.Array}

    def loss_fn(params, x, y):
        out = hookgrad.func.functional_call(model, params, (x,))    # JAX arrays in and out
        return jnp.mean((out - y) ** 2)

    grads = jax.grad(loss_fn)(params, x, y)             # jax.jit / vmap / checkpoint too

Inside ``functional_call`` hookgrad keeps no tape: JAX differentiates. Hooks still run:
tensor hooks, Node pre-hooks, module full backward (pre-)hooks and multi-grad hooks are
``jax.custom_vjp`` boundaries whose backward calls them (see ``hookgrad._functional.hooks``);
forward hooks run as Python while the function runs (or is traced); saved-tensor hooks
pack in the forward and unpack in the backward of a per-op ``custom_vjp``.
"""
import contextlib

import jax
import jax.numpy as jnp
import numpy as np

from . import _mode
from ._random import GLOBAL as _KEY
from ._compile.host_hook import _flatten_containers
from ._tensor import Tensor
from ._functional import hooks as _fn
from ._functional import module as _fm
from ._functional import saved as _fs

__all__ = ["functional_call", "state", "load_state", "rng_key", "grad", "grad_and_value", "vjp",
           "vmap", "jacrev"]

_Tracer = jax.core.Tracer


def _is_array(v):
    return isinstance(v, (jax.Array, _Tracer, np.ndarray))


def _differentiated(x):
    """Whether ``x`` is being differentiated by an enclosing ``jax.grad``/``jax.vjp``/
    ``jax.jvp`` (an AD tracer at some level): such an argument requires grad, as the
    inputs that ``torch.func.grad`` differentiates do."""
    try:
        from jax._src.interpreters import ad, partial_eval as pe
    except ImportError:  # pragma: no cover - other JAX versions: arguments do not
        return False
    seen = 0
    stack = [x]
    while stack and seen < 16:
        v = stack.pop()
        seen += 1
        if not isinstance(v, _Tracer) or isinstance(v, pe.DynamicJaxprTracer):
            continue
        if isinstance(v, getattr(ad, "LinearizeTracer", ())):
            return True
        if isinstance(v, ad.JVPTracer):
            if not isinstance(v.tangent, ad.Zero):
                return True
            stack.append(v.primal)
            continue
        try:
            stack.extend(c for _, c in v._contents())
        except Exception:  # noqa: BLE001 - a tracer kind without _contents
            pass
    return False


def _arg_tensor(v):
    arr = jnp.asarray(v)
    t = Tensor._wrap(arr)
    if jnp.issubdtype(arr.dtype, jnp.inexact) and _differentiated(v):
        t._requires_grad = True
    return t


def _named_tensors(module):
    """name -> (owner module, kind, attribute) for every parameter and buffer, tied ones
    under each of their names."""
    out = {}
    for prefix, mod in module.named_modules(remove_duplicate=False):
        pre = prefix + "." if prefix else ""
        for n, p in mod._parameters.items():
            if p is not None:
                out[pre + n] = (mod, "_parameters", n, p)
        for n, b in mod._buffers.items():
            if b is not None:
                out[pre + n] = (mod, "_buffers", n, b)
    return out


def _merge_dicts(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(parameter_and_buffer_dicts)}")


def _untie(named, values):
    """Give every name tied to a given name the same value (PyTorch's tie_weights)."""
    by_obj = {}
    for name, (_, _, _, t) in named.items():
        by_obj.setdefault(id(t), []).append(name)
    out = dict(values)
    for names in by_obj.values():
        if len(names) < 2:
            continue
        given = [n for n in names if n in values]
        if not given:
            continue
        vals = {id(values[n]) for n in given}
        if len(vals) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
        for n in names:
            out[n] = values[given[0]]
    return out


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given values.

    ::

        functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                        tie_weights=True, strict=False)

    ``parameter_and_buffer_dicts``: a dict name -> value (or a tuple of dicts with distinct
    keys); values are JAX arrays or Tensors; names not given keep the module's values.
    ``args``: a tuple of positional arguments (anything else is one argument); JAX arrays
    among them become Tensors. The module's own attributes are restored afterwards; values
    the module writes in place to a given name are written back into the dict.

    When a value or an argument is a JAX array or tracer, the call runs in functional
    mode: no tape, JAX's AD differentiates, hooks are ``jax.custom_vjp`` boundaries. When
    values or arguments were JAX arrays, the result is returned with its Tensors as JAX
    arrays, so
    the call is a pure function for ``jax.grad``, ``jax.vjp``, ``jax.jit``, ``jax.vmap``
    and ``jax.checkpoint``. With Tensor values only it is an ordinary eager call (gradients
    flow to the given Tensors), as ``torch.func.functional_call``.

    ``tie_weights``: names tied in the module (one Parameter under two names) take the
    value given for either; different values for tied names raise ``ValueError``.
    ``strict``: the given names must be exactly the module's parameters and buffers.

    Example::

        >>> params = {k: v._data for k, v in model.named_parameters()}
        >>> def loss(params, x):
        ...     return functional_call(model, params, (x,)).sum()
        >>> grads = jax.grad(loss)(params, x)
    """
    values = _merge_dicts(parameter_and_buffer_dicts)
    named = _named_tensors(module)
    untied = _untie(named, values) if tie_weights else values
    if strict:
        _check_strict(module, named, untied)
    args, kwargs, wrapped_args = _tensor_args(args, kwargs)
    arrays_in = bool(wrapped_args) or any(_is_array(v) for v in values.values())
    functional = arrays_in or _mode.state.backend is not None or _traced(args, kwargs, values)
    key_before = _KEY.peek()
    swapped = []   # (owner, kind, attr, original)
    try:
        given_for, new_of = _swap_in(named, untied, functional, tie_weights, swapped)
        if functional:
            out = _run_functional(module, args, kwargs, named, given_for, new_of, wrapped_args)
        else:
            out = module(*args, **kwargs)
        _write_back(values, named, given_for)
    finally:
        _swap_out(swapped, key_before)
    if arrays_in:
        return _to_arrays(out)
    return out


def _check_strict(module, named, untied):
    missing = sorted(set(named) - set(untied))
    unexpected = sorted(set(untied) - set(named))
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
            module._get_name(), "\n\t".join(msgs)))


def _tensor_args(args, kwargs):
    """``args``/``kwargs`` with JAX arrays as Tensors, and the Tensors made from them."""
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    leaves, rebuild = _flatten_containers((args, kwargs))
    was_array = [_is_array(v) for v in leaves]
    leaves = [_arg_tensor(v) if was else v for v, was in zip(leaves, was_array)]
    wrapped = [v for v, was in zip(leaves, was_array) if was]
    args, kwargs = rebuild(leaves)
    return args, kwargs, wrapped


def _traced(args, kwargs, values):
    """Whether an argument or a value is being traced by JAX (so JAX differentiates)."""
    leaves = _flatten_containers((args, kwargs))[0]
    return any(isinstance(v, Tensor) and isinstance(v._data, _Tracer) for v in leaves) or any(
        _is_array(v) and isinstance(v, _Tracer) or isinstance(v, Tensor)
        and isinstance(v._data, _Tracer) for v in values.values())


def _swap_in(named, untied, functional, tie_weights, swapped):
    """Put the given values into the module: one new object per original tensor (tied
    names share it). Returns {name: new tensor} and {id(original) or name: new tensor}."""
    new_of = {}
    given_for = {}
    for name, v in untied.items():
        if name not in named:
            continue  # allowed when not strict, as PyTorch
        owner, kind, attr, orig = named[name]
        if not functional and isinstance(v, Tensor):
            new = v
        else:
            k = id(orig) if tie_weights else name
            new = new_of.get(k)
            if new is None:
                new = new_of[k] = _substitute(orig, v, functional)
        swapped.append((owner, kind, attr, orig))
        getattr(owner, kind)[attr] = new
        given_for[name] = new
    return given_for, new_of


def _run_functional(module, args, kwargs, named, given_for, new_of, wrapped_args):
    """The module call in functional mode, inside the marks that open and close the
    graph task of JAX's backward; hooks registered on a Parameter eagerly keep firing."""
    subs = {id(t): t for t in new_of.values()}
    _fm.mark_backward_end(list(subs.values()) + wrapped_args)
    for name, new in given_for.items():
        orig = named[name][3]
        if id(new) in subs and orig._backward_hooks:
            _fn.attach_eager_hooks(new, orig._backward_hooks)
            subs.pop(id(new))
    _fs.open_scope()
    try:
        with _mode.functional_mode():
            out = module(*args, **kwargs)
    finally:
        late = _fs.close_scope()
    outs = [v for v in _flatten_containers(out)[0] if isinstance(v, Tensor)]
    _fs.hand_on(outs, late)
    _fm.mark_backward_begin(outs)
    return out


def _write_back(values, named, given_for):
    """In-place writes of the module reach the caller's dict, as in PyTorch."""
    for name, v in values.items():
        if name not in named or name not in given_for:
            continue
        owner, kind, attr, _ = named[name]
        now = getattr(owner, kind).get(attr)
        before = given_for[name]
        if now is None or (now is before and now._version == 0) or now is v:
            continue
        if isinstance(v, Tensor):
            v._write_(now._data)
        else:
            values[name] = now._data


def _swap_out(swapped, key_before):
    """Restore the module's own tensors, and keep no tracer in the global PRNG key."""
    for owner, kind, attr, orig in reversed(swapped):
        getattr(owner, kind)[attr] = orig
    key_now = _KEY.peek()
    if isinstance(key_now, _Tracer) and key_now is not key_before and not _in_rng_block():
        # random ops drew from the global key inside a JAX trace: keep no tracer in
        # global state (pass keys with ``hookgrad.func.rng_key`` to vary them per call)
        _KEY.set(key_before)
    for owner, kind, attr, orig in swapped:
        if "_fhooks" in orig.__dict__:
            del orig._fhooks


def _substitute(orig, v, functional):
    arr = v._data if isinstance(v, Tensor) else jnp.asarray(v)
    new = type(orig)._wrap(arr)
    new._requires_grad = orig._requires_grad if not isinstance(v, Tensor) else \
        (v._requires_grad or orig._requires_grad)
    for k in ("persistent", "_is_buffer"):
        if k in orig.__dict__:
            new.__dict__[k] = orig.__dict__[k]
    return new


def _to_arrays(out):
    leaves, rebuild = _flatten_containers(out)
    return rebuild([v._data if isinstance(v, Tensor) else v for v in leaves])


# --------------------------------------------------------------------------- randomness

_rng_depth = [0]


def _in_rng_block():
    return _rng_depth[0] > 0


@contextlib.contextmanager
def rng_key(key):
    """Use ``key`` (a JAX PRNG key, possibly traced) as hookgrad's global key in the block.

    ::

        @jax.jit
        def loss(params, x, key):
            with hookgrad.func.rng_key(key):
                return functional_call(model, params, (x,)).sum()   # dropout uses key

    Random ops (dropout, ``hookgrad.rand``) draw from the global key; inside a JAX
    transformation that key would be a trace-time constant. The previous key is restored
    on exit.
    """
    if not hasattr(key, "dtype") or not jax.dtypes.issubdtype(key.dtype,
                                                              jax.dtypes.prng_key):
        key = jax.random.wrap_key_data(key) if getattr(key, "dtype", None) == jnp.uint32 \
            else jax.random.key(key)
    _rng_depth[0] += 1
    try:
        with _KEY.swapped(key):
            yield
    finally:
        _rng_depth[0] -= 1


# --------------------------------------------------------------------------- state


def state(module, *, buffers=True):
    """The module's parameters (and buffers) as a dict name -> JAX array, in
    ``named_parameters()`` then ``named_buffers()`` order: the tree to pass to
    :func:`functional_call`, ``jax.grad`` and optax."""
    out = {k: v._data for k, v in module.named_parameters()}
    if buffers:
        out.update((k, v._data) for k, v in module.named_buffers())
    return out


def load_state(module, tree, *, strict=True):
    """Write a dict name -> array (e.g. updated by optax) into the module's parameters and
    buffers, in place (versions bumped)."""
    named = _named_tensors(module)
    unexpected = sorted(set(tree) - set(named))
    if strict and unexpected:
        raise RuntimeError(f"Unexpected key(s) in state: {', '.join(map(repr, unexpected))}.")
    for name, v in tree.items():
        if name in named:
            t = named[name][3]
            arr = v._data if isinstance(v, Tensor) else jnp.asarray(v)
            if arr.shape != t._data.shape:
                raise RuntimeError(f"size mismatch for {name}: copying a param with shape "
                                   f"{tuple(arr.shape)}, the shape in current model is "
                                   f"{tuple(t._data.shape)}.")
            t._write_(arr.astype(t._data.dtype))


# --------------------------------------------------------------------------- transforms


def _arrays(x):
    leaves, rebuild = _flatten_containers(x)
    return rebuild([v._data if isinstance(v, Tensor) else v for v in leaves])


def _as_array_fn(fn):
    def f(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, tuple) and len(out) == 2:
            return _arrays(out[0]), _arrays(out[1])
        return _arrays(out)
    return f


def grad(func, argnums=0, has_aux=False):
    """``jax.grad`` of ``func`` whose output may be a 0-d Tensor (arrays in, arrays out)."""
    return jax.grad(_as_array_fn(func), argnums=argnums, has_aux=has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    """``(grad, value)`` as ``torch.func.grad_and_value`` (``jax.value_and_grad`` swapped)."""
    vg = jax.value_and_grad(_as_array_fn(func), argnums=argnums, has_aux=has_aux)

    def f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return g, value
    return f


def vjp(func, *primals, has_aux=False):
    """``jax.vjp`` of ``func`` (Tensors in its output become arrays)."""
    return jax.vjp(_as_array_fn(func), *primals, has_aux=has_aux)


def jacrev(func, argnums=0, has_aux=False):
    """``jax.jacrev`` of ``func`` (Tensors in its output become arrays)."""
    return jax.jacrev(_as_array_fn(func), argnums=argnums, has_aux=has_aux)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``jax.vmap`` with ``torch.func.vmap``'s argument names (Tensors in the output become
    arrays). ``randomness`` and ``chunk_size`` are accepted for compatibility."""
    return jax.vmap(_as_array_fn(func), in_axes=in_dims, out_axes=out_dims)


from . import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
