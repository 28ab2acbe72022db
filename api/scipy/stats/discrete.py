"""Discrete distributions of jax.scipy.stats: poisson, bernoulli, binom, geom, nbinom,
betabinom, multinomial."""

import numpy as np

from ... import numpy as jnp
from .. import special
from ...numpy.promotion import _arrays, _promote_to_numeric
from ._common import distribution, nan_unless, neg_inf_unless, promote
from .continuous import _density


def _pmf_module(qualname, doc, logpmf, n_params, **extra):
    """A discrete distribution module from logpmf(k, *params) on k - loc."""
    def f(k, *args):
        params, rest = args[:n_params], args[n_params:]
        loc = rest[0] if rest else 0
        k, *params, loc = promote(f"{qualname}.logpmf", k, *params, loc)
        return logpmf(k - loc, *params)
    f.__doc__ = f"The log of the probability mass function of {qualname} at k."
    return distribution(qualname, doc, logpmf=f, pmf=_density(f), **extra)


def _integer(k):
    return k == jnp.floor(k)


def _poisson_logpmf(k, mu):
    value = special.xlogy(k, mu) - special.gammaln(k + 1) - mu
    return neg_inf_unless((k >= 0) & _integer(k), value)


def _poisson_cdf(k, mu, loc=0):
    """P(X <= k) = Q(floor(k) + 1, mu), 0 below 0."""
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    x = k - loc
    return jnp.where(x < 0, jnp.zeros_like(x), special.gammaincc(jnp.floor(x) + 1, mu))


_ENTROPY_TERMS = 400   # the pmf beyond k = 400 is below 1e-60 for mu <= 100
# Where the sum gives way to the series: float32's log pmf loses ~1e-5 to cancellation by
# mu = 100, and the series' error is 1e-7 relative at 25; float64 sums accurately to 100.
_ENTROPY_SERIES_FROM = {np.dtype(np.float64): 100.0}


def _poisson_entropy(mu, loc=0):
    """-sum_k p(k) log p(k): the sum itself for small mu, its asymptotic series above
    (0.5 log(2 pi e mu) - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3)); 0 at mu = 0, nan below.
    loc does not change it."""
    mu, loc = promote("poisson.entropy", mu, loc)
    mu = jnp.broadcast_to(mu, jnp.broadcast_shapes(mu.shape, loc.shape))
    cut = _ENTROPY_SERIES_FROM.get(mu.dtype, 25.0)
    k = jnp.arange(_ENTROPY_TERMS, dtype=mu.dtype)
    logp = _poisson_logpmf(k, jnp.where(mu <= cut, mu, 1)[..., None])
    exact = -jnp.sum(jnp.where(logp > -np.inf, jnp.exp(logp) * logp, 0), axis=-1)
    big = jnp.where(mu > cut, mu, cut + 1)
    series = (0.5 * jnp.log(2 * np.pi * np.e * big) - 1 / (12 * big) - 1 / (24 * big ** 2)
              - 19 / (360 * big ** 3))
    value = jnp.where(mu == 0, 0.0, jnp.where(mu <= cut, exact, series))
    return nan_unless(mu >= 0, value)


poisson = _pmf_module("poisson", "The Poisson distribution.", _poisson_logpmf, 1,
                      cdf=_poisson_cdf, entropy=_poisson_entropy)


def _bernoulli_logpmf(k, p):
    value = special.xlogy(k, p) + special.xlog1py(1 - k, -p)
    return neg_inf_unless((k == 0) | (k == 1), value)


def _bernoulli_cdf(k, p):
    """0 below 0, 1 - p on [0, 1), 1 from 1; nan for p outside [0, 1]."""
    k, p = promote("bernoulli.cdf", k, p)
    value = jnp.where(k < 0, jnp.zeros_like(k), jnp.where(k < 1, 1 - p, jnp.ones_like(k)))
    return nan_unless((p >= 0) & (p <= 1), value)


def _bernoulli_ppf(q, p):
    """The smallest k in {0, 1} with cdf(k) >= q; nan outside [0, 1]."""
    q, p = promote("bernoulli.ppf", q, p)
    value = jnp.where(q > 1 - p, jnp.ones_like(q), jnp.zeros_like(q))
    return nan_unless((q >= 0) & (q <= 1) & (p >= 0) & (p <= 1), value)


bernoulli = _pmf_module("bernoulli", "The Bernoulli distribution.", _bernoulli_logpmf, 1,
                        cdf=_bernoulli_cdf, ppf=_bernoulli_ppf)


def _log_comb(n, k):
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def _binom_logpmf(k, n, p):
    value = _log_comb(n, k) + special.xlogy(k, p) + special.xlog1py(n - k, -p)
    return neg_inf_unless((k >= 0) & (k <= n), value)


binom = _pmf_module("binom", "The binomial distribution.", _binom_logpmf, 2)


def _geom_logpmf(k, p):
    return neg_inf_unless(k >= 1, special.xlog1py(k - 1, -p) + jnp.log(p))


geom = _pmf_module("geom", "The geometric distribution on 1, 2, ...", _geom_logpmf, 1)


def _nbinom_logpmf(k, n, p):
    value = (special.gammaln(n + k) - special.gammaln(k + 1) - special.gammaln(n)
             + special.xlogy(n, p) + special.xlog1py(k, -p))
    return neg_inf_unless(k >= 0, value)


nbinom = _pmf_module("nbinom", "The negative binomial distribution.", _nbinom_logpmf, 2)


def _betabinom_logpmf(k, n, a, b):
    value = _log_comb(n, k) + special.betaln(k + a, n - k + b) - special.betaln(a, b)
    return neg_inf_unless((k >= 0) & (k <= n), value)


betabinom = _pmf_module("betabinom", "The beta-binomial distribution.", _betabinom_logpmf, 3)


def _multinomial_logpmf(x, n, p):
    """The multinomial log pmf; x and n must be integers (ValueError otherwise, as in JAX). The
    total is checked per distribution (JAX sums all of a batched x)."""
    p = promote("multinomial.logpmf", p)[0]
    x, n = _promote_to_numeric(*_arrays("multinomial.logpmf", x, n))
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    value = special.gammaln(n + 1) + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1), axis=-1)
    return neg_inf_unless(jnp.sum(x, axis=-1) == n, value)


multinomial = distribution("multinomial", "The multinomial distribution.",
                           logpmf=_multinomial_logpmf, pmf=_density(_multinomial_logpmf))

