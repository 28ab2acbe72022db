"""refjax.scipy.signal and integrate against scipy.signal and jax.scipy (values, shapes, dtypes,
errors) on both backends, with gradients against JAX's."""
import numpy as np
import pytest
import scipy.signal as ss

import jax
import jax.scipy.signal as js

import refjax
import refjax.scipy.integrate as rint
import refjax.scipy.signal as rs

pytestmark = pytest.mark.backends("numpy_ref", "xla")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((5, 6)).astype(np.float32)
B = RNG.standard_normal((2, 3)).astype(np.float32)
C = RNG.standard_normal((7, 8)).astype(np.float32)
V, W = RNG.standard_normal(9).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
PAIRS = [(A, B), (B, A), (A, C), (A, A), (V, W), (W, V)]


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_against_scipy_and_jax(name, mode):
    for x, y in PAIRS:
        if name.endswith("2d") and x.ndim != 2:
            continue
        got = getattr(rs, name)(x, y, mode)
        want = getattr(js, name)(x, y, mode)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, getattr(ss, name)(x, y, mode), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_complex_integer_and_grad():
    z = (A + 1j * A[::-1]).astype(np.complex64)
    np.testing.assert_allclose(rs.correlate(z, B, "same"), ss.correlate(z, B, "same"), atol=1e-5)
    got = rs.convolve(np.arange(5), np.array([1, 2]))
    want = js.convolve(np.arange(5), np.array([1, 2]))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(refjax.grad(lambda a: rs.convolve(a, B, "same").sum())(A),
                               jax.grad(lambda a: js.convolve(a, B, "same").sum())(A), atol=1e-5)


@pytest.mark.parametrize("kw", [{}, {"bp": [3, 11]}, {"type": "constant", "axis": 0}])
def test_detrend(kw):
    x = RNG.standard_normal((3, 20)).astype(np.float32) + np.arange(20, dtype=np.float32)
    got = rs.detrend(x, **kw)
    assert got.dtype == js.detrend(x, **kw).dtype
    np.testing.assert_allclose(got, ss.detrend(x, **kw), atol=2e-5)


def test_errors():
    for lib in (js, rs):
        with pytest.raises(ValueError, match="mode must be one of"):
            lib.convolve(A, B, "middle")
        with pytest.raises(ValueError, match="same number of dimensions"):
            lib.convolve(A, V)
        with pytest.raises(ValueError, match="smaller than the other in every dimension"):
            lib.convolve(A, np.ones((6, 2), np.float32))
        with pytest.raises(ValueError, match="only supports 2-dimensional"):
            lib.convolve2d(V, W)
        with pytest.raises(NotImplementedError, match="boundary='fill'"):
            lib.correlate2d(A, B, boundary="wrap")
        with pytest.raises(ValueError, match="Trend type"):
            lib.detrend(A, type="quadratic")


def test_trapezoid():
    x = np.sort(RNG.random(7)).astype(np.float32)
    for kw in ({}, {"x": x}, {"dx": 0.5}):
        got = rint.trapezoid(np.sin(x), **kw)
        want = jax.scipy.integrate.trapezoid(np.sin(x), **kw)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
