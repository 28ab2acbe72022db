"""refjax.scipy: jax.scipy's special functions, distributions, signal processing and more."""
from . import integrate, ndimage, signal, special, stats

# The implementation modules are not part of jax.scipy.
del special_functions, signal_functions, ndimage_functions  # noqa: F821

__all__ = ["integrate", "ndimage", "signal", "special", "stats"]
