"""XLA rule of ragged_dot_general: jax.lax.ragged_dot (the layout refjax supports)."""
import jax

from ....core.primitives import ragged
from ._common import rule


@rule(ragged.ragged_dot_general_p)
def _ragged_dot_general(lhs, rhs, group_sizes, *, precision, preferred_element_type, **_):
    dtype = ragged._out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return jax.lax.ragged_dot(lhs.astype(dtype) if lhs.dtype != dtype else lhs,
                              rhs.astype(dtype) if rhs.dtype != dtype else rhs,
                              group_sizes, precision=precision,
                              preferred_element_type=preferred_element_type)
