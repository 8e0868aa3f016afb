"""``hookgrad.library``: custom operators with registered backward formulas.

Mirrors ``torch.library.custom_op``. The implementation is a function of Tensors that
JAX can trace (hookgrad ops, or ``jnp`` on ``t._data``). Called on Tensors, the op runs
as an ``autograd.Function`` named ``GeneratedBackwardFor_<ns>_<name>_defaultBackward``
whose backward is the registered formula; in functional mode, or called directly on
JAX arrays, it is a ``jax.custom_vjp`` with that formula, so ``jax.grad``/``jax.jit``/
``jax.vmap`` of code using the op use it too::

    >>> @hookgrad.library.custom_op("mylib::mysin", mutates_args=())
    ... def mysin(x: hookgrad.Tensor) -> hookgrad.Tensor:
    ...     return x.sin()
    >>> def setup_context(ctx, inputs, output):
    ...     ctx.save_for_backward(inputs[0])
    >>> def backward(ctx, grad):
    ...     x, = ctx.saved_tensors
    ...     return grad * x.cos()
    >>> mysin.register_autograd(backward, setup_context=setup_context)
    >>> jax.grad(lambda a: mysin(a).sum())(jnp.ones(3))   # works on raw arrays too
"""
import contextlib
import inspect

import jax

from . import _mode
from ._custom_op.schema import infer_schema, parse_schema
from ._tensor import Tensor
from ._autograd import grad_mode
from ._engine.function import Function
from ._ops.stages import modes as _modes

__all__ = ["custom_op", "CustomOpDef", "infer_schema", "Library", "define", "impl",
           "register_autograd", "register_fake", "register_kernel"]

OPDEFS = {}
# a CustomOpDef's ``torch.ops.<ns>.<name>.default`` (hookgrad.ops, above, fills the slot)
OVERLOAD_OF = [None]


def _split_name(name):
    parts = name.split("::")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"custom_op(name='{name}'): expected the name to look like "
                         "'{namespace}::{name}', e.g. 'mylib::my_linear'")
    return parts[0], parts[1]


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wrap ``fn`` into a custom operator named ``"namespace::name"``.

    ``fn`` takes and returns Tensors (and the scalar/list types of PyTorch's schemas),
    with type annotations from which the schema is inferred (or give ``schema``).
    ``mutates_args`` names the Tensor arguments ``fn`` modifies in place (or
    ``"unknown"``). ``device_types`` restricts the implementation to those device types.
    Usable as ``@custom_op(name, mutates_args=())`` or ``custom_op(name, fn, ...)``.
    Returns a :class:`CustomOpDef`.
    """
    def inner(fn):
        ns, opname = _split_name(name)
        if schema is None:
            sch = infer_schema(fn, mutates_args=mutates_args, op_name=opname)
        else:
            sch = parse_schema(schema, opname)
            expected = {a.name for a in sch.args if a.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}which "
                    "is different from what was provided to us in `mutates_args`. Please make "
                    "these consistent.")
        if any(a.kwarg_only and a.is_tensor_like() for a in sch.args):
            raise NotImplementedError("custom_op with kwarg-only Tensor args. Please make your "
                                      f"tensors not kwarg-only. Got: {sch}")
        result = CustomOpDef(ns, opname, sch, fn)
        result.register_kernel(device_types)(fn)
        return result

    if fn is None:
        return inner
    return inner(fn)


class _Meta:
    """The non-Tensor last argument of the generated Function: list structure of the
    inputs, keyword-only arguments, and (filled by forward) that of the outputs."""

    __slots__ = ("spec", "kwargs", "out_spec")

    def __init__(self, spec, kwargs):
        self.spec, self.kwargs, self.out_spec = spec, kwargs, None


def _unflatten(flat, spec):
    out, i = [], 0
    for n in spec:
        if n is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + n]))
            i += n
    return tuple(out)


def _flatten_out(result):
    """Output -> (flat tuple, spec): spec None for a single value, else per element
    None or a list length; 'list' for a top-level list of Tensors."""
    if isinstance(result, list):
        return tuple(result), "list"
    if isinstance(result, tuple):
        flat, spec = [], []
        for r in result:
            if isinstance(r, list):
                spec.append(len(r))
                flat.extend(r)
            else:
                spec.append(None)
                flat.append(r)
        return tuple(flat), tuple(spec)
    return (result,), None


def _unflatten_out(flat, spec):
    if spec is None:
        return flat[0]
    if spec == "list":
        return list(flat)
    return _unflatten(flat, spec)


class CustomOpDef:
    """A custom operator made by :func:`custom_op`; call it like a function."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name, self._schema = namespace, name, schema
        self._init_fn = fn
        self._sig = inspect.signature(fn)
        self._backend_fns = {}
        self._autocast_fns = {}  # dispatch key -> kernel, from Library.impl
        self._disabled_kernel = set()
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._autograd_cls = self._make_function()
        OPDEFS[self._qualname] = self
        self.__name__ = name
        self.__doc__ = fn.__doc__

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    @property
    def _opname(self):
        return f"{self._namespace}.{self._name}.default"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # ---- registration
    def register_kernel(self, device_types, fn=None, /):
        """Register ``fn`` as the implementation for ``device_types`` (``"cpu"``,
        ``"cuda"``, ``"tpu"``, a list of them, or None for every device). Usable as a
        decorator. The device of the first Tensor argument picks the kernel."""
        def inner(fn):
            kinds = [device_types] if device_types is None or isinstance(device_types, str) \
                else list(device_types)
            for k in kinds:
                self._backend_fns[k] = fn
            return fn
        if fn is None:
            return inner
        return inner(fn)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Within the context, the kernel registered for ``device_type`` is disabled
        (``enabled=False``: the op's default implementation runs) or re-enabled."""
        was_disabled = device_type in self._disabled_kernel
        if enabled:
            self._disabled_kernel.discard(device_type)
        else:
            self._disabled_kernel.add(device_type)
        try:
            yield
        finally:
            if was_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    def register_fake(self, fn, /):
        """Register a shape-only implementation. hookgrad never needs one (JAX traces
        the real implementation abstractly), so it is only kept; returns ``fn``."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Register ``backward(ctx, *grads)`` (one gradient per input) and optionally
        ``setup_context(ctx, inputs, output)`` (``setup_context(ctx, inputs,
        keyword_only_inputs, output)`` when the op has keyword-only arguments), with
        the semantics of ``autograd.Function``."""
        if not self._schema.is_functional():
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                               f"{self} with schema {self._schema}. Please create a functional "
                               "operator and register an autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    # ---- calling
    def _kernel(self, tensors):
        dev = tensors[0].device.type if tensors else None
        if dev in self._disabled_kernel:
            return self._init_fn
        fn = self._backend_fns.get(dev)
        if fn is None:
            fn = self._backend_fns.get(None)
        if fn is None:
            raise NotImplementedError(f"{self._qualname}: no kernel is registered for device "
                                      f"type '{dev}' (registered: "
                                      f"{sorted(k for k in self._backend_fns if k)})")
        return fn

    def _make_function(self):
        op = self

        def forward(ctx, *args):
            meta = ctx._hg_meta = args[-1]
            inputs = _unflatten(args[:-1], meta.spec)
            result = op._run_kernel(inputs, meta.kwargs)
            if op._setup_context_fn is not None:
                if any(a.kwarg_only for a in op._schema.args):
                    op._setup_context_fn(ctx=ctx, inputs=inputs,
                                         keyword_only_inputs=meta.kwargs, output=result)
                else:
                    op._setup_context_fn(ctx=ctx, inputs=inputs, output=result)
            flat, meta.out_spec = _flatten_out(result)
            return flat if meta.out_spec is not None else flat[0]

        def backward(ctx, *grads):
            if op._backward_fn is None:
                raise RuntimeError(f"Trying to backward through {op._opname} but no autograd "
                                   "formula was registered. Please use register_autograd to "
                                   "add one.")
            meta = ctx._hg_meta
            spec = meta.spec
            prev = ctx.needs_input_grad
            needs = prev[:-1]
            if any(n is not None for n in spec):
                needs = _unflatten(needs, spec)
            ctx.needs_input_grad = needs
            try:
                out_spec = meta.out_spec
                if out_spec not in (None, "list") and any(n is not None for n in out_spec):
                    grads = _unflatten(grads, out_spec)
                elif out_spec == "list":
                    grads = (list(grads),)
                result = op._backward_fn(ctx, *grads)
            finally:
                ctx.needs_input_grad = prev
            if not isinstance(result, tuple):
                result = (result,)
            if any(n is not None for n in spec):
                result = _flatten_grads(result, spec)
            return (*result, None)

        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
        cls = type(name, (Function,), {"forward": staticmethod(forward),
                                       "backward": staticmethod(backward)})
        return cls

    def __call__(self, *args, **kwargs):
        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()
        pos, kw = tuple(bound.args), dict(bound.kwargs)
        if _has_arrays(pos):
            if self._schema.is_mutable():
                raise RuntimeError(f"{self}: an operator that mutates its arguments cannot be "
                                   "called on JAX arrays (they are immutable); pass Tensors")
            pos = _map(lambda a: Tensor._wrap(a) if isinstance(a, jax.Array) else a, pos)
            with _mode.functional_mode():
                out = self._dispatch(pos, kw)
            return _map(lambda t: t._data if isinstance(t, Tensor) else t, out)
        return self._dispatch(pos, kw)

    def _dispatch(self, pos, kw):
        tensors = _tensors(pos)
        if self._schema.is_mutable():
            return self._call_mutating(tensors, pos, kw)
        if _mode.state.backend is not None or (grad_mode._state.enabled
                                      and any(t._requires_grad for t in tensors)):
            spec = _spec(pos)
            flat = [x for a, n in zip(pos, spec) for x in (a if n is not None else (a,))]
            meta = _Meta(spec, kw)
            out = self._autograd_cls.apply(*flat, meta)
            flat_out = out if isinstance(out, tuple) else (out,)
            return _unflatten_out(flat_out, meta.out_spec)
        with grad_mode.no_grad():
            return self._run_kernel(pos, kw)

    def _run_kernel(self, pos, kw):
        """The kernel on ``pos``/``kw``, below autograd: an entered dispatch mode sees it
        as ``torch.ops.<ns>.<name>.default``."""
        if _modes.MODES:
            return _modes.to_innermost(OVERLOAD_OF[0](self), pos, kw)
        return self._kernel(_tensors(pos))(*pos, **kw)

    def _call_mutating(self, tensors, pos, kw):
        before = [(t, t._data, t._version) for t in tensors]
        with grad_mode.no_grad():
            out = self._kernel(tensors)(*pos, **kw)
        # PyTorch bumps the version of mutated arguments; the kernel's own in-place ops
        # already did unless it replaced the data directly
        for t, data, version in before:
            if t._data is not data and t._version == version:
                t._version += 1
        return out


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as the custom op ``op``'s implementation for ``device_types``,
    as :meth:`CustomOpDef.register_kernel`; usable as a decorator."""
    return _lookup(op, "register_kernel").register_kernel(device_types, func)


def _spec(pos):
    return tuple(len(a) if isinstance(a, list) and a and all(isinstance(x, Tensor) or x is None
                                                              for x in a) else None for a in pos)


def _flatten_grads(result, spec):
    if len(result) != len(spec):
        raise RuntimeError("Expected the return from backward to be of the same structure as "
                           f"the inputs. Got: {len(result)} gradients (return from backward), "
                           f"{len(spec)} inputs")
    flat = []
    for g, n in zip(result, spec):
        if n is None:
            flat.append(g)
            continue
        if g is None:
            g = [None] * n
        if not isinstance(g, (list, tuple)) or len(g) != n:
            raise RuntimeError("Expected the return from backward to be of the same structure "
                               f"as the inputs. Got: {type(g).__name__} for a list of {n} "
                               "Tensors (return from backward)")
        flat.extend(g)
    return tuple(flat)


def _tensors(args):
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, Tensor))
    return out


def _has_arrays(args):
    for a in args:
        if isinstance(a, jax.Array):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(x, jax.Array) for x in a):
            return True
    return False


def _map(fn, x):
    if isinstance(x, tuple):
        return tuple(_map(fn, v) for v in x)
    if isinstance(x, list):
        return [_map(fn, v) for v in x]
    return fn(x)


# ---- registration by name: torch.library.Library, define, impl, register_*

_KERNEL_KEYS = {"CPU": "cpu", "CUDA": "cuda", "XLA": "tpu", "CompositeExplicitAutograd": None,
                "CompositeImplicitAutograd": None, "": None}


def _lookup(op, api, missing=AttributeError):
    """The CustomOpDef for ``op``: a CustomOpDef, an OpOverload(Packet) of ``torch.ops`` or
    a ``"ns::name"`` (when undefined: ``missing``, the error PyTorch's ``api`` gives)."""
    if isinstance(op, CustomOpDef):
        return op
    if not isinstance(op, str):
        if isinstance(getattr(op, "_op", None), CustomOpDef):
            return op._op
        raise ValueError(f"{api}({op}): expected op to be a string, OpOverload or "
                         f"CustomOpDef, got {type(op).__name__}")
    ns, name = _split_name(op.split(".")[0] if "." in op.split("::")[-1] else op)
    opdef = OPDEFS.get(f"{ns}::{name}")
    if opdef is None:
        if missing is RuntimeError:
            raise RuntimeError(f"operator {ns}::{name} does not exist")
        raise AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{name}'")
    return opdef


class Library:
    """A library of operators in namespace ``ns``, to define new ones (``kind="DEF"`` or
    ``"FRAGMENT"``) or register implementations of existing ones (``"IMPL"``), for
    ``dispatch_key`` when given (``"CPU"``, ``"CUDA"``, ``"Meta"``, ...).

    hookgrad dispatches on the device of the first Tensor argument only: ``"CPU"``,
    ``"CUDA"`` and ``"XLA"`` kernels are its device kernels, the ``Composite*`` keys the
    kernel for every device; ``"Meta"`` kernels are shape functions (kept, as
    :meth:`CustomOpDef.register_fake` keeps them) and ``Autocast*`` kernels are kept for
    autocast.
    """

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in ("prim", "prims", "aten", "at", "torch", "pytorch") and kind != "IMPL":
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library "
                             "with another name.")
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defined = []  # "ns::name" of the operators it defined

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define the operator ``schema`` (``"name(Tensor x) -> Tensor"``) in this
        library's namespace, without an implementation (add one with :meth:`impl`).
        Returns its name."""
        name, sep, rest = schema.partition("(")
        if not sep or not name.strip():
            raise RuntimeError(f"Expected a schema like 'name(Tensor x) -> Tensor', got "
                               f"{schema!r}")
        name = name.strip()
        sch = parse_schema("(" + rest, name)
        CustomOpDef(self.ns, name, sch, _signature_function(sch, f"{self.ns}::{name}"))
        self._defined.append(f"{self.ns}::{name}")
        return name

    def _destroy(self):
        """Remove the operators this library defined."""
        for qualname in self._defined:
            OPDEFS.pop(qualname, None)
        self._defined.clear()

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Register ``fn`` as the implementation of ``op_name`` (a name in this
        namespace, or an OpOverload) for ``dispatch_key`` (default: the library's)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        key = dispatch_key or self.dispatch_key
        opdef = _lookup(op_name if not isinstance(op_name, str) or "::" in op_name
                        else f"{self.ns}::{op_name}", "impl")
        if key in _KERNEL_KEYS:
            opdef.register_kernel(_KERNEL_KEYS[key], fn)
        elif key == "Meta":
            opdef.register_fake(fn)
        elif key.startswith("Autocast"):
            opdef._autocast_fns[key] = fn
        else:
            raise NotImplementedError(f"hookgrad does not implement torch.library.Library.impl "
                                      f"for dispatch key {key!r} yet (it has CPU, CUDA, XLA, "
                                      "Composite*, Meta and Autocast*)")


@contextlib.contextmanager
def _scoped_library(ns, kind, dispatch_key=""):
    """A :class:`Library` for the block: the operators it defines (with
    :meth:`Library.define`) are removed at the end."""
    lib = Library(ns, kind, dispatch_key)
    try:
        yield lib
    finally:
        lib._destroy()


def _signature_function(schema, qualname):
    """A function with ``schema``'s signature that raises: an op defined without a kernel."""
    def no_kernel(*args, **kwargs):
        raise NotImplementedError(f"{qualname}: no kernel is registered for it; register one "
                                  "with Library.impl or torch.library.register_kernel")
    params, kind = [], inspect.Parameter.POSITIONAL_OR_KEYWORD
    for a in schema.args:
        kind = inspect.Parameter.KEYWORD_ONLY if a.kwarg_only else kind
        default = inspect.Parameter.empty if a.default is None else \
            {"None": None, "True": True, "False": False}.get(a.default, a.default)
        params.append(inspect.Parameter(a.name, kind, default=default))
    no_kernel.__signature__ = inspect.Signature(params)
    return no_kernel


def define(qualname, schema, *, lib=None, tags=()):
    """Define the operator ``qualname`` (``"ns::name"``) with ``schema`` (``"(Tensor x)
    -> Tensor"``) and no implementation (add one with :func:`impl`)."""
    ns, name = _split_name(qualname)
    (lib or Library(ns, "FRAGMENT")).define(name + schema, tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` as the implementation of ``qualname`` for the device types
    ``types`` (``"cpu"``, ``"cuda"``, a list, or ``"default"`` for all). A decorator
    without ``func``."""
    def register(fn):
        kinds = [types] if isinstance(types, str) else list(types)
        opdef = _lookup(qualname, "impl")
        opdef.register_kernel([None if k == "default" else k for k in kinds], fn)
        return fn
    return register if func is None else register(func)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Register a shape-only ("fake") implementation of ``op`` (``"ns::name"``, an
    OpOverload or a CustomOpDef). hookgrad never runs one (JAX traces the real
    implementation abstractly); it is kept. A decorator without ``func``."""
    def register(fn):
        opdef = _lookup(op, "register_fake", missing=RuntimeError)
        opdef.register_fake(fn)
        return fn
    return register if func is None else register(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register ``backward(ctx, *grads)`` (and ``setup_context(ctx, inputs, output)``) as
    the backward formula of ``op`` (``"ns::name"``, an OpOverload or a CustomOpDef); see
    :meth:`CustomOpDef.register_autograd`."""
    _lookup(op, "register_autograd").register_autograd(backward, setup_context=setup_context)


from . import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
