"""The further distributions of hookgrad.distributions (those built on transforms, the
count and one-hot ones, the multivariate ones, mixtures) against torch.distributions:
log_prob, entropy, moments, cdf/icdf and their gradients, shapes, supports, expand and
validation; samples by shape, support and statistics (the RNG differs)."""
import numpy as np
import pytest

import hookgrad
from tests.differential import needs_torch, py, raises_as_torch, same_as_torch, torch

T2, U2 = [0.5, 3.0], [1.5, 2.0]
PROBS = [[0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]
LOC2 = [[0.1, 0.2, -0.3], [1.0, 0.0, 0.5]]
COV = [[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]]
VEC2 = [[0.5, -0.1, 0.3], [0.2, 0.2, 0.2]]
CORR_TRIL = [[1.0, 0.0, 0.0], [0.29131263494491577, 0.9566279053688049, 0.0],
             [-0.46211716532707214, 0.7393006086349487, 0.48977771401405334]]


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
    ("Binomial", lambda D, n, p: D.Binomial(n, probs=p), [[5.0, 5.0], [0.2, 0.7]],
     [3.0, 1.0]),
    ("BinomialLogits", lambda D, lg: D.Binomial(10, logits=lg), [[0.2, -0.7]], [3.0, 1.0]),
    ("NegativeBinomial", lambda D, n, p: D.NegativeBinomial(n, probs=p),
     [[5.0, 2.5], [0.2, 0.7]], [3.0, 1.0]),
    ("NegativeBinomialLogits", lambda D, lg: D.NegativeBinomial(3.0, logits=lg),
     [[0.2, -0.7]], [3.0, 0.0]),
    ("Multinomial", lambda D, p: D.Multinomial(4, probs=p), [PROBS], [[3.0, 1.0, 0.0],
                                                                   [1.0, 1.0, 2.0]]),
    ("OneHotCategorical", lambda D, lg: D.OneHotCategorical(logits=lg), [PROBS],
     [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    ("OneHotCategoricalStraightThrough", lambda D, p: D.OneHotCategoricalStraightThrough(
        probs=p), [PROBS], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    ("MultivariateNormalCov", lambda D, m, c: D.MultivariateNormal(m, covariance_matrix=c),
     [LOC2, COV], VEC2),
    ("MultivariateNormalPrecision", lambda D, m, c: D.MultivariateNormal(
        m, precision_matrix=c), [LOC2, COV], VEC2),
    ("MultivariateNormalTril", lambda D, m, c: D.MultivariateNormal(m, scale_tril=c),
     [LOC2, [[1.5, 0.0, 0.0], [0.3, 1.2, 0.0], [-0.4, 0.1, 0.9]]], VEC2),
    ("LowRankMultivariateNormal", lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d),
     [LOC2, [[0.5, 0.1], [0.2, -0.3], [1.0, 0.4]], [0.5, 1.0, 2.0]], VEC2),
    ("FisherSnedecor", lambda D, a, b: D.FisherSnedecor(a, b), [[3.0, 5.0], [5.0, 6.5]],
     [0.3, 1.5]),
    ("GeneralizedPareto", lambda D, m, s, c: D.GeneralizedPareto(m, s, c),
     [[0.0, 1.0], [1.0, 2.0], [0.3, -0.2]], [0.3, 1.5]),
    ("GeneralizedParetoExponential", lambda D, m, s, c: D.GeneralizedPareto(m, s, c),
     [[0.0, 1.0], [1.0, 2.0], [0.0, 0.0]], [0.3, 1.5]),
    ("ContinuousBernoulli", lambda D, p: D.ContinuousBernoulli(probs=p),
     [[0.2, 0.5, 0.8]], [0.3, 0.5, 0.9]),
    ("ContinuousBernoulliLogits", lambda D, lg: D.ContinuousBernoulli(logits=lg),
     [[0.2, -1.0, 3.0]], [0.3, 0.5, 0.9]),
    ("MixtureSameFamily", lambda D, lg, m: D.MixtureSameFamily(
        D.Categorical(logits=lg), D.Normal(m, 0.7)), [[0.3, -0.2, 1.0], [0.0, 1.0, -1.0]],
     [0.3, 1.5]),
    ("MixtureSameFamilyEvents", lambda D, lg, m: D.MixtureSameFamily(
        D.Categorical(logits=lg), D.Independent(D.Normal(m, 0.7), 1)),
     [[[0.3, -0.2], [0.0, 1.0]], [[[0.0, 1.0], [1.0, -1.0]], [[0.5, 0.5], [2.0, 1.0]]]],
     [[0.3, 1.5], [0.2, 0.1]]),
    ("VonMises", lambda D, m, c: D.VonMises(m, c), [[0.0, 1.0, -2.0, 3.0],
                                                   [0.5, 2.0, 5.0, 30.0]],
     [0.3, 1.2, -1.0, 2.9]),
    ("LKJCholesky", lambda D, c: D.LKJCholesky(3, c), [[0.5, 2.0]], CORR_TRIL),
    ("Wishart", lambda D, df, c: D.Wishart(df, covariance_matrix=c), [[4.0, 6.5], COV],
     [[1.0, 0.2, 0.0], [0.2, 2.0, 0.3], [0.0, 0.3, 1.5]]),
    ("WishartPrecision", lambda D, c: D.Wishart(5.0, precision_matrix=c), [COV],
     [[1.0, 0.2, 0.0], [0.2, 2.0, 0.3], [0.0, 0.3, 1.5]]),
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
    if name not in NO_MEAN:
        np.testing.assert_allclose(s.mean(0).numpy(), d.mean.numpy(), rtol=0.1, atol=0.05)


NO_MEAN = {"HalfCauchy", "InverseGamma", "LogisticNormal", "RelaxedBernoulli",
           "RelaxedBernoulliLogits", "RelaxedOneHotCategorical",   # none or no closed form
           "FisherSnedecor", "GeneralizedPareto",   # heavy tails: no stable sample mean
           "VonMises", "LKJCholesky", "Wishart", "WishartPrecision"}   # tested below


@pytest.mark.parametrize("name", ["RelaxedBernoulli", "RelaxedOneHotCategorical",
                                  "Kumaraswamy", "LogisticNormal", "LowRankMultivariateNormal"])
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


@pytest.fixture
def validating():
    """Argument validation on in both libraries, as by default (an earlier test or an
    imported library may have turned PyTorch's off)."""
    libs = [hookgrad] + ([torch] if torch is not None else [])
    before = [L.distributions.Distribution._validate_args for L in libs]
    for L in libs:
        L.distributions.Distribution.set_default_validate_args(True)
    yield
    for L, b in zip(libs, before):
        L.distributions.Distribution.set_default_validate_args(b)


@pytest.mark.usefixtures("validating")
def test_family_validation_errors_match_torch():
    raises_as_torch(lambda L: L.distributions.HalfCauchy(L.tensor([-1.0])), ValueError,
                    r"Expected parameter scale .* to satisfy the constraint "
                    r"GreaterThan\(lower_bound=0.0\)")
    raises_as_torch(lambda L: L.distributions.Kumaraswamy(1.0, 2.0).log_prob(
        L.tensor([1.5])), ValueError, "to be within the support")
    raises_as_torch(lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5)), ValueError,
                    "Either `probs` or `logits` must be specified, but not both.")


def test_multivariate_normal_rsample_is_loc_plus_the_factor_times_normal_noise():
    loc = hookgrad.tensor(LOC2, requires_grad=True)
    cov = hookgrad.tensor(COV, requires_grad=True)
    d = hookgrad.distributions.MultivariateNormal(loc, covariance_matrix=cov)
    hookgrad.manual_seed(5)
    x = d.rsample((4,))
    hookgrad.manual_seed(5)
    eps = hookgrad.randn(4, 2, 3)
    want = loc + (hookgrad.linalg.cholesky(cov) @ eps.unsqueeze(-1)).squeeze(-1)
    np.testing.assert_allclose(x.detach().numpy(), want.detach().numpy(), rtol=1e-5)
    x.pow(2).sum().backward()
    assert bool(cov.grad.isfinite().all()) and bool((loc.grad != 0).all())


@needs_torch
def test_straight_through_gradient_matches_torch():
    # the sample's gradient is probs' own: it does not depend on the draw
    def fn(L):
        logits = L.tensor(PROBS, requires_grad=True)
        d = L.distributions.OneHotCategoricalStraightThrough(logits=logits)
        (d.rsample((3,)) * L.tensor([1.0, -2.0, 0.5])).sum().backward()
        return py(logits.grad)

    same_as_torch(fn)


@pytest.mark.usefixtures("validating")
def test_multivariate_validation_errors_match_torch():
    raises_as_torch(lambda L: L.distributions.MultivariateNormal(L.zeros(2)), ValueError,
                    "Exactly one of covariance_matrix or precision_matrix or scale_tril")
    raises_as_torch(lambda L: L.distributions.MultivariateNormal(
        L.zeros(2), covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]])), ValueError,
        "constraint PositiveDefinite")
    raises_as_torch(lambda L: L.distributions.MultivariateNormal(L.tensor(0.0), L.eye(1)),
                    ValueError, "loc must be at least one-dimensional.")
    raises_as_torch(lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(3), L.zeros(2, 1), L.ones(3)), ValueError,
        "cov_factor must be a batch of matrices with shape 3 x m")
    raises_as_torch(lambda L: L.distributions.Multinomial(L.tensor(3), L.ones(3) / 3),
                    NotImplementedError, "inhomogeneous total_count is not supported")
    raises_as_torch(lambda L: L.distributions.Binomial(L.tensor([2.0, 3.0]), L.tensor(
        [0.5, 0.5])).entropy(), NotImplementedError, "Inhomogeneous total count")
    raises_as_torch(lambda L: L.distributions.Binomial(2, L.tensor([0.5])).log_prob(
        L.tensor([3.0])), ValueError, "to be within the support")


KL_PAIRS = [
    ("MultivariateNormal", lambda D, L: (D.MultivariateNormal(L.tensor(LOC2),
                                                              covariance_matrix=L.tensor(COV)),
                                         D.MultivariateNormal(L.tensor([0.0, 1.0, 0.0]),
                                                              scale_tril=L.eye(3) * 0.8))),
    ("LowRank", lambda D, L: (_lowrank(D, L, 1.0), _lowrank(D, L, 0.5))),
    ("MultivariateNormalLowRank", lambda D, L: (
        D.MultivariateNormal(L.tensor(LOC2), covariance_matrix=L.tensor(COV)),
        _lowrank(D, L, 0.5))),
    ("LowRankMultivariateNormal", lambda D, L: (
        _lowrank(D, L, 1.0), D.MultivariateNormal(L.tensor(LOC2) * 2,
                                                  covariance_matrix=L.tensor(COV)))),
    ("Binomial", lambda D, L: (D.Binomial(L.tensor([5.0, 6.0]), probs=L.tensor([0.2, 0.5])),
                               D.Binomial(L.tensor([5.0, 5.0]), probs=L.tensor([0.4, 0.5])))),
    ("OneHotCategorical", lambda D, L: (D.OneHotCategorical(L.tensor(PROBS)),
                                        D.OneHotCategorical(logits=L.tensor(LOC2)))),
    ("ContinuousBernoulli", lambda D, L: (D.ContinuousBernoulli(L.tensor([0.2, 0.7])),
                                          D.ContinuousBernoulli(L.tensor([0.4, 0.9])))),
    ("Independent", lambda D, L: (D.Independent(D.Normal(L.tensor(LOC2), 1.0), 1),
                                  D.Independent(D.Normal(L.tensor(VEC2), 2.0), 1))),
    ("Transformed", lambda D, L: (D.LogisticNormal(L.tensor([0.0, 1.0]), L.tensor([1.0, 2.0])),
                                  D.LogisticNormal(L.tensor([1.0, 1.0]), L.tensor([1.0, 1.0])))),
    ("ExponentialFamilyGamma", lambda D, L: (
        D.Gamma(L.tensor([1.0, 2.0]), L.tensor([1.0, 3.0])),
        D.Gamma(L.tensor([2.0, 2.0]), L.tensor([0.5, 3.0])))),
    ("ExponentialFamilyDirichlet", lambda D, L: (D.Dirichlet(L.tensor(PROBS)),
                                                 D.Dirichlet(L.tensor(COV[:2]).abs()))),
]


def _lowrank(D, L, s):
    return D.LowRankMultivariateNormal(L.tensor(LOC2) * s, L.tensor(
        [[0.5, 0.1], [0.2, -0.3], [1.0, 0.4]]) * s, L.tensor([0.5, 1.0, 2.0]) + s)


@needs_torch
@pytest.mark.parametrize("name,make", KL_PAIRS, ids=[c[0] for c in KL_PAIRS])
def test_kl_divergence_matches_torch(name, make):
    def fn(L):
        p, q = make(L.distributions, L)
        return py(L.distributions.kl_divergence(p, q))

    same_as_torch(fn, tol=1e-4)


@pytest.mark.parametrize("name", ["MultivariateNormal", "LowRank",
                                  "MultivariateNormalLowRank", "LowRankMultivariateNormal"])
def test_gaussian_kl_of_different_event_sizes_is_pytorchs_error(name):
    which = {"MultivariateNormal": "Multivariate Normals",
             "LowRank": "Low Rank Multivariate Normals"}.get(name, r"\(Low Rank\) "
                                                               "Multivariate Normals")
    make = dict(KL_PAIRS)[name]

    def call(L):
        p, q = make(L.distributions, L)
        D = L.distributions
        # q again, one dimension shorter
        q = (D.LowRankMultivariateNormal(q.loc[..., :2], q.cov_factor[..., :2, :],
                                         q.cov_diag[..., :2])
             if isinstance(q, D.LowRankMultivariateNormal)
             else D.MultivariateNormal(q.loc[..., :2], scale_tril=q.scale_tril[..., :2, :2]))
        D.kl_divergence(p, q)

    # PyTorch's message has a run of spaces (a line continuation inside its string)
    raises_as_torch(call, ValueError, f"KL-divergence between two {which} with\\s+"
                    "different event shapes cannot be computed")


@needs_torch
def test_exponential_family_entropy_and_bregman_kl_match_torch():
    # ExponentialFamily.entropy from the natural parameters and the log normalizer, by
    # autograd, equals each family's closed form, in both libraries
    def fn(L):
        D, t = L.distributions, L.tensor
        fams = [D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Exponential(t([0.5, 2.0])),
                D.Gamma(t([1.5, 2.0]), t([1.0, 3.0])), D.Bernoulli(t([0.2, 0.7]))]
        out = [[isinstance(d, D.ExponentialFamily), py(D.ExponentialFamily.entropy(d)),
                py(d.entropy())] for d in fams]
        beta, dirichlet = D.Beta(t([1.5, 2.0]), t([0.5, 3.0])), D.Dirichlet(t(PROBS))
        out.append([py(d._log_normalizer(*d._natural_params)) for d in (beta, dirichlet)])
        return out

    got = same_as_torch(fn, tol=1e-4)
    for is_family, by_autograd, closed in got[:-1]:
        assert is_family and by_autograd == pytest.approx(closed, rel=1e-4)
    raises_as_torch(lambda L: L.distributions.kl_divergence(
        L.distributions.Dirichlet(L.ones(2)), L.distributions.Beta(1.0, 1.0)),
        NotImplementedError, "The cross KL-divergence between different exponential")


def test_von_mises_lkj_and_wishart_samples_have_their_laws_moments():
    D = hookgrad.distributions
    hookgrad.manual_seed(0)
    loc = hookgrad.tensor([0.3, -1.0])
    x = D.VonMises(loc, hookgrad.tensor([4.0, 2.0])).sample((4000,))
    circular_mean = np.arctan2(x.sin().mean(0).numpy(), x.cos().mean(0).numpy())
    np.testing.assert_allclose(circular_mean, loc.numpy(), atol=0.05)
    assert float(x.abs().max()) <= np.pi
    # LKJ(eta) in 3 dimensions: an off-diagonal correlation has variance 1 / (2 eta + 2)
    lkj = D.LKJCholesky(3, hookgrad.tensor([0.5, 4.0])).sample((4000,))
    corr = lkj @ lkj.mT
    np.testing.assert_allclose(corr[..., 1, 0].pow(2).mean(0).numpy(), [1 / 3, 1 / 10],
                               rtol=0.1)
    w = D.Wishart(hookgrad.tensor(5.0), covariance_matrix=hookgrad.eye(2) * 2)
    s = w.rsample((4000,))
    assert bool(w.support.check(s).all())
    # 4000 draws: each entry's mean within ~4 standard errors (variance at most 40)
    np.testing.assert_allclose(s.mean(0).numpy(), w.mean.numpy(), atol=0.4)
