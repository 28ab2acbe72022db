"""refjax.scipy: jax.scipy's special functions, distributions, signal processing and more."""
from . import integrate, signal, special, stats

# The implementation modules are not part of jax.scipy.
del special_functions, signal_functions  # noqa: F821

__all__ = ["integrate", "signal", "special", "stats"]
