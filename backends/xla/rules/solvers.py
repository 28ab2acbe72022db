"""jax.lax.linalg lowerings of triangular_solve and tridiagonal_solve."""
from jax.lax import linalg as jlinalg

from ....core.primitives import solvers
from ._common import rule
from ._linalg import widened


@rule(solvers.triangular_solve_p)
@widened
def _triangular_solve(a, b, **params):
    return jlinalg.triangular_solve_p.bind(a, b, **params)


@rule(solvers.tridiagonal_solve_p)
@widened
def _tridiagonal_solve(dl, d, du, b, *, perturb_singular):
    return jlinalg.tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)
