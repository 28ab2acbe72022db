"""numpy_ref: the executable oracle; NumPy rule per primitive, virtual CPU devices."""
from .backend import NumpyRefBackend, interpret_jaxpr  # noqa: F401
from . import rules  # noqa: F401  (registers the rules)
