"""refjax.scipy.special against jax.scipy.special and scipy.special: values, dtypes, weak types,
errors, and derivatives (against JAX's and finite differences), on both backends."""
import numpy as np
import pytest
import scipy.special as ss

import jax
import jax.scipy.special as js

import refjax
import refjax.scipy.special as rs

pytestmark = pytest.mark.backends("numpy_ref", "xla")

POS = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 30.0], np.float32)
REAL = np.array([-4.5, -1.5, -0.3, 0.0, 0.7, 3.2, 12.0], np.float32)
UNIT = np.array([0.0, 1e-6, 0.05, 0.3, 0.5, 0.75, 0.99, 1.0], np.float32)

UNARY = [("gammaln", REAL), ("gammasgn", REAL), ("gamma", REAL), ("loggamma", REAL),
         ("digamma", POS), ("erf", REAL), ("erfc", REAL), ("erfinv", UNIT * 2 - 1),
         ("expit", REAL), ("logit", UNIT), ("entr", REAL), ("factorial", REAL),
         ("i0", REAL), ("i0e", REAL), ("i1", REAL), ("i1e", REAL), ("ndtr", REAL),
         ("ndtri", UNIT), ("log_ndtr", np.array([-40, -12, -3, 0, 4, 7, 30], np.float32))]
BINARY = [("betaln", POS, POS[::-1]), ("beta", POS, POS[::-1]), ("gammainc", POS, POS[::-1]),
          ("gammaincc", POS, POS[::-1]), ("xlogy", REAL, POS.repeat(2)[:7]),
          ("xlog1py", REAL, UNIT[:7]), ("rel_entr", REAL, POS.repeat(2)[:7]),
          ("kl_div", REAL, POS.repeat(2)[:7]), ("comb", np.float32([5, 10, 3, 0, 7, 4]), POS[:6].round()),
          ("poch", POS, POS[::-1]), ("boxcox", POS, np.float32([0, 0.5, -1, 2, 0, 1])),
          ("boxcox1p", POS, np.float32([0, 0.5, -1, 2, 0, 1])), ("zeta", POS + 1.5, POS),
          ("multigammaln", POS + 2, 3)]


def agree(actual, expected, rtol=1e-5, atol=1e-6):
    """JAX's shape, dtype and weak type; values within tolerance, nans and infs in place."""
    assert np.shape(actual) == np.shape(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert getattr(actual, "weak_type", False) == getattr(expected, "weak_type", False)
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name, x", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, x):
    agree(getattr(rs, name)(x), getattr(js, name)(x))
    agree(refjax.jit(getattr(rs, name))(x), getattr(js, name)(x))


@pytest.mark.parametrize("name, a, b", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, a, b):
    agree(getattr(rs, name)(a, b), getattr(js, name)(a, b), rtol=2e-5)


@pytest.mark.parametrize("name", ["gammaln", "erf", "expit", "digamma", "i0e", "entr", "gamma"])
def test_scalar_dtypes_and_weak_types(name):
    for arg in (2.5, 3, np.int32(2), np.float16(1.5)):
        agree(getattr(rs, name)(arg), getattr(js, name)(arg), rtol=1e-3)


def test_against_scipy_in_float64():
    with refjax.enable_x64(True):
        x = np.array([1e-300, 1e-20, 1e-5, 0.02, 0.4, 0.5, 0.9, 1 - 1e-12])
        np.testing.assert_allclose(rs.ndtri(x), ss.ndtri(x), rtol=1e-13)
        # more accurate than JAX's, whose float64 log_ndtr is 1e-11 off at -20.5 (its series
        # starts at -20) and 3% off at 7.9 (log of a Phi that rounds near 1)
        y = np.array([-1e3, -39.0, -36.5, -20.5, -19.5, -5.0, 0.0, 3.0, 7.9, 8.1, 40.0])
        np.testing.assert_allclose(rs.log_ndtr(y), ss.log_ndtr(y), rtol=1e-13)
        np.testing.assert_allclose(rs.multigammaln(np.array([3.0, 7.5]), 4),
                                   ss.multigammaln(np.array([3.0, 7.5]), 4), rtol=1e-13)
        a = np.array([0.5, 2.0, 5.0])
        np.testing.assert_allclose(rs.comb(a + 5, a), ss.comb(a + 5, a), rtol=1e-12)
        np.testing.assert_allclose(rs.poch(a, a[::-1]), ss.poch(a, a[::-1]), rtol=1e-12)


def test_ndtri_tails_float32():
    p = np.array([1e-37, 1e-20, 1e-8, 0.5 - 1e-7, 1 - 1e-7], np.float32)
    np.testing.assert_allclose(rs.ndtri(p), ss.ndtri(p.astype(np.float64)), rtol=3e-6)


@pytest.mark.parametrize("name, x", [("ndtri", np.float32([0.01, 0.3, 0.8])),
                                     ("log_ndtr", np.float32([-15.0, -2.0, 1.0, 6.0])),
                                     ("logit", np.float32([0.2, 0.7])),
                                     ("gammaln", np.float32([0.3, 4.0])),
                                     ("i1", np.float32([-2.0, 0.5]))])
def test_grads(name, x):
    r = refjax.vmap(refjax.grad(getattr(rs, name)))(x)
    j = jax.vmap(jax.grad(getattr(js, name)))(x)
    agree(r, j, rtol=2e-5)


def test_grads_of_binary_functions():
    a, b = np.float32([0.0, 1.5, 2.0]), np.float32([0.5, 2.0, 3.0])
    for name in ("xlogy", "xlog1py", "poch", "rel_entr"):
        for argnum in (0, 1):
            r = refjax.vmap(refjax.grad(getattr(rs, name), argnum))(a, b)
            j = jax.vmap(jax.grad(getattr(js, name), argnum))(a, b)
            agree(r, j, rtol=2e-5)
    for argnum in (0, 1):
        agree(refjax.grad(rs.zeta, argnum)(3.0, 2.0), jax.grad(js.zeta, argnum)(3.0, 2.0))


def test_softmax_and_logsumexp_defaults():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    agree(rs.softmax(x), js.softmax(x))
    agree(rs.log_softmax(x, axis=0), js.log_softmax(x, axis=0))
    agree(rs.logsumexp(x, axis=1, b=x), js.logsumexp(x, axis=1, b=x))


@pytest.mark.parametrize("call, exc, match", [
    (lambda m: m.ndtr(np.arange(3)), TypeError, "x.dtype=int32 is not supported"),
    (lambda m: m.ndtri(np.float16(0.3)), TypeError, "not supported"),
    (lambda m: m.log_ndtr(1.0, series_order=31), ValueError, "series_order must be <= 30"),
    (lambda m: m.log_ndtr(1.0, series_order=2.0), TypeError, "series_order must be a Python integer"),
    (lambda m: m.polygamma(1.5, 2.0), ValueError, "must be of integer type"),
    (lambda m: m.zeta(2.0), NotImplementedError, "Riemann zeta"),
    (lambda m: m.factorial(3, exact=True), NotImplementedError, "exact=True"),
    (lambda m: m.gamma(np.complex64(1j)) if m is rs else m.beta(1j, 1.0), ValueError, "complex"),
    (lambda m: m.entr(np.complex64(1j)), ValueError, "does not support complex"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call(js)
    with pytest.raises(exc, match=match):
        call(rs)
