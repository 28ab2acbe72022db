"""numpy_ref's rules, one module per core family; importing this package registers them all."""
from . import checkify  # noqa: F401
from . import (arrays, bits, callbacks, calls, control_flow, convolution, custom_solve, debugging,  # noqa: F401
               decompositions, elementwise, fft, gather, linalg, parallel, ragged, reductions, rng,
               sharding_ops, solvers, sorting, special, spectral, state, structural, windowed)
