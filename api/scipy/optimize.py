"""jax.scipy.optimize: unconstrained minimization by BFGS."""
from .optimize_functions import OptimizeResults, minimize  # noqa: F401
