"""jax.scipy.signal: convolution and correlation (direct and by FFTs), detrend, and spectral
analysis (stft, istft, csd, welch)."""
from .signal_functions import (convolve, correlate, convolve2d, correlate2d, detrend,  # noqa: F401
                               fftconvolve)
from .signal_spectral import csd, istft, stft, welch  # noqa: F401
