"""jax.scipy.sparse.linalg: the Krylov solvers cg, bicgstab and gmres."""
from ._krylov import bicgstab, cg, gmres  # noqa: F401
