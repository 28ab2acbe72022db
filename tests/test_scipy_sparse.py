"""refjax.scipy.sparse.linalg (cg, bicgstab, gmres) against jax.scipy.sparse.linalg, scipy's
solvers and numpy.linalg.solve: matrices, callables and pytrees, preconditioners, the iterates
of unconverged solves, jit, vmap, implicit derivatives, and JAX's errors."""
import functools

import numpy as np
import pytest
import scipy.sparse.linalg as ssl

import jax
import jax.scipy.sparse.linalg as jsl

import refjax
import refjax.numpy as rnp
import refjax.scipy.sparse.linalg as rsl
from refjax.core.config import enable_x64

pytestmark = pytest.mark.backends("numpy_ref", "xla")

SOLVERS = {
    "cg": lambda lib: lib.cg,
    "bicgstab": lambda lib: lib.bicgstab,
    "gmres_batched": lambda lib: functools.partial(lib.gmres, solve_method="batched"),
    "gmres_incremental": lambda lib: functools.partial(lib.gmres, solve_method="incremental"),
}
SCIPY = {"cg": ssl.cg, "bicgstab": ssl.bicgstab, "gmres_batched": ssl.gmres,
         "gmres_incremental": ssl.gmres}


def spd(n, dtype=np.float32, seed=0):
    """A well-conditioned symmetric positive-definite matrix and a right-hand side."""
    rng = np.random.RandomState(seed)
    a = rng.randn(n, n)
    return (a @ a.T / n + np.eye(n)).astype(dtype), rng.randn(n).astype(dtype)


def nonsymmetric(n, dtype=np.float32, seed=1):
    rng = np.random.RandomState(seed)
    return (rng.randn(n, n) / n + 2 * np.eye(n)).astype(dtype), rng.randn(n).astype(dtype)


def _info_matches(got, want):
    if want is None:
        assert got is None
    else:
        assert got.dtype == want.dtype and got.weak_type == want.weak_type and int(got) == int(want)


@pytest.mark.parametrize("name", SOLVERS)
def test_converged_solution_matches_jax_scipy_and_numpy(name):
    A, b = spd(6) if name == "cg" else nonsymmetric(6)
    x, info = SOLVERS[name](rsl)(A, b, tol=1e-6)
    jx, jinfo = SOLVERS[name](jsl)(A, b, tol=1e-6)
    sx, sinfo = SCIPY[name](A.astype(np.float64), b.astype(np.float64), rtol=1e-10)
    assert x.dtype == jx.dtype == np.float32 and sinfo == 0
    _info_matches(info, jinfo)
    np.testing.assert_allclose(x, np.linalg.solve(A.astype(np.float64), b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x, sx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x, jx, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("cg", dict(maxiter=2)), ("bicgstab", dict(maxiter=1)),
                                         ("gmres_batched", dict(restart=2, maxiter=1)),
                                         ("gmres_incremental", dict(restart=3, maxiter=1))])
def test_unconverged_iterates_match_jax(name, kwargs):
    """Stopped before convergence, the iterate is the algorithm's, not just a solution: the
    same as JAX's (in float64, where rounding cannot hide a different recurrence)."""
    A, b = spd(8, np.float64) if name == "cg" else nonsymmetric(8, np.float64)
    with enable_x64(True), jax.enable_x64(True):
        x, _ = SOLVERS[name](rsl)(A, b, **kwargs)
        jx, _ = SOLVERS[name](jsl)(A, b, **kwargs)
    assert np.linalg.norm(A @ np.asarray(x) - b) > 1e-3 * np.linalg.norm(b)   # not converged
    np.testing.assert_allclose(x, jx, rtol=1e-10, atol=1e-12)


def test_cg_iterates_match_scipy():
    """scipy's cg after 3 iterations (with the same absolute tolerance) is the same vector."""
    A, b = spd(8, np.float64)
    with enable_x64(True):
        x, _ = rsl.cg(A, b, maxiter=3)
    np.testing.assert_allclose(x, ssl.cg(A, b, maxiter=3, rtol=1e-5, atol=0.0)[0], rtol=1e-10)


def _block_operator(lib, A1, A2):
    return lambda t: {"u": lib.numpy.dot(A1, t["u"]), "v": lib.numpy.dot(A2, t["v"])}


@pytest.mark.parametrize("name", SOLVERS)
def test_pytree_and_callable_operator(name):
    """A callable on a dict of arrays of different shapes: the solves of the two blocks."""
    (A1, b1), (A2, b2) = spd(3, seed=2), spd(4, seed=3)
    b = {"u": b1, "v": b2}
    x, _ = SOLVERS[name](rsl)(_block_operator(refjax, A1, A2), b, tol=1e-6)
    jx, _ = SOLVERS[name](jsl)(_block_operator(jax, A1, A2), b, tol=1e-6)
    assert sorted(x) == ["u", "v"]
    for key, A, rhs in (("u", A1, b1), ("v", A2, b2)):
        np.testing.assert_allclose(x[key], np.linalg.solve(A, rhs), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(x[key], jx[key], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cg", "gmres_incremental"])
def test_preconditioner_and_initial_guess(name):
    A, b = spd(6) if name == "cg" else nonsymmetric(6)
    M = np.diag(1 / np.diag(A)).astype(np.float32)
    x0 = np.ones(6, np.float32)
    kwargs = dict(x0=x0, M=M, maxiter=3, tol=1e-6)
    x, _ = SOLVERS[name](rsl)(A, b, **kwargs)
    jx, _ = SOLVERS[name](jsl)(A, b, **kwargs)
    np.testing.assert_allclose(x, jx, rtol=1e-4, atol=1e-5)
    converged, _ = SOLVERS[name](rsl)(A, b, x0=x0, M=lambda r: M @ r, tol=1e-6)
    np.testing.assert_allclose(converged, np.linalg.solve(A, b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres_batched"])
def test_complex(name):
    rng = np.random.RandomState(4)
    a = (rng.randn(5, 5) + 1j * rng.randn(5, 5)).astype(np.complex64)
    A = (a @ a.conj().T / 5 + np.eye(5)).astype(np.complex64)
    b = (rng.randn(5) + 1j * rng.randn(5)).astype(np.complex64)
    x, _ = SOLVERS[name](rsl)(A, b, tol=1e-6)
    jx, _ = SOLVERS[name](jsl)(A, b, tol=1e-6)
    assert x.dtype == np.complex64
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x, jx, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres_incremental"])
def test_jit_and_gradients_are_implicit(name):
    """Under jit, d/dA and d/db of sum(x) with x = A^-1 b are -A^-T 1 x^T and A^-T 1
    (hand-derived); forward mode, the tangent of x along db is A^-1 db."""
    A, b = spd(5) if name == "cg" else nonsymmetric(5)

    def loss(lib):
        return lambda A, b: lib.numpy.sum(SOLVERS[name](lib.scipy.sparse.linalg)(
            lambda v: lib.numpy.dot(A, v), b, tol=1e-7)[0])
    gA, gb = refjax.jit(refjax.grad(loss(refjax), argnums=(0, 1)))(A, b)
    x = np.linalg.solve(A.astype(np.float64), b)
    w = np.linalg.solve(A.astype(np.float64).T, np.ones(5))
    np.testing.assert_allclose(gb, w, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gA, -np.outer(w, x), rtol=1e-3, atol=1e-4)
    _, tangent = refjax.jvp(lambda b: rsl.cg(A, b)[0] if name == "cg" else
                            SOLVERS[name](rsl)(A, b)[0], (b,), (np.ones(5, np.float32),))
    np.testing.assert_allclose(tangent, np.linalg.solve(A, np.ones(5)), rtol=1e-3, atol=1e-4)


def test_vmap_is_a_loop_of_solves():
    A, _ = spd(4)
    bs = np.random.RandomState(5).randn(3, 4).astype(np.float32)
    xs = refjax.vmap(lambda b: rsl.gmres(A, b, tol=1e-6)[0])(bs)
    for x, b in zip(xs, bs):
        np.testing.assert_allclose(x, rsl.gmres(A, b, tol=1e-6)[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-4, atol=1e-5)


def test_matmul_object_operator():
    """An object with __matmul__ and a shape (not an array) is applied as A @ x."""
    A, b = spd(4)

    class Op:
        shape = A.shape

        def __matmul__(self, x):
            return rnp.dot(A, x)
    np.testing.assert_allclose(rsl.cg(Op(), b)[0], np.linalg.solve(A, b), rtol=1e-4, atol=1e-5)


def _error(lib, call):
    with pytest.raises(Exception) as info:
        call(lib.scipy.sparse.linalg)
    return info


@pytest.mark.parametrize("call", [
    lambda m: m.cg(np.ones((2, 3), np.float32), np.ones(2, np.float32)),
    lambda m: m.gmres(np.ones((2, 3), np.float32), np.ones(2, np.float32)),
    lambda m: m.cg(np.eye(2, dtype=np.float32), np.ones(2, np.float32), x0=np.ones(3, np.float32)),
    lambda m: m.bicgstab(np.eye(2, dtype=np.float32), {"a": np.ones(2, np.float32)},
                         x0=[np.ones(2, np.float32)]),
    lambda m: m.gmres(np.eye(2, dtype=np.float32), np.ones(2, np.float32), solve_method="qr"),
    lambda m: m.cg("A", np.ones(2, np.float32)),
], ids=["cg_not_square", "gmres_not_square", "x0_shape", "x0_structure", "solve_method",
        "not_an_operator"])
def test_errors_as_jax(call):
    got, want = _error(refjax, call), _error(jax, call)
    assert got.type is want.type
    assert str(got.value) == str(want.value).replace("jax", "refjax") or \
        str(got.value).split(":")[0] == str(want.value).split(":")[0]
