"""numpy_ref's rules, one module per core family; importing this package registers them all."""
from . import (calls, control_flow, convolution, elementwise, gather, linalg,  # noqa: F401
               parallel, reductions, sharding_ops, sorting, structural, windowed)
