"""The further distributions of hookgrad.distributions against torch.distributions:
log_prob, entropy, moments and their gradients; sample shapes and statistics (not values:
the RNG differs); rsample gradients; constraints."""
import inspect

import numpy as np
import pytest

import hookgrad
from tests.differential import needs_torch, py, same_as_torch
from tests.test_distributions import _leaf, _report

A, B = [0.5, 1.5, 3.0], [0.7, 2.0, 1.2]
POS = [0.3, 1.1, 2.5]
UNIT = [0.2, 0.5, 0.9]

# (name, constructor(D, *params), parameter values, a value in the support)
CASES = [
    ("Exponential", lambda D, r: D.Exponential(r), [B], POS),
    ("Laplace", lambda D, m, s: D.Laplace(m, s), [[0.3, -1.0, 2.0], B], [0.1, 0.4, 3.0]),
    ("Cauchy", lambda D, m, s: D.Cauchy(m, s), [[0.3, -1.0, 2.0], B], [0.1, 0.4, 3.0]),
    ("Gumbel", lambda D, m, s: D.Gumbel(m, s), [[0.3, -1.0, 2.0], B], [0.1, 0.4, 3.0]),
    ("HalfNormal", lambda D, s: D.HalfNormal(s), [B], POS),
    ("LogNormal", lambda D, m, s: D.LogNormal(m, s), [[0.3, -1.0, 0.5], B], POS),
    ("Gamma", lambda D, c, r: D.Gamma(c, r), [A, B], POS),
    ("Chi2", lambda D, df: D.Chi2(df), [[1.0, 2.5, 4.0]], POS),
    ("Beta", lambda D, a, b: D.Beta(a, b), [A, B], UNIT),
    ("StudentT", lambda D, df, m, s: D.StudentT(df, m, s), [[3.0, 2.5, 5.0], [0.3, -1.0, 2.0],
                                                           B], [0.1, 0.4, 3.0]),
    ("Weibull", lambda D, s, k: D.Weibull(s, k), [B, A], POS),
    ("Pareto", lambda D, s, a: D.Pareto(s, a), [[0.2, 1.0, 2.0], [2.5, 3.0, 4.5]],
     [0.3, 1.1, 2.5]),
    ("Geometric", lambda D, p: D.Geometric(p), [UNIT], [0.0, 2.0, 5.0]),
    ("GeometricLogits", lambda D, lg: D.Geometric(logits=lg), [[0.3, -1.0, 2.0]],
     [0.0, 2.0, 5.0]),
    ("Dirichlet", lambda D, c: D.Dirichlet(c), [[[0.5, 1.5, 3.0], [2.0, 1.0, 0.7]]],
     [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
    ("Independent", lambda D, m, s: D.Independent(D.Laplace(m, s), 1),
     [[[0.3, -1.0, 2.0]], [B]], [[0.1, 0.4, 3.0]]),
]


@needs_torch
@pytest.mark.parametrize("name,make,params,value", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, make, params, value):
    def fn(L):
        ps = [_leaf(L, p) for p in params]
        d = make(L.distributions, *ps)
        out = _report(L, d, L.tensor(value), ps)
        out["mode"] = py(d.mode)
        out["support"] = repr(d.support)
        for m in ("cdf", "icdf"):
            if name in ("Exponential", "Laplace", "Cauchy", "HalfNormal", "Weibull", "Pareto"):
                arg = value if m == "cdf" else UNIT
                out[m] = py(getattr(d, m)(L.tensor(arg)))
        return out

    same_as_torch(fn)


@needs_torch
def test_poisson_matches_torch():
    def fn(L):
        rate = _leaf(L, POS)
        d = L.distributions.Poisson(rate)
        lp = d.log_prob(L.tensor([0.0, 2.0, 5.0]))
        (lp.sum() + d.mean.sum() + d.variance.sum()).backward()
        return {"log_prob": py(lp), "mode": py(d.mode), "grad": py(rate.grad),
                "support": repr(d.support)}

    same_as_torch(fn)


# the distributions whose __init__ _Params writes from the class's declared parameters
_DECLARED = ["Exponential", "HalfNormal", "Gamma", "Weibull", "FisherSnedecor", "Pareto",
             "Poisson", "GeneralizedPareto", "Uniform", "StudentT", "Normal", "Cauchy",
             "Laplace", "Gumbel", "LogNormal"]


@needs_torch
@pytest.mark.parametrize("name", _DECLARED)
def test_declared_parameters_make_pytorchs_init(name):
    # names, order and defaults of the parameters, positional validate_args, and the
    # TypeError of a call missing one (unannotated: PyTorch annotates its parameters)
    def fn(L):
        cls = getattr(L.distributions, name)
        sig = inspect.signature(cls)
        out = {"params": [(p.name, p.kind.name, repr(p.default))
                          for p in sig.parameters.values()]}
        # every parameter positionally, then validate_args (StudentT's loc would take it)
        n = len(sig.parameters) - 1
        d = cls(*[L.tensor([0.5, 2.0])] * n, False)
        out["validate_args"] = d._validate_args
        out["params_set"] = [tuple(getattr(d, p).shape) for p in sig.parameters
                             if p != "validate_args"]
        try:
            cls()
        except TypeError as e:
            out["error"] = str(e)
        return out

    same_as_torch(fn)


@pytest.mark.parametrize("name,make,params,value", CASES + [
    ("Poisson", lambda D, r: D.Poisson(r), [POS], None)], ids=[c[0] for c in CASES] + ["Poisson"])
def test_sample_shapes_and_means(name, make, params, value):
    hookgrad.manual_seed(0)
    d = make(hookgrad.distributions, *[hookgrad.tensor(p) for p in params])
    s = d.sample((4000,))
    assert tuple(s.shape) == (4000,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert s.dtype == hookgrad.float32
    assert bool(d.support.check(s).all())
    if name not in ("Cauchy", "Pareto", "StudentT"):   # heavy tails: no stable sample mean
        np.testing.assert_allclose(s.mean(0).numpy(), d.mean.numpy(), rtol=0.15, atol=0.08)


@pytest.mark.parametrize("name", ["Gamma", "Laplace"] + [
    pytest.param(n, marks=pytest.mark.slow) for n in ("Beta", "Exponential", "Weibull",
                                                      "Gumbel", "StudentT", "Dirichlet")])
def test_rsample_carries_gradients_to_the_parameters(name):
    make, params = next((c[1], c[2]) for c in CASES if c[0] == name)
    hookgrad.manual_seed(1)
    ps = [hookgrad.tensor(p, requires_grad=True) for p in params]
    d = make(hookgrad.distributions, *ps)
    assert d.has_rsample
    # d E[x] / d(parameters) estimated through the samples equals the mean's gradient
    d.rsample((20000,)).mean(0).sum().backward()
    got = [p.grad.numpy().copy() for p in ps]
    ps2 = [hookgrad.tensor(p, requires_grad=True) for p in params]
    make(hookgrad.distributions, *ps2).mean.sum().backward()
    for g, p in zip(got, ps2):
        want = np.zeros_like(g) if p.grad is None else p.grad.numpy()  # None: no dependence
        if name != "StudentT":   # its mean's gradient is exact only for loc
            np.testing.assert_allclose(g, want, rtol=0.15, atol=0.05)
    assert all(np.isfinite(g).all() for g in got)
