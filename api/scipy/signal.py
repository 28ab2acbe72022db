"""jax.scipy.signal: direct n-dimensional convolution and correlation, and detrend."""
from .signal_functions import convolve, correlate, convolve2d, correlate2d, detrend  # noqa: F401
