"""jax.scipy.sparse.linalg: the Krylov solvers cg, bicgstab and gmres, for A a matrix or a
linear operator (a callable) on pytrees, differentiated implicitly through
lax.custom_linear_solve (one more solve per derivative, not through the iterations)."""
import functools
import operator

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...devices import device_put
from ...tree_util import tree_leaves, tree_map, tree_structure
from . import _trees as T
from ._gmres import gmres_solve, incremental_cycle, batched_cycle



def _identity(x):
    return x


def _square(shape):
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")


def _as_matvec(f):
    """A callable computing f x for f a callable, a square matrix or a matmul-capable object."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, jnp.ndarray)):
        _square(f.shape)
        return functools.partial(jnp.dot, f, precision=lax.Precision.HIGHEST)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape"):
            _square(f.shape)
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _shapes(tree):
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _prepare(A, b, x0, M, maxiter):
    """The solvers' common arguments normalised and checked: (A, b, x0, M, maxiter)."""
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else x0
    b, x0 = device_put((b, x0))
    if maxiter is None:   # scipy's default
        maxiter = 10 * sum(np.size(leaf) for leaf in tree_leaves(b))
    A, M = _as_matvec(A), _identity if M is None else _as_matvec(M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    return A, b, x0, M, maxiter


def _check_shapes(b, x0):
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                         f"{_shapes(b)}")


def _threshold(b, tol, atol):
    """The squared residual norm at which to stop: max(tol |b|, atol)^2 (scipy's non-legacy
    tolerance)."""
    return jnp.maximum(jnp.square(tol) * T.vdot_real(b, b), jnp.square(atol))


def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned conjugate gradients from x0."""
    threshold = _threshold(b, tol, atol)
    r0 = T.sub(b, A(x0))
    z0 = M(r0)
    dtype = T.result_dtype(z0)

    def cond(state):
        _, r, gamma, _, k = state
        rs = gamma.real if M is _identity else T.vdot_real(r, r)
        return (rs > threshold) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / T.vdot_real(p, Ap).astype(dtype)
        x, r = T.add(x, T.scale(alpha, p)), T.sub(r, T.scale(alpha, Ap))
        z = M(r)
        gamma_next = T.vdot_real(r, z).astype(dtype)
        return x, r, gamma_next, T.add(z, T.scale(gamma_next / gamma, p)), k + 1
    gamma0 = T.vdot_real(r0, z0).astype(dtype)
    return lax.while_loop(cond, body, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab_step(A, M, threshold, state):
    """One BiCGSTAB iteration; k becomes -10 (rho = 0) or -11 (alpha or omega = 0) on
    breakdown, which ends the loop."""
    x, r, rhat, alpha, omega, rho, p, q, k = state
    rho_next = T.vdot(rhat, r)
    beta = rho_next / rho * alpha / omega
    p = T.add(r, T.scale(beta, T.sub(p, T.scale(omega, q))))
    phat = M(p)
    q = A(phat)
    alpha = rho_next / T.vdot(rhat, q)
    s = T.sub(r, T.scale(alpha, q))
    done = T.vdot_real(s, s) < threshold   # s small enough: the half step is the answer
    shat = M(s)
    t = A(shat)
    omega = T.vdot(t, s) / T.vdot(t, t)
    half = T.add(x, T.scale(alpha, phat))
    choose = functools.partial(tree_map, functools.partial(jnp.where, done))
    x = choose(half, T.add(half, T.scale(omega, shat)))
    r = choose(s, T.sub(s, T.scale(omega, t)))
    k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
    return x, r, rhat, alpha, omega, rho_next, p, q, jnp.where(rho_next == 0, -10, k)


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned BiCGSTAB from x0."""
    threshold = _threshold(b, tol, atol)

    def cond(state):
        r, k = state[1], state[-1]
        return (T.vdot_real(r, r) > threshold) & (k < maxiter) & (k >= 0)
    r0 = T.sub(b, A(x0))
    one = jnp.ones((), T.result_dtype(b))
    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(cond, functools.partial(_bicgstab_step, A, M, threshold), state)[0]


def _isolve(solver, A, b, x0, tol, atol, maxiter, M, symmetric):
    A, b, x0, M, maxiter = _prepare(A, b, x0, M, maxiter)
    _check_shapes(b, x0)
    solve = functools.partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # a real positive-definite operator is symmetric, so cg's transpose solve is itself
    symmetric = symmetric and not any(jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by conjugate gradients, A Hermitian positive definite (a square matrix,
    a callable or a matmul-capable object), b any pytree of arrays. Returns (x, None); stops
    when |r| <= max(tol |b|, atol) or after maxiter (default 10 * size) iterations; M is a
    preconditioner approximating the inverse of A. Derivatives solve again with cg."""
    return _isolve(_cg_solve, A, b, x0, tol, atol, maxiter, M, True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b for a general square operator A by BiCGSTAB (arguments as cg's).
    Returns (x, None)."""
    return _isolve(_bicgstab_solve, A, b, x0, tol, atol, maxiter, M, False)


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve A x = b for a general square operator A by restarted GMRES: each cycle builds a
    Krylov space of dimension `restart` (capped at b's size) and takes the least-squares
    solution in it; at most maxiter cycles (default 10 * size). solve_method 'batched' solves
    each cycle's least-squares problem at its end, 'incremental' keeps a QR factorisation by
    Givens rotations and stops a cycle early once converged. Returns (x, info), info -1 when
    x is NaN and 0 otherwise."""
    cycles = {"incremental": incremental_cycle, "batched": batched_cycle}
    if solve_method not in cycles:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' "
                         "or 'batched'")
    A, b, x0, M, maxiter = _prepare(A, b, x0, M, maxiter)
    restart = min(restart, sum(np.size(leaf) for leaf in tree_leaves(b)))
    b_norm = T.norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    # the tolerance within a cycle, on the preconditioned residual
    ptol = T.norm(M(b)) * jnp.minimum(1.0, atol / b_norm)

    def solve(A, b):
        return gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycles[solve_method])
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    return x, jnp.where(jnp.isnan(T.norm(x)), -1, 0)
