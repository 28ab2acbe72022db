"""Regression tests of elementwise edge cases, against real JAX (jax.lax) on CPU: conj of real
operands, bool mul, complex atan2, pow with an integer exponent, imag's transpose, vmap of
select_n/clamp with scalar operands, integer division at INT_MIN, signed zeros in
cummax/cummin and on the complex branch cuts."""
import numpy as np
import pytest

import jax
import refjax
from refjax import lax
from refjax.core.config import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _same(actual, expected, rtol=1e-6, signed_zeros=True):
    """Equal dtype and values (NaN == NaN), and zeros of equal sign when signed_zeros."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype}, expected {expected.dtype}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0, equal_nan=True)
    if signed_zeros:
        for part in ((np.real, np.imag) if actual.dtype.kind == "c" else (np.asarray,)):
            a, e = part(actual), part(expected)
            assert (np.signbit(a) == np.signbit(e))[e == 0].all(), f"zero signs: {a} vs {e}"


# ---------------------------------------------------------------- conj

@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_conj_is_complex_with_jax_values(dtype):
    x = np.array([1.5, -2.0 + 1j, -1j], np.complex64).astype(dtype, copy=False) \
        if dtype == np.complex64 else np.array([1.5, -2.0, 0.0], dtype)
    _same(lax.conj(x), jax.lax.conj(x))


def test_conj_of_float64_is_complex128_under_x64():
    with enable_x64(True), jax.enable_x64(True):
        assert lax.conj(np.ones(2, np.float64)).dtype == np.complex128


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.bool_])
def test_conj_rejects_what_jax_rejects(dtype):
    with pytest.raises(TypeError, match="conj.*" + np.dtype(dtype).name):
        lax.conj(np.ones(2, dtype))
    with pytest.raises(TypeError):
        jax.lax.conj(np.ones(2, dtype))


def test_conj_derivatives_of_a_real_operand():
    x = np.float32(1.5)
    _, t = refjax.jvp(lax.conj, (x,), (np.float32(2.0),))
    _same(t, jax.jvp(jax.lax.conj, (x,), (np.float32(2.0),))[1])
    ct = np.complex64(1 + 2j)
    _same(refjax.vjp(lax.conj, x)[1](ct)[0], jax.vjp(jax.lax.conj, x)[1](ct)[0])
    z = np.complex64(1 - 3j)
    _same(refjax.vjp(lax.conj, z)[1](ct)[0], jax.vjp(jax.lax.conj, z)[1](ct)[0])


# ---------------------------------------------------------------- mul, atan2, pow, imag

def test_mul_rejects_bool_and_jnp_multiply_still_ands():
    t = np.array([True, True, False])
    f = np.array([True, False, False])
    with pytest.raises(TypeError, match="mul.*bool"):
        lax.mul(t, f)
    with pytest.raises(TypeError):
        jax.lax.mul(t, f)
    _same(refjax.numpy.multiply(t, f), jax.numpy.multiply(t, f))


def test_complex_atan2_matches_jax():
    x = np.array([1 + 2j, -1 - 0.5j, 0.5 + 3j, 2 - 0j], np.complex64)
    y = np.array([0.5 - 1j, 2 + 0j, -1 + 1j, 1 + 1j], np.complex64)
    _same(lax.atan2(x, y), jax.lax.atan2(x, y), rtol=1e-5, signed_zeros=False)
    args = (np.complex128(1 + 2j), np.complex128(0.5 - 1j))
    with enable_x64(True), jax.enable_x64(True):
        for k in (0, 1):
            expected = jax.grad(lambda *a: jax.lax.atan2(*a).real, k)(*args)
            _same(refjax.grad(lambda *a: lax.real(lax.atan2(*a)), k)(*args), expected, 1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.complex64])
@pytest.mark.parametrize("exponent_dtype", [np.int32, np.uint8])
def test_pow_with_an_integer_exponent(dtype, exponent_dtype):
    x = np.array([2.0, 3.0, -2.0, 0.0, 0.5, 1.5], dtype)
    y = np.array([3, 2, 3, 0, 5, 7], exponent_dtype)
    _same(lax.pow(x, y), jax.lax.pow(x, y), rtol=1e-3 if dtype == np.float16 else 1e-6)
    _same(lax.pow(x, exponent_dtype(2)), jax.lax.pow(x, exponent_dtype(2)), rtol=1e-3)


def test_pow_with_negative_integer_exponents():
    x, y = np.array([2.0, -2.0, 0.0, 4.0], np.float32), np.array([-1, -3, -1, -2], np.int32)
    _same(lax.pow(x, y), jax.lax.pow(x, y))


def test_pow_python_scalars_keep_their_own_dtype():
    exponents = np.array([2, 3], np.int32)
    _same(lax.pow(2.0, exponents), jax.lax.pow(2.0, exponents))
    halves = np.array([2.0, 3.0], np.float16)
    _same(lax.pow(halves, 2), jax.lax.pow(halves, 2), rtol=1e-3)


def test_pow_rejects_what_jax_rejects():
    ints = np.ones(2, np.int32)
    for x, y in ((ints, ints), (np.ones(2, np.float32), np.ones(2, np.float16)),
                 (np.ones(2, np.float32), np.ones(2, np.bool_)), (2, np.ones(2, np.float32)),
                 (np.ones(2, np.float16), 2.5)):
        with pytest.raises(TypeError, match="pow"):
            lax.pow(x, y)
        with pytest.raises(TypeError):
            jax.lax.pow(x, y)


def test_pow_derivatives_with_an_integer_exponent():
    y = np.array([3, 0, 1, -2], np.int32)
    x = np.array([2.0, 0.0, 0.0, 1.5], np.float32)
    t = np.ones(4, np.float32)
    float0 = np.zeros(4, jax.dtypes.float0)
    out, tan = refjax.jvp(lax.pow, (x, y), (t, float0))
    jout, jtan = jax.jvp(jax.lax.pow, (x, y), (t, float0))
    _same(out, jout)
    _same(tan, jtan)
    g = refjax.grad(lambda x: lax.reduce_sum(lax.pow(x, y), (0,)))(x)
    _same(g, jax.grad(lambda x: jax.lax.pow(x, y).sum())(x))
    members = refjax.vmap(lax.pow)(x, y)
    _same(members, jax.vmap(jax.lax.pow)(x, y))


def test_imag_transpose_is_jax_cotangent():
    z, ct = np.complex64(1 + 2j), np.float32(3.0)
    _same(refjax.vjp(lax.imag, z)[1](ct)[0], jax.vjp(jax.lax.imag, z)[1](ct)[0],
          signed_zeros=False)


# ---------------------------------------------------------------- vmap of select_n and clamp

_AXES = [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, None), (0, None, 0),
         (0, 0, 0)]


def _members(in_axes, *batched):
    """The batched arguments (leading dim 2), unbatched (member 0) where in_axes is None."""
    return [v if ax == 0 else v[0] for v, ax in zip(batched, in_axes)]


def _loop(fn, in_axes, args):
    """jax.lax's fn applied to each batch member, stacked (jax.vmap of clamp itself fails on
    some of these combinations, e.g. an unbatched scalar operand with a batched scalar max)."""
    return np.stack([fn(*[a[k] if ax == 0 else a for a, ax in zip(args, in_axes)])
                     for k in range(2)])


@pytest.mark.backends("numpy_ref")  # batching rules are backend-independent
@pytest.mark.parametrize("in_axes", _AXES)
@pytest.mark.parametrize("which_shape, case_shape", [((), ()), ((), (3,)), ((3,), (3,))])
def test_vmap_select_n_with_a_scalar_predicate(in_axes, which_shape, case_shape):
    rng = np.random.default_rng(0)
    which = rng.integers(0, 2, (2,) + which_shape).astype(bool)
    a, b = rng.uniform(-3, 3, (2, 2) + case_shape).astype(np.float32)
    args = _members(in_axes, which, a, b)
    expected = _loop(jax.lax.select_n, in_axes, args)
    _same(refjax.vmap(lax.select_n, in_axes=in_axes)(*args), expected)


@pytest.mark.backends("numpy_ref")
@pytest.mark.parametrize("in_axes", _AXES)
@pytest.mark.parametrize("shapes", [((), (), ()), ((), (4,), ()), ((4,), (4,), ()),
                                    ((), (4,), (4,))])
def test_vmap_clamp_with_scalar_bounds(in_axes, shapes):
    rng = np.random.default_rng(1)
    lo_shape, x_shape, hi_shape = shapes
    lo = rng.uniform(-2, 0, (2,) + lo_shape).astype(np.float32)
    x = rng.uniform(-3, 3, (2,) + x_shape).astype(np.float32)
    hi = rng.uniform(0, 2, (2,) + hi_shape).astype(np.float32)
    args = _members(in_axes, lo, x, hi)
    expected = _loop(jax.lax.clamp, in_axes, args)
    _same(refjax.vmap(lax.clamp, in_axes=in_axes)(*args), expected)


# ---------------------------------------------------------------- integer division

@pytest.mark.backends("numpy_ref")  # the xla backend calls jax.lax itself
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8])
def test_integer_div_and_rem_at_the_edges(dtype):
    info = np.iinfo(dtype)
    vals = np.unique(np.array([info.min, info.min + 1, 0, 1, 7, info.max] +
                              ([-1, -7] if info.min < 0 else []), np.int64)).astype(dtype)
    x, y = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    _same(lax.div(x, y), jax.lax.div(x, y))
    _same(lax.rem(x, y), jax.lax.rem(x, y))


# ---------------------------------------------------------------- cummax, cummin

@pytest.mark.backends("numpy_ref")  # the xla backend calls jax.lax itself
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_extrema_order_signed_zeros(name, reverse):
    x = np.array([[0.0, -0.0, -1.0, 0.0], [-0.0, 0.0, -0.0, 1.0], [-0.0, -0.0, 0.0, -0.0],
                  [0.0, np.nan, -0.0, 0.0]], np.float32)
    for axis in (0, 1):
        expected = getattr(jax.lax, name)(x, axis=axis, reverse=reverse)
        _same(getattr(lax, name)(x, axis=axis, reverse=reverse), expected)


# ---------------------------------------------------------------- complex branch cuts

_ON_THE_AXES = np.array([complex(re, im) for re in (2.0, -2.0, 0.5, -0.5, 0.0, -0.0, 1e30)
                         for im in (0.0, -0.0)] +
                        [complex(re, im) for re in (0.0, -0.0) for im in (2.0, -2.0, 0.5)] +
                        [complex(3e14, -0.0), complex(-3e14, -0.0)], np.complex64)


@pytest.mark.backends("numpy_ref")  # the xla backend calls jax.lax itself
@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "acosh", "atanh", "sqrt",
                                  "log"])
def test_complex_branch_cuts_follow_xla(name):
    expected = getattr(jax.lax, name)(_ON_THE_AXES)
    _same(getattr(lax, name)(_ON_THE_AXES), expected, rtol=1e-6)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("shapes", [((3, 1), (3, 2)), ((1, 2), (3, 2)), ((0, 1), (0, 2))])
def test_signed_zero_extrema_with_size_one_broadcasting(op, shapes):
    """max/min order -0.0 below +0.0 (as XLA) also where lax broadcasts a size-1 dimension."""
    x = np.array([-0.0, 0.0, 1.0] * 2, np.float32)[:int(np.prod(shapes[0]))].reshape(shapes[0])
    y = np.array([0.0, -0.0, 0.0, -0.0, 2.0, 0.0], np.float32)[:int(np.prod(shapes[1]))]
    y = y.reshape(shapes[1])
    _same(getattr(lax, op)(x, y), getattr(jax.lax, op)(x, y))
    _same(getattr(lax, op)(y, x), getattr(jax.lax, op)(y, x))
