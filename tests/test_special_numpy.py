"""Differential tests of refjax.backends.numpy_ref.special against scipy.special and jax.lax."""

import importlib.util
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jax


import jax.lax as lax  # noqa: E402
import jax.scipy.special as jss  # noqa: E402
import ml_dtypes  # noqa: E402
import scipy.special as sc  # noqa: E402

try:
    from refjax.backends.numpy_ref import special
except Exception:  # the package's other modules may be mid-edit: load the file on its own
    _path = pathlib.Path(__file__).resolve().parents[1] / "backends" / "numpy_ref" / "special.py"
    _spec = importlib.util.spec_from_file_location("refjax_numpy_ref_special", _path)
    special = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(special)

RTOL = 1e-12
HYP = settings(max_examples=30, deadline=None, database=None)

INF, NAN = np.inf, np.nan
# Inputs every function is checked on (no subnormals: XLA on CPU flushes them to zero).
EDGES = np.array([0.0, -0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.0, -3.0, -2.5, -7.3, 1e-300, -1e-300,
                  1e10, -1e10, -1e10 + 0.5, 1e300, -1e300, 1.7e308, INF, -INF, NAN,
                  1.4616321449683623, -0.504083008264455409])


def _close(actual, expected, rtol=RTOL, atol=1e-300, scale=None):
    """Assert elementwise agreement: same nan positions, equal infinities, and for finite values
    |actual - expected| <= rtol * max(|expected|, scale) + atol (subnormals are only absolute)."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    assert actual.dtype == np.float64 and actual.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_array_equal(np.where(np.isinf(expected), actual, 0),
                                  np.where(np.isinf(expected), expected, 0))
    fin = np.isfinite(expected)
    bound = np.abs(expected) if scale is None else np.maximum(np.abs(expected), scale)
    with np.errstate(invalid="ignore"):
        err = np.abs(actual - expected)
    bad = fin & ~(err <= rtol * bound + atol)
    assert not bad.any(), (f"x-index {np.flatnonzero(bad)[:5]}: got {actual[bad][:5]}, "
                           f"want {expected[bad][:5]}")


def _arrays(elements, max_size=30):
    return st.lists(elements, min_size=1, max_size=max_size).map(lambda v: np.array(v, np.float64))


def _log_floats(lo, hi, sign=1.0):
    return st.floats(lo, hi).map(lambda e: sign * 10.0 ** e)


def _non_integer(x):
    return x != math.floor(x)


moderate = _arrays(st.floats(-30, 30))
positive = _arrays(st.one_of(_log_floats(-300, 300), st.floats(1e-12, 30)))
negative = _arrays(st.floats(-200, -1e-12).filter(_non_integer))


# ---------------------------------------------------------------------------
# Values against scipy.special (float64)
# ---------------------------------------------------------------------------

@HYP
@given(st.one_of(moderate, _arrays(_log_floats(-300, 300)), _arrays(_log_floats(-300, 3, -1))))
def test_erf_matches_scipy(x):
    _close(special.erf(x), sc.erf(x))


@HYP
@given(_arrays(st.one_of(st.floats(-1, 1, exclude_min=True, exclude_max=True),
                         st.floats(-16, -1e-3).map(lambda e: 1 - 10.0 ** e),
                         st.floats(-16, -1e-3).map(lambda e: 10.0 ** e - 1),
                         _log_floats(-300, -1))))
def test_erf_inv_matches_scipy(y):
    _close(special.erf_inv(y), sc.erfinv(y))
    _close(special.erf(special.erf_inv(y)), y, rtol=1e-15, atol=2e-16)  # round trip


@HYP
@given(st.one_of(positive, _arrays(st.floats(0.5, 2.5))))
def test_lgamma_positive_matches_scipy(x):
    # scipy's gammaln is only ~1e-10 relative right next to its zeros at 1 and 2 (this module
    # is ~1e-16 there), hence the small absolute floor.
    _close(special.lgamma(x), sc.gammaln(x), atol=1e-15)


@HYP
@given(negative)
def test_lgamma_negative_matches_scipy(x):
    # log|Gamma(x)| = log(pi / |sin(pi x)|) - log|Gamma(1 - x)|: near its zeros the two terms
    # cancel, so the error is measured against their size.
    scale = np.abs(sc.gammaln(1 - x)) + np.abs(np.log(np.pi / np.abs(np.sin(np.pi * x))))
    _close(special.lgamma(x), sc.gammaln(x), scale=scale)


@HYP
@given(st.one_of(positive, _arrays(st.floats(1e-3, 3))))
def test_digamma_positive_matches_scipy(x):
    _close(special.digamma(x), sc.digamma(x))


@HYP
@given(_arrays(st.floats(-200, -1e-12).filter(lambda v: v - math.floor(v) > 1e-3)))
def test_digamma_negative_matches_scipy(x):
    # psi(x) = psi(1 - x) - pi cot(pi x): scale by the terms that cancel near the zeros.
    # scipy evaluates tan(pi r) with r = x - trunc(x) near -1 just above a negative integer
    # (losing ~1e-16 / distance), so that sliver is tested against mpmath values below.
    scale = np.abs(sc.digamma(1 - x)) + np.abs(np.pi / np.tan(np.pi * x))
    _close(special.digamma(x), sc.digamma(x), scale=scale)


def test_digamma_just_above_negative_integers():
    x = np.array([-0.99999, -2.9999999, -0.999999999, -49.99990463256836])
    want = [-99999.57718967069, -9999998.76024782, -1000000027.8591479, -10481.8376984687]
    _close(special.digamma(x), want, rtol=1e-15)  # mpmath, 200 bits; scipy is off by 1e-7


@HYP
@given(st.integers(1, 8), _arrays(st.one_of(_log_floats(-30, 30), st.floats(1e-6, 30))))
def test_polygamma_positive_matches_scipy(m, x):
    _close(special.polygamma(m, x), sc.polygamma(m, x))


@HYP
@given(st.integers(1, 8), _arrays(st.floats(-60, -1e-6).filter(_non_integer)))
def test_polygamma_negative_matches_scipy(m, x):
    # scipy sums m! sum_k (x + k)^-(m+1) directly, which cancels for even m (its error reaches
    # 1e-6 relative at m=8, x=-7.5); its error is relative to the sum of absolute terms, about
    # |psi^(m)(a)| + |psi^(m)(1 - a)| for a = x - floor(x).  Exact values are pinned below.
    a = x - np.floor(x)
    scale = np.abs(sc.polygamma(m, a)) + np.abs(sc.polygamma(m, 1 - a))
    _close(special.polygamma(m, x), sc.polygamma(m, x), scale=scale)


def test_polygamma_negative_pinned():
    m, x, want = np.array([  # mpmath with 800 bits
        (2, -7.5, -0.015564511795903924), (4, -7.5, -0.0014461249646771969),
        (6, -2.5, -0.1383581075500352), (8, -7.5, -0.0002869898154427252),
        (8, -13.3, 2047472533.9873815), (3, -30.25, 1558.5453877952364),
        (5, -0.7, 165654.82926950054), (2, -41.9, -1998.6602165049112)]).T
    _close(special.polygamma(m, x), want, rtol=1e-14)


@HYP
@given(st.one_of(moderate, positive))
def test_polygamma_zero_is_digamma(x):
    np.testing.assert_array_equal(special.polygamma(0, x), special.digamma(x))


def test_polygamma_large_order_and_broadcasting():
    x = np.array([0.5, 2.0, 50.0, 300.0, -3.25])
    m = np.array([[20.0], [100.0], [170.0]])
    _close(special.polygamma(m[:2], x), sc.polygamma(m[:2], x))
    # scipy underflows zeta(171, 300) and loses this one; the value is -170! zeta(171, 300).
    got = special.polygamma(170.0, x)
    with np.errstate(over="ignore"):
        _close(got[:3], sc.polygamma(170, x[:3]))
    _close(got[3], -4.335360007808032e-117, rtol=1e-13)
    assert special.polygamma(np.array([1, 2]), np.array([[1.0], [2.0]])).shape == (2, 2)


# ---------------------------------------------------------------------------
# Fixed edge cases and the NaN / inf conventions
# ---------------------------------------------------------------------------

def test_edges_match_scipy_except_documented_conventions():
    x = EDGES
    _close(special.erf(x), sc.erf(x))
    # JAX: lgamma(-inf) = +inf (scipy: -inf).
    want = sc.gammaln(x)
    want[x == -INF] = INF
    _close(special.lgamma(x), want, atol=1e-15)
    # JAX: digamma(+-0) = nan (scipy: -+inf).
    want = sc.digamma(x)
    want[x == 0] = NAN
    _close(special.digamma(x), want)
    finite_x = x[np.abs(x) < 1e9]  # scipy's polygamma sums |x| terms for negative x
    for m in range(1, 5):
        want = sc.polygamma(m, finite_x)
        # JAX: polygamma(m, +inf) = nan (scipy: 0); at poles (incl. -inf) nan for even m.
        want[finite_x == INF] = NAN
        if m % 2 == 0:
            want[(finite_x <= 0) & (np.floor(finite_x) == finite_x)] = NAN
        _close(special.polygamma(m, finite_x), want)
    y = np.array([-1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, INF, -INF, NAN, 1 - 2 ** -53,
                  -1 + 2 ** -53, 1e-300, 5e-324])
    _close(special.erf_inv(y), sc.erfinv(y))


def test_pinned_edge_values():
    assert special.lgamma(np.array([0.0, -0.0, -1.0, -4.0, INF, -INF])).tolist() == [INF] * 6
    assert np.isnan(special.lgamma(np.array(NAN)))
    _close(special.lgamma(np.array([1e-300, 1e10, 1.0, 2.0])),
           [690.7755278982137, 220258509288.81137, 0.0, 0.0])
    d = special.digamma(np.array([0.0, -0.0, -1.0, -5.0, -INF, INF, NAN, 1e-300, 1e10]))
    assert np.isnan(d[:5]).all() and d[5] == INF and np.isnan(d[6])
    _close(d[7:], [-1e300, 23.025850929890456])
    p = special.polygamma(np.array([1.0, 2.0, 3.0, 1.0, 2.0]), np.array([0.0, 0.0, -2.0, INF, -INF]))
    assert p[0] == INF and np.isnan(p[1]) and p[2] == INF and np.isnan(p[3]) and np.isnan(p[4])
    assert np.isnan(special.polygamma(np.array([-1.0, 0.5, NAN, INF]), 2.5)).all()
    e = special.erf_inv(np.array([-0.0, 1.0, -1.0, 1.0000001, NAN]))
    assert e[0] == 0 and np.signbit(e[0]) and e[1] == INF and e[2] == -INF
    assert np.isnan(e[3:]).all()


def _jax_conventions(actual, expected, x, check_finite=True):
    """nan and inf positions equal to jax.lax's; finite values loosely equal (JAX is the less
    accurate one) where check_finite."""
    expected = np.asarray(expected)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=str(x))
    inf = np.isinf(expected) | np.isinf(actual)
    np.testing.assert_array_equal(actual[inf], expected[inf], err_msg=str(x[inf]))
    fin = np.isfinite(expected) & check_finite
    np.testing.assert_allclose(actual[fin], expected[fin], rtol=1e-9, atol=1e-14)


def test_conventions_match_jax_lax():
    # x64 only for this test: a global switch would change every other module's JAX results.
    with jax.enable_x64(True):
        _check_conventions()


def _check_conventions():
    x = EDGES
    _jax_conventions(special.erf(x), lax.erf(x), x)
    _jax_conventions(special.lgamma(x), lax.lgamma(x), x)
    _jax_conventions(special.digamma(x), lax.digamma(x), x)
    _jax_conventions(special.digamma(x), jss.digamma(x), x)
    # XLA's polygamma is inaccurate for x < about -5 (its zeta sums past q < 0, then applies
    # Euler-Maclaurin at a negative point), so only the nan/inf pattern is compared there.
    # (jax.scipy.special.polygamma is lax.polygamma behind an integer check on m.)
    m, xb = np.broadcast_arrays(np.arange(6.0)[:, None], x)
    m = np.concatenate([m.ravel(), [-1.0, 0.5, NAN, INF, 1.0, 2.0, 200.0]])
    xb = np.concatenate([xb.ravel(), [2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.0]])
    _jax_conventions(special.polygamma(m, xb), lax.polygamma(m, xb), xb, check_finite=xb > -5)
    y = np.array([-1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, INF, -INF, NAN, 1 - 2 ** -53,
                  -1 + 2 ** -53, 1e-300, 0.999])
    got, want = special.erf_inv(y), np.asarray(lax.erf_inv(y))
    _jax_conventions(got, want, y)
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]),
                                  np.signbit(want[~np.isnan(want)]))


# ---------------------------------------------------------------------------
# Dtypes, shapes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_low_precision_inputs_are_computed_in_float64(dtype):
    x = np.array([-2.5, -0.3, 0.25, 1.5, 7.0, 0.0, -1.0, np.inf, np.nan], dtype)
    x64 = x.astype(np.float64)
    y = (x64 / 8).astype(dtype)
    for fn, args, args64 in [(special.erf, (x,), (x64,)), (special.lgamma, (x,), (x64,)),
                             (special.digamma, (x,), (x64,)),
                             (special.erf_inv, (y,), (y.astype(np.float64),)),
                             (special.polygamma, (np.ones_like(x), x), (np.ones_like(x64), x64))]:
        got = fn(*args)
        assert got.dtype == np.float64 and got.shape == x.shape
        np.testing.assert_array_equal(got, fn(*args64))
    assert special.digamma(np.float32(0.5)).shape == ()
