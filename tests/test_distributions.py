"""hookgrad.distributions against torch.distributions: densities, entropies, moments and
their gradients; sample shapes, dtypes and statistics (not values: the RNG differs);
reparameterised gradients against jax.grad; validation errors; kl_divergence; hooks and
hookgrad.compile through rsample/log_prob."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
from hookgrad import distributions as D
from tests.differential import py, same_as_torch

LOC, SCALE = [0.3, -1.0, 2.0], [0.5, 1.5, 2.0]
VALUE = [0.1, 0.4, 3.0]
PROBS = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]
LOGITS = [[0.5, -1.0, 2.0], [0.0, 0.3, -0.2]]


def _leaf(L, v):
    return L.tensor(v, requires_grad=True)


def _report(L, d, value, params):
    """log_prob, entropy, moments and the gradient of all of them w.r.t. ``params``."""
    lp, ent = d.log_prob(value), d.entropy()
    out = {"log_prob": py(lp), "entropy": py(ent), "batch": list(d.batch_shape),
           "event": list(d.event_shape)}
    total = lp.sum() + ent.sum()
    for name in ("mean", "variance", "stddev"):
        m = getattr(d, name)
        if bool(m.isnan().any()):
            out[name] = "nan"
            continue
        out[name] = py(m)
        total = total + (m * m).sum()
    total.backward()
    out["grads"] = [py(p.grad) for p in params]
    return out


def test_normal_matches_torch():
    def fn(L):
        loc, scale = _leaf(L, LOC), _leaf(L, SCALE)
        d = L.distributions.Normal(loc, scale)
        out = _report(L, d, L.tensor(VALUE), [loc, scale])
        out["cdf"] = py(d.cdf(L.tensor(VALUE)))
        out["icdf"] = py(d.icdf(L.tensor([0.1, 0.5, 0.9])))
        out["scalar"] = py(L.distributions.Normal(0.0, 2.0).log_prob(L.tensor(1.0)))
        return out

    got = same_as_torch(fn)
    assert got["batch"] == [3] and got["event"] == []
    assert got["mean"] == pytest.approx(LOC)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_categorical_matches_torch(kind):
    def fn(L):
        p = _leaf(L, PROBS if kind == "probs" else LOGITS)
        d = L.distributions.Categorical(**{kind: p})
        out = _report(L, d, L.tensor([2, 0]), [p])
        out["probs"], out["logits"] = py(d.probs), py(d.logits)
        out["support"] = py(d.enumerate_support())
        out["mode"] = py(d.mode)
        return out

    got = same_as_torch(fn)
    assert got["batch"] == [2] and got["mean"] == "nan"
    np.testing.assert_allclose(np.sum(got["probs"], -1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_bernoulli_matches_torch(kind):
    def fn(L):
        p = _leaf(L, [0.2, 0.7, 0.5] if kind == "probs" else [0.3, -2.0, 1.0])
        d = L.distributions.Bernoulli(**{kind: p})
        out = _report(L, d, L.tensor([1.0, 0.0, 1.0]), [p])
        out["probs"], out["logits"] = py(d.probs), py(d.logits)
        return out

    got = same_as_torch(fn)
    assert got["batch"] == [3]


def test_uniform_matches_torch():
    def fn(L):
        low, high = _leaf(L, [0.0, -1.0, 2.0]), _leaf(L, [1.0, 3.0, 2.5])
        d = L.distributions.Uniform(low, high)
        out = _report(L, d, L.tensor([0.5, 2.0, 2.1]), [low, high])
        loose = L.distributions.Uniform(low, high, validate_args=False)
        out["outside"] = py(loose.log_prob(L.tensor([1.5, -2.0, 2.2])))
        out["cdf"] = py(d.cdf(L.tensor([0.5, 2.0, 2.1])))
        return out

    got = same_as_torch(fn)
    assert got["outside"][0] == "-inf" and got["outside"][2] != "-inf"


def test_kl_divergence_matches_torch():
    def fn(L):
        Dl = L.distributions
        loc = _leaf(L, LOC)
        p, q = Dl.Normal(loc, L.tensor(SCALE)), Dl.Normal(L.tensor(VALUE), L.tensor(1.5))
        kl_n = Dl.kl_divergence(p, q)
        logits = _leaf(L, LOGITS)
        c1 = Dl.Categorical(logits=logits)
        c2 = Dl.Categorical(probs=L.tensor([[0.5, 0.5, 0.0], [0.2, 0.2, 0.6]]))
        kl_c = Dl.kl_divergence(c2, c1)
        (kl_n.sum() + kl_c.sum()).backward()
        b1 = Dl.Bernoulli(probs=L.tensor([0.2, 0.0, 0.9]))
        b2 = Dl.Bernoulli(logits=L.tensor([0.1, 1.0, -1.0]))
        u1, u2 = Dl.Uniform(0.0, 1.0), Dl.Uniform(L.tensor([-1.0, 0.5]), L.tensor([2.0, 2.0]))
        return {"normal": py(kl_n), "cat": py(kl_c), "grads": [py(loc.grad), py(logits.grad)],
                "cat_inf": py(Dl.kl_divergence(c1, c2)), "bern": py(Dl.kl_divergence(b1, b2)),
                "unif": py(Dl.kl_divergence(u1, u2))}

    got = same_as_torch(fn)
    assert got["cat_inf"][0] == "inf" and got["unif"][1] == "inf"


def test_kl_errors_and_registration():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for "
                                                  "p type Normal and q type Uniform"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))

    class Wide(D.Normal):
        pass

    # a subclass falls back to its base's formula until it registers its own
    assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 0.0

    @D.register_kl(Wide, D.Normal)
    def _kl(p, q):
        return hookgrad.tensor(7.0)

    assert D.kl_divergence(Wide(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 7.0
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)


# ------------------------------------------------------------------ sampling

def test_sample_shapes_dtypes_and_statistics():
    hookgrad.manual_seed(0)
    n = D.Normal(hookgrad.tensor(LOC), hookgrad.tensor(SCALE))
    s = n.sample((4000,))
    assert s.shape == (4000, 3) and s.dtype == hookgrad.float32 and not s.requires_grad
    np.testing.assert_allclose(np.asarray(s._data).mean(0), LOC, atol=0.1)
    np.testing.assert_allclose(np.asarray(s._data).std(0), SCALE, rtol=0.06)
    assert D.Normal(0.0, 1.0).sample().shape == ()
    c = D.Categorical(probs=hookgrad.tensor([[0.2, 0.0, 0.8], [0.5, 0.5, 0.0]]))
    s = np.asarray(c.sample((4000,))._data)
    assert s.shape == (4000, 2) and np.issubdtype(s.dtype, np.integer)
    freq = np.stack([(s == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, [[0.2, 0.0, 0.8], [0.5, 0.5, 0.0]], atol=0.04)
    assert freq[0, 1] == 0 and freq[1, 2] == 0  # zero-probability classes never drawn
    b = D.Bernoulli(probs=hookgrad.tensor([0.1, 0.9]))
    s = b.sample((2, 3000))
    assert s.shape == (2, 3000, 2) and s.dtype == hookgrad.float32
    np.testing.assert_allclose(np.asarray(s._data).mean((0, 1)), [0.1, 0.9], atol=0.03)
    assert set(np.unique(np.asarray(s._data))) <= {0.0, 1.0}
    u = D.Uniform(hookgrad.tensor([-1.0, 2.0]), hookgrad.tensor([1.0, 2.5]))
    s = np.asarray(u.sample((4000,))._data)
    assert s.shape == (4000, 2) and (s >= [-1.0, 2.0]).all() and (s < [1.0, 2.5]).all()
    np.testing.assert_allclose(s.mean(0), [0.0, 2.25], atol=0.05)


def test_samples_follow_the_global_seed():
    d = D.Normal(hookgrad.zeros(3), hookgrad.ones(3))
    hookgrad.manual_seed(3)
    a = d.sample((2,))
    hookgrad.manual_seed(3)
    b = d.sample((2,))
    c = d.sample((2,))
    np.testing.assert_array_equal(np.asarray(a._data), np.asarray(b._data))
    assert not np.array_equal(np.asarray(b._data), np.asarray(c._data))


@pytest.mark.parametrize("cls", ["Normal", "Uniform"])
def test_rsample_gradient_is_the_reparameterisation(cls):
    a0, b0 = np.array([0.3, -1.0], np.float32), np.array([0.5, 2.0], np.float32)
    a, b = hookgrad.tensor(a0, requires_grad=True), hookgrad.tensor(b0, requires_grad=True)
    d = getattr(D, cls)(a, b)
    assert d.has_rsample
    hookgrad.manual_seed(1)
    x = d.rsample((5,))
    seen = []
    x.register_hook(lambda g: seen.append(g.shape))
    (x ** 2).sum().backward()
    assert seen == [(5, 2)]  # tensor hooks run on the sample
    # the same noise, differentiated by JAX: x = a + eps * b (Normal), a + u * (b - a)
    noise = np.asarray(((x - a) / b if cls == "Normal" else (x - a) / (b - a)).detach()._data)

    def f(a, b):
        xs = a + noise * b if cls == "Normal" else a + noise * (b - a)
        return (xs ** 2).sum()

    ga, gb = jax.grad(f, argnums=(0, 1))(jnp.asarray(a0), jnp.asarray(b0))
    np.testing.assert_allclose(np.asarray(a.grad._data), ga, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(b.grad._data), gb, rtol=1e-5, atol=1e-6)
    assert x.grad_fn is not None and d.sample().grad_fn is None


def test_expand_and_repr():
    d = D.Normal(hookgrad.tensor([0.0, 1.0]), hookgrad.tensor([1.0, 2.0])).expand((3, 2))
    assert d.batch_shape == (3, 2) and d.sample((4,)).shape == (4, 3, 2)
    c = D.Categorical(logits=hookgrad.tensor([0.0, 1.0, 2.0])).expand((5,))
    assert c.batch_shape == (5,) and c.sample().shape == (5,)
    assert D.Bernoulli(probs=hookgrad.tensor(0.3)).expand((2,)).sample().shape == (2,)
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Uniform(hookgrad.zeros(2), hookgrad.ones(2))) == \
        "Uniform(low: hookgrad.Size([2]), high: hookgrad.Size([2]))"


# ------------------------------------------------------------------ validation

def test_validation_errors():
    t = hookgrad.tensor
    with pytest.raises(ValueError, match=re.escape(
            "Expected parameter scale (Tensor of shape (2,)) of distribution Normal(loc: "
            "hookgrad.Size([2]), scale: hookgrad.Size([2])) to satisfy the constraint "
            "GreaterThan(lower_bound=0.0), but found invalid values")):
        D.Normal(t([0.0, 1.0]), t([1.0, -1.0]))
    D.Normal(t([0.0]), t([-1.0]), validate_args=False)  # no check
    with pytest.raises(ValueError, match="to satisfy the constraint Simplex\\(\\)"):
        D.Categorical(probs=t([[0.5, -0.5, 1.0]]))
    with pytest.raises(ValueError, match=re.escape(
            "to satisfy the constraint Interval(lower_bound=0.0, upper_bound=1.0)")):
        D.Bernoulli(probs=t([1.5]))
    with pytest.raises(ValueError, match="to satisfy the constraint LessThan"):
        D.Uniform(t([1.0]), t([0.0]))
    for cls in (D.Categorical, D.Bernoulli):
        with pytest.raises(ValueError, match=re.escape(
                "Either `probs` or `logits` must be specified, but not both.")):
            cls(probs=t([0.5, 0.5]), logits=t([0.0, 0.0]))
        with pytest.raises(ValueError, match="must be specified"):
            cls()
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional."):
        D.Categorical(probs=t(1.0))
    n = D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        n.log_prob(1.0)
    with pytest.raises(ValueError, match=re.escape(
            "Value is not broadcastable with batch_shape+event_shape: hookgrad.Size([3]) vs "
            "hookgrad.Size([2]).")):
        n.log_prob(t([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match=re.escape(
            "Expected value argument (Tensor of shape ()) to be within the support "
            "(IntegerInterval(lower_bound=0, upper_bound=2))")):
        D.Categorical(probs=t([0.2, 0.3, 0.5])).log_prob(t(3))
    with pytest.raises(ValueError, match="to be within the support \\(Boolean\\(\\)\\)"):
        D.Bernoulli(probs=t([0.5])).log_prob(t([0.5]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(t([0.0]), t([-1.0]))
    finally:
        D.Distribution.set_default_validate_args(True)


def test_log_prob_under_compile():
    """A compiled step through log_prob/entropy gives eager's loss and gradients."""
    def step(loc, scale):
        d = D.Normal(loc, scale)
        loss = -d.log_prob(hookgrad.tensor(VALUE)).sum() + D.Categorical(
            logits=loc.unsqueeze(0)).entropy().sum()
        loss.backward()
        return loss

    eager = [hookgrad.tensor(LOC, requires_grad=True), hookgrad.tensor(SCALE, requires_grad=True)]
    comp = [hookgrad.tensor(LOC, requires_grad=True), hookgrad.tensor(SCALE, requires_grad=True)]
    ref = step(*eager)
    got = hookgrad.compile(lambda: step(*comp))()
    np.testing.assert_allclose(got.item(), ref.item(), rtol=1e-6)
    for a, b in zip(comp, eager):
        np.testing.assert_allclose(np.asarray(a.grad._data), np.asarray(b.grad._data),
                                   rtol=1e-6)


def test_sampling_inside_compile_draws_fresh_values_each_call():
    loc = hookgrad.tensor(LOC, requires_grad=True)

    def step():
        x = D.Normal(loc, hookgrad.tensor(SCALE)).rsample((2,))
        k = D.Categorical(logits=hookgrad.tensor(LOGITS)).sample((3,))
        x.sum().backward()
        return x, k

    compiled = hookgrad.compile(step)
    hookgrad.manual_seed(0)
    (x1, k1), (x2, k2) = compiled(), compiled()
    assert x1.shape == (2, 3) and k1.shape == (3, 2)
    assert not np.array_equal(np.asarray(x1._data), np.asarray(x2._data))
    assert set(np.unique(np.asarray(k1._data))) <= {0, 1, 2}
    np.testing.assert_allclose(np.asarray(loc.grad._data), [4.0, 4.0, 4.0])  # 2 calls x 2
