"""refjax.scipy: jax.scipy's special functions, distributions, signal processing and more."""
from . import special, stats

__all__ = ["special", "stats"]
