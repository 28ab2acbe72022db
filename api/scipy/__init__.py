"""refjax.scipy: jax.scipy's special functions, distributions, signal processing and more."""
from . import cluster, fft, integrate, ndimage, signal, special, stats

# The implementation modules are not part of jax.scipy.
del special_functions, signal_functions, ndimage_functions, fft_functions  # noqa: F821

__all__ = ["cluster", "fft", "integrate", "ndimage", "signal", "special", "stats"]
