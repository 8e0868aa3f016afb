"""Sampling ops: the in-place fills (``normal_``, ``uniform_``, ``bernoulli_``, ...) and
``normal``, ``bernoulli``, ``poisson``, ``multinomial``.

The numbers come from hookgrad's PRNG key (``hookgrad.random.draw``: host draws eagerly,
``jax.random`` under ``hookgrad.compile``), so they differ from PyTorch's for the same seed.
Each fill is recorded as PyTorch records it (``NormalBackward0``, ...): a node whose
gradient is zero, since a sample does not depend on what it overwrote.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, random
from .._tensor import Tensor
from .dispatch import NOT_IMPLEMENTED, apply
from .registry import defop, export


def _fill_op(name, node):
    # the sample is an argument (a constant): the overwritten tensor's gradient is zero
    return defop(name, lambda x, sample: sample.astype(x.dtype), node, (), nondiff=(1,),
                 names="self ->")


_FILLS = {n: _fill_op(n + "_", node) for n, node in [
    ("normal", "NormalBackward0"), ("uniform", "UniformBackward0"),
    ("exponential", "ExponentialBackward0"), ("log_normal", "LogNormalBackward0"),
    ("cauchy", "CauchyBackward0"), ("geometric", "GeometricBackward0"),
    ("random", "RandomBackward0"), ("bernoulli", "BernoulliBackward2"),
    ("bernoulli_tensor", "BernoulliBackward1")]}


def _uniform(shape, generator):
    return jnp.asarray(random.draw("uniform", tuple(shape), generator=generator))


def _normal(shape, generator):
    return jnp.asarray(random.draw("normal", tuple(shape), generator=generator))


def _fill(self, kind, sample):
    return apply(_FILLS[kind], (self, Tensor._wrap(sample)), out=self)


def _no_more(kwargs, name):
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")


@export(function=False)
def normal_(self, mean=0.0, std=1.0, *, generator=None) -> Tensor:
    """``normal_(mean=0, std=1, *, generator=None)``: fills ``self`` with samples of
    ``N(mean, std**2)``."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _fill(self, "normal", mean + std * _normal(self.shape, generator))


@export(function=False)
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw) -> Tensor:
    """``uniform_(from=0, to=1, *, generator=None)``: fills ``self`` with samples of
    ``U[from, to)``."""
    lo = kw.pop("from", from_)  # PyTorch's keyword is the reserved word ``from``
    _no_more(kw, "uniform_")
    if lo > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={lo} > to={to}")
    return _fill(self, "uniform", lo + (to - lo) * _uniform(self.shape, generator))


@export(function=False)
def exponential_(self, lambd=1.0, *, generator=None) -> Tensor:
    """``exponential_(lambd=1, *, generator=None)``: samples of the exponential
    distribution of rate ``lambd``."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(self, "exponential", -jnp.log1p(-_uniform(self.shape, generator)) / lambd)


@export(function=False)
def log_normal_(self, mean=1.0, std=2.0, *, generator=None) -> Tensor:
    """``log_normal_(mean=1, std=2, *, generator=None)``: samples of
    ``exp(N(mean, std**2))``."""
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill(self, "log_normal", jnp.exp(mean + std * _normal(self.shape, generator)))


@export(function=False)
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None) -> Tensor:
    """``cauchy_(median=0, sigma=1, *, generator=None)``: samples of the Cauchy
    distribution."""
    u = _uniform(self.shape, generator)
    return _fill(self, "cauchy", median + sigma * jnp.tan(math.pi * (u - 0.5)))


@export(function=False)
def geometric_(self, p, *, generator=None) -> Tensor:
    """``geometric_(p, *, generator=None)``: the number of Bernoulli(``p``) trials up to
    the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _uniform(self.shape, generator)
    return _fill(self, "geometric", jnp.ceil(jnp.log1p(-u) / math.log1p(-p)))


def _random_bounds(self, from_, to):
    if to is None and from_ is None:
        d = self.dtype
        if d.is_floating_point:  # integers a float represents exactly
            return 0, 2 ** (jnp.finfo(d.np).nmant + 1) + 1
        return 0, int(jnp.iinfo(d.np).max) + 1 if d.name != "bool" else 2
    if to is None:
        return 0, from_
    return from_, to


@export(function=False)
def random_(self, from_=None, to=None, *, generator=None, **kw) -> Tensor:
    """``random_(from=0, to=None, *, generator=None)``: integers drawn uniformly from
    ``[from, to - 1]``; ``random_(to)`` from ``[0, to - 1]``; without bounds, from the
    integers the dtype holds exactly."""
    lo = kw.pop("from", from_)
    _no_more(kw, "random_")
    lo, hi = _random_bounds(self, lo, to)
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                           f">= to={hi}")
    u = np.asarray(random.draw("uniform", tuple(self.shape), generator=generator))
    sample = jnp.asarray(np.floor(lo + u * (hi - lo)))
    return _fill(self, "random", sample)


@export(function=False)
def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """``bernoulli_(p=0.5, *, generator=None)``: 1 with probability ``p`` (a number, or a
    Tensor broadcast to ``self``), else 0."""
    u = _uniform(self.shape, generator)
    if isinstance(p, Tensor):
        return _fill(self, "bernoulli_tensor", (u < p._data).astype(self._data.dtype))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill(self, "bernoulli", (u < p).astype(self._data.dtype))


# ---- functions: a new tensor of samples; gradients to the parameters are zero, as PyTorch's
def _sample_op(name, node):
    return defop(name, lambda *a, **st: jax.lax.stop_gradient(_SAMPLERS[name](*a, **st)), node,
                 ())


_SAMPLERS = {
    "normal.Tensor_float": lambda m, z, std: m + std * z,
    "normal.float_Tensor": lambda s, z, mean: mean + s * z,
    "normal.Tensor_Tensor": lambda m, s, z: m + s * z,
    "bernoulli": lambda p, u: (u < p).astype(p.dtype),
    "bernoulli.p": lambda x, u, p: (u < p).astype(x.dtype),
    "poisson": lambda rate, key_data: jax.random.poisson(
        jax.random.wrap_key_data(key_data), rate).astype(rate.dtype),
}
_NORMAL_TF = _sample_op("normal.Tensor_float", "NormalBackward1")
_NORMAL_FT = _sample_op("normal.float_Tensor", "NormalBackward2")
_NORMAL_TT = _sample_op("normal.Tensor_Tensor", "NormalBackward3")
_BERNOULLI = _sample_op("bernoulli", "BernoulliBackward0")
_BERNOULLI_P = _sample_op("bernoulli.p", NOT_IMPLEMENTED)
_POISSON = _sample_op("poisson", "PoissonBackward0")


def _const(arr, like):
    """A drawn array as a constant Tensor of ``like``'s dtype (host draws are float64)."""
    return Tensor._wrap(jnp.asarray(arr, like._data.dtype))


@export(method=False)
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False) -> Tensor:
    """``normal(mean, std, size=None, *, generator=None)``: samples of ``N(mean,
    std**2)``; ``mean`` and ``std`` are Tensors (broadcast) or numbers (then ``size``
    gives the shape). The gradient to Tensor parameters is zero, as PyTorch's."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        shape = jnp.broadcast_shapes(*(t.shape for t in (mean, std) if isinstance(t, Tensor)))
        z = _const(_normal(shape, generator), mean if isinstance(mean, Tensor) else std)
        if isinstance(mean, Tensor) and isinstance(std, Tensor):
            return apply(_NORMAL_TT, (mean, std, z))
        if isinstance(mean, Tensor):
            return apply(_NORMAL_TF, (mean, z), {"std": float(std)})
        return apply(_NORMAL_FT, (std, z), {"mean": float(mean)})
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments: with "
                        "number mean and std, give size")
    z = _normal(tuple(size), generator) * std + mean
    d = _dtype.get_default_dtype() if dtype is None else dtype
    out = Tensor._wrap(z.astype(_dtype.to_jax(d)))
    return out.requires_grad_(requires_grad) if requires_grad else out


@export
def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """``bernoulli(input, p=None, *, generator=None)``: 1 with the probability in each
    element of ``input`` (or ``p``), else 0."""
    u = _const(_uniform(input.shape, generator), input)
    if p is None:
        return apply(_BERNOULLI, (input, u))
    return apply(_BERNOULLI_P, (input, u), {"p": float(p)})


@export(method=False)
def poisson(input, generator=None) -> Tensor:
    """``poisson(input, generator=None)``: samples of the Poisson distribution with the
    rates in ``input``."""
    key = random.next_key() if generator is None else generator.next_key()
    return apply(_POISSON, (input, Tensor._wrap(jax.random.key_data(key))))


_MULTINOMIAL = defop("multinomial", lambda p, u, n, replacement: _multinomial(
    p, u, n, replacement), None)


def _multinomial(p, u, n, replacement):
    p = p / jnp.sum(p, -1, keepdims=True)
    if replacement:  # inverse CDF: one uniform per draw
        cdf = jnp.cumsum(p, -1)
        return jnp.sum(u[..., :n, None] >= cdf[..., None, :-1], -1)
    # without replacement: the top n of Gumbel-perturbed log-probabilities
    g = jnp.where(p > 0, jnp.log(p), -jnp.inf) - jnp.log(-jnp.log(u))
    return jax.lax.top_k(g, n)[1]


@export
def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """``multinomial(input, num_samples, replacement=False, *, generator=None)``: indices
    drawn with the (unnormalised) weights in the last dimension of ``input`` (1-d or 2-d),
    with or without replacement."""
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = input.shape[-1]
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    draws = max(k, num_samples)
    u = _const(jnp.clip(_uniform((*input.shape[:-1], draws), generator), 1e-12, 1 - 1e-7),
               input)
    out = apply(_MULTINOMIAL, (input, u), {"n": int(num_samples),
                                           "replacement": bool(replacement)})
    return out.to(_dtype.int64)
