"""Restarted GMRES: the Arnoldi process on pytrees and the two ways of solving each cycle's
least-squares problem (all at once at the end, or incrementally by Givens rotations)."""
from ... import lax
from ... import numpy as jnp
from ...tree_util import tree_leaves, tree_map
from .. import linalg as sp_linalg
from . import _trees as T


def _basis(unit_residual, restart):
    """The Krylov basis V: each leaf gains a last axis of restart + 1 columns, the first the
    unit residual, the others zero until the Arnoldi process fills them."""
    return tree_map(lambda leaf: jnp.pad(leaf[..., None], ((0, 0),) * leaf.ndim + ((0, restart),)),
                    unit_residual)


def _overlaps(V, v):
    """V^H v over the leaves: the coefficients of v on the basis columns."""
    return sum(jnp.einsum("...n,...->n", X.conj(), y, precision=lax.Precision.HIGHEST)
               for X, y in zip(tree_leaves(V), tree_leaves(v)))


def _orthogonalize(V, v):
    """v minus its projection on V's columns, and the projection's coefficients; classical
    Gram-Schmidt done twice ("twice is enough") so that v stays orthogonal in floating point."""
    h = 0
    for _ in range(2):
        step = _overlaps(V, v)
        v = T.sub(v, tree_map(lambda X: jnp.dot(X, step, precision=lax.Precision.HIGHEST), V))
        h = h + step
    return v, h


def _arnoldi(k, A, M, V, H):
    """The k-th Arnoldi step: V's column k+1 becomes M A V[:, k] orthonormalised against the
    columns before it, H's row k its coefficients; breakdown when it vanishes (an invariant
    subspace: the cycle's space already holds the solution)."""
    dtype = T.result_dtype(V)
    v = M(A(tree_map(lambda X: X[..., k], V)))
    v_norm = T.norm(v)
    v, h = _orthogonalize(V, v)
    unit, v_norm_after = T.safe_normalize(v, threshold=jnp.finfo(dtype).eps * v_norm)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    H = H.at[k, :].set(h.at[k + 1].set(v_norm_after.astype(dtype)))
    return V, H, v_norm_after == 0


def _rotate(vec, i, cs, sn):
    """vec with the Givens rotation (cs, sn) applied to its entries i and i + 1."""
    x, y = vec[i], vec[i + 1]
    return vec.at[i].set(cs.conj() * x - sn.conj() * y).at[i + 1].set(sn * x + cs * y)


def _givens(a, b):
    """(cs, sn) with sn a + cs b = 0 and |cs|^2 + |sn|^2 = 1 (dividing by the larger of the
    two, so that nothing overflows)."""
    a_smaller = abs(a) < abs(b)
    t = -jnp.where(a_smaller, a, b) / jnp.where(a_smaller, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    b_zero = abs(b) == 0
    cs = jnp.where(b_zero, 1, jnp.where(a_smaller, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_smaller, r, r * t))
    return cs, sn


def _triangularize_row(row, givens, k):
    """Row k of the Hessenberg matrix with the k earlier rotations applied, then a new one
    chosen to zero its entry k + 1; returns the rotated row and the rotations."""
    row = lax.fori_loop(0, k, lambda i, r: _rotate(r, i, givens[i, 0], givens[i, 1]), row)
    cs, sn = _givens(row[k], row[k + 1])
    return _rotate(row, k, cs, sn), givens.at[k].set(jnp.stack([cs, sn]))


def _finish_cycle(A, b, x0, M, V, y):
    """x0 plus the basis combination y, with its preconditioned residual normalised."""
    x = T.add(x0, tree_map(lambda X: jnp.dot(X[..., :-1], y, precision=lax.Precision.HIGHEST), V))
    unit, norm = T.safe_normalize(M(T.sub(b, A(x))))
    return x, unit, norm


def incremental_cycle(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One GMRES cycle keeping H's QR factorisation as it grows, which gives the residual
    norm at each step: the cycle stops as soon as it is below ptol."""
    dtype = T.result_dtype(b)
    # R starts as the identity so that a cycle stopped early still has a solvable system
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    beta = jnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))

    def step(state):
        k, _, V, R, beta, givens = state
        V, H, _ = _arnoldi(k, A, M, V, R)
        row, givens = _triangularize_row(H[k, :], givens, k)
        beta = _rotate(beta, k, givens[k, 0], givens[k, 1])
        return k + 1, abs(beta[k + 1]), V, R.at[k, :].set(row), beta, givens
    state = (0, residual_norm, _basis(unit_residual, restart), R, beta,
             jnp.zeros((restart, 2), dtype))
    _, _, V, R, beta, _ = lax.while_loop(lambda s: (s[0] < restart) & (s[1] > ptol), step, state)
    y = sp_linalg.solve_triangular(R[:, :-1].T, beta[:-1])
    return _finish_cycle(A, b, x0, M, V, y)


def batched_cycle(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One GMRES cycle building the whole Krylov basis (unless it breaks down) and then
    solving the least-squares problem min |H^T y - |r| e_0| by its normal equations."""
    del ptol   # a batched cycle always runs to the end
    dtype = T.result_dtype(b)

    def step(state):
        V, H, _, k = state
        return (*_arnoldi(k, A, M, V, H), k + 1)
    state = (_basis(unit_residual, restart), jnp.eye(restart, restart + 1, dtype=dtype), False, 0)
    V, H, _, _ = lax.while_loop(lambda s: (s[3] < restart) & ~s[2], step, state)
    beta = jnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))
    a = H.T
    y = sp_linalg.solve(jnp.dot(a.T.conj(), a, precision=lax.Precision.HIGHEST),
                        jnp.dot(a.T.conj(), beta, precision=lax.Precision.HIGHEST), assume_a="pos")
    return _finish_cycle(A, b, x0, M, V, y)


def gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycle):
    """GMRES cycles from x0, each restarting from the last one's solution, until the
    preconditioned residual norm is at most atol or after maxiter cycles."""
    unit, norm = T.safe_normalize(M(T.sub(b, A(x0))))

    def body(state):
        x, k, unit, norm = state
        x, unit, norm = cycle(A, b, x, unit, norm, ptol, restart, M)
        return x, k + 1, unit, norm
    return lax.while_loop(lambda s: (s[1] < maxiter) & (s[3] > atol), body, (x0, 0, unit, norm))[0]
