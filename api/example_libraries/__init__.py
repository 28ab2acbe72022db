"""refjax.example_libraries: JAX's example optimizers and the stax neural-net library."""
from . import optimizers, stax  # noqa: F401
