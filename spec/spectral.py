"""Spec entries of eigh, eig, svd, schur, hessenberg and tridiagonal. eigh and svd are
compared with their eigen/singular vectors' phases normalised (and the complements of
full_matrices' extra columns as projectors), schur by what every Schur form shares: LAPACK
does not specify those choices. eig (unit vectors with a real largest component),
hessenberg and tridiagonal (Householder reflectors) are compared as they are."""
import numpy as np
from hypothesis import strategies as st

from .base import Invalid, PrimitiveSpec, Signature, all_args
from .matrices import (BATCH, DTYPES, FD_TOL, SIDES, TOL, distinct_eigenvalues,
                       eig_normalized, general, hermitian, matrix_arg, normalized_reference, ones,
                       phase_normalized, schur_invariants, svd_invariants, well_conditioned,
                       wide_reference)


def _refjax():
    import refjax
    return refjax


def _subset(draw, n):
    """None, or a range (start, end) of 0..n."""
    if draw(st.booleans()):
        return None
    start = draw(st.integers(0, n))
    return (start, draw(st.integers(start, n)))


# ---------------------------------------------------------------- eigh

def _with_noise_outside(lower):
    """A Hermitian matrix plus noise in the triangle eigh does not read."""
    def build(rng, n, _, complex_):
        noise = general(rng, n, n, complex_)
        return hermitian(rng, n, n, complex_) + (np.triu(noise, 1) if lower else np.tril(noise, -1))
    return build


def _eigh_signature(dtype, diff):
    @st.composite
    def sig(draw):
        batch, n, lower = draw(BATCH), draw(SIDES), draw(st.booleans())
        params = {"lower": lower, "sort_eigenvalues": True, "subset_by_index": _subset(draw, n),
                  "algorithm": None}
        return Signature((matrix_arg(draw, _with_noise_outside(lower), dtype, batch, n),),
                         params)
    return sig()


def _eigh_outputs(lax, v, w):
    return [phase_normalized(lax, v), w]


def _eigh_apply(x, **params):
    lax = _refjax().lax
    return _eigh_outputs(lax, *lax.linalg.eigh_p.bind(x, **params))


def _eigh_raw(jax, x, *, subset_by_index, **params):
    """JAX's CPU kernel takes no subset: the full decomposition, sliced (JAX's shape rule
    checks the subset first)."""
    jax.eval_shape(lambda x: jax.lax.linalg.eigh_p.bind(x, subset_by_index=subset_by_index,
                                                        **params), x)
    v, w = jax.lax.linalg.eigh_p.bind(x, subset_by_index=None, **params)
    if subset_by_index is not None:
        start, end = subset_by_index
        v, w = v[..., start:end], w[..., start:end]
    return [v, w]


_EIGH_PARAMS = {"lower": True, "sort_eigenvalues": True, "subset_by_index": None,
                "algorithm": None}

EIGH = PrimitiveSpec(
    name="eigh", dtypes=DTYPES, family="spectral", signature=_eigh_signature,
    apply=_eigh_apply,
    reference=normalized_reference(_eigh_raw, lambda lax, args, outs: _eigh_outputs(lax, *outs)),
    tol=TOL, fd_tol=FD_TOL,
    diff_args=all_args,
    invalid=(Invalid("a non-square matrix", (ones(2, 3),), _EIGH_PARAMS, ValueError),
             Invalid("a rank-1 operand", (ones(3),), _EIGH_PARAMS)),
    notes="compared as (v with each column's largest entry made real positive, w); samples: "
          "Hermitian matrices with eigenvalues 0.6 apart, noise in the triangle not read; "
          "subsets are computed (JAX's CPU kernel refuses them)")


# ---------------------------------------------------------------- eig

def _eig_signature(dtype, diff):
    @st.composite
    def sig(draw):
        batch, n = draw(BATCH), draw(SIDES)
        params = {"compute_left_eigenvectors": draw(st.booleans()),
                  "compute_right_eigenvectors": draw(st.booleans()),
                  "enable_eigvec_derivs": diff or draw(st.booleans()), "implementation": None}
        return Signature((matrix_arg(draw, distinct_eigenvalues, dtype, batch, n),), params)
    return sig()


_EIG_PARAMS = {"compute_left_eigenvectors": True, "compute_right_eigenvectors": True,
               "enable_eigvec_derivs": False, "implementation": None}

def _eig_apply(x, **params):
    lax = _refjax().lax
    return eig_normalized(lax, *lax.linalg.eig_p.bind(x, **params))


EIG = PrimitiveSpec(
    name="eig", dtypes=DTYPES, family="spectral", signature=_eig_signature, apply=_eig_apply,
    reference=normalized_reference(lambda jax, x, **p: jax.lax.linalg.eig_p.bind(x, **p),
                                   lambda lax, args, outs: eig_normalized(lax, *outs)), tol=TOL,
    fd_tol=FD_TOL, diff_args=all_args,
    invalid=(Invalid("a non-square matrix", (ones(2, 3),), _EIG_PARAMS, ValueError),),
    notes="[w, vl, vr] complex (geev: unit vectors, largest component real), compared in "
          "lexicographic order of w with the vectors' signs normalised; samples: "
          "separated eigenvalues (conjugate pairs among them for real matrices); eigenvector "
          "derivatives need enable_eigvec_derivs, as in JAX")


# ---------------------------------------------------------------- svd

def _svd_signature(dtype, diff):
    @st.composite
    def sig(draw):
        batch, m, n = draw(BATCH), draw(SIDES), draw(SIDES)
        compute_uv = draw(st.booleans())
        # JAX has no derivative of full_matrices' extra columns.
        full = draw(st.booleans()) and not (diff and compute_uv and m != n)
        subset = None if full else _subset(draw, min(m, n))
        params = {"full_matrices": full, "compute_uv": compute_uv, "subset_by_index": subset,
                  "algorithm": None}
        return Signature((matrix_arg(draw, well_conditioned, dtype, batch, m, n),), params)
    return sig()


def _svd_outputs(lax, outs):
    if len(outs) == 1:
        return list(outs)
    s, u, vt = outs
    return svd_invariants(lax, s, u, vt, s.shape[-1])


def _svd_apply(x, **params):
    lax = _refjax().lax
    return _svd_outputs(lax, lax.linalg.svd_p.bind(x, **params))


def _svd_raw(jax, x, *, subset_by_index, compute_uv, **params):
    """JAX's CPU kernel takes no subset: the full decomposition, sliced (JAX's shape rule
    checks the subset first)."""
    jax.eval_shape(lambda x: jax.lax.linalg.svd_p.bind(
        x, subset_by_index=subset_by_index, compute_uv=compute_uv, **params), x)
    outs = jax.lax.linalg.svd_p.bind(x, subset_by_index=None, compute_uv=compute_uv, **params)
    if subset_by_index is not None:
        start, end = subset_by_index
        outs = [outs[0][..., start:end]] + ([outs[1][..., start:end],
                                             outs[2][..., start:end, :]] if compute_uv else [])
    return outs


SVD = PrimitiveSpec(
    name="svd", dtypes=DTYPES, family="spectral", signature=_svd_signature, apply=_svd_apply,
    reference=normalized_reference(_svd_raw, lambda lax, args, outs: _svd_outputs(lax, outs)),
    tol=TOL, fd_tol=FD_TOL, diff_args=all_args,
    invalid=(Invalid("full_matrices with a subset", (ones(3, 2),),
                     {"full_matrices": True, "compute_uv": True, "subset_by_index": (0, 1),
                      "algorithm": None}, ValueError),
             Invalid("a rank-1 operand", (ones(3),),
                     {"full_matrices": True, "compute_uv": True, "subset_by_index": None,
                      "algorithm": None})),
    notes="compared as s, the singular vectors with u's phases normalised (vt's follow), and "
          "projectors onto full_matrices' extra columns; samples: singular values 0.7 apart")


# ---------------------------------------------------------------- schur, hessenberg, tridiagonal

def _schur_signature(dtype, diff):
    @st.composite
    def sig(draw):
        batch, n = draw(BATCH), draw(SIDES)
        params = {"compute_schur_vectors": draw(st.booleans()), "sort_eig_vals": False,
                  "select_callable": None}
        return Signature((matrix_arg(draw, distinct_eigenvalues, dtype, batch, n),), params)
    return sig()


def _schur_apply(x, **params):
    lax = _refjax().lax
    return schur_invariants(lax, x, *lax.linalg.schur_p.bind(x, **params))


_SCHUR_PARAMS = {"compute_schur_vectors": True, "sort_eig_vals": False, "select_callable": None}

SCHUR = PrimitiveSpec(
    name="schur", dtypes=DTYPES, family="spectral", signature=_schur_signature,
    apply=_schur_apply,
    reference=normalized_reference(lambda jax, x, **p: jax.lax.linalg.schur_p.bind(x, **p),
                                   lambda lax, args, outs: schur_invariants(lax, args[0], *outs)),
    tol=TOL, nondiff="raises",
    invalid=(Invalid("a non-square matrix", (ones(2, 3),), _SCHUR_PARAMS, ValueError),),
    notes="compared by what every Schur form shares (sorted diagonal, zeros below the first "
          "subdiagonal, q t q^H = x, q unitary); no derivative, as in JAX")


def _square_signature(params):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            batch, n = draw(BATCH), draw(SIDES.filter(bool))
            return Signature((matrix_arg(draw, general, dtype, batch, n),), params(draw))
        return sig()
    return signature


HESSENBERG = PrimitiveSpec(
    name="hessenberg", dtypes=DTYPES, family="spectral",
    signature=_square_signature(lambda draw: {}),
    reference=wide_reference(lambda jax, a: jax.lax.linalg.hessenberg_p.bind(a)), tol=TOL,
    nondiff="raises",
    invalid=(Invalid("a non-square matrix", (ones(2, 3),), {}, ValueError),),
    notes="(a, taus) as LAPACK's gehrd; n = 0 gives empty taus (JAX's shape is (-1,))")

TRIDIAGONAL = PrimitiveSpec(
    name="tridiagonal", dtypes=DTYPES, family="spectral",
    signature=_square_signature(lambda draw: {"lower": draw(st.booleans())}),
    reference=wide_reference(lambda jax, a, **p: jax.lax.linalg.tridiagonal_p.bind(a, **p)),
    tol=TOL, nondiff="raises",
    invalid=(Invalid("a non-square matrix", (ones(2, 3),), {"lower": True}, ValueError),
             Invalid("an empty matrix", (ones(0, 0),), {"lower": True}, ValueError)),
    notes="(a, d, e, taus) as LAPACK's sytrd/hetrd, reading the `lower` (or upper) triangle")

SPECS = [EIGH, EIG, SVD, SCHUR, HESSENBERG, TRIDIAGONAL]
