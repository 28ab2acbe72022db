"""refjax.scipy.special.hyp2f1 against scipy.special (float64 truth), real JAX (float32: values,
dtypes, weak types, errors, derivatives, and where JAX is wrong) and finite differences, on
both backends."""
import functools
import itertools

import numpy as np
import pytest
from jax_recordings import on_jax
import scipy.special as ss

import jax
import jax.scipy.special as js

import refjax
import refjax.scipy.special as rs

pytestmark = pytest.mark.backends("numpy_ref", "xla")

A = [-2.5, -2.0, -0.5, 0.3, 1.0, 1.5, 3.0]
C = [-3.5, -0.5, 0.7, 1.0, 2.0, 3.5, 5.0]
X = [-5.0, -1.5, -0.9, -0.3, 0.0, 0.2, 0.5, 0.6, 0.8, 0.95, 0.99, 1.0]


@functools.cache
def _jax_gradients():
    """JAX's vmap(grad) at DERIVATIVE_POINTS, computed once for both backends' runs (its
    compilation takes seconds)."""
    return on_jax(_gradients, DERIVATIVE_POINTS)


def _gradients(jax, points):
    return np.stack(jax.jit(jax.vmap(jax.grad(jax.scipy.special.hyp2f1, ALL)))(*points))


def _values(jax, points):
    return np.asarray(jax.jit(jax.scipy.special.hyp2f1)(*points))


def _polynomial(v):
    return (v <= 0) & (v == np.round(v))


def test_float64_grid_against_scipy():
    """Every combination of a, b, c, x on a grid crossing the series, 1 - x, Pfaff, Euler and
    polynomial cases and integer c - a - b; at x = 1 with c - a - b <= 0 (divergent), JAX's
    +inf where scipy gives the signed limit."""
    a, b, c, x = np.array(list(itertools.product(A, A, C, X))).T
    with refjax.enable_x64(True):
        out = np.asarray(refjax.jit(rs.hyp2f1)(a, b, c, x))
    assert out.dtype == np.float64
    expected = ss.hyp2f1(a, b, c, x)
    divergent = (x == 1) & (c - a - b <= 0) & ~(_polynomial(a) | _polynomial(b))
    assert (out[divergent] == np.inf).all() and np.isinf(expected[divergent]).all()
    np.testing.assert_allclose(out[~divergent], expected[~divergent], rtol=1e-12, atol=1e-13)


def test_float64_random_against_scipy():
    """Random a, b, c in (-5, 5), x in (-3, 1): cancellation in A&S 15.3.6 for negative c
    costs up to ~3e-11."""
    rng = np.random.default_rng(0)
    a, b, c = rng.uniform(-5, 5, (3, 400))
    x = rng.uniform(-3, 1, 400)
    with refjax.enable_x64(True):
        out = refjax.jit(rs.hyp2f1)(a, b, c, x)
    np.testing.assert_allclose(out, ss.hyp2f1(a, b, c, x), rtol=1e-10, atol=1e-13)


POINTS32 = np.float32([[1, 2, 3, 0.3], [1.5, 2.5, 3.7, 0.4], [0.5, 0.5, 1.5, -0.5],
                       [1.2, 0.7, 2.5, 0.8], [1, 1, 2, 0.9], [-3, 2, 3, 0.7], [-3, 2, 3, -5],
                       [2, 3, 1.5, 0.5], [0, 2, 3, 5], [1, 2, 2, 0.5], [1, 2, 0, 0.5],
                       [1, 2, -2, 0.5], [1, 2, 3, 1], [1, 2, 3, 1.5], [1.5, 2, 3, 1],
                       [1, 2, 1, 1.5], [3, 3, 1, 0.8], [np.nan, 1, 1, 0.5]]).T


def test_float32_against_jax():
    ours = refjax.jit(rs.hyp2f1)(*POINTS32)
    assert (ours.dtype, ours.weak_type) == (np.float32, False)
    theirs = on_jax(_values, POINTS32)
    np.testing.assert_allclose(ours, theirs, rtol=3e-6)
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))


def test_where_jax_is_wrong():
    """JAX sums the series for x < -1, where it diverges (1e34 for F(1/2, 1/2; 3/2; -3) =
    asinh(sqrt 3) / sqrt 3), converges slowly at x -> -1, and gives inf for a polynomial beyond
    or at x = 1 (F(-2, 3; 4; 2) = 0.4, F(-2, 3; 1; 1) = 1 by Chu-Vandermonde); refjax
    transforms (Pfaff) and sums the polynomial."""
    a, b, c, x = np.float32([[0.5, 0.5, 1.5, -3], [1, 1, 2, -0.999], [-2, 3, 4, 2],
                             [-2, 3, 1, 1]]).T
    truth = [np.arcsinh(np.sqrt(3)) / np.sqrt(3), np.log(1.999) / 0.999, 0.4, 1.0]
    np.testing.assert_allclose(rs.hyp2f1(a, b, c, x), truth, rtol=2e-6)
    theirs = on_jax(_values, (a, b, c, x))
    assert theirs[0] > 1e30 or np.isinf(theirs[0])
    assert abs(theirs[1] - truth[1]) > 1e-3
    assert np.isinf(theirs[2:]).all()


@pytest.mark.parametrize("args", [(1.0, 2.0, 3.0, 0.5), (1, 2, 3, 0), (np.float32(1), 2, 3, 0.5),
                                  (np.float16(1), 2.0, 3.0, 0.5), (1, 2, 3, np.float64(0.5))])
def test_dtypes_and_weak_types(args):
    """JAX's dtypes and (strong) weak types, from jax.eval_shape (no compilation)."""
    ours, theirs = rs.hyp2f1(*args), jax.eval_shape(js.hyp2f1, *args)
    assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)


def test_complex_is_a_type_error_naming_hyp2f1():
    """JAX raises TypeError about rem; refjax the same class, naming hyp2f1."""
    with pytest.raises(TypeError):
        js.hyp2f1(1j, 2.0, 3.0, 0.5)
    with pytest.raises(TypeError, match="hyp2f1 does not support complex"):
        rs.hyp2f1(1j, 2.0, 3.0, 0.5)


DERIVATIVE_POINTS = np.float32([[1, 2, 3, 0.3], [1.5, 2.5, 3.7, 0.4], [0.5, 0.5, 1.5, -0.5],
                                [1.2, 0.7, 2.5, 0.8], [1, 1, 2, 0.9], [2, 1.3, 1.5, -3]]).T


ALL = (0, 1, 2, 3)


def test_derivatives_against_jax():
    """vmap(grad) in all four arguments against JAX's (its series: inf at x = -3, where it
    diverges; refjax's is Pfaff's transformation differentiated)."""
    ours = np.stack(refjax.jit(refjax.vmap(refjax.grad(rs.hyp2f1, ALL)))(*DERIVATIVE_POINTS))
    theirs = _jax_gradients()
    # the x derivative at the fourth point is F(2.2, 1.7; 3.5; 0.8) (times ab/c), whose
    # A&S 15.3.6 terms cancel in float32: 1.3e-5 off (JAX's series: 1e-6)
    np.testing.assert_allclose(ours[:, :5], theirs[:, :5], rtol=2e-5)
    assert np.isinf(theirs[:, 5]).all() and np.isfinite(ours[:, 5]).all()


def test_derivatives_against_finite_differences():
    """vmap(grad) in all four arguments against central differences in float64; on the
    integer c - a - b lattice (x = 0.9) the a, b, c derivatives are the derivative series, as
    JAX's, nan in float64 where 200 terms do not reach its precision."""
    with refjax.enable_x64(True):
        p, h = DERIVATIVE_POINTS.astype(np.float64), 1e-6
        steps = np.eye(4)[:, :, None] * h  # (argument, coordinate, point)
        # every shifted point in one call: (coordinate, sign, argument, point)
        shifted = np.stack([p + steps, p - steps]).transpose(2, 0, 1, 3)
        values = np.asarray(refjax.jit(rs.hyp2f1)(*shifted))
        central = (values[0] - values[1]) / (2 * h)
        grads = np.stack(refjax.jit(refjax.vmap(refjax.grad(rs.hyp2f1, ALL)))(*p))
    lattice = np.zeros((4, 6), bool)
    lattice[:3, 4] = True
    np.testing.assert_allclose(grads[~lattice], central[~lattice], rtol=1e-7)
    assert np.isnan(grads[lattice]).all()


@pytest.mark.backends("numpy_ref")  # eager XLA compiles each operation: slow, and run by jit
def test_eager_vmap_and_jit_agree():
    eager = rs.hyp2f1(*POINTS32[:, :6])
    np.testing.assert_allclose(refjax.vmap(rs.hyp2f1)(*POINTS32[:, :6]), eager, rtol=1e-6)
    np.testing.assert_allclose(refjax.jit(rs.hyp2f1)(*POINTS32[:, :6]), eager, rtol=1e-6)
    np.testing.assert_allclose(refjax.vmap(rs.hyp2f1, (None, None, None, 0))(1.0, 2.0, 3.0,
                                                                            POINTS32[3, :4]),
                               rs.hyp2f1(1.0, 2.0, 3.0, POINTS32[3, :4]), rtol=1e-6)
