"""Iteration over a Module tree (a mixin of ``Module``): ``parameters``, ``buffers``,
``children``, ``modules`` and their ``named_*`` forms, with PyTorch's order, dotted names
and de-duplication of shared members."""


class _IterationMixin:
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """An iterator over the module's Parameters (and its submodules' if ``recurse``).

        Example::

            >>> opt = hookgrad.optim.SGD(model.parameters(), lr=0.1)
        """
        if type(self).named_parameters is not _NAMED_PARAMETERS:  # PyTorch's goes through it
            return (param for _, param in self.named_parameters(recurse=recurse))
        return self._members(True, recurse)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(name, Parameter)``, names dotted as in ``state_dict``; a
        Parameter shared by several modules comes once unless ``remove_duplicate=False``.
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """An iterator over the module's buffers (and its submodules' if ``recurse``)."""
        if type(self).named_buffers is not _NAMED_BUFFERS:  # PyTorch's goes through it
            return (buf for _, buf in self.named_buffers(recurse=recurse))
        return self._members(False, recurse)

    def _members(self, params, recurse):
        """Each module's parameters (``params``) or buffers, as ``_named_members`` yields
        them (the same modules, order and de-duplication) without building their names: a
        model's ``zero_grad`` and optimizer walk them per step, and the names' generators
        cost Python calls per member."""
        memo = set()
        for _, module in self.named_modules() if recurse else (("", self),):
            for v in (module._parameters if params else module._buffers).values():
                if v is not None and v not in memo:
                    memo.add(v)
                    yield v

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(name, buffer)``, names dotted as in ``state_dict``."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        """An iterator over the immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """An iterator over ``(name, child)`` of the immediate child modules."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        """An iterator over all modules of the tree, ``self`` first (pre-order)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """An iterator over ``(dotted name, module)`` of the tree, ``("", self)`` first.

        Example::

            >>> [n for n, _ in nn.Sequential(nn.Linear(2, 2), nn.ReLU()).named_modules()]
            ['', '0', '1']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        # NOTE: the tree is walked with a stack of the children left at each depth, in the
        # order of PyTorch's recursion, not a generator per module: an item from depth d
        # would resume d generators (``parameters()`` walks it, a model's ``self.device``
        # per step). A child whose class overrides ``named_modules`` is asked, as PyTorch's.
        stack = [(prefix, iter(self._modules.items()))]
        while stack:
            prefix, children = stack[-1]
            for name, module in children:
                if module is None:
                    continue
                sub_prefix = prefix + ("." if prefix else "") + name
                if type(module).named_modules is not _NAMED_MODULES:
                    yield from module.named_modules(memo, sub_prefix, remove_duplicate)
                    continue
                if module in memo:
                    continue
                if remove_duplicate:
                    memo.add(module)
                yield sub_prefix, module
                if module._modules:  # a leaf has no level to push (and pop)
                    stack.append((sub_prefix, iter(module._modules.items())))
                    break
            else:
                stack.pop()


_NAMED_MODULES = _IterationMixin.named_modules
_NAMED_PARAMETERS = _IterationMixin.named_parameters
_NAMED_BUFFERS = _IterationMixin.named_buffers
