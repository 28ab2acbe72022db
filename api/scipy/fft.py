"""jax.scipy.fft: the type-2 discrete cosine transform and its inverse, in 1 and n dimensions."""
from .fft_functions import dct, dctn, idct, idctn  # noqa: F401
