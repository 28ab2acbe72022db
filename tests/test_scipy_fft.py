"""refjax.scipy.fft (type-2 DCT and inverse) against scipy.fft (float64) and jax.scipy.fft
(dtypes, shapes, errors), on both backends, with gradients against JAX's."""
import numpy as np
import pytest
import scipy.fft as sf

import jax
import jax.scipy.fft as jf

import refjax
import refjax.scipy.fft as rf

pytestmark = pytest.mark.backends("numpy_ref", "xla")

X = np.random.default_rng(0).standard_normal((4, 6, 5)).astype(np.float32)
ONE = [{}, {"norm": "ortho"}, {"n": 8}, {"n": 3, "axis": 1}, {"axis": 0, "norm": "backward"}]
ND = [{}, {"norm": "ortho"}, {"axes": (0, 2)}, {"s": (3, 7)}, {"s": 4, "axes": [1]}]


def agree(name, kw, got):
    want = getattr(jf, name)(X, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    exact = getattr(sf, name)(X.astype(np.float64), **kw)
    np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-5 * np.abs(exact).max())


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_one_axis(name):
    for kw in ONE:
        agree(name, kw, getattr(rf, name)(X, **kw))


@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_several_axes(name):
    for kw in ND:
        agree(name, kw, getattr(rf, name)(X, **kw))


def test_round_trip_complex_ints_and_grad():
    np.testing.assert_allclose(rf.idct(rf.dct(X, norm="ortho"), norm="ortho"), X, atol=1e-5)
    z = (X + 1j * X[::-1]).astype(np.complex64)
    np.testing.assert_allclose(rf.dctn(z), sf.dctn(z.astype(np.complex128)), rtol=1e-5, atol=1e-4)
    assert rf.dct(np.arange(4)).dtype == jf.dct(np.arange(4)).dtype
    np.testing.assert_allclose(refjax.grad(lambda x: (rf.dct(x) ** 2).sum())(X[0, 0]),
                               jax.grad(lambda x: (jf.dct(x) ** 2).sum())(X[0, 0]), rtol=1e-5)


def test_errors():
    for lib in (jf, rf):
        with pytest.raises(NotImplementedError, match="Only DCT type 2"):
            lib.dct(X, type=3)
        with pytest.raises(ValueError, match="norm='forward' is not implemented"):
            lib.idct(X, norm="forward")
        with pytest.raises(ValueError, match="s must have at most"):
            lib.dctn(X, s=(1, 2, 3, 4))
