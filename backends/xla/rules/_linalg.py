"""What the xla backend's linear-algebra lowerings share: half-precision operands computed
in float32 (JAX's CPU kernels have no half routines) and rounded back once, as numpy_ref
computes them wide."""
import numpy as np
from jax import lax

from ._common import LOW_FLOATS


def widened(fn):
    """A lowering fn(*operands, **params) whose half-float operands are computed in float32
    and whose half-float results (in that case) are rounded back to the operands' dtype."""
    def lowered(*xs, **params):
        half = next((x.dtype for x in xs if x.dtype in LOW_FLOATS), None)
        if half is None:
            return fn(*xs, **params)
        out = fn(*[_to(x, np.float32) if x.dtype == half else x for x in xs], **params)
        if isinstance(out, (list, tuple)):
            return [_to(o, half) if o.dtype == np.float32 else o for o in out]
        return _to(out, half)
    return lowered


def _to(x, dtype):
    return lax.convert_element_type(x, dtype)
