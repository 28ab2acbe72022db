"""jax.scipy.cluster: vector quantization."""
from . import vq
