"""NumPy rules of the spectral decompositions, each with the LAPACK driver JAX's CPU kernels
call (through scipy): syevd/heevd, geev, gesdd (gesvd for SvdAlgorithm.QR), gees, gehrd,
sytrd/hetrd. A driver that fails gives NaN, as in JAX; subsets of eigenpairs and singular
triplets are slices of the full decomposition (JAX's CPU kernels do not take them)."""
import numpy as np

from ....core.primitives import spectral as sp
from ._common import rule
from ._linalg import lapack, nan_like, per_matrix, wide


def _hermitian(name, x):
    """The LAPACK name of a symmetric/Hermitian routine: sy* (real) or he* (complex)."""
    return ("he" if np.iscomplexobj(x) else "sy") + name


def _check_eigh_algorithm(algorithm):
    if algorithm == sp.EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == sp.EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")


@rule(sp.eigh_p)
@per_matrix(sp.eigh_p, (2,))
def _eigh(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    _check_eigh_algorithm(algorithm)
    a = wide(x)
    n = a.shape[0]
    if n == 0:
        return a, np.zeros(0, np.real(a).dtype)
    w, v, info = lapack(_hermitian("evd", a), a)(a, compute_v=1, lower=int(lower))
    if info != 0:
        v, w = nan_like(v), nan_like(w)
    start, end = subset_by_index or (0, n)
    return v[:, start:end], w[start:end]


@rule(sp.eig_p)
@per_matrix(sp.eig_p, (2,))
def _eig(x, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs,
         implementation):
    if implementation not in (None, sp.EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    a = wide(x)
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    n, complex_ = a.shape[0], np.dtype(complex)
    if not np.isfinite(a).all():  # as JAX's kernel: geev is not called on them (it can hang)
        return (np.full(n, np.nan, complex_),) + (np.full(a.shape, np.nan, complex_),) * (
            left + right)
    if n == 0:
        return (np.zeros(0, complex_),) + (np.zeros((0, 0), complex_),) * (left + right)
    *w, vl, vr, info = lapack("geev", a)(a, compute_vl=int(left), compute_vr=int(right))
    w = w[0] + 1j * w[1] if len(w) == 2 else w[0]
    vectors = [_paired(w, v) for v, want in ((vl, left), (vr, right)) if want]
    outs = (w, *vectors)
    return outs if info == 0 else tuple(map(nan_like, outs))


def _paired(w, v):
    """Complex eigenvectors from real geev's packing: a conjugate pair (w[j] with a positive
    imaginary part, then w[j + 1]) shares columns j (real part) and j + 1 (imaginary)."""
    if np.iscomplexobj(v):
        return v
    out = v.astype(complex)
    for j in np.flatnonzero(w.imag > 0):
        out[:, j] = v[:, j] + 1j * v[:, j + 1]
        out[:, j + 1] = out[:, j].conj()
    return out


_SVD_DRIVERS = {None: "gesdd", sp.SvdAlgorithm.DEFAULT: "gesdd",
                sp.SvdAlgorithm.DIVIDE_AND_CONQUER: "gesdd", sp.SvdAlgorithm.QR: "gesvd"}


@rule(sp.svd_p)
@per_matrix(sp.svd_p, (2,))
def _svd(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    if algorithm not in _SVD_DRIVERS:
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on "
                                  "CPU.")
    a = wide(x)
    m, n = a.shape
    if a.size == 0:  # JAX gives identities for the full square factors
        s = np.zeros(0, np.real(a).dtype)
        u, vt = (np.eye(m), np.eye(n)) if full_matrices else (np.zeros((m, 0)), np.zeros((0, n)))
        return (s, u, vt) if compute_uv else (s,)
    driver = lapack(_SVD_DRIVERS[algorithm], a)
    u, s, vt, info = driver(a, compute_uv=int(compute_uv), full_matrices=int(full_matrices))
    outs = (s, u, vt) if compute_uv else (s,)
    return _subset(outs if info == 0 else tuple(map(nan_like, outs)), subset_by_index)


def _subset(outs, subset_by_index):
    """The singular values start:end (and their vectors) of a full decomposition."""
    if subset_by_index is None:
        return outs
    start, end = subset_by_index
    if len(outs) == 1:
        return (outs[0][start:end],)
    s, u, vt = outs
    return s[start:end], u[:, start:end], vt[start:end, :]


@rule(sp.schur_p)
@per_matrix(sp.schur_p, (2,))
def _schur(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    a = wide(x)
    if a.size == 0:
        return (a, a) if compute_schur_vectors else (a,)
    t, *_, vs, _, info = lapack("gees", a)(lambda *_: None, a, compute_v=int(compute_schur_vectors),
                                           sort_t=0)
    if info != 0:
        t, vs = nan_like(a), nan_like(a)
    return (t, vs) if compute_schur_vectors else (t,)


@rule(sp.hessenberg_p)
@per_matrix(sp.hessenberg_p, (2,))
def _hessenberg(x):
    a = wide(x)
    n = a.shape[0]
    if n == 0:
        return a, np.zeros(0, a.dtype)
    h, tau, info = lapack("gehrd", a)(a, lo=0, hi=n - 1)
    return (h, tau) if info == 0 else (nan_like(a), nan_like(tau))


@rule(sp.tridiagonal_p)
@per_matrix(sp.tridiagonal_p, (2,))
def _tridiagonal(x, *, lower):
    a = wide(x)
    c, d, e, tau, info = lapack(_hermitian("trd", a), a)(a, lower=int(lower))
    outs = (c, d, e, tau)
    return outs if info == 0 else tuple(map(nan_like, outs))
