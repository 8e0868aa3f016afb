"""The further distributions of hookgrad.distributions (those built on transforms, the
count and one-hot ones, the multivariate ones, mixtures) against torch.distributions:
log_prob, entropy, moments, cdf/icdf and their gradients, shapes, supports, expand and
validation; samples by shape, support and statistics (the RNG differs)."""
import numpy as np
import pytest

import hookgrad
from tests.differential import needs_torch, py, raises_as_torch, same_as_torch

T2, U2 = [0.5, 3.0], [1.5, 2.0]


def _value(L, v):
    return L.tensor(v)


def _try(fn):
    try:
        return fn()
    except NotImplementedError:
        return "not implemented"


def report(L, d, value, params):
    """Everything deterministic a distribution gives, and the gradient of it all with
    respect to ``params``; what a distribution leaves unimplemented must be so in both."""
    out = {"batch": list(d.batch_shape), "event": list(d.event_shape),
           "support": repr(d.support), "has_rsample": d.has_rsample,
           "expand": list(d.expand((2,) + tuple(d.batch_shape)).batch_shape)}
    total = 0
    parts = {"log_prob": lambda: d.log_prob(value), "entropy": d.entropy,
             "mean": lambda: d.mean, "variance": lambda: d.variance, "mode": lambda: d.mode,
             "cdf": lambda: d.cdf(value),
             "expanded_log_prob": lambda: d.expand((2,) + tuple(d.batch_shape)).log_prob(
                 value)}
    for name, fn in parts.items():
        got = _try(fn)
        out[name] = got if isinstance(got, str) else py(got)
        # cdf: PyTorch's gamma cdf (igamma) has no derivative in the concentration
        if not isinstance(got, str) and got.dtype.is_floating_point and name != "cdf":
            finite = got.isfinite()
            total = total + (got * finite).nan_to_num().sum()
    if not isinstance(total, int) and total.requires_grad:
        total.backward()
    out["grads"] = [py(p.grad) for p in params]
    return out


# (name, make(D, *params), parameter values, a value in the support)
CASES = [
    ("HalfCauchy", lambda D, s: D.HalfCauchy(s), [U2], [0.3, 1.5]),
    ("InverseGamma", lambda D, c, r: D.InverseGamma(c, r), [T2, U2], [0.3, 1.5]),
    ("Kumaraswamy", lambda D, a, b: D.Kumaraswamy(a, b), [T2, U2], [0.3, 0.6]),
    ("LogisticNormal", lambda D, m, s: D.LogisticNormal(m, s), [[0.5, -1.0], U2],
     [0.3, 0.6, 0.1]),
    ("RelaxedBernoulli", lambda D, p: D.RelaxedBernoulli(_temp(D), probs=p), [[0.2, 0.9]],
     [0.3, 0.6]),
    ("RelaxedBernoulliLogits", lambda D, lg: D.RelaxedBernoulli(_temp(D), logits=lg),
     [[0.2, -0.9]], [0.3, 0.6]),
    ("RelaxedOneHotCategorical", lambda D, lg: D.RelaxedOneHotCategorical(
        _temp(D), logits=lg), [[[0.2, 0.9, -1.0], [0.0, 0.5, 0.3]]],
     [[0.3, 0.6, 0.1], [0.2, 0.2, 0.6]]),
]


# hookgrad's Gamma has no cdf yet (no regularised incomplete gamma op, torch.igamma)
NO_CDF = {"InverseGamma"}


def _temp(D):
    L = hookgrad if D is hookgrad.distributions else __import__("torch")
    return L.tensor(0.7)


@needs_torch
@pytest.mark.parametrize("name,make,params,value", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, make, params, value):
    def fn(L):
        ps = [L.tensor(p, requires_grad=True) for p in params]
        d = make(L.distributions, *ps)
        out = report(L, d, _value(L, value), ps)
        if name in NO_CDF:
            out.pop("cdf")
        return out

    same_as_torch(fn, tol=1e-4)


@pytest.mark.parametrize("name,make,params,value", CASES, ids=[c[0] for c in CASES])
def test_samples_lie_in_the_support_with_the_law_s_mean(name, make, params, value):
    hookgrad.manual_seed(0)
    d = make(hookgrad.distributions, *[hookgrad.tensor(p) for p in params])
    s = d.sample((4000,))
    assert tuple(s.shape) == (4000,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert not s.requires_grad
    assert bool(d.support.check(s).all())
    if name in ("Kumaraswamy",):
        np.testing.assert_allclose(s.mean(0).numpy(), d.mean.numpy(), rtol=0.1, atol=0.03)


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical",
                                  "Kumaraswamy", "LogisticNormal"])
def test_rsample_carries_gradients_to_the_parameters(name):
    make, params = next((c[1], c[2]) for c in CASES if c[0] == name)
    ps = [hookgrad.tensor(p, requires_grad=True) for p in params]
    d = make(hookgrad.distributions, *ps)
    assert d.has_rsample
    d.rsample((16,)).pow(2).sum().backward()   # a simplex sums to 1: square first
    assert all(p.grad is not None and bool(p.grad.isfinite().all()) for p in ps)
    assert any(bool((p.grad != 0).any()) for p in ps)


def test_relaxed_bernoulli_rsample_is_the_sigmoid_of_logistic_noise():
    # with the same uniform draws, rsample is sigmoid((logit(u) + logits) / temperature)
    logits = hookgrad.tensor([0.3, -1.2], requires_grad=True)
    d = hookgrad.distributions.RelaxedBernoulli(hookgrad.tensor(0.5), logits=logits)
    hookgrad.manual_seed(7)
    x = d.rsample()
    hookgrad.manual_seed(7)
    u = hookgrad.rand(2)
    want = ((u.log() - (-u).log1p() + logits) / 0.5).sigmoid()
    np.testing.assert_allclose(x.detach().numpy(), want.detach().numpy(), rtol=1e-5)


def test_family_validation_errors_match_torch():
    raises_as_torch(lambda L: L.distributions.HalfCauchy(L.tensor([-1.0])), ValueError,
                    r"Expected parameter scale .* to satisfy the constraint "
                    r"GreaterThan\(lower_bound=0.0\)")
    raises_as_torch(lambda L: L.distributions.Kumaraswamy(1.0, 2.0).log_prob(
        L.tensor([1.5])), ValueError, "to be within the support")
    raises_as_torch(lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5)), ValueError,
                    "Either `probs` or `logits` must be specified, but not both.")
