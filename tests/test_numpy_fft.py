"""jnp.fft against jax.numpy.fft: values, dtypes and weak types for every transform and norm,
s/axes cropping and padding, more than 3 axes, x64, jit/grad/vmap, frequencies, shifts and
errors."""
import numpy as np
import pytest

import refjax.numpy as rnp
from jnp_compare import check, check_error, check_grad, check_vmap, x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")

RNG = np.random.RandomState(0)
REAL = RNG.randn(3, 4, 5).astype(np.float32)
COMPLEX = (RNG.randn(3, 4, 5) + 1j * RNG.randn(3, 4, 5)).astype(np.complex64)
INTS = RNG.randint(-5, 6, size=(3, 4, 5)).astype(np.int32)

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "rfftn"}


def _inputs(name):
    return (REAL, INTS) if name in REAL_INPUT else (REAL, COMPLEX, INTS)


@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional(name):
    for x in _inputs(name):
        for kwargs in ({}, {"n": 6}, {"n": 3, "axis": 0}):
            check(lambda m, a: getattr(m.fft, name)(a, **kwargs), x, tol=1e-4)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_norms(norm):
    for name in ONE_D + N_D:
        check(lambda m, a: getattr(m.fft, name)(a, norm=norm), REAL, tol=1e-4, jit=False)


@pytest.mark.parametrize("name", N_D)
def test_multi_dimensional(name):
    for x in _inputs(name):
        for kwargs in ({}, {"s": (2, 6)}, {"s": (3, 2), "axes": (2, 0)}):
            check(lambda m, a: getattr(m.fft, name)(a, **kwargs), x, tol=1e-4)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_more_than_three_axes(name):
    x = RNG.randn(2, 3, 2, 4, 3).astype(np.float32)
    check(lambda m, a: getattr(m.fft, name)(a), x, tol=1e-4)
    check(lambda m, a: getattr(m.fft, name)(a, axes=(0, 1, 2, 3)), x, tol=1e-4)


def test_x64_dtypes():
    with x64():
        for x in (REAL.astype(np.float64), INTS, INTS.astype(np.int64), REAL, np.ones(3, bool),
                  COMPLEX.astype(np.complex128)):
            check(lambda m, a: m.fft.fft(a), x, jit=False)
            check(lambda m, a: m.fft.irfft(a), x, jit=False)
        check(lambda m: m.fft.fftfreq(5), jit=False)


def test_grad_and_vmap():
    check_grad(lambda m, a: m.sum(m.abs(m.fft.rfft(a, norm="ortho")) ** 2), REAL[0])
    check_grad(lambda m, a: m.sum(m.fft.irfft(a * (1 + 2j)) ** 2), REAL[0])
    check_grad(lambda m, a: m.real(m.fft.fftn(a, s=(3, 6))).sum(), REAL[0])
    check_vmap(lambda m, a: m.fft.fft2(a), COMPLEX)
    check_vmap(lambda m, a: m.fft.hfft(a, n=7), COMPLEX)


def test_round_trip_matches_numpy():
    out = rnp.fft.irfftn(rnp.fft.rfftn(REAL), s=REAL.shape)
    np.testing.assert_allclose(np.asarray(out), REAL, atol=1e-5)
    np.testing.assert_allclose(np.asarray(rnp.fft.fft(COMPLEX)), np.fft.fft(COMPLEX), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("kwargs", [{}, {"d": 0.5}, {"dtype": np.float16}, {"dtype": np.int32}])
@pytest.mark.parametrize("n", [1, 4, 7])
def test_frequencies(n, kwargs):
    check(lambda m: m.fft.fftfreq(n, **kwargs), jit=False)
    if kwargs.get("dtype") is not np.int32:  # JAX's rfftfreq divides ints: float32 for both
        check(lambda m: m.fft.rfftfreq(n, **kwargs), jit=False)


@pytest.mark.parametrize("axes", [None, 0, (1,), (0, 2)])
def test_shifts(axes):
    for name in ("fftshift", "ifftshift"):
        check(lambda m, a: getattr(m.fft, name)(a, axes=axes), INTS)


@pytest.mark.parametrize("call", [
    lambda m: m.fft.fft(np.ones(4), norm="bad"),
    lambda m: m.fft.fft(np.ones(4), axis=(0, 1)),
    lambda m: m.fft.fft(np.ones(4), n=0),
    lambda m: m.fft.fftn(np.ones((2, 2)), axes=(0, 0)),
    lambda m: m.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1)),
    lambda m: m.fft.fft2(np.ones((2, 2, 2)), axes=(0,)),
    lambda m: m.fft.rfft(np.ones(4, np.complex64)),
    lambda m: m.fft.fftfreq([3]),
    lambda m: m.fft.rfftfreq(3, d=[1.0]),
    lambda m: m.fft.fft("abc"),
    lambda m: m.fft.rfft(np.ones(4, np.float16)),
])
def test_errors(call):
    check_error(call)
