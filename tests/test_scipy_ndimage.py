"""refjax.scipy.ndimage.map_coordinates and scipy.cluster.vq against jax.scipy and scipy (values,
dtypes, errors), on both backends, with gradients against JAX's."""
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
