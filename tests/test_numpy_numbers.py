"""gcd, lcm, frexp, ldexp, spacing, i0, fabs, bitwise_count and the array API aliases against
jax.numpy (values, dtypes, weak types, jit, grad, vmap, errors); subnormals against NumPy."""
import numpy as np
import pytest

import refjax
import refjax.numpy as rnp
from jnp_compare import check, check_error, check_grad, check_vmap

pytestmark = pytest.mark.backends("numpy_ref", "xla")

X = np.array([0, 1.5, -3, 1e-3, np.inf, np.nan, -0.0, 7e30], np.float32)
EXPONENTS = np.array([1, 2, -3, 100, 1, 0, 2, -140], np.int32)
INTS = np.array([0, 12, -18, 7, 0, 100], np.int32)
J = np.array([0, 8, 12, -21, 5, 75], np.int8)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, "bfloat16"])
def test_float_functions(dtype):
    with np.errstate(over="ignore"):  # 7e30 is inf in float16
        x = X.astype(dtype) if dtype != np.int32 else np.array([0, 3, -7, 1000], np.int32)
    for name in ("frexp", "spacing", "i0", "fabs"):
        check(lambda m, a: getattr(m, name)(a), x, tol=1e-3)
    check(lambda m, a, e: m.ldexp(a, e), x, EXPONENTS[:x.size], tol=1e-3)
    check(lambda m, a: m.ldexp(a, 3), x, tol=1e-3)


def test_integer_functions():
    for name in ("gcd", "lcm"):
        check(lambda m, a, b: getattr(m, name)(a, b), INTS, J)
        check(lambda m, a: getattr(m, name)(a, 4), INTS)
        check_vmap(lambda m, a: getattr(m, name)(a, 6), INTS)
    check(lambda m, a: m.bitwise_count(a), INTS)
    check(lambda m, a: m.bitwise_count(a), J)
    check(lambda m, a: m.bitwise_count(a), np.array([True, False]))


def test_aliases():
    for name in ("acos", "acosh", "asin", "asinh", "atan", "atanh"):
        check(lambda m, a: getattr(m, name)(a), np.array([0.25, 0.5], np.float32), jit=False)
    check(lambda m, a: m.atan2(a, 2.0), np.array([0.25, -1], np.float32), jit=False)
    check(lambda m, a: m.bitwise_left_shift(a, 2), INTS, jit=False)
    check(lambda m, a: m.bitwise_right_shift(a, 1), INTS, jit=False)


def test_gradients():
    x = X[:4]
    check_grad(lambda m, a: m.i0(a).sum(), x)  # exactly 0 at 0, as JAX's custom rule
    check_grad(lambda m, a: m.ldexp(a, 3).sum(), x)
    check_grad(lambda m, a: m.frexp(a)[0].sum(), x[1:])
    check_grad(lambda m, a: m.fabs(a).sum(), x[1:])


@pytest.mark.backends("numpy_ref")
def test_subnormals_as_numpy():
    """XLA on CPU flushes subnormals (JAX's frexp(1e-40) is (0.5, -132)); the oracle keeps them
    and gives NumPy's answer."""
    x = np.array([1e-40, -3e-42, 1e-45], np.float32)
    m, e = rnp.frexp(x)
    np.testing.assert_array_equal(np.asarray(m), np.frexp(x)[0])
    np.testing.assert_array_equal(np.asarray(e), np.frexp(x)[1])
    np.testing.assert_array_equal(np.asarray(rnp.ldexp(m, e)), x)


@pytest.mark.parametrize("call", [
    lambda m: m.gcd(np.ones(2), 2),
    lambda m: m.lcm(2.0, 3),
    lambda m: m.frexp(np.ones(2, np.complex64)),
    lambda m: m.ldexp(np.ones(2), 1.5),
    lambda m: m.ldexp(np.ones(2, np.complex64), 1),
    lambda m: m.spacing(np.ones(2, np.complex64)),
    lambda m: m.i0(np.ones(2, np.complex64)),
    lambda m: m.fabs(np.ones(2, np.complex64)),
    lambda m: m.bitwise_count(np.ones(2, np.float32)),
    lambda m: (refjax if m is rnp else __import__("jax")).grad(
        lambda v: m.spacing(v).sum())(np.ones(2, np.float32)),
])
def test_errors(call):
    check_error(call)
