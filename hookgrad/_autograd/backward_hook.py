"""``BackwardHook``: how a Module's full backward hooks reach the autograd graph.

As in PyTorch, the module's tensor inputs, and then its tensor outputs, each go through
an identity op whose node (``BackwardHookFunctionBackward``) carries the hooks:

- the node on the outputs sees ``grad_output`` first: it runs the backward pre-hooks
  (which may replace ``grad_output``) and remembers the result;
- the node on the inputs sees ``grad_input`` last: it runs the backward hooks with
  ``(module, grad_input, grad_output)`` (which may replace ``grad_input``).

Both are post-hooks of their node, registered when the node is made, so a graph runs the
hooks that were registered when its forward ran. Positions of non-Tensor arguments are
``None``; a Tensor argument that does not require grad gets zeros (the identity node
materializes missing gradients, as PyTorch's ``BackwardHookFunction`` does).
"""

import jax.numpy as jnp

from .. import _mode, _views
from .._tensor import Tensor
from . import grad_mode
from .hooks import call as _call
from .graph import _Node
from .. import _errors

__all__ = ["BackwardHook", "BackwardHookFunctionBackward"]

NODE_NAME = "BackwardHookFunctionBackward"

_NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
    "register_full_backward_hook for more details.")


class BackwardHookFunctionBackward(_Node):
    """The node of the identity op around a module's inputs or outputs.

    One forward output per tensor given; the backward passes gradients through, with
    zeros where none arrived.
    """

    __slots__ = ("_meta",)
    _apply_undefined = True  # runs (materializing zeros) even when no gradient arrived

    def __init__(self, edges, meta):
        _Node.__init__(self, edges)
        self._meta = meta

    def name(self):
        return NODE_NAME

    def _out_meta(self):
        return self._meta

    def _apply(self, grads, create_graph):
        out = []
        for g, (shape, dt) in zip(grads, self._meta):
            out.append(Tensor._wrap(jnp.zeros(shape, dt)) if g is None else g)
        return out


def as_hook_view(n, t, i):
    """Make ``n``, output ``i`` of the hooks' identity on ``t``, a view of ``t`` made inside
    a custom Function, as PyTorch's (eager and functional mode)."""
    src = t._view
    _views.alias(n, t, diff=True, shared=True, creation=_views.CUSTOM,
                 fn_name=("BackwardHookFunction", i),
                 grad_base=src.grad_base if src is not None and src.diff else t)


def _identity_on_tensors(tensors):
    """The identity op: new tensors whose ``grad_fn`` is one BackwardHookFunctionBackward
    (for those that require grad). Returns (node, new_tensors)."""
    node = BackwardHookFunctionBackward(
        tuple(t._edge() if t._requires_grad else None for t in tensors),
        tuple((t._data.shape, t._data.dtype) for t in tensors))
    new = []
    for i, t in enumerate(tensors):
        if t._requires_grad:
            # a view of ``t`` made inside a custom Function, as PyTorch's: writing into it
            # in place is an error
            n = Tensor._wrap(t._data, node, i)
            as_hook_view(n, t, i)
        else:
            # non-differentiable output: a plain alias (in-place writes reach ``t``)
            n = Tensor._wrap(t._data)
            n._base = t
        new.append(n)
    return node, new


class BackwardHook:
    """Runs a Module's full backward pre-hooks and hooks with PyTorch's arguments.

    ::

        bw = BackwardHook(module, user_hooks, user_pre_hooks)
        args = bw.setup_input_hook(args)       # before forward
        result = bw.setup_output_hook(result)  # after forward (and forward hooks)

    ``user_hooks``: ``hook(module, grad_input, grad_output) -> tuple | None``;
    ``user_pre_hooks``: ``hook(module, grad_output) -> tuple | None``, run in list order.
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module

        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn):
        def hook(grad_input, _):
            if self.grad_outputs is None:
                # the gradient reached the inputs without passing through the outputs
                # (e.g. double backward): no hook call
                return None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = _call(user_hook, self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        tensors_idx = []
        tensors = []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad = requires_grad or arg._requires_grad
        if not (requires_grad and grad_mode._state.enabled):
            return args, None
        backend = _mode.state.backend  # functional mode: a custom_vjp identity instead
        node, new_tensors = (_identity_on_tensors(tensors) if backend is None
                             else backend.hook_identity(tensors))
        fn(node)
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        if type(args) is tuple:
            out = tuple(arg_list)
        else:  # a namedtuple
            out = type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args):
        """Route the tensors of ``args`` through the identity op whose node runs the
        backward hooks; returns the new args."""
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args):
        """Route the module's output tensors through the identity op whose node runs the
        backward pre-hooks; returns the new output."""
        def fn(grad_fn):
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index,
                                                         grad_output, self.n_outputs)
                if self.user_pre_hooks:
                    expected_len = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        hook_grad_outputs = _call(user_pre_hook, self.module,
                                                      self.grad_outputs)
                        if hook_grad_outputs is None:
                            continue
                        actual_len = len(hook_grad_outputs)
                        if actual_len != expected_len:
                            raise RuntimeError(
                                "Backward pre hook returned an invalid number of grad_output, "
                                f"got {actual_len}, but expected {expected_len}")
                        self.grad_outputs = hook_grad_outputs

                local_grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:
                    # no input requires grad: the hooks fire now, with grad_input all None
                    _errors.warn(_NO_INPUT_GRAD_WARNING)  # at x.backward()
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = _call(user_hook, self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple)
                                                    and all(el is None for el in res)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients.")
                    self.grad_outputs = None

                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = True
        if not isinstance(args, tuple):
            args = (args,)
            is_tuple = False
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        if not is_tuple:
            res = res[0]
        return res
