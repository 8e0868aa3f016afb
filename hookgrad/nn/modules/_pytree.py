"""Modules as JAX pytrees (see ``module.py``): leaves are the Parameters then the buffers
in ``named_parameters()`` / ``named_buffers()`` order, each once; the aux data is the
original module plus where each leaf sits, so trees rebuilt from one module compare equal.
"""
from collections import OrderedDict

HOOK_DICTS = ("_backward_pre_hooks", "_backward_hooks", "_forward_hooks",
              "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
              "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_state_dict_hooks",
              "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
              "_load_state_dict_post_hooks")


def _module_flatten(module):
    """Leaves: parameters then buffers (named_* order, each once); aux: (origin, layout)."""
    leaves = []
    index = {}
    for _, p in module.named_parameters():
        index[id(p)] = len(leaves)
        leaves.append(p)
    for _, b in module.named_buffers():
        if id(b) not in index:
            index[id(b)] = len(leaves)
            leaves.append(b)
    layout = _layout(module, index, {})
    origin = module.__dict__.get("_pytree_origin", module)
    return leaves, _ModuleAux(origin, layout)


def _slot(v, index):
    return None if v is None else index[id(v)]


def _layout(mod, index, memo):
    key = id(mod)
    if key in memo:  # a module shared within the tree is rebuilt once
        return ("shared", memo[key])
    memo[key] = len(memo)
    return (type(mod),
            tuple((k, _slot(v, index)) for k, v in mod._parameters.items()),
            tuple((k, _slot(v, index)) for k, v in mod._buffers.items()),
            tuple((k, None if c is None else _layout(c, index, memo))
                  for k, c in mod._modules.items()))


class _ModuleAux:
    """Pytree aux data of a Module: equal for modules rebuilt from the same original."""

    __slots__ = ("origin", "layout")

    def __init__(self, origin, layout):
        self.origin = origin
        self.layout = layout

    def __eq__(self, other):
        return (isinstance(other, _ModuleAux) and self.origin is other.origin
                and self.layout == other.layout)

    def __hash__(self):
        return hash((id(self.origin), self.layout))

    def __repr__(self):
        return f"ModuleStructure({type(self.origin).__name__})"


def _module_unflatten(aux, leaves):
    leaves = list(leaves)
    return _rebuild(aux.origin, aux.layout, leaves, [], aux.origin)


def _rebuild(template, layout, leaves, built, origin):
    if layout[0] == "shared":
        return built[layout[1]]
    _, params, buffers, children = layout
    new = object.__new__(type(template))
    d = new.__dict__
    d.update(template.__dict__)
    for name in HOOK_DICTS:
        if name in d:
            d[name] = OrderedDict(d[name])
    d["_non_persistent_buffers_set"] = set(template._non_persistent_buffers_set)
    d["_pytree_origin"] = origin
    built.append(new)
    d["_parameters"] = {k: None if i is None else leaves[i] for k, i in params}
    d["_buffers"] = {k: None if i is None else leaves[i] for k, i in buffers}
    tmods = template._modules
    d["_modules"] = {k: None if sub is None else
                     _rebuild(tmods[k], sub, leaves, built, tmods[k].__dict__.get(
                         "_pytree_origin", tmods[k]))
                     for k, sub in children}
    return new

