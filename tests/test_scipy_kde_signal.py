"""refjax.scipy.stats.gaussian_kde and the FFT-based refjax.scipy.signal functions against
jax.scipy and scipy: values, dtypes, pytree structure, jit and grad, and JAX's errors."""
import numpy as np
import pytest
import scipy.signal as ssig
import scipy.stats as ss

import jax

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")

RNG = np.random.RandomState(0)
DATA = RNG.randn(2, 30).astype(np.float32)
WEIGHTS = RNG.rand(30).astype(np.float32)
POINTS = RNG.randn(2, 5).astype(np.float32)
BW_METHODS = {"scott": None, "silverman": "silverman", "scalar": 0.4,
              "callable": lambda kde: 0.3 * kde.neff ** -0.1}


def kdes(data=DATA, **kwargs):
    return (refjax.scipy.stats.gaussian_kde(data, **kwargs),
            jax.scipy.stats.gaussian_kde(data, **kwargs))


def _same(got, want, rtol=1e-5, atol=1e-6):
    assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("bw", BW_METHODS)
@pytest.mark.parametrize("weighted", [False, True])
def test_kde_densities_match_jax_and_scipy(bw, weighted):
    """Fields and densities: scipy's values (in float64), JAX's types (traced only)."""
    weights = WEIGHTS if weighted else None
    kwargs = dict(bw_method=BW_METHODS[bw], weights=weights)
    r = refjax.scipy.stats.gaussian_kde(DATA, **kwargs)
    scipy_bw = (lambda s: BW_METHODS[bw](s)) if bw == "callable" else BW_METHODS[bw]
    s = ss.gaussian_kde(DATA.astype(np.float64), bw_method=scipy_bw, weights=weights)
    j = jax.eval_shape(lambda: jax.scipy.stats.gaussian_kde(DATA, **kwargs))
    for field in ("neff", "dataset", "weights", "covariance", "inv_cov"):
        got, want = getattr(r, field), getattr(j, field)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, getattr(s, field), rtol=1e-4)
    for method in ("evaluate", "pdf", "__call__", "logpdf"):
        want = jax.eval_shape(lambda: getattr(jax.scipy.stats.gaussian_kde(DATA, **kwargs),
                                              method)(POINTS))
        got = getattr(r, method)(POINTS)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, getattr(s, method)(POINTS), rtol=1e-4)


def test_kde_one_dimensional_and_point_shapes():
    r, j = kdes(DATA[0])
    s = ss.gaussian_kde(DATA[0].astype(np.float64))
    assert (r.d, r.n) == (j.d, j.n) == (1, 30)
    _same(r(np.float32(0.3)), j(np.float32(0.3)))
    np.testing.assert_allclose(r(POINTS[0]), s(POINTS[0]), rtol=1e-5)
    _same(r.integrate_box_1d(-1.0, 0.5), j.integrate_box_1d(-1.0, 0.5))
    np.testing.assert_allclose(r.integrate_box_1d(-1.0, 0.5), s.integrate_box_1d(-1.0, 0.5),
                               rtol=1e-5)
    r2, _ = kdes()
    _same(r2(POINTS[:, 0]), kdes()[1](POINTS[:, 0]))   # one point of d=2 given as a vector


def test_kde_integrals_match_jax_and_scipy():
    (r, j), (r2, j2) = kdes(weights=WEIGHTS), kdes(DATA[:, :7])
    s, s2 = (ss.gaussian_kde(DATA.astype(np.float64), weights=WEIGHTS),
             ss.gaussian_kde(DATA[:, :7].astype(np.float64)))
    mean, cov = np.array([0.2, -0.1], np.float32), np.array([[1.0, 0.2], [0.2, 0.5]], np.float32)
    _same(r.integrate_gaussian(mean, cov), j.integrate_gaussian(mean, cov))
    np.testing.assert_allclose(r.integrate_gaussian(mean, cov), s.integrate_gaussian(mean, cov),
                               rtol=1e-5)
    for a, b, sa, sb in ((r, r2, s, s2), (r2, r, s2, s)):
        np.testing.assert_allclose(a.integrate_kde(b), sa.integrate_kde(sb), rtol=1e-5)
    _same(r.integrate_kde(r2), j.integrate_kde(j2))


def test_kde_is_a_pytree_under_jit_and_grad():
    r, j = kdes(weights=WEIGHTS)
    leaves, tree = refjax.tree_util.tree_flatten(r)
    assert str(tree) == str(jax.tree_util.tree_structure(j)) and len(leaves) == 5
    assert repr(refjax.tree_util.tree_unflatten(tree, leaves)) == repr(r)
    _same(refjax.jit(lambda k, x: k.logpdf(x))(r, POINTS), j.logpdf(POINTS), rtol=1e-4)
    grad = refjax.grad(lambda x: r.logpdf(x).sum())(POINTS)
    _same(grad, jax.grad(lambda x: j.logpdf(x).sum())(POINTS), rtol=1e-4, atol=1e-5)
    eps = 1e-2   # a central difference in float64 through scipy
    s = ss.gaussian_kde(DATA.astype(np.float64), weights=WEIGHTS)
    e0 = np.zeros_like(POINTS, np.float64)
    e0[0, 0] = eps
    fd = (s.logpdf(POINTS + e0)[0] - s.logpdf(POINTS - e0)[0]) / (2 * eps)
    np.testing.assert_allclose(grad[0, 0], fd, rtol=1e-3)


def test_kde_repr_is_jaxs():
    r, j = kdes(DATA[0, :4])
    assert repr(r) == repr(j)


def test_kde_resample():
    """The same draws as JAX's for a flat shape; any shape (JAX 0.10.2 raises a TypeError for
    a shape of two dimensions: it transposes the kernel noise)."""
    r, j = kdes(weights=WEIGHTS)
    _same(r.resample(refjax.random.key(0), (4,)), j.resample(jax.random.key(0), (4,)))
    samples = r.resample(refjax.random.key(1), (3, 2))
    with pytest.raises(TypeError):
        j.resample(jax.random.key(1), (3, 2))
    flat = r.resample(refjax.random.key(1), (6,))
    assert samples.shape == (2, 3, 2) and flat.shape == (2, 6)
    many = r.resample(refjax.random.key(2), (4000,))
    np.testing.assert_allclose(np.cov(many), np.cov(DATA, aweights=WEIGHTS, bias=True) + r.covariance,
                               atol=0.12)


KDE_ERRORS = {
    "scalar_dataset": lambda m: m.gaussian_kde(np.float32(1.0)),
    "list_dataset": lambda m: m.gaussian_kde([1.0, 2.0]),
    "list_points": lambda m: m.gaussian_kde(DATA[0]).logpdf([1.0, 2.0]),
    "complex": lambda m: m.gaussian_kde(np.ones(3, np.complex64)),
    "bw_method": lambda m: m.gaussian_kde(DATA, bw_method="foo"),
    "weights_length": lambda m: m.gaussian_kde(DATA[0], weights=np.ones(4)),
    "weights_2d": lambda m: m.gaussian_kde(DATA[0], weights=np.ones((30, 1))),
    "points_dim": lambda m: m.gaussian_kde(DATA)(np.ones(3, np.float32)),
    "box_1d_of_2d": lambda m: m.gaussian_kde(DATA).integrate_box_1d(0.0, 1.0),
    "box": lambda m: m.gaussian_kde(DATA).integrate_box([0, 0], [1, 1]),
    "set_bandwidth": lambda m: m.gaussian_kde(DATA).set_bandwidth("scott"),
    "kde_dims": lambda m: m.gaussian_kde(DATA).integrate_kde(m.gaussian_kde(DATA[0])),
    "mean_dims": lambda m: m.gaussian_kde(DATA).integrate_gaussian(np.ones(3), np.eye(2)),
}


def errors_of(call, namespace):
    """The exceptions call(namespace of refjax) and call(namespace of JAX) raise."""
    errors = []
    for lib in (refjax, jax):
        with pytest.raises(Exception) as info:
            call(getattr(lib.scipy, namespace))
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1])
    return [str(e) for e in errors]


@pytest.mark.parametrize("name", KDE_ERRORS)
def test_kde_errors_as_jax(name):
    ours, jaxs = errors_of(KDE_ERRORS[name], "stats")
    assert ours == jaxs


SIGNAL = RNG.randn(2, 200).astype(np.float32)
OTHER = RNG.randn(2, 200).astype(np.float32)


def signal_results(name, *args, **kwargs):
    """(refjax's results of signal.`name`, JAX's result types (traced only: its values are
    scipy's, and compiling them would double these tests' time), scipy's in float64)."""
    r = getattr(refjax.scipy.signal, name)(*args, **kwargs)
    j = jax.eval_shape(lambda: getattr(jax.scipy.signal, name)(*args, **kwargs))
    s = getattr(ssig, name)(*[a.astype(np.float64) if isinstance(a, np.ndarray) and np.isrealobj(a)
                              else a for a in args], **kwargs)
    return r, j, s


def _all_close(r, j, s, rtol=1e-4, atol=1e-5):
    """refjax's results r have JAX's types j and scipy's values s."""
    for got, want, truth in zip(r, j, s):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, truth, rtol=rtol, atol=atol * np.abs(truth).max())


FFTCONVOLVE_CASES = {
    "1d": ((7,), (3,), None), "1d_swapped": ((3,), (7,), None), "2d": ((5, 6), (3, 2), None),
    "axes": ((4, 5), (4, 3), (1,)), "negative_axis": ((3, 6), (3, 4), -1),
    "outer": ((1, 5), (3, 1), None),
}


@pytest.mark.parametrize("case", FFTCONVOLVE_CASES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_matches_jax_and_scipy(case, mode):
    s1, s2, axes = FFTCONVOLVE_CASES[case]
    a, b = RNG.randn(*s1).astype(np.float32), RNG.randn(*s2).astype(np.float32)
    if case == "outer" and mode == "valid":   # neither is the larger: JAX's error (scipy has none)
        with pytest.raises(ValueError, match="One input must be at least as large"):
            refjax.scipy.signal.fftconvolve(a, b, mode)
        return
    r, j, s = signal_results("fftconvolve", a, b, mode, axes)
    _all_close([r], [j], [s])


def test_fftconvolve_complex_and_integer_inputs():
    a = (RNG.randn(6) + 1j * RNG.randn(6)).astype(np.complex64)
    b = np.array([1, 2, 3], np.int32)
    r, j, s = signal_results("fftconvolve", a, b)
    _all_close([r], [j], [s])
    r, j, s = signal_results("fftconvolve", b, b)
    _all_close([r], [j], [s])   # integers are convolved as floats (float32 here)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_method_fft_is_the_direct_result(name):
    a, b = RNG.randn(4, 9).astype(np.float32), RNG.randn(2, 3).astype(np.float32)
    for mode in ("full", "same", "valid"):
        fft = getattr(refjax.scipy.signal, name)(a, b, mode, method="fft")
        direct = getattr(refjax.scipy.signal, name)(a, b, mode, method="direct")
        _same(fft, getattr(jax.scipy.signal, name)(a, b, mode, method="fft"))
        np.testing.assert_allclose(fft, direct, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fft, getattr(ssig, name)(a, b, mode, method="fft"),
                                   rtol=1e-4, atol=1e-5)


def test_fftconvolve_under_jit_and_grad():
    """grad of |a * b|^2 ('same') is 2 (a * b) correlated back with b, by hand in NumPy."""
    a, b = RNG.randn(8).astype(np.float32), RNG.randn(3).astype(np.float32)
    f = lambda a: refjax.numpy.sum(refjax.scipy.signal.fftconvolve(a, b, "same") ** 2)
    full = np.convolve(a, b)   # 'same' keeps full[1:9]
    g_full = np.zeros_like(full)
    g_full[1:9] = 2 * full[1:9]
    want = np.correlate(g_full, b, "valid")
    np.testing.assert_allclose(refjax.jit(refjax.grad(f))(a), want, rtol=1e-4, atol=1e-5)


WELCH_CASES = {
    "default": dict(nperseg=64),
    "median_spectrum_hamming": dict(nperseg=64, average="median", scaling="spectrum",
                                    window="hamming"),
    "linear_detrend_nfft": dict(nperseg=50, noverlap=10, nfft=64, detrend="linear"),
    "twosided_odd": dict(nperseg=45, return_onesided=False, fs=100.0),
    "array_window": dict(window=np.hanning(40).astype(np.float32), detrend=False),
}


@pytest.mark.parametrize("case", WELCH_CASES)
def test_welch_and_csd_match_jax_and_scipy(case):
    kwargs = WELCH_CASES[case]
    _all_close(*signal_results("welch", SIGNAL, **kwargs))
    _all_close(*signal_results("csd", SIGNAL, OTHER, **kwargs))


def test_csd_broadcasts_and_pads_the_shorter_signal():
    _all_close(*signal_results("csd", SIGNAL, OTHER[:1], nperseg=32))
    _all_close(*signal_results("csd", SIGNAL, OTHER[:, :150], nperseg=32))
    _all_close(*signal_results("welch", SIGNAL.T, nperseg=32, axis=0))


STFT_CASES = {
    "default": dict(nperseg=32),
    "odd_tukey_unpadded": dict(nperseg=33, boundary="odd", padded=False, window=("tukey", 0.3)),
    "even_boundary_axis0": dict(nperseg=16, boundary="even", noverlap=12),
    "overlap_twosided": dict(nperseg=24, noverlap=18, return_onesided=False),
    "no_boundary_detrend": dict(nperseg=20, boundary=None, detrend="constant"),
    "constant_boundary_twosided": dict(nperseg=24, boundary="constant", return_onesided=False),
}


@pytest.mark.parametrize("case", STFT_CASES)
def test_stft_and_istft_match_jax_and_scipy(case):
    kwargs = STFT_CASES[case]
    axis0 = case == "even_boundary_axis0"
    x = SIGNAL.T if axis0 else SIGNAL
    stft_kwargs = dict(kwargs, axis=0) if axis0 else kwargs
    (rf, rt, rz), (jf, jt, jz), (sf, st, sz) = signal_results("stft", x, **stft_kwargs)
    _all_close([rf, rt, rz], [jf, jt, jz], [sf, st, sz])
    if "boundary" in kwargs or "padded" in kwargs:
        return   # istft inverts only a zero-extended, padded transform
    inverse = {k: v for k, v in kwargs.items() if k in ("nperseg", "noverlap", "window")}
    inverse.update(input_onesided=kwargs.get("return_onesided", True),
                   **(dict(time_axis=-1, freq_axis=0) if axis0 else {}))
    r = refjax.scipy.signal.istft(np.asarray(rz), **inverse)
    s = ssig.istft(np.asarray(sz), **inverse)
    _all_close(r, jax.eval_shape(lambda: jax.scipy.signal.istft(np.asarray(rz), **inverse)), s)
    np.testing.assert_allclose(r[1][:, :200], x, atol=1e-5)   # the signal back


def test_istft_odd_segment_length():
    """An odd nperseg with the default nfft: scipy's inverse. (JAX 0.10.2 passes nfft=None to
    irfft, gets nperseg - 1 samples per segment and raises a TypeError on the window.)"""
    _, _, z = ssig.stft(SIGNAL[0].astype(np.float64), nperseg=33)
    z = z.astype(np.complex64)
    t, x = refjax.scipy.signal.istft(z, nperseg=33)
    st, sx = ssig.istft(z, nperseg=33)
    np.testing.assert_allclose(x, sx, atol=1e-5)
    np.testing.assert_allclose(t, st)
    np.testing.assert_allclose(x[:200], SIGNAL[0], atol=1e-5)
    with pytest.raises(TypeError):
        jax.scipy.signal.istft(z, nperseg=33)


def test_spectral_functions_under_jit_and_grad():
    """jit gives scipy's total power; grad is its central difference (scipy, float64)."""
    x = SIGNAL[0, :64]
    total = lambda x: refjax.numpy.sum(refjax.scipy.signal.welch(x, nperseg=16)[1])
    scipy_total = lambda x: ssig.welch(x, nperseg=16)[1].sum()
    np.testing.assert_allclose(refjax.jit(total)(x), scipy_total(x.astype(np.float64)), rtol=1e-5)
    grad = refjax.grad(total)(x)
    assert grad.shape == x.shape and grad.dtype == np.float32
    for i in (0, 17, 40):
        step = np.zeros(64)
        step[i] = 1e-4
        fd = (scipy_total(x + step) - scipy_total(x - step)) / 2e-4
        np.testing.assert_allclose(grad[i], fd, rtol=1e-3, atol=1e-5)


SIGNAL_ERRORS = {
    "fftconvolve_ranks": lambda s: s.fftconvolve(np.ones(3), np.ones((2, 2))),
    "fftconvolve_mode": lambda s: s.fftconvolve(np.ones(3), np.ones(2), mode="wrong"),
    "fftconvolve_mapped": lambda s: s.fftconvolve(np.ones((2, 3)), np.ones((3, 3)), axes=1),
    "convolve_method": lambda s: s.convolve(np.ones(3), np.ones(2), method="wrong"),
    "nperseg": lambda s: s.welch(np.ones(10), nperseg=0),
    "noverlap": lambda s: s.welch(np.ones(10), nperseg=4, noverlap=4),
    "nfft": lambda s: s.welch(np.ones(10), nperseg=4, nfft=3),
    "scaling": lambda s: s.welch(np.ones(10), nperseg=4, scaling="wrong"),
    "average": lambda s: s.welch(np.ones(10), nperseg=4, average="wrong"),
    "detrend": lambda s: s.welch(np.ones(10), nperseg=4, detrend=1),
    "boundary": lambda s: s.stft(np.ones(10), nperseg=4, boundary="wrong"),
    "csd_ranks": lambda s: s.csd(np.ones(10), np.ones((2, 10))),
    "csd_broadcast": lambda s: s.csd(np.ones((2, 10)), np.ones((3, 10))),
    "window_2d": lambda s: s.welch(np.ones(10), window=np.ones((2, 2))),
    "istft_1d": lambda s: s.istft(np.ones(4, np.complex64)),
    "istft_axes": lambda s: s.istft(np.ones((3, 4), np.complex64), time_axis=0, freq_axis=0),
    "istft_nfft": lambda s: s.istft(np.ones((3, 4), np.complex64), nperseg=4, nfft=3),
    "istft_noverlap": lambda s: s.istft(np.ones((3, 4), np.complex64), noverlap=4),
    "istft_window": lambda s: s.istft(np.ones((3, 4), np.complex64), window=np.ones(3)),
}


@pytest.mark.parametrize("name", SIGNAL_ERRORS)
def test_signal_errors_as_jax(name):
    ours, jaxs = errors_of(SIGNAL_ERRORS[name], "signal")
    if name == "csd_ranks":   # JAX's message lacks its f-string prefix: it prints the braces
        assert jaxs.endswith("({x.ndim} vs {y.ndim}).")
        assert ours == "two-arguments must have the same rank (1 vs 2)."
    else:
        assert ours == jaxs
