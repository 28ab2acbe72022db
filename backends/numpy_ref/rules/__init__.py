"""numpy_ref's rules, one module per core family; importing this package registers them all."""
from . import (calls, control_flow, custom_solve, decompositions, elementwise,  # noqa: F401
               gather, linalg, parallel, reductions, sharding_ops, solvers, sorting,
               spectral, structural)
