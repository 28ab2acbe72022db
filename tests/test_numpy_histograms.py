"""histogram, histogram_bin_edges, histogram2d, histogramdd against jax.numpy (values, dtypes,
jit, grad of weights, errors); NumPy's named bin estimators against numpy.histogram."""
import numpy as np
import pytest

import refjax.numpy as rnp
from jnp_compare import check, check_error, check_grad

pytestmark = pytest.mark.backends("numpy_ref", "xla")

RS = np.random.RandomState(0)
A, B = RS.randn(50).astype(np.float32), RS.randn(50).astype(np.float32)
W = RS.rand(50).astype(np.float32)
S = np.stack([A, B, W], 1)


@pytest.mark.parametrize("call", [
    lambda m, a, b, w: m.histogram(a),
    lambda m, a, b, w: m.histogram(a, 5, range=(-1, 1)),
    lambda m, a, b, w: m.histogram(a, np.array([-2, 0, 0.5, 3.0]), weights=w),
    lambda m, a, b, w: m.histogram(a, 4, density=True),
    lambda m, a, b, w: m.histogram(np.ones(4, np.int32), 3),
    lambda m, a, b, w: m.histogram_bin_edges(a, 6),
    lambda m, a, b, w: m.histogram_bin_edges(np.arange(5), 3, range=(1, 1)),
    lambda m, a, b, w: m.histogram2d(a, b),
    lambda m, a, b, w: m.histogram2d(a, b, bins=[3, 4], weights=w, density=True),
    lambda m, a, b, w: m.histogram2d(a, b, bins=np.array([-1, 0, 1.0])),
    lambda m, a, b, w: m.histogram2d(a, b, range=[(-1, 1), (0, 2)]),
    lambda m, a, b, w: m.histogramdd(m.stack([a, b, w], 1), bins=3),
    lambda m, a, b, w: m.histogramdd(m.stack([a, b, w], 1), bins=(2, 3, 4), density=True),
    lambda m, a, b, w: m.histogramdd(m.stack([a, b, w], 1), bins=2, weights=w),
])
def test_histograms(call):
    check(call, A, B, W)


def test_grad_of_weights():
    check_grad(lambda m, w: (m.histogram(A, 4, range=(-2, 2), weights=w)[0] ** 2).sum(), W)


@pytest.mark.parametrize("bins", ["auto", "fd", "sturges", "sqrt"])
def test_named_bins_as_numpy(bins):
    """String bins (JAX: NotImplementedError) use NumPy's estimators on concrete data."""
    counts, edges = rnp.histogram(A, bins)
    np_counts, np_edges = np.histogram(A, bins)
    np.testing.assert_allclose(np.asarray(edges), np_edges, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(counts), np_counts)


@pytest.mark.parametrize("call", [
    lambda m: m.histogram(A, 3, weights=W[:3]),
    lambda m: m.histogram_bin_edges(A, 3, range=(1, 2, 3)),
    lambda m: m.histogramdd(S, bins=(2, 3)),
    lambda m: m.histogramdd(S, weights=W[:3]),
    lambda m: m.histogramdd(S, range=[(0, 1)]),
])
def test_errors(call):
    check_error(call)
