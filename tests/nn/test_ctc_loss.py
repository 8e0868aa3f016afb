"""``nn.functional.ctc_loss``, ``nn.CTCLoss`` and ``torch.ctc_loss`` against PyTorch: losses,
gradients through ``log_softmax`` and with respect to ``log_probs`` itself (PyTorch's kernel
returns the logits' gradient there), reductions, ``zero_infinity``, target layouts."""
import numpy as np
import pytest

from ..differential import py, raises_as_torch, same_as_torch

_rng = np.random.default_rng(7)
LOGITS = _rng.standard_normal((7, 3, 5)).astype(np.float32)
PADDED = [[1, 2, 2], [3, 1, 0], [4, 4, 4]]
IN_LEN, TGT_LEN = [7, 5, 3], [3, 2, 3]  # the last sample cannot fit (inf loss)
SCALE = [1.0, 2.0, 3.0]


def _ctc(L, call, targets=PADDED, tgt_len=TGT_LEN, in_len=IN_LEN, weigh=False,
         logits=LOGITS):
    x = L.tensor(logits, requires_grad=True)
    lp = x.log_softmax(-1)
    lp.retain_grad()
    loss = call(L, lp, L.tensor(targets), L.tensor(in_len), L.tensor(tgt_len))
    (loss * L.tensor(SCALE) if weigh else loss).sum().backward()
    return py([loss, loss.grad_fn.name(), lp.grad, x.grad])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_functional_matches_torch(reduction, zero_infinity):
    def call(L, lp, t, il, tl):
        return L.nn.functional.ctc_loss(lp, t, il, tl, reduction=reduction,
                                        zero_infinity=zero_infinity)
    got = same_as_torch(lambda L: _ctc(L, call, weigh=reduction == "none"), tol=1e-4)
    if not zero_infinity:  # the infinite loss: NaN gradients over its valid steps
        assert got[0] == "inf" or got[0][2] == "inf"
        assert "nan" in str(got[2])


def test_fitting_targets_blank_and_module():
    def call(L, lp, t, il, tl):
        return L.nn.CTCLoss(blank=4)(lp, t, il, tl)
    same_as_torch(lambda L: _ctc(L, call, targets=[[1, 2, 2], [3, 1, 0], [0, 0, 1]],
                                 tgt_len=[3, 2, 1], in_len=[7, 7, 4]), tol=1e-4)


def test_concatenated_targets_and_length_lists():
    def call(L, lp, t, il, tl):
        return L.nn.functional.ctc_loss(lp, t, [7, 6, 5], [2, 0, 3], reduction="sum")
    same_as_torch(lambda L: _ctc(L, call, targets=[1, 1, 2, 3, 4]), tol=1e-4)


def test_unbatched():
    def call(L, lp, t, il, tl):
        return L.nn.functional.ctc_loss(lp, t, il, tl)
    same_as_torch(lambda L: _ctc(L, call, logits=LOGITS[:, 0], targets=[2, 3, 3],
                                 in_len=7, tgt_len=3), tol=1e-4)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_top_level_takes_reduction_as_int(reduction):
    def call(L, lp, t, il, tl):
        return L.ctc_loss(lp, t, il, tl, 0, reduction, True)
    same_as_torch(lambda L: _ctc(L, call, weigh=reduction == 0), tol=1e-4)


def test_top_level_default_leaves_the_loss_unreduced():
    def call(L, lp, t, il, tl):
        return L.ctc_loss(lp, t, il, tl)
    same_as_torch(lambda L: _ctc(L, call, weigh=True), tol=1e-4)


def _lp(L):
    return L.tensor(LOGITS).log_softmax(-1)


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.nn.functional.ctc_loss(_lp(L), L.tensor(PADDED), IN_LEN, TGT_LEN, blank=5),
     RuntimeError, "blank must be in label range"),
    (lambda L: L.nn.functional.ctc_loss(_lp(L), L.tensor(PADDED), [7, 5], TGT_LEN),
     RuntimeError, "input_lengths must be of size batch_size"),
    (lambda L: L.nn.functional.ctc_loss(_lp(L), L.tensor(PADDED), IN_LEN, [3]),
     RuntimeError, "target_lengths must be of size batch_size"),
    (lambda L: L.nn.functional.ctc_loss(_lp(L), L.tensor([1, 2]), IN_LEN, TGT_LEN),
     RuntimeError, "Expected tensor to have size 8 at dimension 0, but got size 2"),
    (lambda L: L.nn.functional.ctc_loss(_lp(L), L.tensor(PADDED), IN_LEN, TGT_LEN,
                                        reduction="avg"),
     ValueError, "avg is not a valid value for reduction"),
])
def test_errors_as_torch(call, exc, match):
    raises_as_torch(call, exc, match)
