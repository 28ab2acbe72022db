"""refjax.scipy: jax.scipy's special functions, distributions, signal processing and more."""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse,
               special, stats)

# The implementation modules are not part of jax.scipy.
del (special_functions, signal_functions, ndimage_functions, fft_functions,  # noqa: F821
     optimize_functions, interpolate_functions, linalg_functions, linalg_matrices,  # noqa: F821
     linalg_common, stats_multivariate_normal, signal_spectral)  # noqa: F821

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "signal", "sparse",
           "special", "stats"]


def __dir__():
    """As dir(jax.scipy): its lazily loaded submodules, which do not include optimize (JAX
    loads that only on `import jax.scipy.optimize`; refjax has it loaded)."""
    return list(__all__)
