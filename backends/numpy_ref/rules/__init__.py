"""numpy_ref's rules, one module per core family; importing this package registers them all."""
from . import (arrays, bits, calls, control_flow, debugging, elementwise, fft, gather, linalg, parallel,  # noqa: F401
               reductions, rng, sharding_ops, sorting, special, structural)
