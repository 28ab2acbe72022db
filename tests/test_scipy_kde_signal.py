"""refjax.scipy.stats.gaussian_kde and the FFT-based refjax.scipy.signal functions against
jax.scipy and scipy: values, dtypes, pytree structure, jit and grad, and JAX's errors."""
import numpy as np
import pytest
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
    weights = WEIGHTS if weighted else None
    r, j = kdes(bw_method=BW_METHODS[bw], weights=weights)
    scipy_bw = (lambda s: BW_METHODS[bw](s)) if bw == "callable" else BW_METHODS[bw]
    s = ss.gaussian_kde(DATA.astype(np.float64), bw_method=scipy_bw, weights=weights)
    for field in ("neff", "dataset", "weights", "covariance", "inv_cov"):
        _same(getattr(r, field), getattr(j, field), rtol=1e-4)
    np.testing.assert_allclose(r.covariance, s.covariance, rtol=1e-4)
    for method in ("evaluate", "pdf", "__call__", "logpdf"):
        _same(getattr(r, method)(POINTS), getattr(j, method)(POINTS), rtol=1e-4)
        np.testing.assert_allclose(getattr(r, method)(POINTS), getattr(s, method)(POINTS),
                                   rtol=1e-4)


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


@pytest.mark.parametrize("name", KDE_ERRORS)
def test_kde_errors_as_jax(name):
    errors = []
    for lib in (refjax, jax):
        with pytest.raises(Exception) as info:
            KDE_ERRORS[name](lib.scipy.stats)
        errors.append(info)
    assert errors[0].type is errors[1].type
    assert str(errors[0].value) == str(errors[1].value)
