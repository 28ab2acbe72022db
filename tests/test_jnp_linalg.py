"""jnp.linalg against real JAX 0.10.2 on both backends: values, dtypes and weak types, the
invariants of the decompositions whose signs and phases are free, JAX's error classes,
gradients (JAX's custom JVPs: det at a singular matrix, slogdet, pinv) against JAX and finite
differences, and vmap against a Python loop."""
import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest

import refjax
from linalg_inputs import random_matrix as _mat, spd as _spd
import refjax.numpy as jnp
from refjax.spec.checks import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")
RTOL = {np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4,
        np.dtype(np.float64): 1e-10, np.dtype(np.complex128): 1e-10}


def _same(ours, theirs, rtol=None, atol=1e-5):
    """Same pytree structure, shapes, dtypes and weak types; values within rtol."""
    ours_l, theirs_l = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert type(ours).__name__ == type(theirs).__name__
    assert len(ours_l) == len(theirs_l)
    for a, b in zip(ours_l, theirs_l):
        assert a.shape == b.shape and np.dtype(a.dtype) == np.dtype(b.dtype), (a, b)
        assert getattr(a, "weak_type", False) == getattr(b, "weak_type", False), (a, b)
        tol = RTOL.get(np.dtype(b.dtype), 0) if rtol is None else rtol
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=atol)


def _compare(f, *args, **tol):
    """f(jnp.linalg) on refjax and on JAX: the same results."""
    _same(f(jnp.linalg), f(jnp_jax.linalg), **tol)


def _raises_like_jax(f, *args):
    """f(linalg_module) raises the same exception class on refjax and on JAX."""
    with pytest.raises(Exception) as theirs:
        f(jnp_jax.linalg)
    with pytest.raises(type(theirs.value)):
        f(jnp.linalg)


# ---------------------------------------------------------------- values against JAX

A4 = _mat((4, 4))
B43 = _mat((4, 3), seed=1)
BATCH = _mat((2, 3, 3), seed=2)


@pytest.mark.parametrize("f", [
    lambda L: L.det(A4), lambda L: L.det(BATCH), lambda L: L.det(A4[:2, :2]),
    lambda L: L.det(np.eye(5, dtype=np.int32)), lambda L: L.slogdet(A4),
    lambda L: L.slogdet(BATCH), lambda L: L.slogdet(A4[:1, :1]),
    lambda L: L.slogdet(A4, method="qr"), lambda L: L.inv(A4), lambda L: L.inv(BATCH),
    lambda L: L.solve(A4, B43), lambda L: L.solve(A4, B43[:, 0]),
    lambda L: L.solve(BATCH, BATCH[0]), lambda L: L.solve(BATCH[0], _mat((5, 1, 3, 2))),
    lambda L: L.pinv(B43), lambda L: L.pinv(B43.T), lambda L: L.pinv(A4, rtol=0.2),
    lambda L: L.pinv(_spd(), hermitian=True), lambda L: L.lstsq(B43, A4[:, :2]),
    lambda L: L.lstsq(B43, A4[:, 0]), lambda L: L.lstsq(B43, A4[:, 0], rcond=0.5),
    lambda L: L.lstsq(B43, A4[:, 0], numpy_resid=True),
    lambda L: L.lstsq(B43.T, A4[:3, 0], numpy_resid=True),
    lambda L: L.matrix_power(A4, 0), lambda L: L.matrix_power(A4, 1),
    lambda L: L.matrix_power(A4, 3), lambda L: L.matrix_power(A4, 6),
    lambda L: L.matrix_power(BATCH, -2), lambda L: L.matrix_rank(B43),
    lambda L: L.matrix_rank(np.ones((3, 3))), lambda L: L.matrix_rank(BATCH, tol=1.0),
    lambda L: L.matrix_rank(np.arange(3.0)), lambda L: L.svdvals(B43),
    lambda L: L.svd(B43, compute_uv=False), lambda L: L.svd(_spd(), hermitian=True,
                                                          compute_uv=False),
    lambda L: L.eigvalsh(_spd()), lambda L: L.eigvalsh(_spd(), UPLO="U"),
    lambda L: L.cond(A4), lambda L: L.cond(A4, -2), lambda L: L.cond(A4, 1),
    lambda L: L.cond(A4, "fro"), lambda L: L.cond(np.ones((3, 3))),
    lambda L: L.tensorinv(_mat((4, 6, 8, 3))), lambda L: L.tensorinv(_mat((6, 2, 3)), ind=1),
    lambda L: L.tensorsolve(_mat((2, 3, 6)), _mat((2, 3))),
    lambda L: L.tensorsolve(_mat((6, 2, 3)), _mat((2, 3)), axes=(0,)),
    lambda L: L.multi_dot([_mat((3,)), _mat((3, 4)), _mat((4, 2)), _mat((2,))]),
    lambda L: L.multi_dot([_mat((5, 3)), _mat((3, 4))]),
    lambda L: L.cross(_mat((2, 3)), _mat((3,), seed=1)), lambda L: L.outer(B43[0], A4[0]),
    lambda L: L.trace(BATCH, offset=1), lambda L: L.diagonal(BATCH, offset=-1),
    lambda L: L.matrix_transpose(BATCH), lambda L: L.vecdot(B43, B43[:, :1], axis=0),
    lambda L: L.matmul(BATCH, B43[:3]), lambda L: L.tensordot(BATCH, B43[:3], axes=1),
    lambda L: L.eigvals(np.diag([3.0, 1.0, 2.0]).astype(np.float32)),
])
def test_values_match_jax(f):
    _compare(f)


@pytest.mark.parametrize("args", [
    dict(), dict(ord=1), dict(ord=-1), dict(ord=np.inf), dict(ord=-np.inf), dict(ord="fro"),
    dict(ord="nuc"), dict(ord=2), dict(ord=-2), dict(ord=2, keepdims=True),
    dict(ord="nuc", axis=(2, 0), keepdims=True), dict(ord=1, axis=(0, 2)),
    dict(ord=-np.inf, axis=(2, 1), keepdims=True), dict(axis=1), dict(axis=-1, ord=3),
    dict(axis=0, ord=0), dict(axis=1, ord=-np.inf), dict(keepdims=True),
])
def test_norm_matches_jax(args):
    x = _mat((3, 4, 5))
    if "axis" not in args and "ord" in args:
        args = dict(args, axis=(1, 2))
    _compare(lambda L: L.norm(x, **args))


@pytest.mark.parametrize("f", [
    lambda L: L.vector_norm(B43), lambda L: L.vector_norm(B43, ord=1, axis=0, keepdims=True),
    lambda L: L.vector_norm(B43, ord=np.inf), lambda L: L.vector_norm(B43, ord=0),
    lambda L: L.vector_norm(B43, ord=-np.inf, axis=(0, 1)), lambda L: L.vector_norm(B43, ord=3.5),
    lambda L: L.vector_norm(np.arange(4)), lambda L: L.matrix_norm(BATCH),
    lambda L: L.matrix_norm(BATCH, ord=2, keepdims=True), lambda L: L.norm(np.arange(6)),
    lambda L: L.norm(_mat((3, 3), np.complex64), ord="nuc"), lambda L: L.norm(3.0),
])
def test_vector_and_matrix_norms_match_jax(f):
    _compare(f)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_float64_and_complex_match_jax(dtype):
    with enable_x64(True):
        a, b = _mat((3, 3), dtype), _mat((3, 2), dtype, seed=1)
        for f in (lambda L: L.det(a), lambda L: L.slogdet(a), lambda L: L.inv(a),
                  lambda L: L.solve(a, b), lambda L: L.pinv(b), lambda L: L.lstsq(a, b),
                  lambda L: L.norm(a, "nuc"), lambda L: L.cond(a), lambda L: L.matrix_rank(a),
                  lambda L: L.det(_mat((5, 5), dtype)), lambda L: L.slogdet(_mat((2, 2), dtype))):
            _compare(f)


def test_weak_types_and_integer_promotion_match_jax():
    for x in ([[2, 1], [1, 3]], [[2.0, 1.0], [1.0, 3.0]]):
        for f in (lambda L: L.det(np.asarray(x)), lambda L: L.inv(np.asarray(x)),
                  lambda L: L.norm(np.asarray(x)), lambda L: L.eigvalsh(np.asarray(x))):
            _compare(f)
    _compare(lambda L: L.det(L.matmul(jnp_jax.eye(2) if L is jnp_jax.linalg else jnp.eye(2),
                                      np.eye(2))))


# ---------------------------------------------------------------- decompositions

def test_cholesky_and_qr_equal_jax():
    """Cholesky's positive diagonal and Householder QR's signs are fixed by LAPACK's
    conventions: refjax gives JAX's outputs."""
    spd = _spd(batch=(2,))
    _compare(lambda L: L.cholesky(spd))
    _compare(lambda L: L.cholesky(spd, upper=True))
    for mode in ("reduced", "complete", "r", "raw"):
        _compare(lambda L: L.qr(B43, mode=mode))
        _compare(lambda L: L.qr(B43.T, mode=mode))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_svd_and_eigh_invariants(dtype):
    """U diag(S) Vh = a with orthonormal U and V; eigh's v diag(w) v^H = a; both with JAX's
    shapes and dtypes (the bases themselves are free)."""
    a = _mat((2, 4, 3), dtype)
    for full in (True, False):
        ours, theirs = jnp.linalg.svd(a, full_matrices=full), jnp_jax.linalg.svd(a, full)
        assert type(ours).__name__ == "SVDResult"
        assert [x.shape for x in ours] == [x.shape for x in theirs]
        u, s, vh = map(np.asarray, ours)
        np.testing.assert_allclose((u[..., :3] * s[..., None, :]) @ vh[..., :3, :], a,
                                   atol=1e-5)
        np.testing.assert_allclose(s, np.asarray(theirs.S), rtol=1e-5)
    h = _spd(3, dtype)
    w, v = map(np.asarray, jnp.linalg.eigh(h))
    np.testing.assert_allclose((v * w) @ v.conj().T, h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w, np.asarray(jnp_jax.linalg.eigh(h).eigenvalues), rtol=1e-5)
    u, s, vh = map(np.asarray, jnp.linalg.svd(h - 4 * np.eye(3, dtype=dtype), hermitian=True))
    np.testing.assert_allclose((u * s) @ vh, h - 4 * np.eye(3), atol=1e-4)
    assert np.all(np.diff(s) <= 0)


def test_eig_and_eigvals():
    """A v = v diag(w) for eig; eigvals are eig's values; complex dtypes as JAX's."""
    a = _mat((2, 4, 4))
    w, v = jnp.linalg.eig(a)
    theirs = jnp_jax.linalg.eig(a)
    assert (w.dtype, v.dtype) == (theirs[0].dtype, theirs[1].dtype)
    w, v = np.asarray(w), np.asarray(v)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-4)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(a)).ravel()),
                               np.sort_complex(w.ravel()), rtol=1e-5)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("f", [
    lambda L: L.det(B43), lambda L: L.det(np.ones(3)), lambda L: L.slogdet(B43),
    lambda L: L.slogdet(A4, method="cholesky"), lambda L: L.inv(B43),
    lambda L: L.solve(np.ones(3), np.ones(3)), lambda L: L.solve(BATCH, BATCH[..., 0]),
    lambda L: L.solve(A4, np.ones(3)), lambda L: L.qr(A4, mode="economic"),
    lambda L: L.eigh(A4, UPLO="X"), lambda L: L.matrix_power(B43, 2),
    lambda L: L.matrix_power(A4, 1.5), lambda L: L.matrix_power(np.ones(3), 2),
    lambda L: L.pinv(A4, rtol=0.1, rcond=0.1), lambda L: L.matrix_rank(A4, rtol=1, tol=1),
    lambda L: L.norm(A4, ord="bad"), lambda L: L.norm(np.ones(3), ord="inf"),
    lambda L: L.norm(BATCH, axis=(0, 1, 2), ord=2), lambda L: L.lstsq(A4, np.ones(3)),
    lambda L: L.lstsq(BATCH, BATCH), lambda L: L.cond(np.ones(3)),
    lambda L: L.cond(np.ones((3, 0))), lambda L: L.cond(B43, 1),
    lambda L: L.tensorinv(B43), lambda L: L.tensorinv(A4, ind=0),
    lambda L: L.tensorsolve(A4, np.ones(3)), lambda L: L.multi_dot([A4]),
    lambda L: L.multi_dot([A4, BATCH]), lambda L: L.multi_dot([A4, B43.T]),
    lambda L: L.cross(A4, A4), lambda L: L.outer(A4, A4[0]),
    lambda L: L.matrix_transpose(np.ones(3)), lambda L: L.det([[1.0, 2.0], [3.0, 4.0]]),
    lambda L: L.slogdet(np.ones((3, 3), np.complex64), method="qr"),
])
def test_errors_are_jax_classes(f):
    _raises_like_jax(f)


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="slogdet"):
        jnp.linalg.slogdet(B43)
    with pytest.raises(ValueError, match="solve"):
        jnp.linalg.solve(A4, np.ones(3))
    with pytest.raises(TypeError, match="jnp.linalg.det"):
        jnp.linalg.det([[1.0, 2.0], [3.0, 4.0]])


# ---------------------------------------------------------------- transformations

def _grad_pair(fname, x, **kw):
    """grad of sum(real(fname(x))) on refjax and on JAX."""
    def loss(L, np_):
        return lambda a: np_.sum(np_.real(getattr(L, fname)(a, **kw)))
    return (refjax.grad(loss(jnp.linalg, jnp))(x),
            jax.grad(loss(jnp_jax.linalg, jnp_jax))(x))


@pytest.mark.parametrize("fname,x,kw", [
    ("det", A4, {}), ("det", _mat((5, 5)), {}), ("inv", A4, {}), ("pinv", B43, {}),
    ("pinv", _spd(), dict(hermitian=True)), ("svdvals", B43, {}), ("eigvalsh", _spd(), {}),
    ("cholesky", _spd(), {}), ("norm", A4, dict(ord="nuc")), ("cond", A4, {}),
    ("matrix_power", A4, dict(n=-3)), ("det", _mat((1, 1)), {}),
])
def test_gradients_match_jax(fname, x, kw):
    ours, theirs = _grad_pair(fname, x, **kw)
    _same(ours, theirs, rtol=2e-3, atol=2e-4)


def test_slogdet_and_solve_gradients_match_jax():
    for method in (None, "qr"):
        for x in (A4, A4[:2, :2]):
            g = [m.grad(lambda a, L=L: L.slogdet(a, method=method)[1])(x)
                 for m, L in ((refjax, jnp.linalg), (jax, jnp_jax.linalg))]
            _same(*g, rtol=1e-3)
    g = [m.grad(lambda a, b, L=L: L.solve(a, b).sum(), (0, 1))(A4, B43)
         for m, L in ((refjax, jnp.linalg), (jax, jnp_jax.linalg))]
    _same(*g, rtol=1e-3)


def test_det_gradient_at_singular_matrix_is_the_adjugate():
    """JAX's det derivative is the adjugate even where a is singular (its cofactor solve):
    a rank-deficient 4x4 has a finite, nonzero gradient equal to JAX's and to the cofactors."""
    x = np.array([[1.0, 2, 3, 4], [2, 4, 6, 8], [0, 1, 1, 0], [1, 0, 2, 5]], np.float32)
    ours = np.asarray(refjax.grad(jnp.linalg.det)(x))
    np.testing.assert_allclose(ours, np.asarray(jax.grad(jnp_jax.linalg.det)(x)), atol=1e-4)
    cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(x, i, 0), j, 1))
                     for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(ours, cof, atol=1e-4)
    assert np.abs(ours).max() > 1


def test_complex_slogdet_jvp_matches_finite_differences():
    with enable_x64(True):
        a, t = _mat((3, 3), np.complex128), _mat((3, 3), np.complex128, seed=4)
        (_, _), (dsign, dlog) = refjax.jvp(jnp.linalg.slogdet, (a,), (t,))
        eps = 1e-6
        plus, minus = np.linalg.slogdet(a + eps * t), np.linalg.slogdet(a - eps * t)
        np.testing.assert_allclose(dlog, (plus[1] - minus[1]) / (2 * eps), rtol=1e-6)
        np.testing.assert_allclose(dsign, (plus[0] - minus[0]) / (2 * eps), rtol=1e-6)


@pytest.mark.parametrize("f", [
    lambda L: L.det, lambda L: L.inv, lambda L: (lambda a: L.slogdet(a).logabsdet),
    lambda L: (lambda a: L.solve(a, a[:, 0])), lambda L: L.pinv,
    lambda L: (lambda a: L.lstsq(a, a[:, 0])[0]), lambda L: (lambda a: L.norm(a, 2)),
    lambda L: L.matrix_rank, lambda L: L.svdvals, lambda L: L.eigvalsh,
])
def test_vmap_and_jit_match_a_loop(f):
    xs = _mat((3, 4, 4), seed=7)
    fn = f(jnp.linalg)
    loop = np.stack([np.asarray(fn(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(refjax.vmap(fn)(xs)), loop, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(refjax.jit(fn)(xs[0])), loop[0], rtol=1e-4,
                               atol=1e-5)


def test_namedtuple_results_print_as_jax():
    assert repr(jnp.linalg.slogdet(np.eye(2, dtype=np.float32))) == repr(
        jnp_jax.linalg.slogdet(np.eye(2, dtype=np.float32)))
    assert jnp.linalg.qr(B43)._fields == jnp_jax.linalg.qr(B43)._fields
    assert jnp.linalg.eigh(_spd())._fields == jnp_jax.linalg.eigh(_spd())._fields
    assert jnp.linalg.eig(A4)._fields == jnp_jax.linalg.eig(A4)._fields
