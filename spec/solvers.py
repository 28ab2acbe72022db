"""Spec entries of triangular_solve and tridiagonal_solve (linear in their right-hand side)."""
import numpy as np
from hypothesis import strategies as st

from .base import Invalid, PrimitiveSpec, Signature, all_args, args_at, kind
from .matrices import (BATCH, DTYPES, FD_TOL, SIDES, TOL, general, matrices, matrix_arg, ones,
                       plain_arg, triangular, wide_reference)


def _triangular_solve_signature(dtype, diff):
    @st.composite
    def sig(draw):
        batch, m, n = draw(BATCH), draw(SIDES), draw(SIDES)
        left = draw(st.booleans())
        params = {"left_side": left, "lower": draw(st.booleans()),
                  "transpose_a": draw(st.booleans()),
                  "conjugate_a": kind(dtype) == "c" and draw(st.booleans()),
                  "unit_diagonal": draw(st.booleans())}
        b_dims = (m, n) if left else (n, m)
        return Signature((matrix_arg(draw, triangular, dtype, batch, m),
                          matrix_arg(draw, general, dtype, batch, *b_dims)), params)
    return sig()


def _triangular_solve_params(**kw):
    base = {"left_side": False, "lower": False, "transpose_a": False, "conjugate_a": False,
            "unit_diagonal": False}
    return {**base, **kw}


TRIANGULAR_SOLVE = PrimitiveSpec(
    name="triangular_solve", dtypes=DTYPES, family="solvers",
    signature=_triangular_solve_signature,
    reference=wide_reference(lambda jax, a, b, **p: jax.lax.linalg.triangular_solve_p.bind(
        a, b, **p)),
    tol=TOL, fd_tol=FD_TOL, diff_args=all_args, linear_args=args_at(1),
    invalid=(Invalid("a non-square a", (ones(2, 3), ones(3, 3)), _triangular_solve_params(),
                     ValueError),
             Invalid("b not matching a", (ones(2, 2), ones(3, 3)), _triangular_solve_params(),
                     ValueError),
             Invalid("a of rank 1", (ones(2), ones(2, 2)), _triangular_solve_params()),
             Invalid("different numbers of batch dims", (ones(2, 2), ones(3, 2, 2)),
                     _triangular_solve_params()),
             Invalid("different batch dims", (ones(3, 2, 2), ones(4, 2, 2)),
                     _triangular_solve_params(), ValueError),
             Invalid("different dtypes", (ones(2, 2), ones(2, 2, dtype=np.complex64)),
                     _triangular_solve_params())),
    notes="op(a) x = b (left_side) or x op(a) = b; samples: well-conditioned triangles with "
          "noise in the triangle not read; half floats computed in float32/64, rounded once "
          "(JAX's CPU kernels refuse them for tridiagonal_solve)")


def _diagonals(dtype, batch, m, low, high):
    """Vectors [..., m] whose entries have magnitudes in [low, high] (a random sign, or a
    random phase if complex)."""
    def row(rng, _, m, complex_):
        phase = np.exp(2j * np.pi * rng.uniform(size=m)) if complex_ else rng.choice((-1, 1), m)
        return (rng.uniform(low, high, m) * phase)[None]
    return matrices(row, dtype, batch, 1, m).map(lambda x: x.reshape(tuple(batch) + (m,)))


def _tridiagonal_solve_signature(dtype, diff):
    @st.composite
    def sig(draw):
        batch, m, k = draw(BATCH), draw(SIDES.filter(bool)), draw(SIDES)
        vec = tuple(batch) + (m,)
        # |d| > |dl| + |du|: diagonally dominant, so well-conditioned.
        args = (plain_arg(draw, dtype, vec, _diagonals(dtype, batch, m, 0.0, 1.0)),
                plain_arg(draw, dtype, vec, _diagonals(dtype, batch, m, 3.0, 4.0)),
                plain_arg(draw, dtype, vec, _diagonals(dtype, batch, m, 0.0, 1.0)),
                plain_arg(draw, dtype, vec + (k,), matrices(general, dtype, batch, m, k)))
        return Signature(args, {"perturb_singular": draw(st.booleans())})
    return sig()


_V3 = ones(3)

TRIDIAGONAL_SOLVE = PrimitiveSpec(
    name="tridiagonal_solve", dtypes=DTYPES, family="solvers",
    signature=_tridiagonal_solve_signature,
    reference=wide_reference(lambda jax, *args, **p: jax.lax.linalg.tridiagonal_solve_p.bind(
        *args, **p)),
    tol=TOL, fd_tol=FD_TOL, diff_args=all_args, linear_args=args_at(3),
    invalid=(Invalid("diagonals of different shapes", (_V3, _V3, ones(2), ones(3, 1)),
                     {"perturb_singular": False}),
             Invalid("b not matching the diagonals", (_V3, _V3, _V3, ones(2, 1)),
                     {"perturb_singular": False}),
             Invalid("different dtypes", (_V3, _V3, _V3, ones(3, 1, dtype=np.complex64)),
                     {"perturb_singular": False})),
    notes="samples: diagonally dominant systems; dl[0] and du[-1] are not read")

SPECS = [TRIANGULAR_SOLVE, TRIDIAGONAL_SOLVE]
