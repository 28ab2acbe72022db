"""numpy_ref's rules, one module per core family; importing this package registers them all."""
from . import (calls, control_flow, debugging, elementwise, gather, linalg, parallel,  # noqa: F401
               reductions, sharding_ops, sorting, structural)
