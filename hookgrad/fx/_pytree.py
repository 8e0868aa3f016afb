"""``torch.fx._pytree``: flattening a pytree to the structure of a given :class:`TreeSpec`
(for calling a traced program with the inputs it was traced with)."""
from .. import _missing
from ..utils import _pytree
from ..utils._pytree import TreeSpec, tree_flatten  # noqa: F401 - PyTorch's module has them

SUPPORTED_NODES = {}  # type -> fn(obj, spec) -> the children to flatten further


def register_pytree_flatten_spec(cls, flatten_fn_spec, flatten_fn_exact_match_spec=None):
    """How to flatten instances of ``cls`` to a spec: ``flatten_fn_spec(obj, spec)``
    returns the children in the spec's order."""
    SUPPORTED_NODES[cls] = flatten_fn_spec


def tree_flatten_spec(pytree, spec):
    """The leaves of ``pytree`` in the order ``spec`` lists them (``pytree`` may hold more,
    as a dict with extra keys)."""
    if spec.is_leaf():
        return [pytree]
    flatten = SUPPORTED_NODES.get(spec.type)
    if flatten is None:
        node_type = (spec.type if spec.type in _pytree.SUPPORTED_NODES else None)
        if node_type is None:
            raise RuntimeError(f"{type(pytree)} does not have a flatten_fn_spec associated "
                               "with it. Please register one with "
                               "torch.fx._pytree.register_pytree_flatten_spec.  If you have "
                               "serialized your model, make sure that any custom pytrees "
                               "have been registered before loading it.")
        children = _children(pytree, spec)
    else:
        children = flatten(pytree, spec)
    return [leaf for child, s in zip(children, spec.children_specs)
            for leaf in tree_flatten_spec(child, s)]


def _children(pytree, spec):
    if spec.type in (dict, _pytree.OrderedDict, _pytree.defaultdict):
        keys = spec.context if spec.type is not _pytree.defaultdict else spec.context[1]
        return [pytree[k] for k in keys]
    return list(pytree)[:spec.num_children]


__getattr__ = _missing.module_getattr(__name__)
