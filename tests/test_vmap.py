"""torch.vmap: Tensor functions mapped over a batch dimension, results as Tensors."""
import pytest

import hookgrad as hg
from tests.differential import py, same_as_torch


def test_vmap_maps_tensors_to_tensors():
    def f(L):
        x = L.arange(6.0).reshape(2, 3)
        sums, doubled = L.vmap(lambda r: (r.sum(), r * 2), out_dims=(0, 1))(x)
        return [py(L.vmap(lambda r: r * 2 + r.sum())(x)),
                py(L.vmap(L.dot)(L.ones(5, 3), L.ones(5, 3))),
                py(L.vmap(lambda a, b: a * b, in_dims=(None, 0))(L.arange(3.0), L.ones(2, 3))),
                py(sums), py(doubled), L.is_tensor(sums)]
    got = same_as_torch(f)
    assert got[1] == [3.0] * 5 and got[-1] is True


def test_nested_vmap_builds_a_mask_as_transformers_does():
    def f(L):
        pad = L.tensor([[True, True, False], [True, True, True]])

        def causal(b, h, q, kv):   # transformers' masking_utils pattern
            return (kv <= q) & pad[b, kv]
        g = causal
        for dims in [(None, None, None, 0), (None, None, 0, None), (None, 0, None, None),
                     (0, None, None, None)]:
            g = L.vmap(g, in_dims=dims, out_dims=0)
        return py(g(L.arange(2), L.arange(1), L.arange(3), L.arange(3)))
    assert same_as_torch(f)[0][0] == [[True, False, False], [True, True, False],
                                      [True, True, False]]


def test_vmap_errors():
    x = hg.ones(2, 3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="hookgrad does not implement torch.vmap "
                                                  "of Tensors that require grad yet"):
        hg.vmap(lambda r: r * 2)(x)
    with hg.no_grad():
        assert hg.vmap(lambda r: r * 2)(x).shape == (2, 3)
    with pytest.raises(ValueError, match=r"vmap\(<lambda>, in_dims=\(0,\), ...\)\(<inputs>\): "
                                         "in_dims is not compatible with the structure of "
                                         "`inputs`"):
        hg.vmap(lambda a, b: a + b, in_dims=(0,))(hg.ones(2), hg.ones(2))
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        hg.vmap(lambda r: r, randomness="other")(hg.ones(2))
