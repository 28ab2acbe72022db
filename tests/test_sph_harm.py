"""jax.scipy.special.sph_harm_y against scipy.special.sph_harm_y and real JAX: values in float32
and float64, dtypes and weak types, JAX's table-lookup conventions (n_max clipping, |m| > n,
negative n), jit, vmap and gradients, and the errors. (Each JAX evaluation compiles JAX's
table for its n_max, ~1-3 s, so JAX is asked for values once by default; its dtypes come from
jax.eval_shape.)"""
import jax
import numpy as np
import pytest
import scipy.special

import refjax
from refjax.scipy.special import sph_harm_y
from refjax.spec.checks import assert_close, enable_x64

both_backends = pytest.mark.backends("numpy_ref", "xla")


def _draw(size, seed=0, n_max=10):
    rng = np.random.RandomState(seed)
    n = rng.randint(0, n_max + 1, size)
    m = np.round(rng.uniform(-1, 1, size) * n).astype(np.int32)
    return n.astype(np.int32), m, rng.uniform(0, np.pi, size), rng.uniform(0, 2 * np.pi, size)


def _jax_type(*args, **kwargs):
    out = jax.eval_shape(lambda: jax.scipy.special.sph_harm_y(*args, **kwargs))
    return out.shape, out.dtype, out.weak_type


def _typed_as_jax(ours, *args, **kwargs):
    """ours, after checking its shape, dtype and weak type are JAX's for these arguments."""
    aval = refjax.typeof(ours)
    assert (aval.shape, aval.dtype, aval.weak_type) == _jax_type(*args, **kwargs)
    return ours


@both_backends
def test_values_match_scipy_and_types_match_jax():
    n, m, theta, phi = _draw(64)
    want = scipy.special.sph_harm_y(n, m, theta, phi)
    f32 = [a.astype(np.float32) for a in (theta, phi)]
    assert_close(_typed_as_jax(sph_harm_y(n, m, *f32), n, m, *f32), want.astype(np.complex64),
                 (3e-6, 3e-6), "float32")
    # integer angles are float32; bfloat16 ones are computed in bfloat16 (as in JAX)
    ints, half = np.arange(64) % 4, (theta / 2).astype(refjax.numpy.bfloat16)
    assert_close(_typed_as_jax(sph_harm_y(n, m, ints, f32[1]), n, m, ints, f32[1]),
                 scipy.special.sph_harm_y(n, m, ints, f32[1]).astype(np.complex64),
                 (3e-6, 3e-6), "integer theta")
    assert_close(_typed_as_jax(sph_harm_y(n, m, half, f32[1]), n, m, half, f32[1]),
                 scipy.special.sph_harm_y(n, m, half.astype(float), f32[1]).astype(np.complex64),
                 (0, 0.1), "bfloat16 theta")
    # JAX's own test's inputs: narrow integer degrees and angles outside [0, pi] x [0, 2 pi]
    theta, phi = np.linspace(-2.0, 1.0, 7), np.linspace(-4.0, 5.0, 7)
    for dtype in (np.int8, np.uint8, np.int16):
        m = np.array([3, 2, 0, 1, 1, 3, 2]) * (-1 if dtype == np.int8 else 1)
        n, m = np.abs(m).astype(dtype), m.astype(dtype)
        assert_close(_typed_as_jax(sph_harm_y(n, m, theta, phi, n_max=3), n, m, theta, phi,
                                   n_max=3),
                     scipy.special.sph_harm_y(n, m, theta, phi).astype(np.complex64),
                     (1e-6, 1e-6), f"{dtype.__name__} degrees")
    n, m, theta, phi = _draw(64)
    with enable_x64():
        assert_close(_typed_as_jax(sph_harm_y(n, m, theta, phi), n, m, theta, phi), want,
                     (1e-13, 1e-13), "float64")
        # complex128 even from float32 angles: (-1.0) ** |m| is float64 under x64, as in JAX
        _typed_as_jax(sph_harm_y(n, m, *f32), n, m, *f32)
        assert_close(_typed_as_jax(sph_harm_y(n, m, 0.7, 1.5), n, m, 0.7, 1.5),
                     scipy.special.sph_harm_y(n, m, 0.7, 1.5), (1e-13, 1e-13), "scalar angles")


def _by_jaxs_conventions(n, m, theta, phi, n_max):
    """scipy's Legendre values read as JAX reads its table: n indexes numpy-style (negative
    from the end) clipped to [0, n_max], |m| clipped to n_max, zero above the diagonal; the
    phase uses the unclipped |m|, and Y_n^{-m} = (-1)^m conj(Y_n^m)."""
    degree = np.clip(np.where(n < 0, n + n_max + 1, n), 0, n_max)
    order = np.minimum(np.abs(m), n_max)
    legendre = np.where(order <= degree,
                        scipy.special.sph_harm_y(degree, np.minimum(order, degree), theta, 0), 0)
    harmonic = legendre.real * np.exp(1j * np.abs(m) * phi)
    return np.where(m < 0, (-1.0) ** np.abs(m) * harmonic.conjugate(), harmonic)


@both_backends
def test_jaxs_conventions_out_of_the_documented_range():
    n = np.array([1, 2, 3, -1, -7, 3, 2, 0], np.int32)
    m = np.array([2, -3, 1, 0, 1, -3, -2, 0], np.int32)
    theta, phi = np.linspace(0.2, 3.0, 8, dtype=np.float32), np.linspace(0.1, 6, 8, dtype=np.float32)
    ours = sph_harm_y(n, m, theta, phi, n_max=2)
    assert_close(ours, _by_jaxs_conventions(n, m, theta, phi, 2).astype(np.complex64),
                 (1e-6, 1e-6), "by hand")
    assert_close(ours, jax.scipy.special.sph_harm_y(n, m, theta, phi, n_max=2), (1e-6, 1e-6),
                 "JAX")


@both_backends
def test_jit_vmap_and_gradients():
    n, m, theta, phi = _draw(5, seed=2)
    f = refjax.jit(lambda t, p: sph_harm_y(n, m, t, p, n_max=10))
    assert_close(f(theta, phi), sph_harm_y(n, m, theta, phi), (1e-7, 1e-7), "jit")
    thetas, phis = np.stack([theta, theta / 2]), np.stack([phi, phi + 1])
    assert_close(refjax.vmap(f)(thetas, phis),
                 np.stack([f(t, p) for t, p in zip(thetas, phis)]), (1e-7, 1e-7), "vmap")
    weights = np.random.RandomState(3).randn(2, 5)

    def loss(harm, t, p):
        y = harm(n, m, t, p)
        return (y.real * weights[0] + y.imag * weights[1]).sum()

    with enable_x64():
        grads = refjax.jit(refjax.grad(lambda t, p: loss(sph_harm_y, t, p), argnums=(0, 1)))(
            theta, phi)
        step = 1e-6 * np.eye(5)
        for arg, grad in enumerate(grads):
            diffs = [(loss(scipy.special.sph_harm_y, *_shift(theta, phi, arg, s))
                      - loss(scipy.special.sph_harm_y, *_shift(theta, phi, arg, -s))) / 2e-6
                     for s in step]
            assert_close(grad, np.array(diffs), (1e-6, 1e-6), f"gradient {arg}")


def _shift(theta, phi, arg, s):
    return (theta + s, phi) if arg == 0 else (theta, phi + s)


def test_errors():
    """JAX's errors for diff_n, a traced degree without n_max, non-integer n/m (JAX: an
    indexing message; refjax names sph_harm_y and the argument) and complex angles."""
    n, m, theta, phi = _draw(4, seed=3)
    for harm in (sph_harm_y, jax.scipy.special.sph_harm_y):
        with pytest.raises(NotImplementedError, match="diff_n"):
            harm(n, m, theta, phi, diff_n=0)
        with pytest.raises(TypeError, match="complex"):
            harm(n, m, theta.astype(np.complex64), phi)
    with pytest.raises(jax.errors.ConcretizationTypeError, match="n_max"):
        jax.jit(lambda k: jax.scipy.special.sph_harm_y(k, m, theta, phi))(n)
    with pytest.raises(refjax.errors.ConcretizationTypeError, match="n_max"):
        refjax.jit(lambda k: sph_harm_y(k, m, theta, phi))(n)
    with pytest.raises(TypeError, match="Indexer must have integer"):
        jax.scipy.special.sph_harm_y(n.astype(np.float32), m, theta, phi)
    with pytest.raises(TypeError, match="sph_harm_y requires integer .* n of dtype float32"):
        sph_harm_y(n.astype(np.float32), m, theta, phi)
    with pytest.raises(TypeError, match="sph_harm_y requires integer .* m of dtype float32"):
        sph_harm_y(n, m.astype(np.float32), theta, phi)


@pytest.mark.parametrize("who", ["refjax", "jax"])
def test_fewer_degrees_than_angles_broadcast_as_scipy(who):
    """With one (n, m) and several angles, JAX reads theta[0] for every harmonic (its lookup
    pairs the i-th n with the i-th theta, clipped) and silently returns the other angles' values
    at theta[0]; refjax broadcasts, as scipy. (The 'jax' case, which compiles JAX's table, runs
    under the thorough profile.)"""
    _, _, theta, phi = _draw(4, seed=4)
    want = scipy.special.sph_harm_y(3, -2, theta, phi).astype(np.complex64)
    if who == "refjax":
        assert_close(sph_harm_y(np.array([3]), np.array([-2]), theta, phi), want, (1e-6, 1e-6),
                     "broadcast")
        return
    theirs = np.asarray(jax.scipy.special.sph_harm_y(np.array([3]), np.array([-2]), theta, phi))
    at_first = scipy.special.sph_harm_y(3, -2, theta[0], phi).astype(np.complex64)
    assert_close(theirs, at_first, (1e-6, 1e-6), "JAX at theta[0]")
    assert not np.allclose(theirs, want, atol=1e-3)
