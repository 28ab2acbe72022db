"""Polynomials (poly, polyadd, polysub, polymul, polyder, polyint, polydiv, polyval,
trim_zeros, vander) and window functions against jax.numpy: values, dtypes, weak types,
jit, grad, errors."""
import numpy as np
import pytest

from jnp_compare import check, check_error, check_grad

pytestmark = pytest.mark.backends("numpy_ref", "xla")

P = np.array([1, -2, 3], np.float32)
Q = np.array([2, 1], np.int32)
R = np.array([0, 0, 1, 2, 0], np.int32)


@pytest.mark.parametrize("call", [
    lambda m, a, b: m.polyadd(a, b),
    lambda m, a, b: m.polyadd(b, b),
    lambda m, a, b: m.polysub(b, a),
    lambda m, a, b: m.polymul(a, b),
    lambda m, a, b: m.polydiv(a, b),
    lambda m, a, b: m.poly(a),
    lambda m, a, b: m.poly(b),
    lambda m, a, b: m.polyder(a),
    lambda m, a, b: m.polyder(b, 2),
    lambda m, a, b: m.polyder(a, 5),
    lambda m, a, b: m.polyint(a),
    lambda m, a, b: m.polyint(a, 2, k=np.array([1, 2])),
    lambda m, a, b: m.polyint(b, 3, k=2),
    lambda m, a, b: m.vander(a),
    lambda m, a, b: m.vander(b, 4, increasing=True),
    lambda m, a, b: m.polyval(a, b),
    lambda m, a, b: m.polyval(a, 2.0),
    lambda m, a, b: m.polyval(b, 2.0),
])
def test_polynomials(call):
    check(call, P, Q)


def test_concrete_only_options():
    check(lambda m, a: m.trim_zeros(a), R, jit=False)
    check(lambda m, a: m.trim_zeros(a, "f"), R, jit=False)
    check(lambda m, a: m.trim_zeros(a, "b"), R, jit=False)
    check(lambda m, a: m.trim_zeros(a), np.zeros(3), jit=False)
    check(lambda m, a, b: m.polymul(a, b, trim_leading_zeros=True), R.astype(np.float32), Q,
          jit=False)
    check(lambda m, a, b: m.polydiv(a, b, trim_leading_zeros=True),
          np.array([1.0, 3, 3, 1], np.float32), np.array([1.0, 1], np.float32), jit=False)
    check(lambda m, a: m.poly(a), np.array([[1.0, 2], [3, 4]], np.float32), jit=False, tol=1e-4)


def test_trim_zeros_nd_as_numpy():
    """n-d arrays lose their all-zero border hyperplanes, as in NumPy 2 (JAX trims rows by the
    flattened array's first and last non-zeros)."""
    import refjax.numpy as rnp
    x = np.zeros((4, 5), np.int32)
    x[1, 2], x[2, 3] = 1, 2
    for trim in ("fb", "f", "b"):
        np.testing.assert_array_equal(np.asarray(rnp.trim_zeros(x, trim)), np.trim_zeros(x, trim))


def test_gradients():
    check_grad(lambda m, a: m.polyval(a, 1.5), P)
    check_grad(lambda m, a: m.polymul(a, a).sum(), P)
    check_grad(lambda m, a: m.polyint(m.polyder(a)).sum(), P)
    check_grad(lambda m, a: m.polydiv(a, m.array([1.0, 2.0]))[0].sum(), P)


@pytest.mark.parametrize("M", [0, 1, 2, 5])
@pytest.mark.parametrize("name", ["hamming", "hanning", "blackman", "bartlett"])
def test_windows(name, M):
    check(lambda m: getattr(m, name)(M), jit=False)


def test_kaiser():
    for M in (0, 1, 6):
        check(lambda m: m.kaiser(M, 3.0), jit=False)


@pytest.mark.parametrize("call", [
    lambda m: m.polyder(np.ones(3), -1),
    lambda m: m.polyint(np.ones(3), -1),
    lambda m: m.polyint(np.ones(3), 2, k=np.ones(3)),
    lambda m: m.vander(np.ones((2, 2))),
    lambda m: m.vander(np.ones(2), -1),
    lambda m: m.poly(np.ones((2, 3))),
])
def test_errors(call):
    check_error(call)
