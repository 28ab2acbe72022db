"""jax.scipy.linalg against real JAX 0.10.2 on both backends: values, dtypes and weak types
(decompositions LAPACK fixes compared directly, the others by their invariants), JAX's error
classes, gradients (solve with assume_a='pos', expm against expm_frechet and finite
differences), batching against a loop, and the special matrices against scipy's exact
ones."""
import jax
import jax.numpy as jnp_jax
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg

import refjax
from linalg_inputs import random_matrix as _mat, spd as _spd
import refjax.numpy as jnp
import refjax.scipy.linalg as rsl
from refjax.spec.checks import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _same(ours, theirs, rtol=2e-4, atol=1e-5):
    ours_l, theirs_l = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours_l) == len(theirs_l)
    for a, b in zip(ours_l, theirs_l):
        if isinstance(b, (bool, int, float)):  # a static part (cho_factor's `lower`)
            assert type(a) is type(b) and a == b
            continue
        assert a.shape == b.shape and np.dtype(a.dtype) == np.dtype(b.dtype), (a, b)
        assert getattr(a, "weak_type", False) == getattr(b, "weak_type", False), (a, b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _compare(f, **tol):
    """f(linalg module, numpy module) on refjax and on JAX: the same results."""
    _same(f(rsl, jnp), f(jsl, jnp_jax), **tol)


A4 = _mat((4, 4))
SPD = _spd()
BATCH = _mat((2, 3, 3), seed=2)


@pytest.mark.parametrize("f", [
    lambda L, n: L.cholesky(SPD), lambda L, n: L.cholesky(SPD, lower=True),
    lambda L, n: L.cholesky(_spd(batch=(2,))), lambda L, n: L.cho_factor(SPD),
    lambda L, n: L.cho_solve(L.cho_factor(SPD), A4),
    lambda L, n: L.cho_solve(L.cho_factor(SPD, lower=True), A4[0]),
    lambda L, n: L.solve_triangular(np.triu(SPD), A4),
    lambda L, n: L.solve_triangular(np.tril(SPD), A4[0], lower=True, trans="T"),
    lambda L, n: L.solve_triangular(np.tril(SPD), A4, lower=True, trans=2, unit_diagonal=True),
    lambda L, n: L.solve_triangular(np.triu(_spd(batch=(2,))), A4[:, :3]),
    lambda L, n: L.lu(A4), lambda L, n: L.lu(A4[:3]), lambda L, n: L.lu(A4[:, :3], True),
    lambda L, n: L.lu(_mat((3, 3), np.complex64)), lambda L, n: L.lu_factor(BATCH),
    lambda L, n: L.lu_solve(L.lu_factor(A4), A4[:, :2]),
    lambda L, n: L.lu_solve(L.lu_factor(A4), A4[0], trans=1),
    lambda L, n: L.lu_solve(L.lu_factor(BATCH), BATCH, trans=2),
    lambda L, n: L.qr(A4), lambda L, n: L.qr(A4[:, :3], mode="economic"),
    lambda L, n: L.qr(A4[:, :3], mode="r"), lambda L, n: L.qr(A4, pivoting=True),
    lambda L, n: L.qr(A4[:3], mode="economic", pivoting=True),
    lambda L, n: L.qr_multiply(A4[:, :3], A4[:2]), lambda L, n: L.qr_multiply(A4[:, :3], A4[0]),
    lambda L, n: L.qr_multiply(A4[:, :3], A4[:3], mode="left"),
    lambda L, n: L.qr_multiply(A4[:3], A4[:3, :3], mode="left", conjugate=True, pivoting=True),
    lambda L, n: L.svd(A4, compute_uv=False), lambda L, n: L.eigh(SPD, eigvals_only=True),
    lambda L, n: L.det(A4), lambda L, n: L.inv(BATCH), lambda L, n: L.solve(A4, A4[0]),
    lambda L, n: L.solve(SPD, A4, assume_a="pos"),
    lambda L, n: L.solve(SPD, A4[0], assume_a="pos", lower=True),
    lambda L, n: L.solve(SPD, A4, assume_a="sym"), lambda L, n: L.schur(A4)[0].diagonal(),
    lambda L, n: L.hessenberg(A4), lambda L, n: L.hessenberg(BATCH, calc_q=True),
    lambda L, n: L.expm(A4), lambda L, n: L.expm(5 * A4), lambda L, n: L.expm(BATCH / 10),
    lambda L, n: L.expm(np.triu(A4), upper_triangular=True),
    lambda L, n: L.expm(100 * A4, max_squarings=2), lambda L, n: L.expm(np.zeros((3, 3))),
    lambda L, n: L.expm_frechet(A4, SPD), lambda L, n: L.expm_frechet(A4, SPD, compute_expm=False),
    lambda L, n: L.sqrtm(SPD), lambda L, n: L.sqrtm(A4), lambda L, n: L.sqrtm(np.zeros((2, 2))),
    lambda L, n: L.polar(A4), lambda L, n: L.polar(A4[:, :3]), lambda L, n: L.polar(A4[:3], "left"),
    lambda L, n: L.polar(A4[:3], "left", method="svd"), lambda L, n: L.polar(BATCH, method="svd"),
    lambda L, n: L.funm(A4, n.exp), lambda L, n: L.funm(SPD, n.sqrt, disp=False),
    lambda L, n: L.rsf2csf(*L.schur(A4)), lambda L, n: L.schur(A4, output="complex")[0].diagonal(),
    lambda L, n: L.solve_sylvester(A4, SPD, A4[::-1]),
    lambda L, n: L.solve_sylvester(A4[:2, :2], SPD, A4[:2], method="eigen"),
    lambda L, n: L.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2))),
    lambda L, n: L.eigh_tridiagonal(A4[0], A4[1, :3], eigvals_only=True),
    lambda L, n: L.eigh_tridiagonal(A4[0], A4[1, :3], eigvals_only=True, select="i",
                                    select_range=(1, 2)),
    lambda L, n: L.eigh_tridiagonal(A4[0, :1], A4[1, :0]),
    lambda L, n: L.block_diag(), lambda L, n: L.block_diag(A4[:2, :3], 2.0, np.arange(3)),
    lambda L, n: L.block_diag(np.ones((2, 2), np.int32), np.ones(3, np.int32)),
])
def test_values_match_jax(f):
    _compare(f, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("f", [
    lambda L, n: L.toeplitz(np.arange(4.0)), lambda L, n: L.toeplitz(np.arange(3), np.arange(5)),
    lambda L, n: L.toeplitz(3.0), lambda L, n: L.toeplitz(_mat((2, 3)), _mat((2, 4))),
    lambda L, n: L.toeplitz(_mat((3,), np.complex64)), lambda L, n: L.hankel(np.arange(3)),
    lambda L, n: L.hankel(np.arange(3.0), np.arange(5.0)),
    lambda L, n: L.hankel(_mat((2, 3)), _mat((4,))), lambda L, n: L.circulant(np.arange(4)),
    lambda L, n: L.circulant(_mat((2, 3))), lambda L, n: L.leslie(np.array([1.0, 2, 3]), np.array([0.5, 0.25])),
    lambda L, n: L.leslie(_mat((2, 3)), _mat((2,))), lambda L, n: L.companion(np.array([1, -3, 2])),
    lambda L, n: L.companion(_mat((2, 4))), lambda L, n: L.fiedler(np.arange(4)),
    lambda L, n: L.fiedler(_mat((2, 3))), lambda L, n: L.fiedler_companion(np.arange(1.0, 7)),
    lambda L, n: L.fiedler_companion(np.array([2.0, 1.0])),
    lambda L, n: L.fiedler_companion(np.array([2.0])),
    lambda L, n: L.convolution_matrix(np.arange(1, 4), 5),
    lambda L, n: L.convolution_matrix(np.arange(1.0, 5), 3, "same"),
    lambda L, n: L.convolution_matrix(np.arange(1.0, 5), 6, "valid"),
    lambda L, n: L.hilbert(4), lambda L, n: L.invhilbert(5), lambda L, n: L.pascal(5),
    lambda L, n: L.pascal(4, "lower"), lambda L, n: L.invpascal(5, "upper"),
    lambda L, n: L.invpascal(4), lambda L, n: L.helmert(5), lambda L, n: L.helmert(4, full=True),
    lambda L, n: L.hadamard(8), lambda L, n: L.hadamard(4, dtype=np.float32),
    lambda L, n: L.dft(5), lambda L, n: L.dft(4, "sqrtn"), lambda L, n: L.dft(3, "n"),
])
def test_special_matrices_match_jax(f):
    _compare(f, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [2, 9])
def test_eigh_tridiagonal_eigenvalues_are_jax_bisection_bit_for_bit(n):
    d, e = _mat((n,), seed=n), _mat((n - 1,), seed=n + 1)
    for kw in (dict(), dict(select="i", select_range=(1, n - 1)), dict(tol=1e-3)):
        ours = rsl.eigh_tridiagonal(d, e, eigvals_only=True, **kw)
        np.testing.assert_array_equal(ours, jsl.eigh_tridiagonal(d, e, eigvals_only=True, **kw))
    dense = np.linalg.eigvalsh(np.diag(d) + np.diag(e, 1) + np.diag(e, -1))
    np.testing.assert_allclose(rsl.eigh_tridiagonal(d, e, eigvals_only=True), dense, atol=1e-5)


def test_exact_matrices_equal_scipy():
    """hilbert, invhilbert, pascal and invpascal are computed from exact integers: they equal
    scipy's exact matrices (JAX rounds lgamma-based binomials; refjax rounds once)."""
    with enable_x64(True):
        np.testing.assert_array_equal(rsl.invhilbert(8), scipy.linalg.invhilbert(8, exact=True))
        np.testing.assert_array_equal(rsl.invpascal(9), scipy.linalg.invpascal(9, exact=True))
        np.testing.assert_allclose(rsl.hilbert(6), scipy.linalg.hilbert(6), rtol=1e-15)
    np.testing.assert_array_equal(rsl.pascal(10), scipy.linalg.pascal(10, exact=True))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_double_precision_matches_jax(dtype):
    with enable_x64(True):
        a, spd = _mat((4, 4), dtype), _spd(4, dtype)
        for f in (lambda L, n: L.expm(a), lambda L, n: L.expm(20 * a), lambda L, n: L.sqrtm(spd),
                  lambda L, n: L.solve(spd, a, assume_a="pos"),
                  lambda L, n: L.cho_solve(L.cho_factor(spd), a),
                  lambda L, n: L.lu_solve(L.lu_factor(a), a), lambda L, n: L.polar(a),
                  lambda L, n: L.funm(spd, n.log), lambda L, n: L.solve_sylvester(a, spd, a),
                  lambda L, n: L.eigh_tridiagonal(a[0], a[1, :3], eigvals_only=True)):
            _compare(f, rtol=1e-9, atol=1e-10)


def test_decompositions_with_free_bases_hold_their_invariants():
    """svd, eigh, schur and eigh_tridiagonal's vectors are free up to phases: the
    reconstructions hold and the shapes and dtypes are JAX's."""
    u, s, vh = map(np.asarray, rsl.svd(A4[:, :3]))
    np.testing.assert_allclose((u[:, :3] * s) @ vh, A4[:, :3], atol=1e-5)
    w, v = map(np.asarray, rsl.eigh(SPD))
    np.testing.assert_allclose((v * w) @ v.T, SPD, rtol=1e-5, atol=1e-4)
    t, z = map(np.asarray, rsl.schur(A4))
    np.testing.assert_allclose(z @ t @ z.T, A4, atol=1e-5)
    t, z = map(np.asarray, rsl.rsf2csf(*rsl.schur(A4)))
    np.testing.assert_allclose(np.tril(t, -1), 0, atol=1e-6)
    np.testing.assert_allclose(z @ t @ z.conj().T, A4, atol=1e-5)
    d, e = A4[0], A4[1, :3]
    w, v = map(np.asarray, rsl.eigh_tridiagonal(d, e))
    tri = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(tri @ v, v * w, atol=1e-5)
    theirs = jsl.eigh_tridiagonal(d, e)
    assert [(x.shape, x.dtype) for x in (w, v)] == [(x.shape, x.dtype) for x in theirs]


@pytest.mark.parametrize("f", [
    lambda L, n: L.cholesky(np.ones(3)), lambda L, n: L.cho_solve((SPD, False), np.ones(3)),
    lambda L, n: L.solve_triangular(A4, np.ones(3)), lambda L, n: L.solve_triangular(A4, A4[0],
                                                                                    trans=3),
    lambda L, n: L.solve(A4, A4, assume_a="tri"), lambda L, n: L.solve(A4, np.ones(3)),
    lambda L, n: L.qr(A4, mode="reduced"), lambda L, n: L.qr_multiply(A4, A4, mode="up"),
    lambda L, n: L.qr_multiply(A4[:, :3], A4[:2, :3]),
    lambda L, n: L.qr_multiply(A4[:, :3], A4[:2], mode="left"),
    lambda L, n: L.eigh(A4, b=A4), lambda L, n: L.eigh(A4, type=2),
    lambda L, n: L.eigh(A4, eigvals=(0, 1)), lambda L, n: L.schur(A4, output="neither"),
    lambda L, n: L.expm(A4[:3]), lambda L, n: L.expm(np.ones(3)),
    lambda L, n: L.expm_frechet(A4, A4[:3, :3]), lambda L, n: L.sqrtm(A4, blocksize=2),
    lambda L, n: L.polar(np.ones(3)), lambda L, n: L.polar(A4, side="top"),
    lambda L, n: L.polar(A4[:3], method="qdwh"), lambda L, n: L.polar(A4, method="eig"),
    lambda L, n: L.funm(A4[:3], n.exp), lambda L, n: L.rsf2csf(A4, A4[:3, :3]),
    lambda L, n: L.rsf2csf(A4[:3], A4),
    lambda L, n: L.solve_sylvester(A4, A4[:2, :2], A4[:3]),
    lambda L, n: L.solve_sylvester(A4, A4, A4, method="bartels"),
    lambda L, n: L.eigh_tridiagonal(A4[0], A4[1, :3].astype(np.complex64)),
    lambda L, n: L.eigh_tridiagonal(np.arange(3), np.arange(2)),
    lambda L, n: L.eigh_tridiagonal(A4[0], A4[1, :3], select="v"),
    lambda L, n: L.eigh_tridiagonal(A4[0], A4[1, :3], select="i"),
    lambda L, n: L.eigh_tridiagonal(A4[0], A4[1, :3], select="i", select_range=(2, 1)),
    lambda L, n: L.eigh_tridiagonal(A4[0], A4[1, :3], select="x"),
    lambda L, n: L.block_diag(np.ones((2, 2, 2))), lambda L, n: L.toeplitz([1, 2]),
    lambda L, n: L.hankel(3.0), lambda L, n: L.leslie(np.ones(1), np.ones(0)),
    lambda L, n: L.leslie(np.ones(2), np.ones(2)), lambda L, n: L.companion(np.ones(1)),
    lambda L, n: L.leslie([1.0, 2.0], np.ones(1)), lambda L, n: L.companion([1.0, 2.0]),
    lambda L, n: L.fiedler_companion(np.ones(0)), lambda L, n: L.convolution_matrix(np.ones(1), 0),
    lambda L, n: L.convolution_matrix(np.ones(3), 2, "circular"),
    lambda L, n: L.convolution_matrix(1.0, 2), lambda L, n: L.pascal(3, "left"),
    lambda L, n: L.helmert(0), lambda L, n: L.hadamard(6), lambda L, n: L.dft(3, "m"),
    lambda L, n: L.dft(3, dtype=np.float32),
])
def test_errors_are_jax_classes(f):
    with pytest.raises(Exception) as theirs:
        f(jsl, jnp_jax)
    with pytest.raises(type(theirs.value)):
        f(rsl, jnp)


def test_sqrtm_is_not_differentiable_as_in_jax():
    """schur has no derivative in JAX 0.10.2, so neither has sqrtm: the same error class,
    naming schur."""
    for m, L, n in ((jax, jsl, jnp_jax), (refjax, rsl, jnp)):
        with pytest.raises(NotImplementedError, match="schur"):
            m.grad(lambda x, L=L, n=n: n.sum(n.real(L.sqrtm(x))))(SPD)


def test_batched_1d_solves_warn_as_jax():
    """The warning comes from tracing, as in JAX: caches cleared so each run traces."""
    refjax.clear_caches()
    jax.clear_caches()
    b = _mat((2, 3), seed=5)
    for f in (lambda L: L.solve_triangular(np.triu(BATCH), b),
              lambda L: L.cho_solve((np.triu(_spd(3, batch=(2,))), False), b),
              lambda L: L.lu_solve(L.lu_factor(BATCH), b)):
        with pytest.warns(FutureWarning):
            ours = f(rsl)
        with pytest.warns(FutureWarning):
            theirs = f(jsl)
        _same(ours, theirs, rtol=1e-4)


@pytest.mark.parametrize("fn", [
    lambda L, x: L.solve(x, A4, assume_a="pos"), lambda L, x: L.expm(x / 10),
    lambda L, x: L.lu_solve(L.lu_factor(x), A4), lambda L, x: L.det(x),
    lambda L, x: L.polar(x, method="svd")[1],
    lambda L, x: L.solve_triangular(x, A4, lower=True), lambda L, x: L.eigh(x)[0],
])
def test_gradients_match_jax(fn):
    ours, theirs = [m.grad(lambda x, L=L, n=n: n.sum(n.real(fn(L, x))))(SPD)
                    for m, L, n in ((refjax, rsl, jnp), (jax, jsl, jnp_jax))]
    _same(ours, theirs, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_gradient_reads_one_triangle(lower):
    """cholesky reads one triangle of a (symmetrize_input=False): refjax's derivative is zero
    on the other, as finite differences are, where JAX's derivative assumes a symmetric
    perturbation (so JAX's gradient is not the finite-difference one)."""
    with enable_x64(True):
        x, t = _spd(4, np.float64), _mat((4, 4), np.float64, seed=6)
        loss = lambda L, a: L.cho_solve(L.cho_factor(a, lower=lower), np.ones(4)).sum()  # noqa: E731
        _, ours = refjax.jvp(lambda a: loss(rsl, a), (x,), (t,))
        eps = 1e-6
        fd = (loss(scipy.linalg, x + eps * t) - loss(scipy.linalg, x - eps * t)) / (2 * eps)
        np.testing.assert_allclose(ours, fd, rtol=1e-6)
        _, theirs = jax.jvp(lambda a: loss(jsl, a), (x,), (t,))
        assert abs(float(theirs) - fd) > 1e-3


def test_expm_derivative_is_expm_frechet_and_finite_differences():
    with enable_x64(True):
        a, e = _mat((3, 3), np.float64), _mat((3, 3), np.float64, seed=3)
        _, tangent = refjax.jvp(rsl.expm, (a,), (e,))
        np.testing.assert_allclose(tangent, rsl.expm_frechet(a, e, compute_expm=False),
                                   rtol=1e-12)
        eps = 1e-6
        fd = (scipy.linalg.expm(a + eps * e) - scipy.linalg.expm(a - eps * e)) / (2 * eps)
        np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(rsl.expm(a), scipy.linalg.expm(a), rtol=1e-12)


@pytest.mark.parametrize("f", [
    lambda x: rsl.expm(x), lambda x: rsl.cho_solve(rsl.cho_factor(x @ x.T + 3 * np.eye(3)), x),
    lambda x: rsl.lu_solve(rsl.lu_factor(x), x[0]), lambda x: rsl.polar(x)[0],
    lambda x: rsl.solve(x @ x.T + 3 * np.eye(3), x, assume_a="pos"),
    lambda x: rsl.toeplitz(x[0], x[1]), lambda x: rsl.solve_sylvester(x, x.T, x),
])
def test_vmap_and_jit_match_a_loop(f):
    xs = _mat((3, 3, 3), seed=9)
    loop = np.stack([np.asarray(f(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(refjax.vmap(f)(xs)), loop, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(refjax.jit(f)(xs[0])), loop[0], rtol=1e-4, atol=1e-5)


def test_lax_linalg_rules_that_pad_match_jax():
    """lu's derivative, tridiagonal_solve's derivative and qdwh pad with zeros of the
    operand's dtype (lax.pad keeps a Python scalar's own dtype, so a literal 0 was refused):
    float32 operands, eagerly and under jit, give JAX's values."""
    dl, d, du = (np.array(v, np.float32) for v in ([0, 1, 1], [4, 4, 4], [1, 1, 0]))
    b = np.ones((3, 1), np.float32)
    grads = [m.grad(lambda d_, m=m: m.lax.linalg.tridiagonal_solve(dl, d_, du, b).sum())(d)
             for m in (refjax, jax)]
    _same(*grads)
    lus = [m.jit(m.grad(lambda x, m=m: m.lax.linalg.lu(x)[0].sum()))(A4) for m in (refjax, jax)]
    _same(*lus, rtol=1e-4)
    _same(refjax.lax.linalg.qdwh(A4)[:2], jax.lax.linalg.qdwh(A4)[:2], rtol=1e-4, atol=1e-5)
