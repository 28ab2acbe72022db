"""jax.lax lowering of conv_general_dilated with numpy_ref's dtype semantics."""
from jax import lax

from ....core.primitives import convolution as cv
from ....core.primitives import linalg
from ._common import convert, on_auto_mesh, rule, whole_on_auto_mesh
from ._common import type_param as jax_out
from .linalg import _dot_accumulation_dtype, _jax_precision


@rule(cv.conv_general_dilated_p)
def _conv_general_dilated(lhs, rhs, **params):
    """Grouped convolutions on Auto mesh axes are computed whole (operands and result
    constrained replicated): XLA's SPMD partitioner splits a grouped feature dimension
    wrongly (real JAX returns wrong values, or fails with INVALID_ARGUMENT "Expected output
    feature dimension ... divisible by feature_group_count"), and moves a result's split
    layout back onto the convolution through a barrier."""
    if params["feature_group_count"] == params["batch_group_count"] == 1 or \
            not on_auto_mesh(lhs, rhs):
        return _conv(lhs, rhs, **params)
    return whole_on_auto_mesh(_conv(whole_on_auto_mesh(lhs), whole_on_auto_mesh(rhs),
                                    **params))


def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
          feature_group_count, batch_group_count, precision, preferred_element_type,
          out_sharding=None):
    """Operands converted to the compute dtype and accumulated as dot_general's are (half
    floats in float32, bools counted in int32), the result converted to the output dtype."""
    out_dtype = cv.conv_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    compute = linalg.dot_compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
    acc = _dot_accumulation_dtype(compute)
    lhs, rhs = (convert(convert(x, compute), acc) for x in (lhs, rhs))
    out = lax.conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
        lax.ConvDimensionNumbers(*dimension_numbers), feature_group_count, batch_group_count,
        precision=_jax_precision(precision), preferred_element_type=acc,
        out_sharding=jax_out(out_sharding))
    return convert(convert(out, compute), out_dtype)
