"""NumPy rules of the factorizations, each with the LAPACK routine JAX's CPU kernels call
(through scipy): potrf, getrf, geqrf/geqp3 with orgqr/ungqr, ormqr/unmqr; cholesky_update
is JAX's Givens sweep; symmetric_product a BLAS product."""
import numpy as np
import scipy.linalg

from ....core.primitives import decompositions as dec
from ._common import rule
from ._linalg import lapack, nan_like, per_matrix, wide


def _unitary(name, x):
    """The LAPACK name of an orthogonal-matrix routine for x: or* (real) or un* (complex)."""
    return ("un" if np.iscomplexobj(x) else "or") + name


@rule(dec.cholesky_p)
@per_matrix(dec.cholesky_p, (2,))
def _cholesky(x):
    """Lower factor in the lower triangle; the upper one keeps x's (potrf leaves it)."""
    a = wide(x)
    if a.size == 0:
        return (a,)
    c, info = lapack("potrf", a)(a, lower=1, clean=0)
    return (c if info == 0 else nan_like(a),)


@rule(dec.cholesky_update_p)
@per_matrix(dec.cholesky_update_p, (2, 1))
def _cholesky_update(r, w):
    """JAX's definition: for each k a Givens rotation (made in a scaled, overflow-safe way)
    zeroes w[k] against r[k, k], rotating row k of r and w."""
    r, z = wide(r).copy(), wide(w).copy()
    for k in range(z.shape[0]):
        x, y = r[k, k], z[k]
        c, s = (1.0, 0.0) if y == 0 else _givens(x, y)
        row = c * r[k, :] - s * z
        z = c * z + s * r[k, :]
        r[k, :] = row
    return (r,)


def _givens(x, y):
    scale = abs(x) if abs(x) > abs(y) else abs(y)
    x, y = x / scale, y / scale
    rh = 1 / np.sqrt(x * x + y * y)
    return x * rh, -y * rh


def _permutation(pivots, size):
    """The permutation made by the row swaps i <-> pivots[i], with JAX's reading of indices
    out of range: a negative one counts from the end, a read clamps, a write is dropped."""
    perm = np.arange(size, dtype=np.int32)
    for i, j in enumerate(np.asarray(pivots).tolist()):
        j = j + size if j < 0 else j
        x, y = perm[i], perm[min(max(j, 0), size - 1)]
        perm[i] = y
        if 0 <= j < size:
            perm[j] = x
    return perm


@rule(dec.lu_p)
@per_matrix(dec.lu_p, (2,))
def _lu(x):
    a = wide(x)
    m, n = a.shape
    if a.size == 0:
        return a, np.zeros(0, np.int32), np.arange(m, dtype=np.int32)
    lu_, piv, info = lapack("getrf", a)(a)
    if info < 0:
        lu_ = nan_like(a)
    return lu_, piv, _permutation(piv, m)


@rule(dec.lu_pivots_to_permutation_p)
@per_matrix(dec.lu_pivots_to_permutation_p, (1,))
def _lu_pivots_to_permutation(pivots, *, permutation_size):
    return (_permutation(pivots, permutation_size),)


@rule(dec.geqrf_p)
@per_matrix(dec.geqrf_p, (2,))
def _geqrf(x):
    a = wide(x)
    if a.size == 0:
        return a, np.zeros(0, a.dtype)
    qr, tau, _, info = lapack("geqrf", a)(a)
    return (qr, tau) if info == 0 else (nan_like(a), nan_like(tau))


def _householder(a, tau):
    """orgqr/ungqr: the first a.shape[1] columns of the product of the reflectors."""
    m, n = a.shape
    if n == 0 or tau.size == 0:
        return np.eye(m, n, dtype=a.dtype)
    q, _, info = lapack(_unitary("gqr", a), a)(a, tau)
    return q if info == 0 else nan_like(a)


@rule(dec.householder_product_p)
@per_matrix(dec.householder_product_p, (2, 1))
def _householder_product(a, taus):
    a, taus = wide(a), wide(taus)
    return (_householder(a, taus.astype(a.dtype)),)


@rule(dec.ormqr_p)
@per_matrix(dec.ormqr_p, (2, 1, 2))
def _ormqr(a, taus, c, *, left, transpose):
    a, taus, c = wide(a), wide(taus), wide(c)
    if c.size == 0 or taus.size == 0:
        return (c,)
    trans = ("C" if np.iscomplexobj(a) else "T") if transpose else "N"
    k = taus.shape[0]
    fn = lapack(_unitary("mqr", a), a)
    lwork = 64 * max(1, c.shape[1] if left else c.shape[0])
    cq, _, info = fn("L" if left else "R", trans, a[:, :k], taus, c, lwork)
    return (cq if info == 0 else nan_like(c),)


@rule(dec.qr_p)
@per_matrix(dec.qr_p, (2,))
def _qr(x, *, pivoting, full_matrices, use_magma):
    """scipy's qr runs geqrf (geqp3 when pivoting) then orgqr/ungqr, as JAX's qr does."""
    a = wide(x)
    m, n = a.shape
    k = m if full_matrices else min(m, n)
    if a.size == 0:
        outs = (np.eye(m, k, dtype=a.dtype), np.zeros((k, n), a.dtype))
        return outs + ((np.zeros(n, np.int32),) if pivoting else ())
    mode = "full" if full_matrices else "economic"
    return scipy.linalg.qr(a, mode=mode, pivoting=pivoting, check_finite=False)


@rule(dec.symmetric_product_p)
@per_matrix(dec.symmetric_product_p, (2, 2))
def _symmetric_product(a, c, *, alpha, beta):
    a, c = wide(a), wide(c)
    return (alpha * (a @ a.T) + beta * c,)
