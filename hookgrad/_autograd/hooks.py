"""The hook kinds of a backward, one row each in ``KINDS``, and their rules, written once
for every mode.

A row says where a kind is held (the Tensor attribute a user's registration fills, the
node attribute the engine reads at the node it fires at), when it fires, its rule (a
function below), whether a fused backward chain may carry it, and how ``hookgrad.compile``
keys it. The engine, fusion, the compiled mode's keys and re-checks and the composed
tests iterate ``KINDS``; a new hook kind is a new row and its rule. The order of the
rows is PyTorch's order at a node:

    tensor hooks -> retain_grad -> node pre-hooks -> backward -> node post-hooks

then, at a leaf, the accumulation into ``.grad`` and the post-accumulate-grad hooks. The
functional mode (``hookgrad.func.functional_call``, where JAX's AD runs the backward)
calls the same rules from the backward of its ``jax.custom_vjp`` boundaries. Module full
backward hooks are a pair of identity nodes (``backward_hook.BackwardHook``) whose
post-hooks are these node post-hooks, in both modes; multi-grad hooks are tensor hooks
(``graph.register_multi_grad_hook``); saved-tensor hooks are contexts (``saved.py``).
"""
from typing import Callable, NamedTuple, Optional

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
    """The tensor hooks of ``node``'s outputs on ``grads`` (a list, one entry per output,
    None where no gradient arrived), in place."""
    for nr, hooks in node._tensor_pre_hooks.items():
        grads[nr] = run_tensor_hooks(hooks, grads[nr])
    return grads


def run_retain_hooks(node, grads):
    """The retain_grad hooks of ``node``'s outputs: each stores its output's gradient."""
    for nr, hook in node._retain_hooks.items():
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


# --------------------------------------------------------------------------- the table

BEFORE, AFTER, ACCUMULATED = "before", "after", "accumulated"   # when a kind fires
FIRST_ONLY, NEVER = "first only", "never"   # which nodes of a fused chain may carry it


def hook_ids(d):
    """What identifies the hooks of a dict (None before the first registration): their
    handles' ids, in order."""
    return tuple(d) if d else ()


def output_hook_ids(d):
    """``hook_ids`` of a node's ``{output_nr: hook dict}`` (its outputs' tensor hooks)."""
    return tuple((nr, tuple(h)) for nr, h in d.items() if h) if d else ()


class Kind(NamedTuple):
    """One hook kind: a row of ``KINDS``."""

    name: str                   # how a user registers one
    tensor_attr: Optional[str]  # the Tensor's attribute holding it (None: nodes only)
    node_attr: Optional[str]    # the node's attribute the engine reads (None: the Tensor's)
    fires: str                  # BEFORE or AFTER the node's backward, or when ACCUMULATED
    rule: Callable              # how it runs: (node, grads), (node, grad_inputs,
    #                             grad_outputs) AFTER, (tensor) when ACCUMULATED
    captured: bool              # whether it also fires at a node only captured (inputs=)
    fused: Optional[str]        # FIRST_ONLY, NEVER, or None (its node is never fused)
    tensor_key: Optional[Callable]  # compile's key of the Tensor's attribute, if keyed
    node_key: Optional[Callable]    # compile's key of the node's attribute, if keyed


KINDS = (
    # a Tensor's hooks are copied onto the node that makes its gradient, per output
    Kind("Tensor.register_hook", "_backward_hooks", "_tensor_pre_hooks", BEFORE,
         run_tensor_pre_hooks, True, FIRST_ONLY, hook_ids, output_hook_ids),
    # a flag on the Tensor (a counted write), a hook on its node
    Kind("Tensor.retain_grad", "_retains_grad", "_retain_hooks", BEFORE, run_retain_hooks,
         True, FIRST_ONLY, bool, None),
    Kind("Node.register_prehook", None, "_pre_hooks", BEFORE, run_pre_hooks, False,
         FIRST_ONLY, None, hook_ids),
    Kind("Node.register_hook", None, "_post_hooks", AFTER, run_post_hooks, False, NEVER,
         None, hook_ids),
    Kind("Tensor.register_post_accumulate_grad_hook", "_post_acc_hooks", None, ACCUMULATED,
         run_post_accumulate_hooks, False, None, hook_ids, None),
)

# the table read by column, for the hot paths
FIRES_BEFORE = tuple(k for k in KINDS if k.fires == BEFORE)
FIRES_AFTER = tuple(k for k in KINDS if k.fires == AFTER)
FIRES_ACCUMULATED = tuple(k for k in KINDS if k.fires == ACCUMULATED)
CAPTURED = tuple(k for k in FIRES_BEFORE if k.captured)
NODE_ATTRS = tuple(k.node_attr for k in KINDS if k.node_attr)
TENSOR_KEYED = tuple(k for k in KINDS if k.tensor_key is not None)
NODE_KEYED = tuple(k for k in KINDS if k.node_key is not None)
# the dicts of user hooks a Tensor holds, and those of its AccumulateGrad node that are
# its own (a Tensor's hooks are also in its node's ``_tensor_pre_hooks``)
TENSOR_DICTS = tuple(k.tensor_attr for k in KINDS if k.tensor_attr and k.tensor_key is hook_ids)
NODE_DICTS = tuple(k.node_attr for k in KINDS if k.node_attr and not k.tensor_attr)


def user_hook_dicts(t):
    """The dicts of user hooks that a backward through the leaf ``t`` can run: its own and
    those of its AccumulateGrad node, None where nothing was registered."""
    acc = t._acc
    return (*(getattr(t, a) for a in TENSOR_DICTS),
            *(getattr(acc, a) for a in NODE_DICTS if acc is not None))


def run_before(node, grads, kinds=FIRES_BEFORE):
    """The hooks of ``kinds`` (rows that fire before a node's backward) that ``node``
    holds, in the table's order, on ``grads``."""
    for kind in kinds:
        if getattr(node, kind.node_attr):
            grads = kind.rule(node, grads)
    return grads


def run_after(node, grad_inputs, grad_outputs):
    """The hooks ``node`` holds of the rows that fire after its backward."""
    for kind in FIRES_AFTER:
        if getattr(node, kind.node_attr):
            grad_inputs = kind.rule(node, grad_inputs, grad_outputs)
    return grad_inputs
