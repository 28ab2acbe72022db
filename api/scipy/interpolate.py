"""jax.scipy.interpolate: interpolation on a regular (rectilinear) grid."""
from .interpolate_functions import RegularGridInterpolator  # noqa: F401
