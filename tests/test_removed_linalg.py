"""The functions PyTorch removed in 1.9 and keeps only to raise (``torch.solve``, ``eig``,
``symeig``, ``lstsq``, ``matrix_rank`` and the Tensor methods): PyTorch's error and message."""
import pytest

import hookgrad as hg

from tests._pytorch_error import pytorch_error


@pytest.mark.parametrize("call", [
    lambda L, a: L.solve(a, a), lambda L, a: L.lstsq(a, a), lambda L, a: L.eig(a),
    lambda L, a: L.eig(a, True), lambda L, a: L.symeig(a, eigenvectors=True),
    lambda L, a: L.matrix_rank(a), lambda L, a: a.solve(a), lambda L, a: a.lstsq(a),
    lambda L, a: a.eig(), lambda L, a: a.symeig(True),
], ids=["solve", "lstsq", "eig", "eig.vectors", "symeig", "matrix_rank", "Tensor.solve",
        "Tensor.lstsq", "Tensor.eig", "Tensor.symeig"])
def test_removed_functions_raise_pytorchs_error(call):
    kind, message = pytorch_error(lambda L: call(L, L.eye(3)))
    assert kind == "RuntimeError"
    assert message.startswith("This function was deprecated since version 1.9 and is now removed.")


def test_the_message_names_the_replacement():
    with pytest.raises(RuntimeError, match=r"X = torch\.linalg\.solve\(A, B\)"):
        hg.solve(hg.eye(2), hg.eye(2))
    with pytest.raises(TypeError):
        hg.eye(2).solve()  # the argument is still required, as PyTorch's
