"""Registration of a Module's forward and backward hooks (a mixin of ``Module``); the call
path in ``module.py`` runs them."""
from ..._handle import RemovableHandle
from . import _global_hooks as _gh


def _add(hooks, hook, prepend, flags=()):
    """Register ``hook`` in the dict ``hooks`` (first when ``prepend``), marked in each
    flag dict of ``flags``, ``(dict, on)`` pairs, that is on; the handle removes it from
    all of them."""
    handle = RemovableHandle(hooks, extra_dict=[d for d, _ in flags] or None)
    hooks[handle.id] = hook
    for d, on in flags:
        if on:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class _HooksMixin:
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Register a hook run before ``forward``::

            hook(module, args) -> None or modified input
            hook(module, args, kwargs) -> None or (new_args, new_kwargs)  # with_kwargs=True

        ``args`` are the positional arguments; a returned non-tuple is wrapped in a tuple.
        ``prepend=True`` runs it before this module's other forward pre-hooks (global ones
        still run first). Returns a handle whose ``remove()`` removes the hook.

        Example::

            >>> m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        """
        return _add(self._forward_pre_hooks, hook, prepend,
                    ((self._forward_pre_hooks_with_kwargs, with_kwargs),))

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Register a hook run after ``forward`` computed an output::

            hook(module, args, output) -> None or modified output
            hook(module, args, kwargs, output) -> None or modified output  # with_kwargs

        ``always_call=True``: the hook also runs when ``forward`` (or an earlier hook)
        raises; ``prepend=True`` runs it before this module's other forward hooks.

        Example::

            >>> acts = {}
            >>> m.register_forward_hook(lambda mod, args, out: acts.update(fc=out))
        """
        return _add(self._forward_hooks, hook, prepend,
                    ((self._forward_hooks_with_kwargs, with_kwargs),
                     (self._forward_hooks_always_called, always_call)))

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Register a hook run when the gradients w.r.t. the module's outputs are ready::

            hook(module, grad_output) -> tuple[Tensor or None] or None

        ``grad_output`` has an entry per output (None for non-Tensor outputs and outputs
        that got no gradient). A returned tuple of the same length replaces it.
        """
        return _add(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """Register a hook run when the gradients w.r.t. the module's inputs are computed::

            hook(module, grad_input, grad_output) -> tuple[Tensor or None] or None

        ``grad_input`` has an entry per positional argument: None for non-Tensors, zeros
        for a Tensor that does not require grad (when another one does). A returned tuple
        of the same length replaces it. If no input requires grad, the hook fires when
        ``grad_output`` is ready, with ``grad_input`` all None, and must return None.
        The module's forward receives (and its caller gets back) new Tensors carrying the
        hooks; a graph runs the hooks registered when its forward ran.

        Example::

            >>> m.register_full_backward_hook(lambda mod, gi, go: print(go[0].norm()))
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return _add(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Register an old-style backward hook (deprecated: use
        :meth:`register_full_backward_hook`).

        As in PyTorch, it is a post-hook of the ``grad_fn`` of the module's (first)
        output, so it sees that node's gradients only; ``FutureWarning`` s say when those
        are not the module's.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _add(self._backward_hooks, hook, False)

    def _get_backward_hooks(self):
        full, non_full = [], []
        if _gh._global_flags["is_full_backward_hook"] is True:
            full += _gh._global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _gh._global_flags["is_full_backward_hook"] is False:
            non_full += _gh._global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return [*_gh._global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
