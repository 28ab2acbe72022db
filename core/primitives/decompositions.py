"""The triangular and orthogonal factorizations of lax.linalg with all of their rules:
cholesky, cholesky_update, lu, lu_pivots_to_permutation, geqrf, householder_product, ormqr,
qr and symmetric_product; with lu_solve and `solve` (a linear solve differentiated through
custom_linear_solve, as JAX's derivative rules use it).

  cholesky_p.bind(x)                 x [..., n, n] Hermitian positive definite; only its lower
                                     triangle is read; the result's upper triangle is x's (the
                                     lax function zeroes it). NaN where the factorization fails.
  lu_p.bind(x) -> lu, pivots, perm   partial pivoting: perm's rows of x = L @ U.
  geqrf_p.bind(a) -> a, taus         R above the diagonal, Householder reflectors below.
  qr_p.bind(x, pivoting, full_matrices, use_magma) -> q, r[, p]."""
import numpy as np

from ..avals import ShapedArray
from ..trace import as_value
from ..transforms import ad
from ..transforms.ad import Zero
from ..transforms.batching import bdim_at_front
from ..transforms.jvp import stop_gradient
from . import elementwise as ew
from . import structural as st
from .custom_solve import custom_linear_solve
from .linalg_common import (F, FC, I32, cast, cols, eye, eye_like, hermitian_from_triangle,
                            is_complex, linalg_primitive, matmul, mH, mT, rows, shape, symmetrize,
                            take_rows, tril, triu)
from .solvers import triangular_solve
from .sorting import sort_key_val


def _same(dtype, *_, **__):
    return dtype


def _square(name):
    def rule(shape_, **_):
        if shape_[0] != shape_[1]:
            raise ValueError(f"The input to {name} must be a square matrix. Got shape "
                             f"{tuple(shape_)}.")
        return shape_
    return rule


# ---------------------------------------------------------------- cholesky

cholesky_p = linalg_primitive("cholesky", (FC,), (2,), _square("cholesky"), _same)


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor L of x = L @ L^H (x Hermitian positive definite; NaNs where
    it is not). With symmetrize_input, x is first replaced by (x + x^H) / 2; else only its
    lower triangle is read."""
    x = as_value(x)
    if symmetrize_input:
        x = symmetrize(x, "cholesky")
    return tril(cholesky_p.bind(x))


def _cholesky_jvp(primals, tangents):
    """dL = L phi(L^-1 dx L^-H), phi keeping the lower triangle with its diagonal halved
    (Murray 2016, as JAX), dx the Hermitian tangent of the lower triangle cholesky reads;
    the upper triangle passes x's through, and so its tangent."""
    (x,), (dx,) = primals, tangents
    raw = cholesky_p.bind(x)
    if type(dx) is Zero:
        return raw, Zero.from_primal(raw)
    factor = tril(raw)
    sigma = hermitian_from_triangle(dx, lower=True)
    tmp = triangular_solve(factor, sigma, left_side=False, transpose_a=True, conjugate_a=True,
                           lower=True)
    inner = triangular_solve(factor, tmp, left_side=True, lower=True)
    phi = ew.div(tril(inner), ew.add(ew.full_like(inner, 1), eye_like(inner)))
    return raw, ew.add(matmul(factor, phi), triu(dx, 1))


cholesky_p.def_jvp(_cholesky_jvp)


# ---------------------------------------------------------------- cholesky_update

def _cholesky_update_shape(r_shape, w_shape):
    if r_shape[0] != r_shape[1] or w_shape[0] != r_shape[1]:
        raise ValueError("cholesky_update: Rank-1 update to Cholesky decomposition takes a "
                         "square matrix and a vector of the same size as input. Got shapes "
                         f"{tuple(r_shape)} and {tuple(w_shape)} instead")
    return r_shape


cholesky_update_p = linalg_primitive("cholesky_update", (F, F), (2, 1), _cholesky_update_shape,
                                     _same, supports_batching=False)


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of R^T R + w w^T from R's (Givens rotations, O(n^2))."""
    return cholesky_update_p.bind(r_matrix, w_vector)


def _unstacked_batch(prim):
    """Batching for a primitive without batch dims (JAX has none for cholesky_update): one
    application per batch member, stacked."""
    def rule(axis_data, vals, dims, **params):
        vals = [bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims)]
        if axis_data.size == 0:
            aval = prim.abstract_eval(*[ShapedArray(shape(v)[1:], v.dtype) for v in vals], **params)
            return ew.full((0,) + aval.shape, 0, aval.dtype), 0
        outs = [prim.bind(*[st.index_in_dim(v, i, 0) for v in vals], **params)
                for i in range(axis_data.size)]
        return st.concatenate([st.expand_dims(o, (0,)) for o in outs], 0), 0
    return rule


cholesky_update_p.def_batch(_unstacked_batch(cholesky_update_p))


# ---------------------------------------------------------------- lu

def _lu_shape(shape_):
    m, n = shape_
    return shape_, (min(m, n),), (m,)


lu_p = linalg_primitive("lu", (FC,), (2,), _lu_shape,
                        lambda d: (d, np.dtype(np.int32), np.dtype(np.int32)),
                        multiple_results=True)


def lu(x):
    """LU decomposition with partial pivoting: (lu, pivots, permutation) with x[perm] = L @ U,
    L unit lower triangular (below lu's diagonal) and U upper triangular (on and above it);
    pivots are the row swaps (int32), permutation their product."""
    return tuple(lu_p.bind(x))


def _lu_factors(lu_, m, n):
    """L (m x m, unit diagonal) and U (n x n, identity below row min(m, n)) from lu."""
    k, batch = min(m, n), shape(lu_)[:-2]
    nd = len(shape(lu_))
    l_pads, u_pads = [(0, 0, 0)] * nd, [(0, 0, 0)] * nd
    l_pads[-1], u_pads[-2] = (0, m - k, 0), (0, n - k, 0)
    dtype = lu_.dtype
    zero = st._zero_scalar(lu_)  # of lu's dtype: pad takes no Python scalar of another
    l_mat = ew.add(st.pad(tril(cols(lu_, 0, k), -1), zero, l_pads), eye(m, m, dtype, batch))
    u_eye = st.pad(eye(n - k, n - k, dtype, batch), zero, [(0, 0, 0)] * (nd - 2) + [(k, 0, 0)] * 2)
    return l_mat, ew.add(st.pad(triu(rows(lu_, 0, k)), zero, u_pads), u_eye)


def _lu_jvp(primals, tangents):
    """L' = L tril(L^-1 P A' U^-1, -1), U' = triu(L^-1 P A' U^-1) U (de Hoog et al.)."""
    (a,), (a_dot,) = primals, tangents
    lu_, pivots, perm = lu_p.bind(a)
    zeros = [Zero.from_primal(pivots), Zero.from_primal(perm)]
    if type(a_dot) is Zero:
        return [lu_, pivots, perm], [Zero.from_primal(lu_)] + zeros
    m, n = shape(a)[-2:]
    l_mat, u_mat = _lu_factors(lu_, m, n)
    la = triangular_solve(l_mat, take_rows(a_dot, perm), left_side=True, lower=True,
                          unit_diagonal=True)
    lau = triangular_solve(u_mat, la, left_side=False, lower=False)
    lu_dot = ew.add(matmul(l_mat, tril(lau, -1)), matmul(triu(lau), u_mat))
    return [lu_, pivots, perm], [lu_dot] + zeros


lu_p.def_jvp(_lu_jvp)


def lu_solve(lu_, permutation, b, trans=0):
    """x with A x = b (trans 0), A^T x = b (1) or A^H x = b (2), from lu(A); b [..., m, k]
    with lu's batch dims."""
    if trans == 0:
        x = triangular_solve(lu_, take_rows(b, permutation), left_side=True, lower=True,
                             unit_diagonal=True)
        return triangular_solve(lu_, x, left_side=True, lower=False)
    if trans not in (1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    conj = trans == 2
    x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True,
                         transpose_a=True, conjugate_a=conj)
    iota = st.broadcasted_iota(np.int32, shape(permutation), len(shape(permutation)) - 1)
    _, inverse = sort_key_val(permutation, iota)
    return take_rows(x, inverse)


def solve(a, b):
    """x with a @ x = b (a [..., m, m], b [..., m, k], same batch dims), through
    custom_linear_solve on an LU factorization of a, so that its derivative reuses the
    factorization (as JAX's derivative rules solve)."""
    lu_, _, perm = lu_p.bind(stop_gradient(a))
    return custom_linear_solve(lambda x: matmul(a, x), b,
                               solve=lambda _, x: lu_solve(lu_, perm, x, 0),
                               transpose_solve=lambda _, x: lu_solve(lu_, perm, x, 1))


# ---------------------------------------------------------------- lu_pivots_to_permutation

def _pivots_shape(shape_, *, permutation_size):
    if not permutation_size >= shape_[0]:
        raise ValueError(f"lu_pivots_to_permutation: Output permutation size {permutation_size} "
                         "has to exceed the trailing dimension of the pivots. Got pivots size "
                         f"{shape_[0]}")
    return (permutation_size,)


lu_pivots_to_permutation_p = linalg_primitive(
    "lu_pivots_to_permutation", (I32,), (1,), _pivots_shape, _same)
ad.defnondiff(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation (int32, [..., permutation_size]) made by applying the row swaps
    i <-> pivots[i] in order to the identity."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# ---------------------------------------------------------------- geqrf, householder_product

def _geqrf_shape(shape_):
    return shape_, (min(shape_),)


geqrf_p = linalg_primitive("geqrf", (FC,), (2,), _geqrf_shape, lambda d: (d, d),
                           multiple_results=True)


def geqrf(a):
    """LAPACK's geqrf: (a, taus) with R on and above a's diagonal and the Householder
    reflectors (v with v[0] = 1 implicit) below it, taus their scale factors."""
    return tuple(geqrf_p.bind(a))


def _householder_product_shape(a_shape, taus_shape):
    m, n = a_shape
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as many "
                         f"rows as columns, got shape {tuple(a_shape)}")
    if taus_shape[0] > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows "
                         "than the minimum of the first argument's rows and columns, got "
                         f"shapes {tuple(a_shape)} and {tuple(taus_shape)}.")
    return a_shape


householder_product_p = linalg_primitive("householder_product", (FC, FC), (2, 1),
                                         _householder_product_shape, _same)


def householder_product(a, taus):
    """The product of the elementary reflectors I - taus[i] v_i v_i^H held below a's
    diagonal (LAPACK's orgqr/ungqr): a matrix with orthonormal columns of a's shape."""
    return householder_product_p.bind(a, taus)


def _ormqr_shape(a_shape, taus_shape, c_shape, *, left, transpose):
    m = a_shape[0]
    if left and c_shape[0] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as the "
                         f"Householder matrix a. Got a shape {tuple(a_shape)} and c shape "
                         f"{tuple(c_shape)}.")
    if not left and c_shape[1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns "
                         f"as the Householder matrix a has rows. Got a shape {tuple(a_shape)} "
                         f"and c shape {tuple(c_shape)}.")
    return c_shape


ormqr_p = linalg_primitive("ormqr", (FC, FC, FC), (2, 1, 2), _ormqr_shape, _same)


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Q @ c, Q^H @ c (transpose), c @ Q (not left) or c @ Q^H, with Q the product of the
    Householder reflectors of (a, taus) from geqrf, never formed."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


# ---------------------------------------------------------------- qr

def _qr_shape(shape_, *, pivoting, full_matrices, **_):
    m, n = shape_
    k = m if full_matrices else min(m, n)
    return ((m, k), (k, n), (n,)) if pivoting else ((m, k), (k, n))


def _qr_dtypes(dtype, *, pivoting, **_):
    return (dtype, dtype, np.dtype(np.int32)) if pivoting else (dtype, dtype)


qr_p = linalg_primitive("qr", (FC,), (2,), _qr_shape, _qr_dtypes, multiple_results=True)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition: (q, r) with x = q @ r (q unitary, r upper triangular, LAPACK's
    Householder signs); with pivoting (q, r, p) and x[:, p] = q @ r. full_matrices: q is
    m x m, else m x min(m, n)."""
    outs = qr_p.bind(x, full_matrices=bool(full_matrices), pivoting=bool(pivoting),
                     use_magma=use_magma)
    return tuple(outs)


def _thin_qr_jvp(q, r, dx):
    """dq, dr of x = q r with m >= n (Townsend's derivation, as JAX)."""
    dx_rinv = triangular_solve(r, dx)
    qt_dx_rinv = matmul(mH(q), dx_rinv)
    lower = tril(qt_dx_rinv, -1)
    do = ew.sub(lower, mH(lower))
    if is_complex(q):
        imag = ew.sub(qt_dx_rinv, cast(ew.real(qt_dx_rinv), qt_dx_rinv.dtype))
        do = ew.add(do, ew.mul(eye_like(do), imag))
    dq = ew.add(matmul(q, ew.sub(do, qt_dx_rinv)), dx_rinv)
    return dq, matmul(ew.sub(qt_dx_rinv, do), r)


def _wide_qr_jvp(x, q, r, dx):
    """m < n: x = [x1 x2] with x1 = q r1 square, and r2 = q^H x2."""
    m = shape(x)[-2]
    dq, dr1 = _thin_qr_jvp(q, cols(r, 0, m), cols(dx, 0, m))
    n_last = shape(dx)[-1]
    dr2 = ew.add(matmul(mH(dq), cols(x, m, n_last)), matmul(mH(q), cols(dx, m, n_last)))
    return dq, st.concatenate([dr1, dr2], len(shape(dr1)) - 1)


def _full_qr_jvp(q, dq_mn, dr_nn, n):
    """The last m - n columns of dq for full_matrices (arXiv:2409.13374, eqs. 32-33)."""
    m = shape(q)[-2]
    q_mn, q_mp = cols(q, 0, n), cols(q, n, m)
    q_nn, q_pn = rows(q_mn, 0, n), rows(q_mn, n, m)
    lu_, _, perm = lu_p.bind(ew.sub(q_nn, eye_like(q_nn)))
    z_pn_h = lu_solve(lu_, perm, mH(q_pn), trans=2)
    z_pn = mH(z_pn_h)
    correction = ew.sub(rows(dq_mn, n, m), matmul(z_pn, rows(dq_mn, 0, n)))
    dq_mp = ew.sub(matmul(dq_mn, z_pn_h), matmul(ew.add(q_mn, matmul(q_mp, z_pn)),
                                                   mH(correction)))
    nd = len(shape(q))
    zeros = ew.full(shape(dr_nn)[:-2] + (m - n, n), 0, dr_nn.dtype)
    return st.concatenate([dq_mn, dq_mp], nd - 1), st.concatenate([dr_nn, zeros], nd - 2)


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
    (x,), (dx,) = primals, tangents
    outs = qr_p.bind(x, full_matrices=full_matrices, pivoting=pivoting, use_magma=use_magma)
    q, r = outs[:2]
    extra = [Zero.from_primal(outs[2])] if pivoting else []
    if type(dx) is Zero:
        return outs, [Zero.from_primal(q), Zero.from_primal(r)] + extra
    if pivoting:
        # x[:, p] = q r: both x and dx are read in pivoted column order. (JAX 0.10.2 reads
        # the unpivoted x for wide matrices, which gives a wrong dr there.)
        x, dx = _take_cols(x, outs[2]), _take_cols(dx, outs[2])
    m, n = shape(x)[-2:]
    if m < n:
        return outs, list(_wide_qr_jvp(x, q, r, dx)) + extra
    q_mn, r_nn = (cols(q, 0, n), rows(r, 0, n)) if full_matrices else (q, r)
    dq, dr = _thin_qr_jvp(q_mn, r_nn, dx)
    if full_matrices and m != n:
        dq, dr = _full_qr_jvp(q, dq, dr, n)
    return outs, [dq, dr] + extra


def _take_cols(x, p):
    return mT(take_rows(mT(x), p))


qr_p.def_jvp(_qr_jvp)


# ---------------------------------------------------------------- symmetric_product

def _symmetric_product_shape(a_shape, c_shape, **_):
    if a_shape[0] != c_shape[1] or c_shape[0] != c_shape[1]:
        # JAX's message calls the operation symmetric_update.
        raise ValueError("symmetric_product expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (n, n). Got shapes {tuple(a_shape)} and "
                         f"{tuple(c_shape)}.")
    return c_shape


symmetric_product_p = linalg_primitive("symmetric_product", (F, F), (2, 2),
                                       _symmetric_product_shape, _same)


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """alpha a a^T + beta c (c symmetric). Only the lower triangle is guaranteed on every
    platform; symmetrize_output mirrors it into the upper one."""
    out = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        out = ew.add(tril(out), mT(tril(out, -1)))
    return out

