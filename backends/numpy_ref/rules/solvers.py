"""NumPy rules of triangular_solve (BLAS trsm, as JAX's CPU kernel) and tridiagonal_solve
(LAPACK gtsv; gttrf/gttrs with tiny pivots perturbed for perturb_singular)."""
import numpy as np

from ....core.primitives import solvers
from ._common import rule
from ._linalg import blas, lapack, nan_like, per_matrix, wide


@rule(solvers.triangular_solve_p)
@per_matrix(solvers.triangular_solve_p, (2, 2))
def _triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, b = wide(a), wide(b)
    if b.size == 0:
        return (b,)
    if conjugate_a and not transpose_a:
        a = a.conj()
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    trsm = blas("trsm", a, b)
    return (trsm(1.0, a, b, side=0 if left_side else 1, lower=int(lower), trans_a=trans,
                 diag=int(unit_diagonal)),)


@rule(solvers.tridiagonal_solve_p)
@per_matrix(solvers.tridiagonal_solve_p, (1, 1, 1, 2))
def _tridiagonal_solve(dl, d, du, b, *, perturb_singular):
    dl, d, du, b = map(wide, (dl, d, du, b))
    if b.size == 0:
        return (b,)
    if perturb_singular:
        return (_perturbed_solve(dl, d, du, b),)
    *_, x, info = lapack("gtsv", dl, d, du, b)(_off(dl[1:]), d, _off(du[:-1]), b)
    return (x if info == 0 else nan_like(b),)


def _off(v):
    """An off-diagonal for LAPACK's wrappers, which want at least one entry (unread for a
    1 x 1 system)."""
    return v if v.size else np.zeros(1, v.dtype)


def _perturbed_solve(dl, d, du, b):
    """JAX's CPU kernel for perturb_singular (TensorFlow's, after LAPACK's xLAGTF/xLAGTS):
    LU with scaled partial pivoting, the forward solve fused into it, then a back
    substitution whose tiny pivots are perturbed (perturb_pivot) by eps * max|U| (doubling)
    until dividing by them cannot overflow. No LAPACK routine exposed by scipy does this."""
    n = d.shape[0]
    eps = np.finfo(np.real(d).dtype).eps
    if n == 1:
        pivot, row = _perturb_pivot(eps * abs(d[0]), d[0], b[0].copy())
        return (row / pivot)[None]
    u, x, max_u = _eliminate(dl, d, du, b)
    perturb = eps * max_u
    for k in range(n - 1, -1, -1):
        row = x[k] - sum(u[k, j] * x[k + j] for j in (1, 2) if k + j < n)
        pivot, row = _perturb_pivot(perturb, u[k, 0], row)
        x[k] = row * (1 / pivot)
    return x


def _eliminate(dl, d, du, b):
    """U's three diagonals, L^-1 P b and max|U| (over the rows the kernel looks at)."""
    n = d.shape[0]
    u, x = np.zeros((n, 3), d.dtype), np.zeros_like(b)
    u[0, :2], x[0] = (d[0], du[0]), b[0]
    max_u, scale1 = max(abs(d[0]), abs(du[0])), abs(d[0]) + abs(du[0])
    for k in range(n - 1):
        u[k + 1, 0] = d[k + 1]
        scale2 = abs(dl[k + 1]) + abs(d[k + 1]) + (abs(du[k + 1]) if k < n - 2 else 0)
        piv1 = 0 if u[k, 0] == 0 else abs(u[k, 0]) / scale1
        if dl[k + 1] == 0 or abs(dl[k + 1]) / scale2 <= piv1:
            factor = 0 if dl[k + 1] == 0 else dl[k + 1] / u[k, 0]
            u[k + 1, 0] -= factor * u[k, 1]
            u[k + 1, 1], x[k + 1], scale1 = du[k + 1], b[k + 1] - factor * x[k], scale2
        else:
            factor = u[k, 0] / dl[k + 1]
            u[k, :2], u[k + 1, 0] = (dl[k + 1], d[k + 1]), u[k, 1] - factor * d[k + 1]
            if k < n - 2:
                u[k, 2], u[k + 1, 1] = du[k + 1], -factor * du[k + 1]
            x[k + 1], x[k] = x[k] - factor * b[k + 1], b[k + 1]
            scale1 = abs(u[k + 1, 0]) + abs(u[k + 1, 1])
        if k < n - 2:
            max_u = max(max_u, np.abs(u[k]).max())
    return u, x, max(max_u, abs(u[n - 1, 0]))


def _perturb_pivot(perturb, pivot, row):
    """A pivot below one moved away from zero (by perturb, then twice that, ...) until
    row / pivot cannot overflow; a pivot below the safe minimum that needs no move is scaled
    up with its row instead (xLAGTS)."""
    info = np.finfo(np.real(np.asarray(pivot)).dtype)
    safemin = info.tiny if 1 / info.max < info.tiny else (1 / info.max) * (1 + info.eps)
    bignum = 1 / safemin
    if abs(pivot) >= 1:
        return pivot, row
    perturb = np.copysign(max(abs(perturb), safemin), np.real(pivot))
    largest = np.abs(row).max(initial=0.0)
    while abs(pivot) < 1:
        small = abs(pivot) < safemin
        if small and not (abs(pivot) == 0 or largest * safemin > abs(pivot)):
            return pivot * bignum, row * bignum
        if not small and not largest > abs(pivot) * bignum:
            break
        pivot, perturb = pivot + perturb, perturb * 2
    return pivot, row
