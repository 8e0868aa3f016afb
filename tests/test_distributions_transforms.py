"""hookgrad.distributions.transforms, biject_to/transform_to and TransformedDistribution
against torch.distributions: forward and inverse maps, log-Jacobians and their
gradients, domains, shapes, caching, and the distributions built from them."""
import pytest

from tests.differential import needs_torch, py, raises_as_torch, same_as_torch

VEC = [0.3, -1.0, 2.0]
POS = [0.4, 1.5, 3.0]
MAT = [[0.5, 0.2, -0.3], [1.0, -0.4, 0.6], [0.1, 0.7, 0.2]]

# (name, make(T) -> transform, input x in the domain)
TRANSFORMS = [
    ("Exp", lambda T, L: T.ExpTransform(), VEC),
    ("Power", lambda T, L: T.PowerTransform(L.tensor([0.5, 2.0, -1.5])), POS),
    ("Sigmoid", lambda T, L: T.SigmoidTransform(), VEC),
    ("Tanh", lambda T, L: T.TanhTransform(), VEC),
    ("Softplus", lambda T, L: T.SoftplusTransform(), VEC),
    ("Affine", lambda T, L: T.AffineTransform(L.tensor([1.0, 0.0, -2.0]), -2.5), VEC),
    ("AffineEvent", lambda T, L: T.AffineTransform(1.0, L.tensor([0.5, -2.0, 3.0]),
                                                   event_dim=1), VEC),
    ("StickBreaking", lambda T, L: T.StickBreakingTransform(), VEC),
    ("CorrCholesky", lambda T, L: T.CorrCholeskyTransform(), VEC),
    ("LowerCholesky", lambda T, L: T.LowerCholeskyTransform(), MAT),
    ("Reshape", lambda T, L: T.ReshapeTransform((3,), (3, 1)), VEC),
    ("Independent", lambda T, L: T.IndependentTransform(T.ExpTransform(), 1), VEC),
    ("Compose", lambda T, L: T.ComposeTransform([T.AffineTransform(0.5, 2.0),
                                                 T.SigmoidTransform()]), VEC),
    ("ComposeEvent", lambda T, L: T.ComposeTransform([T.ExpTransform(),
                                                      T.StickBreakingTransform()]), VEC),
    ("Inverse", lambda T, L: T.ExpTransform().inv, POS),
    ("Cat", lambda T, L: T.CatTransform([T.ExpTransform(), T.TanhTransform()], 0, [1, 2]),
     VEC),
    ("Stack", lambda T, L: T.StackTransform([T.ExpTransform(), T.SigmoidTransform(),
                                             T.AffineTransform(1.0, 3.0)], 0), VEC),
    ("CDF", lambda T, L: T.CumulativeDistributionTransform(
        L.distributions.Normal(0.5, 2.0)), VEC),
]


@needs_torch
@pytest.mark.parametrize("name,make,x", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transform_matches_torch(name, make, x):
    def fn(L):
        T = L.distributions.transforms
        t = make(T, L)
        xt = L.tensor(x, requires_grad=True)
        y = t(xt)
        out = {"y": py(y), "x_back": py(t.inv(y)), "domain": repr(t.domain),
               "codomain": repr(t.codomain), "bijective": t.bijective,
               "repr": repr(t), "forward_shape": list(t.forward_shape(xt.shape)),
               "inverse_shape": list(t.inverse_shape(y.shape)),
               "domain_ok": py(t.domain.check(xt)), "codomain_ok": py(t.codomain.check(y))}
        if t.bijective:
            ladj = t.log_abs_det_jacobian(xt, y)
            (y.sum() + ladj.sum()).backward()
            out["ladj"], out["grad"] = py(ladj), py(xt.grad)
        if name not in ("StickBreaking", "CorrCholesky", "Reshape", "LowerCholesky",
                        "Cat", "Stack", "ComposeEvent", "Independent"):
            out["sign"] = py(t.sign)
        return out

    same_as_torch(fn)


@needs_torch
def test_non_bijective_transforms_match_torch():
    def fn(L):
        T = L.distributions.transforms
        x = L.tensor(MAT)
        out = {}
        for t in (T.AbsTransform(), T.SoftmaxTransform(), T.PositiveDefiniteTransform()):
            y = t(x)
            out[repr(t)] = [py(y), py(t.inv(y)), t.bijective, repr(t.codomain),
                            py(t.codomain.check(y))]
        return out

    same_as_torch(fn)


@needs_torch
def test_caching_equality_and_identity_match_torch():
    def fn(L):
        T = L.distributions.transforms
        x = L.tensor(VEC)
        cached = T.ExpTransform(cache_size=1)
        y = cached(x)
        plain = T.ExpTransform()
        return {"cached_inverse_is_x": cached.inv(y) is x,
                "cached_again": cached(x) is y,
                "plain_inverse_is_x": plain.inv(plain(x)) is x,
                "with_cache": plain.with_cache(1)._cache_size,
                "inv_inv": plain.inv.inv is plain,
                "eq": [T.ExpTransform() == T.ExpTransform(),
                       T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0),
                       T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 3.0),
                       T.ExpTransform().inv == T.ExpTransform().inv,
                       T.ExpTransform() != T.SigmoidTransform()],
                "identity": [py(T.identity_transform(x)), repr(T.identity_transform.domain),
                             py(T.identity_transform.log_abs_det_jacobian(x, x))],
                "compose_inv": repr(T.ComposeTransform([T.ExpTransform(),
                                                        T.TanhTransform()]).inv)}

    got = same_as_torch(fn)
    assert got["cached_inverse_is_x"] and not got["plain_inverse_is_x"]


def test_transform_errors_match_torch():
    raises_as_torch(lambda L: L.distributions.transforms.ExpTransform(cache_size=2),
                    ValueError, "cache_size must be 0 or 1")
    raises_as_torch(lambda L: L.distributions.transforms.ReshapeTransform((3,), (2,)),
                    ValueError, "different numbers of elements")
    raises_as_torch(lambda L: L.distributions.transforms.ReshapeTransform(
        (3,), (3, 1)).forward_shape((2, 4)), ValueError, "Shape mismatch")
    raises_as_torch(lambda L: L.distributions.transforms.CorrCholeskyTransform()
                    .forward_shape((4,)), ValueError, "not a flattened lower-diagonal")
    raises_as_torch(lambda L: L.distributions.transforms.StickBreakingTransform()
                    .forward_shape(()), ValueError, "Too few dimensions on input")
    raises_as_torch(lambda L: L.distributions.transforms.Transform().sign,
                    NotImplementedError, "^$")


CONSTRAINTS = [
    ("real", lambda C: C.real), ("positive", lambda C: C.positive),
    ("nonnegative", lambda C: C.nonnegative), ("greater_than", lambda C: C.greater_than(2.0)),
    ("greater_than_eq", lambda C: C.greater_than_eq(-1.0)),
    ("less_than", lambda C: C.less_than(3.0)), ("unit_interval", lambda C: C.unit_interval),
    ("interval", lambda C: C.interval(-2.0, 5.0)),
    ("half_open_interval", lambda C: C.half_open_interval(0.0, 4.0)),
    ("simplex", lambda C: C.simplex), ("real_vector", lambda C: C.real_vector),
    ("corr_cholesky", lambda C: C.corr_cholesky),
    ("cat", lambda C: C.cat([C.positive, C.real], 0, [1, 2])),
    ("stack", lambda C: C.stack([C.positive, C.unit_interval, C.real], 0)),
]


@needs_torch
@pytest.mark.parametrize("which", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name,make", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_registry_matches_torch(which, name, make):
    def fn(L):
        D = L.distributions
        t = getattr(D, which)(make(D.constraints))
        x = L.tensor(VEC, requires_grad=True)
        y = t(x)
        out = {"repr": repr(t), "y": py(y), "in_support": py(make(D.constraints).check(y)),
               "codomain": repr(t.codomain), "back": py(t.inv(y))}
        if t.bijective:
            ladj = t.log_abs_det_jacobian(x, y)
            (y.sum() + ladj.sum()).backward()
            out["ladj"], out["grad"] = py(ladj), py(x.grad)
        return out

    same_as_torch(fn, tol=1e-4)


@needs_torch
def test_registry_matrix_constraints_and_errors_match_torch():
    def fn(L):
        D = L.distributions
        x = L.tensor(MAT)
        out = {n: py(D.transform_to(getattr(D.constraints, n))(x)) for n in
               ("lower_cholesky", "positive_definite", "positive_semidefinite")}
        for name in ("lower_cholesky", "positive_definite", "positive_semidefinite",
                     "lower_triangular", "symmetric", "square"):
            c = getattr(D.constraints, name)
            out["check_" + name] = [py(c.check(L.tensor(m))) for m in (
                MAT, [[2.0, 0.0], [1.0, 3.0]], [[2.0, 1.0], [1.0, 3.0]],
                [[1.0, 2.0], [2.0, 1.0]])] + [repr(c), c.event_dim]
        return out

    same_as_torch(fn)
    raises_as_torch(lambda L: L.distributions.biject_to(L.distributions.constraints.boolean),
                    NotImplementedError, "Cannot transform _Boolean constraints")
    raises_as_torch(lambda L: L.distributions.biject_to.register(3, lambda c: c),
                    TypeError, "Expected constraint to be either a Constraint subclass")


@needs_torch
def test_transformed_distribution_matches_torch():
    def fn(L):
        D = L.distributions
        loc = L.tensor([0.2, -0.5, 1.0], requires_grad=True)
        scale = L.tensor([0.5, 1.5, 2.0], requires_grad=True)
        d = D.TransformedDistribution(D.Normal(loc, scale),
                                      [D.AffineTransform(1.0, -2.0), D.ExpTransform()])
        v = L.tensor(POS)
        lp = d.log_prob(v)
        lp.sum().backward()
        e = d.expand((2, 3))
        vec = D.TransformedDistribution(D.Normal(L.zeros(2, 3), L.ones(2, 3)),
                                        D.StickBreakingTransform())
        return {"log_prob": py(lp), "cdf": py(d.cdf(v)), "icdf": py(d.icdf(L.tensor(
            [0.1, 0.5, 0.9]))), "grads": [py(loc.grad), py(scale.grad)],
            "shape": [list(d.batch_shape), list(d.event_shape)], "support": repr(d.support),
            "has_rsample": d.has_rsample, "repr": repr(d),
            "expand": [list(e.batch_shape), py(e.log_prob(v))],
            "vec": [list(vec.batch_shape), list(vec.event_shape), repr(vec.support),
                    py(vec.log_prob(L.tensor([[0.2, 0.3, 0.1, 0.4]] * 2)))],
            "rsample_shape": list(d.rsample((4,)).shape)}

    same_as_torch(fn)
    raises_as_torch(lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(0.0, 1.0), 3), ValueError,
        "transforms must be a Transform or list, but was 3")
    raises_as_torch(lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(0.0, 1.0), [L.distributions.StickBreakingTransform()]),
        ValueError, "base_distribution needs to have shape with size at least 1")


def test_transformed_rsample_is_the_pushed_base_sample():
    import hookgrad
    D = hookgrad.distributions
    loc = hookgrad.tensor([0.2, -0.5], requires_grad=True)
    d = D.TransformedDistribution(D.Normal(loc, 1.0), [D.ExpTransform()])
    hookgrad.manual_seed(3)
    x = d.rsample((5,))
    hookgrad.manual_seed(3)
    base = D.Normal(loc, 1.0).rsample((5,))
    assert x.tolist() == base.exp().tolist()
    x.sum().backward()
    assert loc.grad.tolist() == pytest.approx(base.exp().sum(0).tolist(), rel=1e-6)
    assert not d.sample((3,)).requires_grad
