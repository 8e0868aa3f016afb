"""The hook rules, written once for every mode.

The eager engine calls these on the nodes it runs; the functional mode
(``hookgrad.func.functional_call``, where JAX's AD runs the backward) calls the same
functions from the backward of its ``jax.custom_vjp`` boundaries. What a hook receives,
what it may return, the order hooks run in and PyTorch's messages for a bad result live
here and nowhere else:

    tensor pre-hooks -> retain_grad hooks -> node pre-hooks -> backward -> node post-hooks

then, at a leaf, the accumulation into ``.grad`` and the post-accumulate-grad hooks.
Module full backward hooks are a pair of identity nodes (``backward_hook.BackwardHook``)
whose post-hooks are these node post-hooks, in both modes.
"""
from .. import _dtype, _mode
from .._tensor import Tensor

_mode_state = _mode.state


def call(hook, *args):
    """Call a user's hook with ``args``: every hook kind is called through here, so that
    a compiled step's trace can run one on the host instead (``_compile.host_run``)."""
    runner = _mode_state.hook_runner
    if runner is None:
        return hook(*args)
    return runner(hook, args)


def hook_name(hook):
    return getattr(hook, "__name__", None) or type(hook).__name__


def type_str(t):
    return _dtype.legacy_type_name(t._data.dtype, "hookgrad")


def check_single(orig, new, hook):
    """What a tensor hook's result ``new`` means for the gradient ``orig``: None keeps it,
    a Tensor of the same dtype and shape replaces it."""
    if new is None:
        return orig
    if orig is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new is orig:
        return new
    if new._data.dtype != orig._data.dtype:
        raise RuntimeError(
            f"hook '{hook_name(hook)}' has changed the type of value (was "
            f"{type_str(orig)} got {type_str(new)})")
    if new._data.shape != orig._data.shape:
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the size of value")
    return new


def check_tuple(orig, new, hook):
    """A node hook's returned tuple ``new`` checked against the gradients ``orig``."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(orig):
        raise RuntimeError(f"hook '{hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(new)}, but expected {len(orig)})")
    # in a returned tuple, None replaces the gradient (PyTorch: an undefined gradient)
    return [None if n is None else check_single(o, n, hook) for o, n in zip(orig, new)]


def run_tensor_hooks(hooks, grad):
    """A tensor's hooks (a dict, in registration order) on its gradient ``grad``."""
    for hook in tuple(hooks.values()):  # a snapshot: removal takes effect next time
        grad = check_single(grad, call(hook, grad), hook)
    return grad


def run_tensor_pre_hooks(node, grads):
    """The tensor hooks, then the retain_grad hooks, of ``node``'s outputs, on ``grads``
    (a list, one entry per output, None where no gradient arrived), in place."""
    tph = node._tensor_pre_hooks
    if tph:
        for nr, hooks in tph.items():
            grads[nr] = run_tensor_hooks(hooks, grads[nr])
    rh = node._retain_hooks
    if rh:
        for nr, hook in rh.items():
            hook(grads[nr])
    return grads


def run_pre_hooks(node, grads):
    """``node``'s pre-hooks: ``hook(grad_outputs) -> tuple | None``."""
    hooks = node._pre_hooks
    if hooks:
        for hook in tuple(hooks.values()):
            res = call(hook, tuple(grads))
            if res is not None:
                grads = check_tuple(grads, res, hook)
    return grads


def run_post_hooks(node, grad_inputs, grad_outputs):
    """``node``'s post-hooks: ``hook(grad_inputs, grad_outputs) -> tuple | None``."""
    hooks = node._post_hooks
    if hooks:
        go = tuple(grad_outputs)
        for hook in tuple(hooks.values()):
            res = call(hook, tuple(grad_inputs), go)
            if res is not None:
                grad_inputs = check_tuple(grad_inputs, res, hook)
    return grad_inputs


def run_post_accumulate_hooks(var):
    """A leaf's post-accumulate-grad hooks, after its ``.grad`` was updated. A hook may
    return None or ``var`` itself; anything else is checked as a tensor hook's result, is
    passed to the hooks after it, and then raises."""
    hooks = var._post_acc_hooks
    if hooks:
        arg, modified = var, False
        for hook in tuple(hooks.values()):
            res = call(hook, arg)
            if res is not None and res is not arg:
                arg, modified = check_single(arg, res, hook), True
        if modified:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
