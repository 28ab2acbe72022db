"""The xla backend's lowerings, one module per core family; importing this package registers
them all."""
from ....core.primitive import all_primitives
from ...base import _rules
from ..backend import XlaBackend
from . import checkify  # noqa: F401
from . import (arrays, bits, callbacks, calls, control_flow, convolution, custom_solve, debugging,  # noqa: F401
               decompositions, elementwise, fft, gather, linalg, parallel, ragged, reductions, rng,
               sharding_ops, solvers, sorting, special, spectral, state, structural, windowed)


def missing_rules():
    """Names of registered refjax primitives without an xla lowering (should be empty)."""
    missing = []
    for name, prim in sorted(all_primitives().items()):
        try:
            fn = _rules.dispatch(XlaBackend, type(prim))
        except NotImplementedError:
            fn = None
        if fn is None:
            missing.append(name)
    return missing
