"""refjax.scipy: jax.scipy's special functions, distributions, signal processing and more."""
from . import integrate, signal, special, stats

__all__ = ["integrate", "signal", "special", "stats"]
