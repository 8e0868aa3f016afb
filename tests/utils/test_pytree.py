"""torch.utils._pytree: PyTorch's nodes and order (dict keys as inserted, None a leaf),
TreeSpec's printing and errors, key paths, and registered nodes; differential."""
import importlib
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

import hookgrad
import hookgrad.utils._pytree as pytree
from tests.differential import raises, same_as_torch

P = namedtuple("P", "x y")


def _tree():
    return {"b": 1, "a": [2, None, (3,)], "c": P(4, 5), "o": OrderedDict(z=6),
            "d": defaultdict(list, {"k": 7}), "q": deque([8], maxlen=3)}


def _pt(L):
    return importlib.import_module(L.__name__ + ".utils._pytree")


def test_flatten_gives_torchs_leaves_spec_and_round_trip():
    def f(L):
        p = _pt(L)
        leaves, spec = p.tree_flatten(_tree())
        return [leaves, repr(spec).replace("__main__.", "").replace(__name__ + ".", ""),
                spec.num_leaves, spec.num_nodes, spec.num_children,
                p.tree_unflatten(leaves, spec) == _tree(), repr(p.tree_structure(1)),
                p.tree_leaves(None), p.tree_structure([1, (2,)]).child(0).is_leaf(),
                len(p.tree_structure([1, (2,)]).children())]
    got = same_as_torch(f)
    assert got[0] == [1, 2, None, 3, 4, 5, 6, 7, 8]


def test_key_paths_and_maps():
    def f(L):
        p = _pt(L)
        paths = [p.keystr(k) for k, _ in p.tree_flatten_with_path(_tree())[0]]
        return [paths, p.tree_map(lambda a, b: a + b, [1, {"u": 2}], [3, {"u": 4}]),
                p.tree_map_only(int, lambda a: a * 10, [1, "s", (2.5, 3)]),
                p.tree_map_only((str, float), str, [1, "s", (2.5, 3)]),
                p.tree_all(lambda x: x > 0, [1, (2,)]), p.tree_any_only(str, len, [1, ""]),
                p.treespec_pprint(p.tree_structure([1, {"a": 2}])),
                p.key_get(_tree(), p.tree_flatten_with_path(_tree())[0][3][0])]
    assert same_as_torch(f)[0][:2] == ["['b']", "['a'][0]"]


def test_each_key_prints_compares_and_reads_as_pytorchs():
    def f(L):
        p = _pt(L)
        keys = [p.SequenceKey(1), p.MappingKey("a"), p.MappingKey(0), p.GetAttrKey("real")]
        same = [p.SequenceKey(1), p.MappingKey("a"), p.MappingKey(0), p.GetAttrKey("real")]
        containers = [[5, 6], {"a": 2}, {0: 3}, 4.0]
        return [[str(k) for k in keys], [repr(k) for k in keys],
                [k == s and hash(k) == hash(s) for k, s in zip(keys, same)],
                keys[0] == p.MappingKey(1), [k.get(c) for k, c in zip(keys, containers)],
                raises(lambda: keys[1].get({})), raises(setattr, keys[0], "idx", 2)]
    got = same_as_torch(f)
    assert got[0] == ["[1]", "['a']", "[0]", ".real"] and got[3] is False


def test_mismatched_trees_raise_torchs_errors():
    def f(L):
        p = _pt(L)
        spec = p.tree_structure([1, 2])
        return [raises(p.tree_map, lambda a, b: a, [1, 2], [3]),
                raises(p.tree_unflatten, [1], spec), raises(p.tree_unflatten, [1], 3)]
    got = same_as_torch(f)
    assert got[0]["message"] == "Node arity mismatch; expected 2, but got 1."


def test_registered_node_flattens_and_tensors_are_leaves():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    pytree.register_pytree_node(Box, lambda x: ([x.a, x.b], "ctx"),
                                lambda v, c: Box(*v),
                                flatten_with_keys_fn=lambda x: (
                                    [(pytree.GetAttrKey("a"), x.a),
                                     (pytree.GetAttrKey("b"), x.b)], "ctx"))
    t = hookgrad.ones(2)
    leaves, spec = pytree.tree_flatten([Box(t, 2)])
    assert leaves[0] is t and leaves[1] == 2 and spec.child(0).type is Box
    back = pytree.tree_unflatten([5, 6], spec)[0]
    assert (back.a, back.b) == (5, 6)
    assert [pytree.keystr(k) for k, _ in pytree.tree_leaves_with_path([Box(1, 2)])] == \
        ["[0].a", "[0].b"]
    with pytest.raises(ValueError, match="already registered"):
        pytree.register_pytree_node(Box, None, None)
    assert Box in pytree.SUPPORTED_NODES and pytree._register_pytree_node


def test_treespec_dumps_writes_torchs_json_and_loads_reads_it_back():
    def f(L):
        p = _pt(L)
        trees = [{"a": [1, (2,)], "b": None}, OrderedDict(z=1), defaultdict(list, {"k": 1}),
                 deque([1], maxlen=3), 1]
        dumped = [p.treespec_dumps(p.tree_structure(t)) for t in trees]
        back = [p.treespec_loads(d) == p.tree_structure(t) for d, t in zip(dumped, trees)]
        return [dumped, back, raises(p.treespec_dumps, p.tree_structure(P(1, 2))),
                raises(p.treespec_dumps, p.tree_structure([1]), 2)]
    got = same_as_torch(f)
    assert all(got[1]) and got[2]["raises"] == "NotImplementedError"
