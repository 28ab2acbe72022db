"""Spec entries of the factorizations: cholesky, cholesky_update, lu,
lu_pivots_to_permutation, geqrf, householder_product, ormqr, qr and symmetric_product.
Their outputs are unique (LAPACK's Householder and pivoting conventions fix them), so they
are compared with JAX's as they are."""
import numpy as np
from hypothesis import strategies as st

from .base import Arg, Invalid, PrimitiveSpec, Signature, all_args, floats
from .matrices import (BATCH, DTYPES, FD_TOL, FLOATS, SIDES, TOL, general, matrix_arg, ones,
                       positive_definite, vectors, well_conditioned, wide_reference)


def _jax_prim(name):
    """A reference binding JAX's primitive `name` with the sample's params."""
    def bind(jax, *args, **params):
        return getattr(jax.lax.linalg, f"{name}_p").bind(*args, **params)
    return wide_reference(bind)


def _one_matrix(build, square, params=lambda draw, dtype, diff: {}, min_side=0):
    """A signature of one (batch of) matrix(ces) from `build` (m x n, or n x n)."""
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            batch = draw(BATCH)
            sides = SIDES.filter(lambda s: s >= min_side)
            m = draw(sides)
            dims = (m, m) if square else (m, draw(sides))
            return Signature((matrix_arg(draw, build, dtype, batch, *dims),),
                             params(draw, dtype, diff))
        return sig()
    return signature


def _with_upper_noise(build):
    """build's matrix with noise above the diagonal: cholesky reads the lower triangle only
    (and passes the upper one through)."""
    def noisy(rng, n, _, complex_):
        return build(rng, n, n, complex_) + np.triu(general(rng, n, n, complex_), 1)
    return noisy


_RANK1 = Invalid("a rank-1 operand", (ones(3),), {})

CHOLESKY = PrimitiveSpec(
    name="cholesky", dtypes=DTYPES, family="decompositions",
    signature=_one_matrix(_with_upper_noise(positive_definite), True),
    reference=_jax_prim("cholesky"), tol=TOL, fd_tol=FD_TOL, diff_args=all_args,
    invalid=(Invalid("a non-square matrix", (ones(2, 3),), {}, ValueError), _RANK1),
    notes="the lower factor in the lower triangle, x's upper triangle passed through (the lax "
          "function zeroes it); samples: positive definite lower triangles")


def _cholesky_update_signature(dtype, diff):
    @st.composite
    def sig(draw):
        n = draw(SIDES)

        def upper_factor(rng, n, _, complex_):
            return np.linalg.cholesky(positive_definite(rng, n, n, False)).T
        return Signature((matrix_arg(draw, upper_factor, dtype, (), n),
                          Arg((n,), dtype, False, values=vectors(dtype, (), n))), {})
    return sig()


CHOLESKY_UPDATE = PrimitiveSpec(
    name="cholesky_update", dtypes=FLOATS, family="decompositions",
    signature=_cholesky_update_signature, reference=_jax_prim("cholesky_update"), tol=TOL,
    nondiff="raises",
    invalid=(Invalid("a batch dimension", (ones(1, 2, 2), ones(1, 2)), {}),
             Invalid("w of another size", (ones(2, 2), ones(3)), {}, ValueError)),
    notes="R -> the upper factor of R^T R + w w^T (Givens rotations); no batch dims, and no "
          "derivative, as in JAX; refjax batches it under vmap (JAX cannot)")

LU = PrimitiveSpec(
    name="lu", dtypes=DTYPES, family="decompositions",
    signature=_one_matrix(well_conditioned, False), reference=_jax_prim("lu"), tol=TOL,
    fd_tol=FD_TOL, diff_args=all_args, invalid=(_RANK1,),
    notes="(lu, pivots, permutation): partial pivoting (getrf); samples: full-rank matrices")


def _pivots_signature(dtype, diff):
    @st.composite
    def sig(draw):
        batch, k = draw(BATCH), draw(SIDES)
        size = k + draw(st.integers(0, 2))

        def pivots(seed):
            rng = np.random.RandomState(seed)
            rows = [[rng.randint(i, size) for i in range(k)] for _ in range(int(np.prod(batch)))]
            return np.asarray(rows, np.int32).reshape(tuple(batch) + (k,)).astype(dtype)
        values = st.integers(0, 2 ** 32 - 1).map(pivots)
        return Signature((Arg(tuple(batch) + (k,), dtype, False, values=values),),
                         {"permutation_size": size})
    return sig()


LU_PIVOTS_TO_PERMUTATION = PrimitiveSpec(
    name="lu_pivots_to_permutation", dtypes=("int32",), x64_dtypes=False,
    family="decompositions", signature=_pivots_signature,
    reference=lambda jax, p, **params: jax.lax.linalg.lu_pivots_to_permutation_p.bind(
        p, **params),
    exact=True, nondiff="zero",
    invalid=(Invalid("a permutation shorter than the pivots", (np.zeros(3, np.int32),),
                     {"permutation_size": 2}, ValueError),),
    notes="the row swaps i <-> pivots[i] applied in order to the identity (int32 only)")

GEQRF = PrimitiveSpec(
    name="geqrf", dtypes=DTYPES, family="decompositions",
    signature=_one_matrix(general, False),
    reference=wide_reference(lambda jax, a: _jax_geqrf(jax, a)), tol=TOL, nondiff="raises",
    invalid=(_RANK1,),
    notes="(a, taus): R above the diagonal, Householder reflectors below (LAPACK's geqrf)")


def _jax_geqrf(jax, a):
    """JAX's own geqrf (not exported from jax.lax.linalg; the xla backend reaches it through
    jnp.linalg.qr's raw mode, which would promote integer input instead of rejecting it)."""
    from jax._src.lax.linalg import geqrf
    return list(geqrf(a))


def _reflectors_signature(with_c):
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            batch, n = draw(BATCH), draw(SIDES)
            m = n + draw(st.integers(0, 2))
            k = draw(st.integers(0, n))
            args = [matrix_arg(draw, general, dtype, batch, m, n),
                    Arg(tuple(batch) + (k,), dtype, False, values=vectors(dtype, batch, k, 0.5))]
            if not with_c:
                return Signature(tuple(args), {})
            left, p = draw(st.booleans()), draw(SIDES)
            dims = (m, p) if left else (p, m)
            args.append(matrix_arg(draw, general, dtype, batch, *dims))
            return Signature(tuple(args), {"left": left, "transpose": draw(st.booleans())})
        return sig()
    return signature


HOUSEHOLDER_PRODUCT = PrimitiveSpec(
    name="householder_product", dtypes=DTYPES, family="decompositions",
    signature=_reflectors_signature(False), reference=_jax_prim("householder_product"),
    tol=TOL, nondiff="raises",
    invalid=(Invalid("more columns than rows", (ones(2, 3), ones(2)), {}, ValueError),
             Invalid("more taus than columns", (ones(3, 2), ones(3)), {}, ValueError)),
    notes="the product of the reflectors I - tau v v^H below a's diagonal (orgqr/ungqr)")

ORMQR = PrimitiveSpec(
    name="ormqr", dtypes=DTYPES, family="decompositions", signature=_reflectors_signature(True),
    reference=_jax_prim("ormqr"), tol=TOL, nondiff="raises",
    invalid=(Invalid("c not matching a", (ones(3, 2), ones(2), ones(2, 2)),
                     {"left": True, "transpose": False}, ValueError),),
    notes="Q c, Q^H c, c Q or c Q^H with Q the reflectors' product, not formed (ormqr/unmqr)")


def _qr_params(draw, dtype, diff):
    return {"pivoting": draw(st.booleans()), "full_matrices": draw(st.booleans()),
            "use_magma": None}


QR = PrimitiveSpec(
    name="qr", dtypes=DTYPES, family="decompositions",
    signature=_one_matrix(well_conditioned, False, _qr_params), reference=_jax_prim("qr"),
    tol=TOL, fd_tol=FD_TOL, diff_args=all_args,
    invalid=(Invalid("a rank-1 operand", (ones(3),),
                     {"pivoting": False, "full_matrices": True, "use_magma": None}),),
    notes="(q, r[, p]): geqrf (geqp3 with pivoting) then orgqr; samples: full-rank matrices")


def _symmetric_product_signature(dtype, diff):
    """Never weakly typed: JAX's CPU lowering fails to compile weak float32 operands under
    x64 (test_linalg shows it; refjax computes them)."""
    @st.composite
    def sig(draw):
        batch, m, n = draw(BATCH), draw(SIDES), draw(SIDES)
        scalar = floats(-2.0, 2.0, "float64")
        a, c = (matrix_arg(draw, general, dtype, batch, *dims)._replace(weak=False)
                for dims in ((m, n), (m, m)))
        return Signature((a, c), {"alpha": draw(scalar), "beta": draw(scalar)})
    return sig()


SYMMETRIC_PRODUCT = PrimitiveSpec(
    name="symmetric_product", dtypes=FLOATS, family="decompositions",
    signature=_symmetric_product_signature, reference=_jax_prim("symmetric_product"),
    tol=TOL, nondiff="raises",
    invalid=(Invalid("c not matching a", (ones(2, 3), ones(3, 3)),
                     {"alpha": 1.0, "beta": 0.0}, ValueError),),
    notes="alpha a a^T + beta c, all of it (JAX's CPU lowering computes the full product)")

SPECS = [CHOLESKY, CHOLESKY_UPDATE, LU, LU_PIVOTS_TO_PERMUTATION, GEQRF, HOUSEHOLDER_PRODUCT,
         ORMQR, QR, SYMMETRIC_PRODUCT]
