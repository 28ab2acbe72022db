"""refjax.scipy: jax.scipy's namespaces (here: linalg; stats.multivariate_normal lives in
stats_multivariate_normal until the stats package exports it)."""
from . import linalg  # noqa: F401
