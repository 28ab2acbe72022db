"""The spectral decompositions and reductions of lax.linalg with all of their rules: eigh,
eig, svd, schur, hessenberg and tridiagonal, and the enums choosing their algorithms.

  eigh_p.bind(x, lower, sort_eigenvalues, subset_by_index, algorithm) -> v, w
      x Hermitian (its `lower` or upper triangle is read); w ascending (real), v's columns
      the eigenvectors; subset_by_index=(start, end) keeps w[start:end] and their vectors.
  eig_p.bind(x, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation) -> w[, vl][, vr]      (complex; LAPACK geev)
  svd_p.bind(x, full_matrices, compute_uv, subset_by_index, algorithm) -> s[, u, vt]
  schur_p.bind(x, compute_schur_vectors, sort_eig_vals, select_callable) -> t[, q]
  hessenberg_p.bind(a) -> a, taus;  tridiagonal_p.bind(a, lower) -> a, d, e, taus"""
import enum

import numpy as np

from ..trace import as_value, get_aval
from ..transforms.ad import Zero
from . import elementwise as ew
from . import structural as st
from .decompositions import solve
from .linalg_common import (FC, cast, cols, complex_dtype, diag_matrix, diagonal, eye_like,
                            is_complex, linalg_primitive, matmul, mH, mT, real_dtype, rows, shape,
                            symmetrize, hermitian_from_triangle)
from .reductions import argmax, reduce_sum


class EigImplementation(enum.Enum):
    """Enum for eigendecomposition algorithm."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Implementation for symmetric/Hermitian eigendecomposition."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Enum for SVD algorithm."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _square(message):
    def check(shape_):
        if shape_[0] != shape_[1]:
            raise ValueError(message.format(shape=tuple(shape_)))
    return check


def _column(v):
    """v[..., None, :]: a row of v broadcast down the rows of an n x n matrix."""
    *batch, n = shape(v)
    return st.broadcast_in_dim(v, tuple(batch) + (n, n), tuple(range(len(batch))) +
                               (len(batch) + 1,))


def _complex(re, im, dtype):
    """re + i im, of the complex `dtype`."""
    return ew.add(cast(re, dtype), ew.mul(cast(im, dtype), ew.full_like(cast(im, dtype), 1j)))


def _differences(w):
    """The matrix of w[j] - w[i]."""
    return ew.sub(_column(w), mT(_column(w)))


def _reciprocal_off_diagonal(diffs):
    """1 / diffs off the diagonal and 0 on it (where diffs is 0), without dividing by 0."""
    ident = eye_like(diffs)
    return ew.sub(ew.div(ew.full_like(ident, 1), ew.add(diffs, ident)), ident)


# ---------------------------------------------------------------- eigh

_eigh_square = _square("eigh: Argument to symmetric eigendecomposition must have shape "
                       "[..., n, n], got shape {shape}")


def _eigh_shape(shape_, *, subset_by_index, **_):
    _eigh_square(shape_)
    n = shape_[0]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return (n, d), (d,)


eigh_p = linalg_primitive("eigh", (FC,), (2,), _eigh_shape,
                          lambda d, **_: (d, real_dtype(d)), multiple_results=True)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None,
         implementation=None):
    """(v, w): eigenvectors (columns of v) and ascending eigenvalues w of a Hermitian x. With
    symmetrize_input, x is first replaced by (x + x^H) / 2; else only its `lower` (or upper)
    triangle is read. subset_by_index=(start, end) keeps w[start:end] and their vectors."""
    x = as_value(x)
    if symmetrize_input:
        x = symmetrize(x, "eigh")
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    v, w = eigh_p.bind(x, algorithm=implementation, lower=bool(lower),
                       sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=subset)
    return v, w


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    """Nondegenerate perturbation theory (as JAX), on the Hermitian tangent of the triangle
    eigh reads; a subset's derivative is that slice of the full one."""
    (a,), (a_dot,) = primals, tangents
    params = dict(algorithm=algorithm, lower=lower, sort_eigenvalues=sort_eigenvalues)
    outs = eigh_p.bind(a, subset_by_index=subset_by_index, **params)
    if type(a_dot) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    n = shape(a)[-1]
    full = subset_by_index is None or tuple(subset_by_index) == (0, n)
    v, w = outs if full else eigh_p.bind(a, subset_by_index=None, **params)
    dv, dw = _eigh_tangents(v, w, hermitian_from_triangle(a_dot, lower))
    if not full:
        start, end = subset_by_index
        dv, dw = cols(dv, start, end), st.slice_in_dim(dw, start, end, axis=len(shape(dw)) - 1)
    return outs, [dv, dw]


def _eigh_tangents(v, w, a_dot):
    """dv = v (F * v^H da v), F[i, j] = 1 / (w[j] - w[i]) off the diagonal; dw its diagonal."""
    vdag_adot_v = matmul(matmul(mH(v), a_dot), v)
    f_mat = _reciprocal_off_diagonal(_differences(cast(w, get_aval(v).dtype)))
    dw = diagonal(ew.real(vdag_adot_v) if is_complex(vdag_adot_v) else vdag_adot_v)
    return matmul(v, ew.mul(f_mat, vdag_adot_v)), dw


eigh_p.def_jvp(_eigh_jvp)


# ---------------------------------------------------------------- eig

_eig_square = _square("The input to eig must be a square matrix. Got shape {shape}.")


def _eig_count(compute_left_eigenvectors, compute_right_eigenvectors):
    return 1 + bool(compute_left_eigenvectors) + bool(compute_right_eigenvectors)


def _eig_shape(shape_, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    _eig_square(shape_)
    count = _eig_count(compute_left_eigenvectors, compute_right_eigenvectors) - 1
    return (shape_[:-1],) + (shape_,) * count


def _eig_dtypes(dtype, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    return (complex_dtype(dtype),) * _eig_count(compute_left_eigenvectors,
                                                compute_right_eigenvectors)


eig_p = linalg_primitive("eig", (FC,), (2,), _eig_shape, _eig_dtypes, multiple_results=True)


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """[w, vl, vr]: eigenvalues and left/right eigenvectors (those asked for) of a general
    square x, all complex; vectors have unit norm and a real largest component (LAPACK
    geev). enable_eigvec_derivs allows derivatives of the eigenvectors (valid for distinct
    eigenvalues, as JAX)."""
    if use_magma is not None:
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=bool(enable_eigvec_derivs),
                      implementation=implementation)


_EIGVEC_DERIVS = ("Derivatives of non-symmetric eigenvectors are only valid under assumptions "
                  "on the input that JAX cannot check (see the enable_eigvec_derivs argument "
                  "to jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to "
                  "jax.lax.linalg.eig to opt in. See https://github.com/jax-ml/jax/issues/2748 "
                  "for discussion.")


def _eig_vec_jvp(w, v, da):
    """dw and dv under geev's normalisation (unit norm, largest component real)."""
    f_mat = _reciprocal_off_diagonal(_differences(w))
    p = matmul(solve(v, da), v)
    u = matmul(v, ew.mul(f_mat, p))
    nd = len(shape(v))
    k = argmax(ew.abs(v), nd - 2, np.int32)
    mask = ew.eq(st.broadcasted_iota(np.int32, shape(v), nd - 2),
                 st.broadcast_in_dim(k, shape(v), tuple(range(nd - 2)) + (nd - 1,)))
    mask = cast(mask, get_aval(v).dtype)
    c_re = ew.neg(ew.real(reduce_sum(ew.mul(ew.conj(v), u), (nd - 2,))))
    c_im = ew.div(ew.neg(ew.imag(reduce_sum(ew.mul(mask, u), (nd - 2,)))),
                  ew.real(reduce_sum(ew.mul(mask, v), (nd - 2,))))
    c = _complex(c_re, c_im, get_aval(v).dtype)
    return diagonal(p), ew.add(u, ew.mul(v, _column(c)))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
    (a,), (da,) = primals, tangents
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if (left or right) and not enable_eigvec_derivs:
        raise NotImplementedError(_EIGVEC_DERIVS)
    params = dict(enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)
    outs = eig_p.bind(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right,
                      **params)
    if type(da) is Zero or shape(a)[-1] == 0:
        return outs, [Zero.from_primal(o) for o in outs]
    vectors = outs if right else eig_p.bind(a, compute_left_eigenvectors=left,
                                            compute_right_eigenvectors=True, **params)
    w, vr = vectors[0], vectors[-1]
    da = cast(da, get_aval(vr).dtype)
    if not (left or right):
        return outs, [reduce_sum(ew.mul(solve(vr, da), mT(vr)), (len(shape(vr)) - 1,))]
    dw, dvr = _eig_vec_jvp(w, vr, da)
    tangent = [dw]
    if left:
        tangent.append(_eig_vec_jvp(ew.conj(w), vectors[1], mH(da))[1])
    return outs, tangent + ([dvr] if right else [])


eig_p.def_jvp(_eig_jvp)


# ---------------------------------------------------------------- svd

def _svd_shape(shape_, *, full_matrices, compute_uv, subset_by_index, **_):
    m, n = shape_
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("svd: full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    if not compute_uv:
        return ((rank,),)
    return (rank,), (m, m if full_matrices else rank), (n if full_matrices else rank, n)


def _svd_dtypes(dtype, *, compute_uv, **_):
    return (real_dtype(dtype), dtype, dtype) if compute_uv else (real_dtype(dtype),)


svd_p = linalg_primitive("svd", (FC,), (2,), _svd_shape, _svd_dtypes, multiple_results=True)


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """(u, s, vh) with x = u diag(s) vh, s descending (or s alone without compute_uv);
    full_matrices: u m x m and vh n x n, else their min(m, n) leading columns/rows;
    subset_by_index=(start, end) keeps s[start:end] and their vectors."""
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    outs = svd_p.bind(x, algorithm=algorithm, compute_uv=bool(compute_uv),
                      full_matrices=bool(full_matrices), subset_by_index=subset)
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


def _svd_uv_jvp(s, u, vt, da, ds_mat):
    """dU, dV^H of a thin SVD (as JAX)."""
    dtype = get_aval(u).dtype
    s_row = _column(s)
    f_mat = cast(_reciprocal_off_diagonal(ew.mul(ew.add(s_row, mT(s_row)), _differences(s))),
                 dtype)
    dss, sds = ew.mul(cast(s_row, dtype), ds_mat), ew.mul(cast(mT(s_row), dtype), ds_mat)
    zero = cast(ew.eq(s, ew.full_like(s, 0)), get_aval(s).dtype)
    s_inv = ew.sub(ew.div(ew.full_like(s, 1), ew.add(s, zero)), zero)
    half = ew.mul(ew.full_like(ds_mat, 0.5), ew.sub(ds_mat, mH(ds_mat)))
    du = matmul(u, ew.add(ew.mul(f_mat, ew.add(dss, mH(dss))),
                          ew.mul(half, cast(diag_matrix(s_inv), dtype))))
    v = mH(vt)
    dv = matmul(v, ew.mul(f_mat, ew.add(sds, mH(sds))))
    m, n = shape(u)[-2], shape(vt)[-1]
    s_cols = cast(_rows_like(s, m), dtype)
    if m > n:
        dav = matmul(da, v)
        du = ew.add(du, ew.div(ew.sub(dav, matmul(u, matmul(mH(u), dav))), s_cols))
    if n > m:
        dahu = matmul(mH(da), u)
        dv = ew.add(dv, ew.div(ew.sub(dahu, matmul(v, matmul(vt, dahu))),
                               cast(_rows_like(s, n), dtype)))
    return du, mH(dv)


def _rows_like(s, m):
    """s broadcast down m rows."""
    *batch, k = shape(s)
    return st.broadcast_in_dim(s, tuple(batch) + (m, k), tuple(range(len(batch))) +
                               (len(batch) + 1,))


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (a,), (da,) = primals, tangents
    outs = svd_p.bind(a, algorithm=algorithm, compute_uv=compute_uv,
                      full_matrices=full_matrices, subset_by_index=subset_by_index)
    if type(da) is Zero:
        return outs, [Zero.from_primal(o) for o in outs]
    m, n = shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full "
                                  "matrices")
    s, u, vt = svd_p.bind(a, algorithm=algorithm, compute_uv=True, full_matrices=False,
                          subset_by_index=None)
    ds_mat = matmul(matmul(mH(u), da), mH(vt))
    ds = diagonal(ew.real(ds_mat) if is_complex(ds_mat) else ds_mat)
    tangent = [ds] + (list(_svd_uv_jvp(s, u, vt, da, ds_mat)) if compute_uv else [])
    if subset_by_index is not None:
        start, end = subset_by_index
        tangent = _subset_svd(tangent, start, end)
    return outs, tangent


def _subset_svd(tangent, start, end):
    ds = st.slice_in_dim(tangent[0], start, end, axis=len(shape(tangent[0])) - 1)
    if len(tangent) == 1:
        return [ds]
    return [ds, cols(tangent[1], start, end), rows(tangent[2], start, end)]


svd_p.def_jvp(_svd_jvp)


# ---------------------------------------------------------------- schur, hessenberg, tridiagonal

_schur_square = _square("The input to schur must be a square matrix. Got shape {shape}.")


def _schur_shape(shape_, *, compute_schur_vectors, **_):
    _schur_square(shape_)
    return (shape_, shape_) if compute_schur_vectors else (shape_,)


schur_p = linalg_primitive(
    "schur", (FC,), (2,), _schur_shape,
    lambda d, *, compute_schur_vectors, **_: (d,) * (1 + bool(compute_schur_vectors)),
    multiple_results=True)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """(t, q) with x = q t q^H, q unitary and t upper (quasi-, for real x) triangular:
    LAPACK's gees; t alone (a one-element list) without compute_schur_vectors."""
    return schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors),
                        select_callable=select_callable, sort_eig_vals=bool(sort_eig_vals))


_hessenberg_square = _square("hessenberg: Argument to Hessenberg reduction must have shape [..., n, n], "
                             "got shape {shape}")


def _hessenberg_shape(shape_, **_):
    _hessenberg_square(shape_)
    # JAX's shape rule gives taus the invalid shape (-1,) for n = 0 (then fails to lower).
    return shape_, (max(shape_[-1] - 1, 0),)


hessenberg_p = linalg_primitive("hessenberg", (FC,), (2,), _hessenberg_shape,
                                lambda d, **_: (d, d), multiple_results=True)


def hessenberg(a):
    """(a, taus): the upper Hessenberg form on and above a's first subdiagonal, the
    Householder reflectors below it (LAPACK gehrd)."""
    return tuple(hessenberg_p.bind(a))


def _tridiagonal_shape(shape_, **_):
    if shape_[0] != shape_[1] or shape_[1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{tuple(shape_)}.")
    n = shape_[0]
    return shape_, (n,), (n - 1,), (n - 1,)


tridiagonal_p = linalg_primitive(
    "tridiagonal", (FC,), (2,), _tridiagonal_shape,
    lambda d, **_: (d, real_dtype(d), real_dtype(d), d), multiple_results=True)


def tridiagonal(a, *, lower=True):
    """(a, d, e, taus): a Hermitian a reduced to real tridiagonal form (LAPACK sytrd/hetrd):
    diagonal d, off-diagonal e, the reflectors in a beyond the first off-diagonal."""
    return tuple(tridiagonal_p.bind(as_value(a), lower=bool(lower)))

