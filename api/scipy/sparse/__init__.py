"""refjax.scipy.sparse: jax.scipy.sparse, whose one submodule is linalg (Krylov solvers)."""
from . import linalg
