"""The linear-algebra parts of random, stats and nn, and jnp.polyfit/roots, against real JAX
0.10.2 on both backends: random.multivariate_normal and random.orthogonal bit for bit on xla
(within ulps on numpy_ref, whose erf_inv is more accurate than XLA's), their distributions'
invariants, scipy.stats.multivariate_normal against scipy.stats, the orthogonal
initializers, and polyfit/roots values, dtypes and errors."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest
import scipy.stats

import refjax
import refjax.numpy as jnp
from refjax.nn import initializers as nn_orthogonal
from refjax.api.scipy import stats_multivariate_normal as mvn
from refjax.spec.checks import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")
COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]], np.float32)


def _agree(ours, theirs, ulps=8):
    """Bit for bit on xla; within a few ulps on numpy_ref; same shape and dtype."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    if refjax.current_backend_name() == "xla":
        np.testing.assert_array_equal(ours, theirs)
    else:
        eps = np.finfo(ours.dtype).eps
        np.testing.assert_allclose(ours, theirs, rtol=ulps * eps, atol=ulps * eps)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
@pytest.mark.parametrize("shape", [None, (5,), (2, 4)])
def test_multivariate_normal_matches_jax(method, shape):
    mean = np.arange(3, dtype=np.float32)
    args = dict(shape=shape, method=method)
    ours = refjax.random.multivariate_normal(refjax.random.PRNGKey(3), mean, COV, **args)
    theirs = jax.random.multivariate_normal(jax.random.PRNGKey(3), mean, COV, **args)
    _agree(ours, theirs, ulps=64 if method != "cholesky" else 8)


def test_multivariate_normal_batches_typed_keys_and_dtypes_as_jax():
    means = np.zeros((2, 3), np.float32)
    for f in (lambda r: r.multivariate_normal(r.key(1), means, COV),
              lambda r: r.multivariate_normal(r.PRNGKey(1), means, np.stack([COV, 2 * COV]), (4, 2)),
              lambda r: r.multivariate_normal(r.PRNGKey(1), np.zeros(3, np.int32), COV,
                                              dtype=np.float32)):
        _agree(f(refjax.random), f(jax.random))


def test_multivariate_normal_has_the_requested_moments():
    with enable_x64(True):
        x = np.asarray(refjax.random.multivariate_normal(
            refjax.random.PRNGKey(0), np.array([1.0, -1.0, 0.5]), COV.astype(np.float64),
            (20000,)))
    np.testing.assert_allclose(x.mean(0), [1.0, -1.0, 0.5], atol=0.03)
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.05)


@pytest.mark.parametrize("f", [
    lambda r: r.multivariate_normal(r.PRNGKey(0), np.zeros(3), COV, method="qr"),
    lambda r: r.multivariate_normal(r.PRNGKey(0), 0.0, COV),
    lambda r: r.multivariate_normal(r.PRNGKey(0), np.zeros(3), np.ones(3)),
    lambda r: r.multivariate_normal(r.PRNGKey(0), np.zeros(2), COV),
    lambda r: r.multivariate_normal(r.PRNGKey(0), np.zeros(3), COV, shape=(2, 3), dtype=np.int32),
    lambda r: r.multivariate_normal(r.PRNGKey(0), np.zeros((2, 3)), COV, shape=(3,)),
    lambda r: r.multivariate_normal(np.zeros(3), np.zeros(3), COV),
    lambda r: r.multivariate_normal(r.PRNGKey(1), [0.0, 1.0, 2.0], COV),
    lambda r: r.orthogonal(r.PRNGKey(0), 2.5), lambda r: r.orthogonal(r.PRNGKey(0), 3, (-1,)),
    lambda r: r.orthogonal(r.split(r.PRNGKey(0)), 3),
])
def test_errors_are_jax_classes(f):
    with pytest.raises(Exception) as theirs:
        f(jax.random)
    with pytest.raises(type(theirs.value)):
        f(refjax.random)


@pytest.mark.parametrize("n,shape,m", [(3, (), None), (4, (2,), None), (5, (), 3), (2, (3,), 4)])
def test_orthogonal_matches_jax_and_is_orthogonal(n, shape, m):
    ours = refjax.random.orthogonal(refjax.random.PRNGKey(7), n, shape, m=m)
    _agree(ours, jax.random.orthogonal(jax.random.PRNGKey(7), n, shape, m=m), ulps=32)
    q = np.asarray(ours, np.float64)
    small = min(n, n if m is None else m)
    gram = np.swapaxes(q, -1, -2) @ q if q.shape[-2] >= q.shape[-1] else q @ np.swapaxes(q, -1, -2)
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), gram.shape), atol=1e-5)


def test_samplers_under_jit_and_vmap():
    keys = refjax.random.split(refjax.random.PRNGKey(2), 3)
    f = lambda k: refjax.random.multivariate_normal(k, np.zeros(3), COV)  # noqa: E731
    loop = np.stack([np.asarray(f(k)) for k in keys])
    np.testing.assert_allclose(refjax.vmap(f)(keys), loop, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(refjax.jit(f)(keys[0]), loop[0], rtol=1e-6, atol=1e-6)
    g = lambda k: refjax.random.orthogonal(k, 3)  # noqa: E731
    np.testing.assert_allclose(refjax.vmap(g)(keys), np.stack([np.asarray(g(k)) for k in keys]),
                               atol=1e-6)


# ---------------------------------------------------------------- scipy.stats.multivariate_normal

@pytest.mark.parametrize("case", [
    (np.ones((4, 3)), np.arange(3.0), COV), (np.ones(3), np.zeros(3), COV),
    (np.ones((2, 3)), np.zeros(3), 2.0), (np.arange(4.0), 1.0, 2.0),
    (np.ones((2, 3)), np.zeros((2, 3)), np.stack([COV, 2 * COV])),
])
def test_multivariate_normal_logpdf_matches_jax_and_scipy(case):
    x, mean, cov = (np.asarray(a, np.float32) for a in case)
    ours = mvn.logpdf(x, mean, cov)
    theirs = jax.scipy.stats.multivariate_normal.logpdf(x, mean, cov)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    np.testing.assert_allclose(mvn.pdf(x, mean, cov), np.exp(theirs), rtol=1e-5)
    if cov.ndim == 2:
        truth = scipy.stats.multivariate_normal(mean.astype(np.float64), cov).logpdf(x)
        np.testing.assert_allclose(ours, truth, rtol=1e-5)


def test_multivariate_normal_logpdf_gradient_and_errors():
    x, mean = np.ones(3, np.float32), np.zeros(3, np.float32)
    ours = refjax.grad(mvn.logpdf, (0, 2))(x, mean, COV)
    theirs = jax.grad(jax.scipy.stats.multivariate_normal.logpdf, (0, 2))(x, mean, COV)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    for f in (lambda m: m.logpdf(x, mean, COV[:2, :2]), lambda m: m.logpdf(x, mean, COV[0]),
              lambda m: m.logpdf(x, mean, COV, allow_singular=True)):
        with pytest.raises(Exception) as expected:
            f(jax.scipy.stats.multivariate_normal)
        with pytest.raises(type(expected.value)):
            f(mvn)


# ---------------------------------------------------------------- nn initializers

@pytest.mark.parametrize("shape,kw", [
    ((3, 4), {}), ((4, 3), dict(scale=2.0)), ((2, 3, 5), dict(column_axis=0)),
    ((3, 3), dict(dtype=np.float32)), ((0, 3), {}),
])
def test_orthogonal_initializer_matches_jax(shape, kw):
    ours = nn_orthogonal.orthogonal(**kw)(refjax.random.PRNGKey(4), shape)
    theirs = jax.nn.initializers.orthogonal(**kw)(jax.random.PRNGKey(4), shape)
    _agree(ours, theirs, ulps=32)


@pytest.mark.parametrize("shape", [(3, 2, 4), (3, 3, 2, 2), (1, 3, 2, 3, 3)])
def test_delta_orthogonal_initializer_matches_jax(shape):
    ours = nn_orthogonal.delta_orthogonal()(refjax.random.PRNGKey(5), shape)
    theirs = jax.nn.initializers.delta_orthogonal()(jax.random.PRNGKey(5), shape)
    _agree(ours, theirs, ulps=32)


@pytest.mark.parametrize("make,shape", [
    ("orthogonal", (3,)), ("delta_orthogonal", (3, 3)), ("delta_orthogonal", (3, 4, 2)),
])
def test_initializer_errors_are_jax_classes(make, shape):
    with pytest.raises(ValueError):
        getattr(jax.nn.initializers, make)()(jax.random.PRNGKey(0), shape)
    with pytest.raises(ValueError):
        getattr(nn_orthogonal, make)()(refjax.random.PRNGKey(0), shape)


# ---------------------------------------------------------------- polyfit and roots

X = np.linspace(-1, 2, 12).astype(np.float32)
Y = (0.5 * X ** 3 - X + 2 + 0.05 * np.cos(5 * X)).astype(np.float32)


@pytest.mark.parametrize("f", [
    lambda n: n.polyfit(X, Y, 3), lambda n: n.polyfit(X, Y, 0), lambda n: n.polyfit(X, Y, 1),
    lambda n: n.polyfit(X, np.stack([Y, 2 * Y], 1), 2),
    lambda n: n.polyfit(X, Y, 3, full=True), lambda n: n.polyfit(X, Y, 2, rcond=1e-3, full=True),
    lambda n: n.polyfit(X, Y, 2, w=np.abs(X) + 1), lambda n: n.polyfit(X, Y, 2, cov=True),
    lambda n: n.polyfit(X, np.stack([Y, Y], 1), 2, cov=True, w=np.abs(X) + 1),
    lambda n: n.polyfit(X, Y, 2, cov="unscaled"),
    lambda n: n.polyfit(np.arange(5), np.arange(5.0), 1, rcond=1e-6),
    lambda n: n.roots(np.array([1.0, -6, 11, -6])), lambda n: n.roots(np.array([0, 0, 1.0, -1])),
    lambda n: n.roots(np.array([2.0])), lambda n: n.roots(np.array([1, 0, 1])),
    lambda n: n.roots(np.array([0.0, 1, -3, 2]), strip_zeros=False),
    lambda n: n.roots(np.zeros(3), strip_zeros=False),
])
def test_polyfit_and_roots_match_jax(f):
    ours, theirs = f(jnp), f(jnp_jax)
    ours_l, theirs_l = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours_l) == len(theirs_l)
    for a, b in zip(ours_l, theirs_l):
        assert a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type
        if a.dtype.kind == "c":  # roots: the same set (eigenvalue order is free)
            a, b = np.sort_complex(np.asarray(a)), np.sort_complex(np.asarray(b))
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4)


def test_polyfit_recovers_an_exact_polynomial_and_roots_under_jit():
    with enable_x64(True):
        x = np.linspace(-2, 2, 9)
        np.testing.assert_allclose(jnp.polyfit(x, 3 * x ** 2 - 2 * x + 1, 2), [3, -2, 1],
                                   rtol=1e-12)
        r = refjax.jit(lambda p: jnp.roots(p, strip_zeros=False))(np.array([1.0, -3, 2]))
        np.testing.assert_allclose(np.sort(np.asarray(r).real), [1, 2], rtol=1e-12)
    with pytest.raises(refjax.errors.ConcretizationTypeError):
        refjax.jit(jnp.roots)(np.array([1.0, -3, 2]))


@pytest.mark.parametrize("f", [
    lambda n: n.polyfit(X, Y, -1), lambda n: n.polyfit(X[:, None], Y, 1),
    lambda n: n.polyfit(X[:0], Y[:0], 1), lambda n: n.polyfit(X, Y[:, None, None], 1),
    lambda n: n.polyfit(X, Y[:5], 1), lambda n: n.polyfit(X, Y, 1, w=np.ones((12, 1))),
    lambda n: n.polyfit(X, Y, 1, w=np.ones(3)), lambda n: n.polyfit(X[:3], Y[:3], 3, cov=True),
    lambda n: n.polyfit(list(X), Y, 1), lambda n: n.roots(np.ones((2, 2))),
    lambda n: n.polyfit(np.arange(5), np.arange(5), 1),
])
def test_polyfit_and_roots_errors_are_jax_classes(f):
    """(For integer x without rcond JAX fails inside numpy.finfo; refjax raises the same
    ValueError naming polyfit and the dtype.)"""
    with pytest.raises(Exception) as theirs:
        f(jnp_jax)
    with pytest.raises(type(theirs.value)):
        f(jnp)


def test_polyfit_rejects_a_fractional_degree():
    """JAX truncates deg=1.5 to 1 silently; refjax refuses it (TypeError, as operator.index)."""
    np.testing.assert_allclose(jnp_jax.polyfit(X, Y, 1.5), jnp_jax.polyfit(X, Y, 1))
    with pytest.raises(TypeError):
        jnp.polyfit(X, Y, 1.5)


@pytest.mark.parametrize("make", ["orthogonal", "delta_orthogonal"])
def test_initializers_refuse_out_sharding_by_name(make):
    """JAX 0.10's orthogonal initializers refuse out_sharding (NotImplementedError, though
    jax.random.orthogonal takes one); refjax's error names the initializer."""
    init = getattr(nn_orthogonal, make)()
    with pytest.raises(NotImplementedError, match=make):
        init(refjax.random.PRNGKey(0), (3, 3, 4, 4), out_sharding=object())
