"""geqrf, orgqr and ormqr beyond their op rows: geqrf's missing derivative, batches, and
PyTorch's errors."""
import numpy as np
import pytest

from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch

_B = np.random.default_rng(1).standard_normal((2, 4, 3)).astype(np.float32)


def test_batched_factors_and_q_are_pytorchs():
    def fn(L):
        a, tau = L.geqrf(L.tensor(_B))
        q = L.orgqr(a, tau)
        return [py(a), py(tau), py(q), py(L.ormqr(a, tau, L.tensor(_B), transpose=True))]
    got = same_as_torch(fn)
    q = np.array(got[2])
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda L: L.geqrf(L.ones(3)), lambda L: L.geqrf(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.orgqr(L.ones(2, 3), L.ones(2)), lambda L: L.orgqr(L.ones(3, 2), L.ones(3)),
    lambda L: L.ormqr(L.ones(3, 2), L.ones(2), L.ones(4, 2)),
    lambda L: L.ormqr(L.ones(3, 2), L.ones(2), L.ones(2, 4), left=False),
    lambda L: L.geqrf(L.ones(3, 3, requires_grad=True))[0].sum().backward(),
])
def test_bad_input_gets_pytorchs_error(call):
    pytorch_error(call)
