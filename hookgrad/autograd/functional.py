"""``hookgrad.autograd.functional``: vjp, jvp, jacobian, hessian, vhp and hvp of a function
of Tensors, as ``torch.autograd.functional`` has them.

``func`` runs as a pure JAX function of its inputs' arrays (hookgrad's functional mode:
no tape, hooks are ``jax.custom_vjp`` boundaries) and JAX differentiates it
(``jax.vjp``, ``jax.jvp``, ``jax.jacrev``/``jacfwd``). With ``create_graph=True`` the
whole computation is recorded as one node whose backward is again JAX's vjp, so the
results are differentiable w.r.t. the inputs (and ``v``) that require grad.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from .. import _mode
from .._tensor import Tensor
from .._autograd import grad_mode

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_TensorOrTensors = Tensor | tuple[Tensor, ...]

_OUTS = "outputs of the user-provided function"
_STRICT_VECTORIZE = ("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                     "are not supported together. Please either set `strict=False` or "
                     "`vectorize=False`.")
_STRATEGY = ('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
             'function has more outputs than inputs, "forward-mode" tends to be more '
             'performant. Otherwise, prefer to use "reverse-mode".')


# --------------------------------------------------------------------------- checks


def _as_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    tup = inp if is_tuple else (inp,)
    for i, el in enumerate(tup):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, tup


def _unpack(res, is_tuple):
    return res if is_tuple else res[0]


def _unpack2(res, outer_tuple, inner_tuple):
    if not inner_tuple:
        res = tuple(r[0] for r in res)
    return res if outer_tuple else res[0]


def _check_v(v, other, is_other_tuple, fn_name):
    _, v = _as_tuple(v, "v", fn_name)
    if len(v) != len(other):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            pre = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{pre}v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")
    return v


def _single_element(tensors, what):
    if len(tensors) != 1 or tensors[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor "
                           "with a single element.")


# --------------------------------------------------------------------------- func as JAX


class _Pure:
    """``func`` as a function of arrays returning a tuple of arrays; remembers whether
    ``func`` returned a tuple (read after the first trace)."""

    def __init__(self, func, fn_name, scalar=False):
        self.func, self.fn_name, self.scalar = func, fn_name, scalar
        self.is_tuple = None

    def __call__(self, *arrays):
        ts = []
        for a in arrays:
            t = Tensor._wrap(a)
            t._requires_grad = jnp.issubdtype(a.dtype, jnp.inexact)
            ts.append(t)
        with _mode.functional_mode(), grad_mode.enable_grad():
            out = self.func(*ts)
        if self.scalar:  # hessian, vhp, hvp: one Tensor with one element
            if isinstance(out, tuple) or not isinstance(out, Tensor):
                raise RuntimeError(f"The function given to {self.fn_name} should return a "
                                   "single Tensor")
            if out.numel() != 1:
                raise RuntimeError(f"The Tensor returned by the function given to "
                                   f"{self.fn_name} should contain a single element")
            self.is_tuple = False
            return out._data.reshape(())
        self.is_tuple, outs = _as_tuple(out, _OUTS, self.fn_name)
        return tuple(o._data for o in outs)


def _run(fn, tensors, create_graph, name):
    """``fn`` (arrays -> tuple of arrays) on ``tensors``: with ``create_graph`` and an input
    that requires grad, recorded as one node (its backward is JAX's vjp of ``fn``)."""
    if create_graph and any(t.requires_grad for t in tensors):
        from .._ops.dispatch import Op, apply
        op = Op(name, lambda *a: tuple(fn(*a)), name + "Backward", jit=False)
        return tuple(apply(op, tuple(tensors)))
    return tuple(Tensor._wrap(r) for r in fn(*[t._data for t in tensors]))


def _cast(vs, like):
    return [v.astype(p.dtype) for v, p in zip(vs, like)]


# --------------------------------------------------------------------------- strict mode


def _reach(f, arrays):
    """For each output of ``f``, the set of input positions it depends on differentiably
    (dataflow through the jaxpr, into nested jaxprs; integer values cut the flow)."""
    jaxpr = jax.make_jaxpr(f)(*arrays).jaxpr
    return _flow(jaxpr, [{i} for i in range(len(jaxpr.invars))])


def _sub_jaxpr(eqn):
    for name in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        sub = eqn.params.get(name)
        sub = getattr(sub, "jaxpr", sub)
        if hasattr(sub, "eqns") and len(sub.invars) == len(eqn.invars):
            return sub
    return None


def _flow(jaxpr, in_sets):
    reach = dict(zip(jaxpr.invars, in_sets))

    def of(v):
        return set() if type(v).__name__ == "Literal" else reach.get(v, set())
    for eqn in jaxpr.eqns:
        ins = [of(v) for v in eqn.invars]
        if not any(ins):
            continue
        sub = _sub_jaxpr(eqn)
        outs = _flow(sub, ins) if sub is not None and len(sub.outvars) == len(eqn.outvars) \
            else [set().union(*ins)] * len(eqn.outvars)
        for o, s in zip(eqn.outvars, outs):
            if s and jnp.issubdtype(o.aval.dtype, jnp.inexact):
                reach[o] = s
    return [of(v) for v in jaxpr.outvars]


def _check_outputs(deps):
    for i, d in enumerate(deps):
        if not d:
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _check_inputs(deps, n):
    used = set().union(*deps) if deps else set()
    for i in range(n):
        if i not in used:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")


def _check_pairs(deps, n):
    for i, d in enumerate(deps):
        for j in range(n):
            if j not in d:
                raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                   f"of input {j}. This is not allowed in strict mode.")


def _strict_scalar(pure, arrays):
    """hessian/vhp/hvp strict checks: the output and its gradient depend on the inputs."""
    _check_outputs(_reach(lambda *a: (pure(*a),), arrays))
    _check_inputs(_reach(lambda *a: (pure(*a),), arrays), len(arrays))
    grad = jax.grad(pure, argnums=tuple(range(len(arrays))))
    gdeps = _reach(grad, arrays)
    for i, d in enumerate(gdeps):
        if not d:
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
    return gdeps


# --------------------------------------------------------------------------- the functions


def vjp(func: Callable[..., Any], inputs, v=None, create_graph: bool = False,
        strict: bool = False) -> tuple[_TensorOrTensors, _TensorOrTensors]:
    r"""vjp(func, inputs, v=None, create_graph=False, strict=False) -> (outputs, vjp)

    The vector-Jacobian product of ``func`` at ``inputs`` with ``v`` (same shapes as the
    outputs; may be omitted when ``func`` returns one single-element Tensor).

    Example::

        >>> x = torch.ones(3)
        >>> out, g = torch.autograd.functional.vjp(lambda x: (x ** 2).sum(), x)
        >>> g
        tensor([2., 2., 2.])
    """
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    pure = _Pure(func, "vjp")
    arrays = [t._data for t in inputs]
    n = len(inputs)
    if create_graph:  # shapes only: the recorded node runs func
        out_arrays, pull = jax.eval_shape(pure, *arrays), None
    else:
        out_arrays, pull = jax.vjp(pure, *arrays)
    outs = tuple(Tensor._wrap(o) if pull else Tensor._wrap(jnp.zeros(o.shape, o.dtype))
                 for o in out_arrays)
    if strict:
        deps = _reach(pure, arrays)
        _check_outputs(deps)
    if v is not None:
        v = _check_v(v, outs, pure.is_tuple, "vjp")
    else:
        _single_element(outs, "user-provided function returns")
        v = tuple(Tensor._wrap(jnp.ones(o.shape, o.dtype)) for o in out_arrays)
    if strict:
        _check_inputs(deps, n)
    if not create_graph:
        res = pull(tuple(_cast([t._data for t in v], out_arrays)))
        return (_unpack(outs, pure.is_tuple),
                _unpack(tuple(Tensor._wrap(r) for r in res), is_in_tuple))

    def fn(*a):
        out, pull = jax.vjp(pure, *a[:n])
        return (*out, *pull(tuple(_cast(a[n:], out))))
    res = _run(fn, (*inputs, *v), create_graph, "Vjp")
    return _unpack(res[:-n], pure.is_tuple), _unpack(res[-n:], is_in_tuple)


def jvp(func: Callable[..., Any], inputs, v=None, create_graph: bool = False,
        strict: bool = False) -> tuple[_TensorOrTensors, _TensorOrTensors]:
    r"""jvp(func, inputs, v=None, create_graph=False, strict=False) -> (outputs, jvp)

    The Jacobian-vector product of ``func`` at ``inputs`` with ``v`` (same shapes as the
    inputs; may be omitted for a single single-element input). Computed in forward mode
    (``jax.jvp``); when ``func`` meets hooks (``custom_vjp`` boundaries, which forward mode
    cannot cross), by transposing the vjp, PyTorch's double-backward trick.

    Example::

        >>> x = torch.ones(3)
        >>> out, t = torch.autograd.functional.jvp(lambda x: x ** 2, x, torch.ones(3))
        >>> t
        tensor([2., 2., 2.])
    """
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    if v is not None:
        v = _check_v(v, inputs, is_in_tuple, "jvp")
    else:
        _single_element(inputs, "input to the user-provided function is")
        v = tuple(Tensor._wrap(jnp.ones_like(t._data)) for t in inputs)
    pure = _Pure(func, "jvp")
    arrays = [t._data for t in inputs]
    if strict:
        deps = _reach(pure, arrays)
        _check_outputs(deps)
        _check_inputs(deps, len(inputs))
    n = len(inputs)

    def fn(*a):
        prim, vs = tuple(a[:n]), tuple(_cast(a[n:], a[:n]))
        try:
            out, tan = jax.jvp(pure, prim, vs)
            return (*out, *tan)
        except TypeError as e:
            if "custom_vjp" not in str(e):
                raise
        # NOTE: hooks are custom_vjp boundaries, which jax.jvp refuses: transpose the
        # vjp instead (PyTorch's double-backward trick), so backward hooks run as there
        out, pull = jax.vjp(pure, *prim)
        _, pull_t = jax.vjp(lambda *u: pull(u), *(jnp.zeros_like(o) for o in out))
        return (*out, *pull_t(vs))
    res = _run(fn, (*inputs, *v), create_graph, "Jvp")
    k = len(res) // 2
    return _unpack(res[:k], pure.is_tuple), _unpack(res[k:], pure.is_tuple)


def _check_forward_mode(strategy, create_graph, vectorize):
    if strategy != "forward-mode":
        return
    if create_graph:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either '
            'set `create_graph=False` or `strategy="reverse-mode"`.')
    if not vectorize:  # NOTE: "isonly" is PyTorch's wording
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-"
                                  "reverse Hessian isonly implemented for `vectorize=True`.")


def _jac_fn(f, n, strategy):
    jac = jax.jacfwd if strategy == "forward-mode" else jax.jacrev
    return jac(f, argnums=tuple(range(n)))


def _rows(flat, n, strategy):
    """Nested per output, then per input. NOTE: PyTorch's forward-mode path returns lists
    where its reverse-mode path returns tuples; kept, since code may index either."""
    seq = list if strategy == "forward-mode" else tuple
    return seq(seq(flat[i * n:(i + 1) * n]) for i in range(len(flat) // n))


def jacobian(func: Callable[..., Any], inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy="reverse-mode") -> Tensor | tuple[Any, ...]:
    r"""jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
    strategy="reverse-mode")

    The Jacobian of ``func`` at ``inputs``: ``jac[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape`` (a Tensor rather than nested tuples when
    ``func`` returns a Tensor and/or ``inputs`` is a Tensor). ``vectorize`` is accepted:
    JAX always vectorizes.

    Example::

        >>> torch.autograd.functional.jacobian(lambda x: x.exp(), torch.zeros(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY)
    _check_forward_mode(strategy, create_graph, vectorize)
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    pure = _Pure(func, "jacobian")
    arrays = [t._data for t in inputs]
    if strict:
        deps = _reach(pure, arrays)
        _check_outputs(deps)
        if vectorize:
            raise RuntimeError(_STRICT_VECTORIZE)
        _check_pairs(deps, len(inputs))
    n = len(inputs)
    jac = _jac_fn(pure, n, strategy)

    def fn(*a):
        return [j for row in jac(*a) for j in row]
    flat = _run(fn, inputs, create_graph, "Jacobian")
    return _unpack2(_rows(flat, n, strategy), pure.is_tuple, is_in_tuple)


def hessian(func: Callable[..., Any], inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False,
            outer_jacobian_strategy="reverse-mode") -> Tensor | tuple[Any, ...]:
    r"""hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
    outer_jacobian_strategy="reverse-mode")

    The Hessian of the scalar function ``func`` at ``inputs``: ``hes[i][j]`` has shape
    ``inputs[i].shape + inputs[j].shape`` (a Tensor when ``inputs`` is a Tensor).

    Example::

        >>> torch.autograd.functional.hessian(lambda x: (x ** 3).sum(), torch.ones(2))
        tensor([[6., 0.],
                [0., 6.]])
    """
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    _check_forward_mode(outer_jacobian_strategy, create_graph, vectorize)
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    pure = _Pure(func, "hessian", scalar=True)
    arrays = [t._data for t in inputs]
    n = len(inputs)
    if strict:
        if vectorize:
            raise RuntimeError(_STRICT_VECTORIZE)
        _check_pairs(_strict_scalar(pure, arrays), n)
    hes = _jac_fn(jax.grad(pure, argnums=tuple(range(n))), n, outer_jacobian_strategy)

    def fn(*a):
        return [h for row in hes(*a) for h in row]
    flat = _run(fn, inputs, create_graph, "Hessian")
    return _unpack2(_rows(flat, n, outer_jacobian_strategy), is_in_tuple, is_in_tuple)


def _second_order(func, inputs, v, create_graph, strict, fn_name, forward):
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    if v is not None:
        v = _check_v(v, inputs, is_in_tuple, fn_name)
    else:
        _single_element(inputs, "input to the user-provided function is")
        v = tuple(Tensor._wrap(jnp.ones_like(t._data)) for t in inputs)
    pure = _Pure(func, fn_name, scalar=True)
    arrays = [t._data for t in inputs]
    n = len(inputs)
    if strict:
        _check_inputs(_strict_scalar(pure, arrays), n)  # the Hessian has no zero row
    argnums = tuple(range(n))

    def grad_and_value(*p):  # func runs once per call, as in PyTorch
        value, grad = jax.value_and_grad(pure, argnums=argnums)(*p)
        return grad, value

    def fn(*a):
        prim, vs = tuple(a[:n]), tuple(_cast(a[n:], a[:n]))
        if forward:  # H v: forward over reverse
            (_, out), (res, _) = jax.jvp(grad_and_value, prim, vs)
        else:  # v^T H: reverse over reverse
            _, pull, out = jax.vjp(grad_and_value, *prim, has_aux=True)
            res = pull(vs)
        return (out, *res)
    res = _run(fn, (*inputs, *v), create_graph, fn_name.capitalize())
    return res[0], _unpack(res[1:], is_in_tuple)


def vhp(func: Callable[..., Any], inputs, v=None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, _TensorOrTensors]:
    r"""vhp(func, inputs, v=None, create_graph=False, strict=False) -> (output, vhp)

    The vector-Hessian product ``v^T H`` of the scalar function ``func`` at ``inputs``.

    Example::

        >>> x = torch.ones(2)
        >>> torch.autograd.functional.vhp(lambda x: (x ** 3).sum(), x, torch.ones(2))[1]
        tensor([6., 6.])
    """
    return _second_order(func, inputs, v, create_graph, strict, "vhp", forward=False)


def hvp(func: Callable[..., Any], inputs, v=None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, _TensorOrTensors]:
    r"""hvp(func, inputs, v=None, create_graph=False, strict=False) -> (output, hvp)

    The Hessian-vector product ``H v`` of the scalar function ``func`` at ``inputs``
    (forward over reverse with JAX, rather than PyTorch's double-backward trick).

    Example::

        >>> x = torch.ones(2)
        >>> torch.autograd.functional.hvp(lambda x: (x ** 3).sum(), x, torch.ones(2))[1]
        tensor([6., 6.])
    """
    return _second_order(func, inputs, v, create_graph, strict, "hvp", forward=True)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
