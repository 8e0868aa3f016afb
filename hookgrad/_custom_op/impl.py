"""The older custom-op API at PyTorch's path ``torch._custom_op.impl`` (deprecated there
too; prefer ``hookgrad.library.custom_op``).

Example::

    >>> from hookgrad._custom_op.impl import custom_op
    >>> @custom_op("mylib::scale")
    ... def scale(x: hookgrad.Tensor, k: float) -> hookgrad.Tensor: ...
    >>> @scale.impl("cpu")
    ... def _(x, k):
    ...     return x * k
    >>> @scale.impl_save_for_backward()
    ... def _(inputs, output):
    ...     return inputs.k
    >>> @scale.impl_backward()
    ... def _(ctx, k, grad):
    ...     return {"x": grad * k}
"""
import dataclasses
import inspect
import sys
import typing

import jax

from .._tensor import Tensor
from . import autograd as _ag
from .schema import infer_schema, parse_schema
from .. import _errors

__all__ = ["custom_op", "CustomOp"]

SUPPORTED_DEVICE_TYPE_TO_KEY = {"cpu": "CPU", "cuda": "CUDA", "tpu": "TPU"}
RESERVED_NS = {"prim", "prims", "aten", "at", "torch", "pytorch", "hookgrad"}
_ALLOWED_RETURNS = {"SymInt": "SymInt", "int": "int", "bool": "bool", "float": "float",
                    "Tensor": "Tensor", "Tensor[]": "List[Tensor]"}

# every CustomOp by qualname ("ns::name"); an op lives until ``_destroy()``
global_registry = {}


def warn_deprecated():
    _errors.warn("hookgrad._custom_op is deprecated, please use the equivalent hookgrad.library "
                 "API instead.", DeprecationWarning)


def custom_op(qualname, manual_schema=None):
    """Decorator turning a typed function stub into a :class:`CustomOp` named
    ``qualname`` (``"namespace::name"``, where ``name`` is the function's name). The
    schema comes from the annotations, or from ``manual_schema`` (then the function
    must have no annotations)."""
    warn_deprecated()

    def inner(func):
        if not inspect.isfunction(func):
            raise ValueError(f"custom_op(...)(func): Expected `func` to be a Python function, "
                             f"got: {type(func)}")
        ns, name = parse_qualname(qualname)
        validate_namespace(ns)
        if func.__name__ != name:
            raise ValueError(f"custom_op(qualname='{qualname}', ...)(func): expected `func` to "
                             f"have name '{name}' but got '{func.__name__}'. Please either change "
                             "the name of `func` or the qualname that is passed to `custom_op`")
        if manual_schema is None:
            schema = infer_schema(func, mutates_args=(), op_name=name)
        else:
            schema = parse_schema(manual_schema, name)
        validate_schema(schema)
        if manual_schema is not None:
            validate_function_matches_schema(schema, func)
        if f"{ns}::{name}" in global_registry:
            raise RuntimeError(f"Tried to register an operator ({ns}::{schema}) with the same "
                               "name and overload name multiple times. Each overload's schema "
                               "should only be registered with a single call to def().")
        result = CustomOp(ns, schema, name, _private_access=True)
        result.__name__ = func.__name__
        result.__module__ = func.__module__
        result.__doc__ = func.__doc__
        return result

    return inner


@dataclasses.dataclass
class FuncAndLocation:
    func: typing.Callable
    location: str


class CustomOp:
    """An operator made by :func:`custom_op`; register its parts, then call it."""

    def __init__(self, cpp_ns, schema, operator_name, *, _private_access=False):
        if not _private_access:
            raise RuntimeError("The CustomOp constructor is private and we do not guarantee BC "
                               "for it. Please use custom_op(...) to create a CustomOp object")
        self._schema = schema
        self._cpp_ns = cpp_ns
        self._opname = operator_name
        self._qualname = f"{cpp_ns}::{operator_name}"
        self._impls = {}
        self._output_differentiability = None
        self.__name__ = None
        global_registry[self._qualname] = self

    def __repr__(self):
        return f'<CustomOp(op="{self._qualname}")>'

    # ---- registration bookkeeping
    def _register_impl(self, kind, func, stacklevel=2):
        if kind in self._impls:
            location = self._impls[kind].location
            raise RuntimeError(f"Attempting to register a {kind} impl for operator "
                               f"{self._qualname} that already has a {kind} impl registered "
                               f"from Python at {location}. This is not supported.")
        frame = inspect.getframeinfo(sys._getframe(stacklevel))
        self._impls[kind] = FuncAndLocation(func, f"{frame.filename}:{frame.lineno}")

    def _get_impl(self, kind):
        return self._impls[kind]

    def _has_impl(self, kind):
        return kind in self._impls

    def _destroy(self):
        """Remove the operator from the registry (its name can be defined again)."""
        global_registry.pop(self._qualname, None)

    # ---- implementations
    def impl(self, device_types, _stacklevel=2):
        """Decorator registering the implementation for ``device_types`` (``"cpu"``,
        ``"cuda"``, ``"tpu"`` or a list of them)."""
        if isinstance(device_types, str):
            device_types = [device_types]
        for d in device_types:
            validate_device_type(d)

        def inner(f):
            for d in dict.fromkeys(device_types):
                self._register_impl(d, f, stacklevel=_stacklevel)
            return f
        return inner

    def impl_factory(self):
        """Decorator registering the implementation of an op without Tensor inputs."""
        def inner(f):
            self._register_impl("factory", f)
            return f
        return inner

    def impl_abstract(self, _stacklevel=2):
        """Decorator registering a shape-only implementation. hookgrad does not need one
        (JAX traces the real implementation abstractly); it is kept for reference."""
        def inner(f):
            self._register_impl("abstract", f, stacklevel=_stacklevel)
            return f
        return inner

    def _check_can_register_backward(self):
        schema = self._schema

        def error(detail):
            raise RuntimeError(f"Cannot use torch._custom_ops APIs to register backward formula "
                               f"for {detail}. Got operator {self._qualname} with schema: "
                               f"{schema}")
        if schema.is_mutable():
            error("non-functional operator")
        if not schema.returns:
            error("operator with no returns")
        for ret in schema.returns:
            if ret not in _ALLOWED_RETURNS:
                allowed = list(dict.fromkeys(_ALLOWED_RETURNS.values()))
                error(f"operator with return not in {allowed} (got {ret})")

    def _register_autograd_kernel(self):
        kernel = _ag.construct_autograd_kernel(
            self._schema, self._output_differentiability, self,
            self._get_impl("save_for_backward").func, self._get_impl("backward").func)
        self._register_impl("autograd", kernel)

    def impl_save_for_backward(self, _stacklevel=2):
        """Decorator registering ``f(inputs, output) -> saved``: what the backward needs.
        ``inputs`` is a namedtuple of the op's arguments."""
        def inner(f):
            self._check_can_register_backward()
            self._register_impl("save_for_backward", f, stacklevel=_stacklevel)
            if self._has_impl("backward"):
                self._register_autograd_kernel()
            return f
        return inner

    def impl_backward(self, output_differentiability=None, _stacklevel=2):
        """Decorator registering ``f(ctx, saved, *grads) -> dict``: a gradient (or None)
        for each Tensor-like argument, by name. ``output_differentiability`` (a list of
        bools, one per output) marks outputs that get no gradient."""
        if output_differentiability is not None:
            def yell():
                raise RuntimeError(
                    "impl_backward(output_differentiability): expected output_differentiability "
                    "to be a list of bools with length equal to the number of outputs of this "
                    f"CustomOp got: {output_differentiability}")
            if not isinstance(output_differentiability, list):
                yell()
            if not all(isinstance(d, bool) for d in output_differentiability):
                yell()
            if len(self._schema.returns) != len(output_differentiability):
                yell()

        def inner(f):
            self._check_can_register_backward()
            self._register_impl("backward", f, stacklevel=_stacklevel)
            self._output_differentiability = output_differentiability
            if self._has_impl("save_for_backward"):
                self._register_autograd_kernel()
            return f
        return inner

    # ---- calling
    def __call__(self, *args, **kwargs):
        from .. import _mode
        from ..library import _has_arrays, _map
        if _has_arrays(args):  # JAX arrays: run as jax.custom_vjp, return arrays
            args = _map(lambda a: Tensor._wrap(a) if isinstance(a, jax.Array) else a, args)
            with _mode.functional_mode():
                out = self(*args, **kwargs)
            return _map(lambda t: t._data if isinstance(t, Tensor) else t, out)
        if self._has_impl("autograd"):
            return self._get_impl("autograd").func(*args, **kwargs)
        if self._has_impl("save_for_backward") or self._has_impl("backward"):
            missing = "save_for_backward" if self._has_impl("backward") else "backward"
            found = "save_for_backward" if missing == "backward" else "backward"
            loc = self._get_impl(found).location
            raise RuntimeError(
                f"We found a '{found}' registration for {self} at {loc} but were unable to find "
                f"a '{missing}' registration. To use the CustomOp API to register a backward "
                "formula, please provide us both a backward function and a 'save for backward' "
                "function via `impl_backward` and `impl_save_for_backward` respectively.")
        return _ag.autograd_not_implemented(self, args, kwargs)

    def _call_device(self, args, kwargs):
        """Run the implementation for the device of the Tensor arguments."""
        from .._autograd import grad_mode
        tensors = [x for x in _ag.tree_flatten((args, kwargs))[0] if isinstance(x, Tensor)]
        if not tensors:
            if self._has_impl("factory"):
                kind = "factory"
            else:
                raise NotImplementedError(
                    f"{self}: There were no Tensor inputs to this operator (e.g. you passed an "
                    "empty list of Tensors). If your operator is a factory function (that is, it "
                    "takes no Tensors and constructs a new one), then please use "
                    "CustomOp.impl_factory to register an implementation for it")
        else:
            kind = tensors[0].device.type
            if not self._has_impl(kind):
                raise NotImplementedError(
                    f"{self}: when running with device='{kind}' tensors: there is no {kind} impl "
                    f"registered for this CustomOp. Please register one via "
                    f"CustomOp.impl(device_type='{kind}')")
        with grad_mode.no_grad():
            return self._get_impl(kind).func(*args, **kwargs)


def parse_qualname(qualname):
    names = qualname.split("::", 1)
    if len(names) != 2:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator name "
                         "should look something like ns::foo")
    if "." in names[1]:
        raise ValueError("The torch.custom_ops APIs do not handle overloads, i.e. operator names "
                         "with '.' in them. Please name your operator something like ns::foo. "
                         f"Got: {qualname}")
    return names[0], names[1]


def validate_namespace(ns):
    if "." in ns:
        raise ValueError(f'custom_op(..., ns="{ns}"): expected ns to not contain any . (and be a '
                         "valid variable name)")
    if ns in RESERVED_NS:
        raise ValueError(f"custom_op(..., ns='{ns}'): '{ns}' is a reserved namespace, please "
                         "choose something else. ")


def validate_schema(schema):
    if not schema.is_functional():
        raise ValueError("custom_op only supports functional operators (ops that do not mutate "
                         "any inputs, do not return views of the inputs, and has at least one "
                         f"return). Got the following non-functional schema: {schema}")
    if any(a.name == "self" for a in schema.args):
        raise ValueError("custom_op does not support arguments named 'self'. Please rename your "
                         f"argument. Got: {schema}")


def validate_device_type(device_type):
    if device_type not in SUPPORTED_DEVICE_TYPE_TO_KEY:
        raise ValueError(f"CustomOp.impl(device_types=[{device_type}, ...]): we only support "
                         f"device_type in {SUPPORTED_DEVICE_TYPE_TO_KEY.keys()}.")


def validate_function_matches_schema(schema, func):
    sig = inspect.signature(func)
    params = sig.parameters.values()
    if not all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        raise ValueError("custom_op(..., manual_schema)(func): positional-only args, varargs, and "
                         "kwargs are not supported. Please rewrite `func` to not have them. Got "
                         f"`func` with signature: {sig}")
    if any(p.annotation is not inspect.Parameter.empty for p in params) or \
            sig.return_annotation is not inspect.Signature.empty:
        raise ValueError("custom_op(..., manual_schema)(func): When passing in a manual schema, "
                         "we expect `func` to have no type annotations to avoid ambiguity. Got "
                         f"`func` with signature: {sig}")

    def compare(sig_args, schema_args):
        if len(sig_args) != len(schema_args):
            raise ValueError("custom_op(..., manual_schema)(func): When passing in a manual "
                             "schema, we expect `func`'s signature to match `manual_schema` "
                             "(aside from type annotations). func's signature: "
                             f"{sig}, manual_schema: {schema}")
        for p, a in zip(sig_args, schema_args):
            if p.name != a.name:
                compare((), (None,))
            if p.default is not inspect.Parameter.empty or a.default is not None:
                raise ValueError("custom_op(..., manual_schema)(func): neither func nor "
                                 "manual_schema should have default arguments. Got func's "
                                 f"signature: {sig}, manual_schema: {schema}")

    compare([p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD],
            [a for a in schema.args if not a.kwarg_only])
    compare([p for p in params if p.kind == p.KEYWORD_ONLY],
            [a for a in schema.args if a.kwarg_only])
