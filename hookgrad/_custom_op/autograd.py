"""The autograd side of the older custom-op API (``hookgrad._custom_op.impl``).

Once both ``impl_save_for_backward`` and ``impl_backward`` are registered, calls go
through an ``autograd.Function`` named ``<op>_customop``: its forward runs the device
implementation and the "save for backward" function; its backward calls the user's
backward and checks the dict of gradients it returns, with PyTorch's messages.
"""
import functools
from collections import namedtuple

import jax

from .._tensor import Tensor
from .._autograd import grad_mode
from .._engine.function import Function


def _leaf(x):
    # Tensors and None are leaves (a Tensor is itself a JAX pytree of its array)
    return x is None or isinstance(x, Tensor)


def tree_flatten(x):
    return jax.tree_util.tree_flatten(x, is_leaf=_leaf)


def tree_unflatten(spec, leaves):
    return jax.tree_util.tree_unflatten(spec, list(leaves))


def tree_map(fn, x):
    return jax.tree_util.tree_map(fn, x, is_leaf=_leaf)


@functools.lru_cache(maxsize=None)
def _args_cls(name, fields):
    return namedtuple(name + "_args", fields)


def namedtuple_args(schema, args):
    """``args`` as a namedtuple with the schema's argument names (``foo_args(x=..., n=...)``)."""
    return _args_cls(schema.name, tuple(a.name for a in schema.args))(*args)


def mark_non_differentiable(ctx, output, output_differentiability):
    if output_differentiability is None:
        return
    outs = output if isinstance(output, tuple) else (output,)
    nondiff = []
    for idx, (differentiable, out) in enumerate(zip(output_differentiability, outs)):
        if isinstance(out, Tensor):
            if not differentiable:
                nondiff.append(out)
            continue
        if isinstance(out, list):
            if not differentiable:
                nondiff.extend(out)
            continue
        if differentiable:
            raise RuntimeError(
                f"With output_differentiability={output_differentiability}. At idx {idx}, we "
                f"received an object of type {type(out)} that is not a Tensor, so it cannot have "
                "be marked as differentiable in output_differentiability.")
    if nondiff:
        ctx.mark_non_differentiable(*nondiff)


def construct_autograd_kernel(schema, output_differentiability, custom_op, save_for_backward_fn,
                              backward_fn):
    """The function that runs ``custom_op`` with its registered backward."""

    def apply(*args):
        flat_args, spec = tree_flatten(args)
        out_spec = []

        def forward(ctx, *flat):
            ctx.set_materialize_grads(True)
            args = tree_unflatten(spec, flat)
            output = custom_op._call_device(args, {})
            args_info = namedtuple_args(schema, tree_map(type, args))
            to_save = save_for_backward_fn(namedtuple_args(schema, args), output)
            save_pytree_for_backward(ctx, (to_save, args_info))
            mark_non_differentiable(ctx, output, output_differentiability)
            flat_output, ospec = tree_flatten(output)
            out_spec.append(ospec)
            return tuple(flat_output)

        def backward(ctx, *flat_grads):
            grads = tree_unflatten(out_spec[0], flat_grads)
            saved, args_info = unpack_saved(ctx)
            if not isinstance(grads, tuple):
                grads = (grads,)
            # the ctx of this API is an opaque placeholder
            grad_inputs = backward_fn(object(), saved, *grads)
            validate_grad_inputs_dict(grad_inputs, custom_op, args_info)
            return grad_inputs_dict_to_flat_tuple(grad_inputs, args_info)

        cls = type(custom_op._opname + "_customop", (Function,),
                   {"forward": staticmethod(forward), "backward": staticmethod(backward)})
        flat_output = cls.apply(*flat_args)
        return tree_unflatten(out_spec[0], flat_output)

    return apply


def validate_grad_inputs_dict(grad_inputs_dict, forward_op, args_info):
    """Check what the user's backward returned: a dict with a gradient (or None) for
    each Tensor-like argument."""
    def error(what):
        backward = forward_op._get_impl("backward")
        raise RuntimeError(f"In the backward function defined for {forward_op} at "
                           f"{backward.location} using the CustomOp API, {what}")

    if not isinstance(grad_inputs_dict, dict):
        error("expected the output of the backward function to be a dict but got "
              f"{type(grad_inputs_dict)}")
    expected = {a.name for a in forward_op._schema.args if a.is_tensor_like()}
    actual = grad_inputs_dict.keys()
    if expected != actual:
        error(f"expected the returned grad_input dict to have keys {expected} but got {actual}. "
              "The backward function must return a gradient (can be None) for each arg to the "
              "CustomOp that may be a Tensor or Sequence[Tensor]. Args declared to be "
              "non-Tensor-like types should not appear in the grad_input dict")
    for name, grad in grad_inputs_dict.items():
        info = getattr(args_info, name)
        if isinstance(info, list):
            if not isinstance(grad, (tuple, list)):
                error(f"for input '{name}' expected the grad_input dict to hold a list of "
                      f"gradients but got object of type {type(grad)}.")
            if len(grad) != len(info):
                error(f"for input '{name}' expected the grad_input dict to hold a list of "
                      f"{len(info)} gradients but got {len(grad)}")
            for idx, (g, i) in enumerate(zip(grad, info)):
                if g is None:
                    continue
                if not isinstance(g, Tensor):
                    error(f"for input '{name}' expected the grad_input dict to hold a list of "
                          f"None or Tensor gradients but got object of {type(g)} at index {idx}")
                if not issubclass(i, Tensor):
                    error(f"for input '{name}', got a Tensor as the gradient for the {idx}-th "
                          f"value but expected None because the {idx}-th value was not a "
                          f"Tensor (it was type {info}")
            continue
        if grad is None:
            continue
        if not isinstance(grad, Tensor):
            error(f"got object of type {type(grad)} as the gradient for input '{name}', but "
                  "expected the gradient to be either None or a Tensor")
        if not issubclass(info, Tensor):
            error(f"got a Tensor as the gradient for input '{name}' but expected None as the "
                  f"gradient because input '{name}' was not a Tensor (it was type {info}).")


def grad_inputs_dict_to_flat_tuple(grad_inputs_dict, args_info):
    result = []
    for name, info in args_info._asdict().items():
        if name not in grad_inputs_dict:
            result.append(tree_map(lambda _: None, info))
        else:
            result.append(grad_inputs_dict[name])
    return tuple(tree_flatten(result)[0])


def save_pytree_for_backward(ctx, stuff):
    """Save a pytree on ``ctx``: its Tensors through ``save_for_backward``, the rest as
    attributes."""
    flat, spec = tree_flatten(stuff)
    ctx.spec = spec
    ctx.num_elts = len(flat)
    ctx.tensor_idxs = [i for i, x in enumerate(flat) if isinstance(x, Tensor)]
    ctx.non_tensor_idxs = [i for i, x in enumerate(flat) if not isinstance(x, Tensor)]
    ctx.saved_non_tensors = [x for x in flat if not isinstance(x, Tensor)]
    ctx.save_for_backward(*(x for x in flat if isinstance(x, Tensor)))


def unpack_saved(ctx):
    flat = [None] * ctx.num_elts
    for t, i in zip(ctx.saved_tensors, ctx.tensor_idxs):
        flat[i] = t
    for x, i in zip(ctx.saved_non_tensors, ctx.non_tensor_idxs):
        flat[i] = x
    return tree_unflatten(ctx.spec, flat)


def autograd_not_implemented(custom_op, args, kwargs):
    """Run ``custom_op`` without autograd support: an error if an input requires grad."""
    if grad_mode.is_grad_enabled() and any(
            isinstance(x, Tensor) and x.requires_grad for x in tree_flatten((args, kwargs))[0]):
        raise RuntimeError("Autograd has not been implemented for operator")
    return custom_op._call_device(args, kwargs)
