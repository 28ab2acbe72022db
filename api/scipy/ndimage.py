"""jax.scipy.ndimage: interpolation at arbitrary coordinates."""
from .ndimage_functions import map_coordinates  # noqa: F401
