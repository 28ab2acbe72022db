"""Programs built on lax.linalg, run the same way by refjax (on both backends) and by real
JAX, compared: values, gradients (where JAX differentiates), jit and vmap. A Gaussian
process (cholesky, triangular_solve, log-determinant), PCA through svd and through eigh,
least squares through qr, a linear solve through lu; also against NumPy's own solvers."""
import types

import jax
import numpy as np
import pytest

import refjax
from refjax.spec.checks import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")

TOL = dict(rtol=1e-9, atol=1e-11)


@pytest.fixture(autouse=True)
def x64():
    with enable_x64(True):
        yield


def _close(ours, theirs, **tol):
    """Every leaf of two pytrees equal within tol (float64 by default), shapes and dtypes
    equal."""
    ours, theirs = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and np.dtype(a.dtype) == np.dtype(b.dtype), (a, b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **(tol or TOL))


def _jax(program, *args):
    """program(jax, *args), jitted (JAX's op-by-op dispatch compiles every operation)."""
    return jax.jit(lambda *a: program(jax, *a))(*args)


def _run(f):
    """f as refjax runs whole programs here: eagerly on numpy_ref, compiled on xla (whose
    op-by-op dispatch the property suite covers, one compilation per operation)."""
    return refjax.jit(f) if refjax.current_backend_name() == "xla" else f


def _both(program, *args, argnums=0):
    """program(m, *args) with m = refjax and m = jax: values, grads, and refjax's jit(grad)."""
    ours = _run(lambda *a: program(refjax, *a))(*args)
    _close(ours, _jax(program, *args))
    grad_ours = _run(refjax.grad(lambda *a: program(refjax, *a), argnums))(*args)
    _close(grad_ours, jax.jit(jax.grad(lambda *a: program(jax, *a), argnums))(*args))
    if refjax.current_backend_name() == "numpy_ref":
        _close(refjax.jit(refjax.grad(lambda *a: program(refjax, *a), argnums))(*args),
               grad_ours)
    return ours


# ---------------------------------------------------------------- Gaussian process regression

def _gp_data():
    rng = np.random.RandomState(0)
    x = rng.uniform(-3, 3, (12, 2))
    y = np.sin(x[:, 0]) + 0.5 * np.cos(2 * x[:, 1]) + 0.05 * rng.standard_normal(12)
    return x, y, rng.uniform(-3, 3, (5, 2))


def _kernel(m, log_params, a, b):
    lengthscale, variance = m.numpy.exp(log_params[0]), m.numpy.exp(log_params[1])
    d2 = m.numpy.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
    return variance * m.numpy.exp(-0.5 * d2 / lengthscale ** 2)


def _numpy_kernel(log_params, a, b):
    return np.asarray(_kernel(types.SimpleNamespace(numpy=np), log_params, a, b))


def _gp_factor(m, log_params, x, y):
    """The Cholesky factor of K + noise I and alpha = L^-1 y."""
    k = _kernel(m, log_params, x, x) + m.numpy.exp(log_params[2]) * m.numpy.eye(x.shape[0])
    chol = m.lax.linalg.cholesky(k)
    alpha = m.lax.linalg.triangular_solve(chol, y[:, None], left_side=True, lower=True)
    return chol, alpha


def gp_negative_log_likelihood(m, log_params, x, y):
    """1/2 y^T K^-1 y + 1/2 log det K + n/2 log 2 pi, det K from the Cholesky diagonal."""
    chol, alpha = _gp_factor(m, log_params, x, y)
    log_det = 2 * m.numpy.sum(m.numpy.log(m.numpy.diagonal(chol)))
    return 0.5 * m.numpy.sum(alpha ** 2) + 0.5 * log_det + 0.5 * x.shape[0] * np.log(2 * np.pi)


def gp_posterior_mean(m, log_params, x, y, x_new):
    """K_* K^-1 y: the second solve transposes the factor."""
    chol, alpha = _gp_factor(m, log_params, x, y)
    weights = m.lax.linalg.triangular_solve(chol, alpha, left_side=True, lower=True,
                                            transpose_a=True)
    return (_kernel(m, log_params, x_new, x) @ weights)[:, 0]


def test_gp_regression_likelihood_and_its_gradient_match_jax():
    x, y, _ = _gp_data()
    log_params = np.array([0.1, -0.2, np.log(0.05)])
    nll = _both(gp_negative_log_likelihood, log_params, x, y)
    # log det K from the factor agrees with NumPy's slogdet (an independent truth)
    k = _numpy_kernel(log_params, x, x) + np.exp(log_params[2]) * np.eye(12)
    alpha = np.linalg.solve(k, y)
    expected = 0.5 * y @ alpha + 0.5 * np.linalg.slogdet(k)[1] + 6 * np.log(2 * np.pi)
    np.testing.assert_allclose(float(nll), expected, rtol=1e-10)


def test_gp_posterior_mean_matches_jax_and_numpy():
    x, y, x_new = _gp_data()
    log_params = np.array([0.3, 0.1, np.log(0.1)])
    mean = _both(lambda m, p: m.numpy.sum(gp_posterior_mean(m, p, x, y, x_new) ** 2), log_params)
    k = _numpy_kernel(log_params, x, x) + np.exp(log_params[2]) * np.eye(12)
    k_new = _numpy_kernel(log_params, x_new, x)
    np.testing.assert_allclose(float(mean), np.sum((k_new @ np.linalg.solve(k, y)) ** 2),
                               rtol=1e-10)


def test_gp_hyperparameter_gradient_matches_finite_differences():
    x, y, _ = _gp_data()
    log_params = np.array([0.1, -0.2, np.log(0.05)])
    nll = _run(lambda p: gp_negative_log_likelihood(refjax, p, x, y))
    grad = _run(refjax.grad(lambda p: gp_negative_log_likelihood(refjax, p, x, y)))(log_params)
    eps = 1e-6
    for i in range(3):
        step = np.eye(3)[i] * eps
        fd = (nll(log_params + step) - nll(log_params - step)) / (2 * eps)
        np.testing.assert_allclose(float(grad[i]), float(fd), rtol=1e-6)


def test_gp_likelihood_vmaps_over_hyperparameters():
    x, y, _ = _gp_data()
    grid = np.array([[0.1, -0.2, -3.0], [0.4, 0.2, -2.0], [-0.3, 0.0, -1.5]])
    batched = _run(refjax.vmap(lambda p: gp_negative_log_likelihood(refjax, p, x, y)))(grid)
    _close(batched, jax.jit(jax.vmap(lambda p: gp_negative_log_likelihood(jax, p, x, y)))(grid))


# ---------------------------------------------------------------- PCA

def _pca_data():
    rng = np.random.RandomState(1)
    basis = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    return (rng.standard_normal((20, 4)) * np.array([3.0, 2.0, 1.0, 0.5])) @ basis.T


def pca_svd(m, data, k=2):
    """Explained variances, the projector onto the top-k principal subspace and the data
    projected onto it (all independent of the singular vectors' signs)."""
    centred = data - m.numpy.mean(data, axis=0)
    _, s, vt = m.lax.linalg.svd(centred, full_matrices=False)
    top = vt[:k]
    projector = top.T @ top
    return s ** 2 / (data.shape[0] - 1), projector, centred @ projector


def pca_eigh(m, data, k=2):
    """The same from the covariance's eigendecomposition (eigenvalues ascending)."""
    centred = data - m.numpy.mean(data, axis=0)
    v, w = m.lax.linalg.eigh(centred.T @ centred / (data.shape[0] - 1))
    top = v[:, -k:]
    projector = top @ top.T
    return w[::-1], projector, centred @ projector


def _pca_loss(pca):
    weights = np.random.RandomState(2).standard_normal((20, 4))

    def loss(m, data):
        variances, projector, projected = pca(m, data)
        return m.numpy.sum(variances[:2]) + m.numpy.sum(projector * weights[:4]) + \
            m.numpy.sum(projected * weights)
    return loss


@pytest.mark.parametrize("pca", [pca_svd, pca_eigh], ids=["svd", "eigh"])
def test_pca_matches_jax_with_gradients(pca):
    data = _pca_data()
    _close(_run(lambda d: pca(refjax, d))(data), _jax(pca, data))
    _both(_pca_loss(pca), data)


def test_pca_by_svd_and_by_eigh_agree_with_numpy():
    data = _pca_data()
    by_svd, by_eigh = pca_svd(refjax, data), pca_eigh(refjax, data)
    _close(by_svd, by_eigh, rtol=1e-9, atol=1e-10)
    centred = data - data.mean(0)
    np.testing.assert_allclose(np.asarray(by_svd[0]),
                               np.linalg.svd(centred, compute_uv=False) ** 2 / 19, rtol=1e-10)


# ---------------------------------------------------------------- least squares, linear solves

def lstsq_qr(m, a, b):
    """argmin |a x - b| for a tall full-rank a: r x = q^T b."""
    q, r = m.lax.linalg.qr(a, full_matrices=False)
    return m.lax.linalg.triangular_solve(r, q.T @ b, left_side=True, lower=False)


def solve_lu(m, a, b):
    """a x = b through a x[perm] = L U: two triangular solves."""
    lu, _, perm = m.lax.linalg.lu(a)
    y = m.lax.linalg.triangular_solve(lu, m.numpy.asarray(b)[perm], left_side=True, lower=True,
                                      unit_diagonal=True)
    return m.lax.linalg.triangular_solve(lu, y, left_side=True, lower=False)


def _system(rows, cols, k=2, seed=3):
    rng = np.random.RandomState(seed)
    return rng.standard_normal((rows, cols)) + 2 * np.eye(rows, cols), \
        rng.standard_normal((rows, k))


@pytest.mark.parametrize("solver, rows, numpy_solver", [
    (lstsq_qr, 7, lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0]),
    (solve_lu, 4, np.linalg.solve)], ids=["lstsq_qr", "solve_lu"])
def test_solvers_match_jax_and_numpy(solver, rows, numpy_solver):
    a, b = _system(rows, 4)
    _close(solver(refjax, a, b), numpy_solver(a, b), rtol=1e-10, atol=1e-12)
    weights = np.random.RandomState(4).standard_normal((4, 2))
    _both(lambda m, a, b: m.numpy.sum(solver(m, a, b) * weights), a, b, argnums=(0, 1))


def test_lu_solve_vmaps_like_jax():
    a, b = _system(4, 4)
    stack = np.stack([a, a + np.eye(4), a.T])
    _close(_run(refjax.vmap(lambda a: solve_lu(refjax, a, b)))(stack),
           jax.jit(jax.vmap(lambda a: solve_lu(jax, a, b)))(stack))


def test_float32_programs_match_jax_in_float32():
    a, b = _system(7, 4)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    ours, theirs = lstsq_qr(refjax, a32, b32), _jax(lstsq_qr, a32, b32)
    assert ours.dtype == theirs.dtype == np.float32
    _close(ours, theirs, rtol=1e-5, atol=1e-6)
