"""numpy_ref's rules, one module per core family; importing this package registers them all."""
from . import (arrays, bits, calls, control_flow, custom_solve, debugging, decompositions,  # noqa: F401
               elementwise, fft, gather, linalg, parallel, reductions, rng, sharding_ops, solvers,
               sorting, special, spectral, structural)
