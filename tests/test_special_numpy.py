"""The numpy_ref special functions (backends/numpy_ref/special.py): scipy.special with
jax.lax's conventions at poles, infinities and outside the domain, and the derivatives of the
incomplete gamma function computed by quadrature, against independent truths: jax.lax's
nan/inf pattern on a grid of edge values, finite differences of scipy's gammainc, and the
sampling identity random_gamma_grad obeys."""
import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given, settings, strategies as st

import jax
import jax.lax as lax
import ml_dtypes

from refjax.backends.numpy_ref import special

INF, NAN = np.inf, np.nan
# Edge values every function is checked on (no subnormals: XLA on CPU flushes them to zero;
# no huge arguments: XLA's igamma loops do not terminate there).
EDGES = np.array([0.0, -0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.0, -3.0, -2.5, -7.3, 1e-30, 30.0,
                  0.999, -0.999, 1.5, 1.4616321449683623, INF, -INF, NAN])

UNARY = {"erf": lax.erf, "erfc": lax.erfc, "erf_inv": lax.erf_inv, "lgamma": lax.lgamma,
         "digamma": lax.digamma, "bessel_i0e": lax.bessel_i0e, "bessel_i1e": lax.bessel_i1e}
BINARY = {"igamma": lax.igamma, "igammac": lax.igammac, "zeta": lax.zeta,
          "polygamma": lax.polygamma, "igamma_grad_a": lax.igamma_grad_a,
          "random_gamma_grad": lax.random_gamma_grad}


def _same_pattern(actual, expected, args, finite_rtol):
    """nan where jax.lax is nan, the same infinities, finite values within finite_rtol (and
    1e-14 absolute: XLA is not exact at zeros, e.g. digamma(1.4616...))."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    where = [tuple(float(a.ravel()[i]) for a in args) for i in range(actual.size)]
    for i, (a, e) in enumerate(zip(actual.ravel(), expected.ravel())):
        if np.isnan(e) or np.isinf(e):
            assert (np.isnan(a) and np.isnan(e)) or a == e, f"at {where[i]}: {a}, jax {e}"
        else:
            assert abs(a - e) <= finite_rtol * abs(e) + 1e-14, f"at {where[i]}: {a}, jax {e}"


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_conventions_match_jax_lax(name):
    with jax.enable_x64(True):
        expected = UNARY[name](EDGES)
    _same_pattern(getattr(special, name)(EDGES), expected, (EDGES,), 1e-9)


# Where XLA's float64 algorithms are themselves inaccurate, only the nan/inf pattern is
# compared: a = 1e-30 (its igammac goes negative, its series loses the value) and zeta and
# polygamma at q < about -5 (its zeta sums past q < 0, then applies Euler-Maclaurin at a
# negative point: 1e-7 relative errors).
_TINY_A = 1e-30


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_conventions_match_jax_lax(name):
    a, x = (v.ravel() for v in np.meshgrid(EDGES, EDGES, indexing="ij"))
    if name == "polygamma":
        a = np.where(np.isfinite(a) & (a >= 0), np.floor(a), a)  # orders: integers mostly
    with jax.enable_x64(True):
        expected = np.asarray(BINARY[name](a, x))
    actual = getattr(special, name)(a, x)
    loose = (a == _TINY_A) | ((name in ("zeta", "polygamma")) & (x < -5))
    _same_pattern(actual[~loose], expected[~loose], (a[~loose], x[~loose]), 1e-8)
    np.testing.assert_array_equal(np.isnan(actual[loose]), np.isnan(expected[loose]))


def test_betainc_conventions_match_jax_lax():
    grid = np.array([0.0, 1.0, 0.5, -0.5, 2.0, INF, NAN, 30.0, 0.999, -1.0])
    a, b, x = (v.ravel() for v in np.meshgrid(grid, grid, grid, indexing="ij"))
    with jax.enable_x64(True):
        expected = lax.betainc(a, b, x)
    _same_pattern(special.betainc(a, b, x), expected, (a, b, x), 1e-9)


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(st.floats(0.05, 20.0), st.floats(0.01, 40.0))
def test_igamma_grad_a_matches_finite_differences_of_scipy(a, x):
    """d/da gammainc(a, x) by a central difference of scipy's gammainc (an independent
    computation), at a step where truncation and rounding errors are both ~1e-9."""
    h = 1e-5 * max(a, 1.0)
    fd = (sc.gammainc(a + h, x) - sc.gammainc(a - h, x)) / (2 * h)
    got = special.igamma_grad_a(np.array([a]), np.array([x]))[0]
    assert abs(got - fd) <= 1e-6 * abs(fd) + 1e-9, (got, fd)


@settings(max_examples=25, deadline=None, database=None, derandomize=True)
@given(st.floats(0.05, 20.0), st.floats(0.02, 0.98))
def test_random_gamma_grad_is_the_derivative_of_the_quantile(a, q):
    """A sample at quantile q is gammaincinv(a, q); d sample / da at fixed q is what
    random_gamma_grad gives (checked by a central difference of scipy's gammaincinv)."""
    x = sc.gammaincinv(a, q)
    h = 1e-5 * max(a, 1.0)
    fd = (sc.gammaincinv(a + h, q) - sc.gammaincinv(a - h, q)) / (2 * h)
    got = special.random_gamma_grad(np.array([a]), np.array([x]))[0]
    assert abs(got - fd) <= 1e-6 * abs(fd) + 1e-9, (got, fd)


def test_values_are_scipys_in_float64():
    """Away from the conventions the oracle is scipy.special itself."""
    x = np.linspace(0.05, 9.0, 50)
    np.testing.assert_array_equal(special.lgamma(x), sc.gammaln(x))
    np.testing.assert_array_equal(special.digamma(x), sc.digamma(x))
    np.testing.assert_array_equal(special.erf_inv(x / 10), sc.erfinv(x / 10))
    np.testing.assert_array_equal(special.igamma(x, x[::-1]), sc.gammainc(x, x[::-1]))
    np.testing.assert_array_equal(special.zeta(x + 1.5, x), sc.zeta(x + 1.5, x))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_low_precision_inputs_are_computed_in_float64(dtype):
    x = np.array([-2.5, -0.3, 0.25, 1.5, 7.0, 0.0, -1.0, np.inf, np.nan], dtype)
    x64 = x.astype(np.float64)
    for fn in (special.erf, special.lgamma, special.digamma, special.bessel_i1e):
        got = fn(x)
        assert got.dtype == np.float64 and got.shape == x.shape
        np.testing.assert_array_equal(got, fn(x64))
    assert special.digamma(np.float32(0.5)).shape == ()
