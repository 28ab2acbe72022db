"""refjax.lax.linalg: jax.lax.linalg's functions, enums and primitives (core/primitives:
decompositions, spectral, solvers, polar), plus the geqrf the qr factorization is built
from and lu_solve."""
from ..core.primitives.decompositions import (  # noqa: F401
    cholesky, cholesky_p, cholesky_update, cholesky_update_p, geqrf, geqrf_p,
    householder_product, householder_product_p, lu, lu_p, lu_pivots_to_permutation,
    lu_pivots_to_permutation_p, lu_solve, ormqr, ormqr_p, qr, qr_p, symmetric_product,
    symmetric_product_p)
from ..core.primitives.spectral import (  # noqa: F401
    EigImplementation, EighImplementation, SvdAlgorithm, eig, eig_p, eigh, eigh_p, hessenberg,
    hessenberg_p, schur, schur_p, svd, svd_p, tridiagonal, tridiagonal_p)
from ..core.primitives.polar import qdwh  # noqa: F401
from ..core.primitives.solvers import (  # noqa: F401
    triangular_solve, triangular_solve_p, tridiagonal_solve, tridiagonal_solve_p)
