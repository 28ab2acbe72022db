"""refjax.scipy.stats against jax.scipy.stats and scipy.stats: every distribution function of
JAX 0.10.2 (values, dtypes, weak types), gradients against JAX's, mode, rankdata and sem, on
both backends."""
import functools

import numpy as np
import pytest
import scipy.stats as sst

import jax
import jax.scipy.stats as js

import refjax
import refjax.scipy.stats as rs
from refjax.core.config import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")

X = np.array([-3.0, -1.0, 0.0, 0.25, 0.5, 0.9, 1.0, 2.0, 5.0], np.float32)
K = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 2.5], np.float32)
Q = np.array([0.0, 0.01, 0.3, 0.5, 0.9, 1.0], np.float32)

# distribution -> (shape parameters, points, the scipy.stats name or None)
DISTRIBUTIONS = {
    "norm": ((0.5, 2.0), X), "expon": ((0.5, 2.0), X), "uniform": ((0.5, 2.0), X),
    "logistic": ((0.5, 2.0), X), "laplace": ((0.5, 2.0), X), "cauchy": ((0.5, 2.0), X),
    "gumbel_l": ((0.5, 2.0), X), "gumbel_r": ((0.5, 2.0), X), "t": ((3.0, 0.5, 2.0), X),
    "gennorm": ((1.5,), X), "truncnorm": ((-0.5, 1.5, 0.2, 1.5), X),
    "gamma": ((2.5, 0.1, 1.5), X), "chi2": ((3.0, -0.5, 1.2), X),
    "beta": ((2.0, 3.5, -0.1, 1.5), X), "pareto": ((1.5, 0.1, 0.5), X),
    "vonmises": ((2.0,), X), "wrapcauchy": ((0.4,), np.abs(X)),
    "poisson": ((2.5,), K), "bernoulli": ((0.3,), K), "binom": ((5.0, 0.3), K),
    "geom": ((0.3,), K), "nbinom": ((3.0, 0.4), K), "betabinom": ((5.0, 2.0, 3.0), K[:-1]),
}
CASES = [(d, f) for d in DISTRIBUTIONS for f in sorted(dir(getattr(js, d)))
         if not f.startswith("_") and callable(getattr(getattr(js, d), f)) and f != "entropy"]


def agree(actual, expected, rtol=2e-5, atol=2e-6):
    """JAX's shape, dtype and weak type; values close, nans and infinities in the same places."""
    assert np.shape(actual) == np.shape(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert getattr(actual, "weak_type", False) == getattr(expected, "weak_type", False)
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


@functools.lru_cache(maxsize=None)
def _jax_values(dist, fn, scalar):
    """JAX's result, computed once for both backends' runs (JAX's eager dispatch is slow)."""
    params, points = DISTRIBUTIONS[dist]
    points = Q if fn in ("ppf", "isf") else points
    return getattr(getattr(js, dist), fn)(float(points[4]) if scalar else points, *params)


@pytest.mark.parametrize("dist, fn", CASES, ids=[f"{d}.{f}" for d, f in CASES])
def test_against_jax(dist, fn):
    params, points = DISTRIBUTIONS[dist]
    points = Q if fn in ("ppf", "isf") else points
    r = getattr(getattr(rs, dist), fn)
    agree(r(points, *params), _jax_values(dist, fn, False))
    if fn in ("logpdf", "logpmf", "cdf"):
        # a Python scalar: JAX's weak type
        agree(r(float(points[4]), *params), _jax_values(dist, fn, True))


SCIPY = ["norm", "expon", "logistic", "laplace", "cauchy", "gumbel_l", "gumbel_r", "t", "gamma",
         "chi2", "beta", "pareto", "truncnorm"]


@pytest.mark.backends("numpy_ref")
@pytest.mark.parametrize("dist", SCIPY)
def test_against_scipy_float64(dist):
    params, points = DISTRIBUTIONS[dist]
    module = getattr(rs, dist)
    with refjax.enable_x64(True):
        for fn in ("logpdf", "cdf", "sf", "logcdf", "logsf", "ppf"):
            if hasattr(module, fn):
                x = Q.astype(np.float64)[1:-1] if fn == "ppf" else points.astype(np.float64)
                got = np.asarray(getattr(module, fn)(x, *params))
                np.testing.assert_allclose(got, getattr(getattr(sst, dist), fn)(x, *params),
                                           rtol=1e-9, atol=1e-12, err_msg=f"{dist}.{fn}")


@pytest.mark.parametrize("dist, fn, argnums", [("norm", "logpdf", (0, 1, 2)),
                                               ("norm", "logcdf", (0, 1)), ("norm", "ppf", (0,)),
                                               ("gamma", "logpdf", (0, 1)), ("t", "logpdf", (0, 1)),
                                               ("beta", "logpdf", (0, 1, 2)),
                                               ("poisson", "logpmf", (1,)),
                                               ("truncnorm", "logpdf", (0, 1, 2))])
def test_grads(dist, fn, argnums):
    params, _ = DISTRIBUTIONS[dist]
    x = np.float32(0.3)
    def loss(lib):
        return lambda *a: getattr(getattr(lib.scipy.stats, dist), fn)(*a)
    args = (x,) + params
    for rg, jg in zip(refjax.grad(loss(refjax), argnums)(*args), jax.grad(loss(jax), argnums)(*args)):
        agree(rg, jg, rtol=1e-4, atol=1e-6)


def test_scalar_weak_types_and_jit():
    agree(rs.norm.logpdf(1.0), js.norm.logpdf(1.0))
    agree(rs.poisson.logpmf(3, 2.0), js.poisson.logpmf(3, 2.0))
    agree(refjax.jit(rs.gamma.logcdf)(X, 2.0), js.gamma.logcdf(X, 2.0))
    agree(refjax.vmap(rs.norm.cdf, (0, None, None))(X, 1.0, 2.0), js.norm.cdf(X, 1.0, 2.0))


def test_betabinom_between_integers():
    """JAX 0.10.2 gives betabinom.logpmf(2.5, 5, 2, 3) = -1.4351 (its value at 2 and 3); the
    analytic continuation (scipy.special's gammaln/betaln in float64) is -1.5198."""
    assert abs(float(rs.betabinom.logpmf(2.5, 5.0, 2.0, 3.0)) - -1.519825753744413) < 1e-5


def test_poisson_entropy():
    mu = np.array([0.0, 0.01, 0.5, 1, 5, 10, 50, 99, 100, 101, 500, 1e4, -1], np.float32)
    got, want = rs.poisson.entropy(mu), js.poisson.entropy(mu)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, sst.poisson.entropy(mu[:-2].astype(np.float64)).tolist()
                               + [6.0241009, np.nan], rtol=1e-5)   # scipy's sum stops early at 1e4
    np.testing.assert_allclose(got[:-1], want[:-1], rtol=1e-5)
    with enable_x64(True):
        m = np.array([0.3, 7.0, 60.0, 99.0, 400.0])
        np.testing.assert_allclose(rs.poisson.entropy(m), sst.poisson.entropy(m), rtol=1e-11)


def test_dirichlet_and_multinomial():
    x = np.array([[0.2, 0.3], [0.5, 0.6], [0.3, 0.1]], np.float32)
    alpha = np.array([1.5, 2.0, 3.0], np.float32)
    agree(rs.dirichlet.logpdf(x, alpha), js.dirichlet.logpdf(x, alpha))
    agree(rs.dirichlet.pdf(x[:2], alpha), js.dirichlet.pdf(x[:2], alpha))
    agree(rs.dirichlet.logpdf(x * 2, alpha), js.dirichlet.logpdf(x * 2, alpha))   # off the simplex
    counts, p = np.array([1, 2, 3]), np.array([0.2, 0.3, 0.5], np.float32)
    agree(rs.multinomial.logpmf(counts, 6, p), js.multinomial.logpmf(counts, 6, p))
    agree(rs.multinomial.pmf(counts, 5, p), js.multinomial.pmf(counts, 5, p))
    with pytest.raises(ValueError, match="must be of integer type"):
        rs.multinomial.logpmf(counts.astype(np.float32), 6, p)
    with pytest.raises(ValueError, match="must be one-dimensional"):
        rs.dirichlet.logpdf(x, alpha[None])


def test_module_import():
    import refjax.scipy.stats.norm as norm
    assert norm is rs.norm and norm.logpdf.__name__ == "logpdf"


# ---------------------------------------------------------------- mode, rankdata, sem

M = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3], [5, 8, 9, 9, 2]])


@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": None}, {"axis": 1, "keepdims": True},
                                {"axis": None, "keepdims": True}])
def test_mode(kw):
    for rv, jv in zip(rs.mode(M, **kw), js.mode(M, **kw)):
        agree(rv, jv)
    for rv, jv in zip(rs.mode(M.astype(np.float32) / 2, **kw), js.mode(M.astype(np.float32) / 2, **kw)):
        agree(rv, jv)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(method):
    agree(rs.rankdata(M, method), js.rankdata(M, method))
    agree(rs.rankdata(M, method, axis=1), js.rankdata(M, method, axis=1))
    np.testing.assert_array_equal(rs.rankdata(M, method, axis=0), sst.rankdata(M, method, axis=0))
    x = np.array([0.5, np.nan, 1.0], np.float32)
    agree(rs.rankdata(x, method), js.rankdata(x, method))


def test_sem_and_errors():
    x = M.astype(np.float32)
    agree(rs.sem(x), js.sem(x))
    agree(rs.sem(x, axis=None, ddof=0), js.sem(x, axis=None, ddof=0))
    agree(rs.sem(x, axis=1, keepdims=True), js.sem(x, axis=1, keepdims=True))
    y = np.where(x == 1, np.nan, x).astype(np.float32)
    agree(rs.sem(y, axis=1, nan_policy="omit"), js.sem(y, axis=1, nan_policy="omit"))
    for call, exc in [(lambda m: m.rankdata(M, "mean"), ValueError),
                      (lambda m: m.mode(M, nan_policy="ignore"), ValueError),
                      (lambda m: m.mode(M, nan_policy="omit"), NotImplementedError),
                      (lambda m: m.sem(x, nan_policy="raise"), ValueError)]:
        with pytest.raises(exc):
            call(js)
        with pytest.raises(exc):
            call(rs)
