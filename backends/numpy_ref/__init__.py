"""numpy_ref: the executable oracle; NumPy rule per primitive, virtual CPU devices."""
from .backend import NumpyRefBackend, interpret_jaxpr  # noqa: F401
from . import rules  # noqa: F401  (registers the rules)
from . import rules_reductions  # noqa: F401
from . import rules_control_flow  # noqa: F401
from . import rules_parallel  # noqa: F401
from . import rules_gather  # noqa: F401
