"""Spec entry of custom_linear_solve: a linear solve differentiated implicitly. Like JAX's,
the primitive accepts every dtype (its functions decide): inexact samples solve a
well-conditioned a @ x = b by LU, integer and boolean ones a permutation (its own inverse)."""
from hypothesis import strategies as st

from .base import ALL, COMPLEX, Arg, PrimitiveSpec, Signature, all_args, args_at, kind
from .matrices import (FD_TOL, SIDES, TOL, matrices, matrix_arg, positive_definite,
                       vectors, well_conditioned, wide_reference)


def _signature(dtype, diff):
    @st.composite
    def sig(draw):
        n, symmetric = draw(SIDES), draw(st.booleans())
        build = positive_definite if symmetric else well_conditioned
        if draw(st.booleans()):
            b = Arg((n,), dtype, False, values=vectors(dtype, (), n))
        else:
            k = draw(SIDES)
            b = Arg((n, k), dtype, False, values=matrices(well_conditioned, dtype, (), n, k))
        return Signature((matrix_arg(draw, build, dtype, (), n), b), {"symmetric": symmetric})
    return sig()


def _reversal(jax, a, b, symmetric):
    """x = b[::-1] solves x[::-1] = b, in any dtype (a is unused); a symmetric map, so no
    transpose of it is traced (JAX's linear_transpose refuses boolean functions)."""
    def flip(_, x):
        return x[::-1]
    return jax.lax.custom_linear_solve(lambda x: x[::-1], b, flip, symmetric=symmetric)


def _apply(a, b, *, symmetric):
    """refjax.lax.custom_linear_solve of a @ x = b, solving with refjax's LU."""
    import refjax
    if kind(b.dtype.name) not in "fc":
        return _reversal(refjax, a, b, symmetric)
    linalg = refjax.lax.linalg
    lu, _, perm = linalg.lu(refjax.lax.stop_gradient(a))

    def lu_solve(trans):
        def solve(_, x):
            out = linalg.lu_solve(lu, perm, x if x.ndim == 2 else x[:, None], trans)
            return out if x.ndim == 2 else out[:, 0]
        return solve
    return refjax.lax.custom_linear_solve(lambda x: a @ x, b, lu_solve(0),
                                          None if symmetric else lu_solve(1),
                                          symmetric=symmetric)


def _reference(jax, a, b, *, symmetric):
    """jax.lax.custom_linear_solve solving with jnp.linalg.solve."""
    if kind(b.dtype.name) not in "fc":
        return _reversal(jax, a, b, symmetric)
    a_const = jax.lax.stop_gradient(a)
    return jax.lax.custom_linear_solve(
        lambda x: a @ x, b, lambda _, x: jax.numpy.linalg.solve(a_const, x),
        None if symmetric else (lambda _, x: jax.numpy.linalg.solve(a_const.T, x)),
        symmetric=symmetric)


SPECS = [PrimitiveSpec(
    name="custom_linear_solve", dtypes=ALL + COMPLEX, family="custom_solve",
    signature=_signature, apply=_apply, reference=wide_reference(_reference), tol=TOL,
    fd_tol=FD_TOL, diff_args=all_args, linear_args=args_at(1),
    notes="bound by refjax.lax.custom_linear_solve (matvec a @ x, LU solves; a permutation "
          "for integer and boolean samples); samples: well-conditioned a (positive definite "
          "when symmetric)")]
