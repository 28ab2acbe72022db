"""refjax.scipy.ndimage.map_coordinates, interpolate.RegularGridInterpolator and cluster.vq against
jax.scipy and scipy (values, dtypes, errors), on both backends, with gradients against JAX's."""
import numpy as np
import pytest
import scipy.ndimage as sn

import jax
import jax.scipy.ndimage as jn

import refjax
import refjax.scipy.ndimage as rn

pytestmark = pytest.mark.backends("numpy_ref", "xla")

RNG = np.random.default_rng(0)
IMAGE = RNG.standard_normal((5, 6)).astype(np.float32)
COORDS = [RNG.uniform(-3, 8, (4, 7)).astype(np.float32), RNG.uniform(-3, 9, (4, 7)).astype(np.float32)]
MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]


@pytest.mark.parametrize("order", [0, 1])
def test_against_jax(order):
    for mode in MODES:
        got = rn.map_coordinates(IMAGE, COORDS, order, mode, cval=1.5)
        want = jn.map_coordinates(IMAGE, COORDS, order, mode, cval=1.5)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=mode)
    ints = np.arange(30).reshape(5, 6)
    got, want = rn.map_coordinates(ints, COORDS, order), jn.map_coordinates(ints, COORDS, order)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["nearest", "mirror", "reflect"])
def test_against_scipy(mode):
    np.testing.assert_allclose(rn.map_coordinates(IMAGE, COORDS, 1, mode),
                               sn.map_coordinates(IMAGE, np.stack(COORDS), order=1, mode=mode),
                               rtol=1e-5, atol=1e-6)


def test_grad_and_jit():
    def loss(lib):
        return lambda img, c: lib.scipy.ndimage.map_coordinates(img, [c, c + 0.5], 1).sum()
    c = COORDS[0][0]
    for rg, jg in zip(refjax.grad(loss(refjax), (0, 1))(IMAGE, c), jax.grad(loss(jax), (0, 1))(IMAGE, c)):
        np.testing.assert_allclose(rg, jg, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(refjax.jit(rn.map_coordinates, static_argnums=(2,))(IMAGE, COORDS, 1),
                               jn.map_coordinates(IMAGE, COORDS, 1), rtol=1e-6, atol=1e-6)


def test_errors():
    for lib in (jn, rn):
        with pytest.raises(ValueError, match="coordinates must be a sequence of length"):
            lib.map_coordinates(IMAGE, COORDS[:1], 1)
        with pytest.raises(NotImplementedError, match="order<=1"):
            lib.map_coordinates(IMAGE, COORDS, 3)
        with pytest.raises(NotImplementedError, match="does not yet support mode"):
            lib.map_coordinates(IMAGE, COORDS, 1, mode="grid-wrap")


def test_cluster_vq():
    import jax.scipy.cluster.vq as jvq
    import refjax.scipy.cluster.vq as rvq
    obs = RNG.standard_normal((7, 3)).astype(np.float32)
    book = RNG.standard_normal((4, 3)).astype(np.float32)
    for args in ((obs, book), (obs[:, 0], book[:, 0]), (obs.astype(np.int32), book)):
        for got, want in zip(rvq.vq(*args), jvq.vq(*args)):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-6)
    import scipy.cluster.vq as svq
    for got, want in zip(rvq.vq(obs, book), svq.vq(obs, book)):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    for lib in (jvq, rvq):
        with pytest.raises(ValueError, match="same rank"):
            lib.vq(obs, book[0])
        with pytest.raises(ValueError, match="ndim different than 1 or 2"):
            lib.vq(obs[None], book[None])


# ---------------------------------------------------------------- interpolate

GRID = (np.linspace(0, 1, 5).astype(np.float32), np.array([0, 0.2, 0.5, 1.5], np.float32))
VALUES = RNG.standard_normal((5, 4, 2)).astype(np.float32)
POINTS = RNG.uniform(-0.2, 1.6, (6, 2)).astype(np.float32)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator(method):
    import jax.scipy.interpolate as ji
    import scipy.interpolate as si
    import refjax.scipy.interpolate as ri
    for fill in (np.nan, None, 0.0):
        got = ri.RegularGridInterpolator(GRID, VALUES, method, fill_value=fill)(POINTS)
        want = ji.RegularGridInterpolator(GRID, VALUES, method, fill_value=fill)(POINTS)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    inside = np.clip(POINTS, 0, 1)
    exact = si.RegularGridInterpolator(GRID, VALUES, method)(inside)
    np.testing.assert_allclose(ri.RegularGridInterpolator(GRID, VALUES, method)(inside), exact,
                               rtol=1e-5, atol=1e-6)
    coords = (POINTS[:, 0], POINTS[:, 1])   # a tuple of coordinate arrays
    np.testing.assert_allclose(ri.RegularGridInterpolator(GRID, VALUES[..., 0], method)(coords),
                               ji.RegularGridInterpolator(GRID, VALUES[..., 0], method)(coords),
                               rtol=1e-6, atol=1e-6)


def test_regular_grid_interpolator_pytree_grad_and_errors():
    import jax.scipy.interpolate as ji
    import refjax.scipy.interpolate as ri
    interp = ri.RegularGridInterpolator(GRID, VALUES)
    np.testing.assert_allclose(refjax.jit(lambda f, p: f(p))(interp, POINTS), interp(POINTS),
                               rtol=2e-6, atol=1e-7)   # XLA fuses the jitted sums differently
    grad_r = refjax.grad(lambda v: ri.RegularGridInterpolator(GRID, v)(np.clip(POINTS, 0, 1)).sum())
    grad_j = jax.grad(lambda v: ji.RegularGridInterpolator(GRID, v)(np.clip(POINTS, 0, 1)).sum())
    np.testing.assert_allclose(grad_r(VALUES), grad_j(VALUES), rtol=1e-5, atol=1e-6)
    for lib in (ji, ri):
        with pytest.raises(ValueError, match="method 'cubic' is not defined"):
            lib.RegularGridInterpolator(GRID, VALUES, "cubic")
        with pytest.raises(NotImplementedError, match="bounds_error"):
            lib.RegularGridInterpolator(GRID, VALUES, bounds_error=True)
        with pytest.raises(ValueError, match="3 point arrays"):
            lib.RegularGridInterpolator(GRID + GRID[:1], VALUES[..., 0])
        with pytest.raises(ValueError, match="have dimension 3"):
            lib.RegularGridInterpolator(GRID, VALUES)(np.zeros((2, 3), np.float32))
