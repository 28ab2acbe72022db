"""jax.lax lowering of dot_general with numpy_ref's dtype semantics."""
import numpy as np
from jax import lax

from ....core.primitives import dot_algorithm, linalg
from ._common import LOW_FLOATS, convert, rule
from ._common import type_param as jax_out


@rule(linalg.dot_general_p)
def _dot_general(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                 out_sharding=None):
    """Operands converted to the compute dtype, accumulated (see _dot_accumulation_dtype),
    converted to the output dtype."""
    out_dtype = linalg.dot_general_out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    if dot_algorithm.is_algorithm(precision):  # JAX converts for the algorithm's types
        return lax.dot_general(lhs, rhs, dimension_numbers, _jax_precision(precision),
                               preferred_element_type=out_dtype,
                               out_sharding=jax_out(out_sharding))
    compute = linalg.dot_compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
    acc = _dot_accumulation_dtype(compute)
    lhs, rhs = (convert(convert(x, compute), acc) for x in (lhs, rhs))
    out = lax.dot_general(lhs, rhs, dimension_numbers, _jax_precision(precision),
                          preferred_element_type=acc, out_sharding=jax_out(out_sharding))
    return convert(convert(out, compute), out_dtype)


def _dot_accumulation_dtype(compute):
    """bool products are counted in int32 (nonzero count is the OR of ANDs); half floats in
    float32 (numpy_ref accumulates exactly)."""
    if compute == np.bool_:
        return np.dtype(np.int32)
    return np.dtype(np.float32) if compute in LOW_FLOATS else compute


def _jax_precision(precision):
    if precision is None:
        return None
    if isinstance(precision, dot_algorithm.DotAlgorithm):
        return lax.DotAlgorithm(*precision)
    if isinstance(precision, dot_algorithm.DotAlgorithmPreset):
        return lax.DotAlgorithmPreset[precision.name]
    return tuple(lax.Precision[p.name] for p in precision)
