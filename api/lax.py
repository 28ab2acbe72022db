"""refjax.lax: the lax functions, each binding one primitive (re-exported from core/primitives)."""
from ..core.primitives.elementwise import (  # noqa: F401
    neg, sign, floor, ceil, round, RoundingMethod, is_finite, exp, exp2, log, log1p, expm1, tanh,
    logistic, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, sqrt, rsqrt, cbrt,
    abs, bitwise_not, integer_pow, square, erf, erf_inv, lgamma, digamma, polygamma, real, imag,
    conj, add, sub, mul, div, rem, pow, max, min, atan2, nextafter, bitwise_and, bitwise_or,
    bitwise_xor, shift_left, shift_right_logical, shift_right_arithmetic, eq, ne, lt, le, gt, ge,
    select_n, clamp, convert_element_type, full)
from ..core.primitives.structural import (  # noqa: F401
    broadcast_in_dim, broadcast, reshape, squeeze, expand_dims, transpose, rev, slice,
    slice_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_update_slice,
    dynamic_update_slice_in_dim, pad, concatenate, iota, broadcasted_iota, copy, index_in_dim)

from ..core.primitives.sharding_ops import with_sharding_constraint  # noqa: F401,E402
from ..core.primitives.gather import (  # noqa: F401,E402
    gather, scatter_add, scatter_mul, scatter_min, scatter_max, scatter, GatherDimensionNumbers,
    ScatterDimensionNumbers, GatherScatterMode)

bitwise_not = bitwise_not
not_ = bitwise_not


def select(pred, on_true, on_false):
    """on_true where pred else on_false (lax.select)."""
    return select_n(pred, on_false, on_true)


def stop_gradient(x):
    """x, with a zero derivative (binds no primitive under jvp: the tangent is dropped)."""
    from ..core.transforms.jvp import stop_gradient as _sg
    return _sg(x)


from ..core.primitives.reductions import (  # noqa: F401,E402
    reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_and, reduce_or, argmax, argmin,
    cumsum, cumprod, cummax, cummin, associative_scan)
from ..core.primitives.linalg import dot_general, dot, batch_matmul, Precision  # noqa: F401,E402
from ..core.primitives.sorting import sort, sort_key_val  # noqa: F401,E402
from ..core.primitives.parallel import (  # noqa: F401,E402
    psum, pmean, pmax, pmin, all_gather, psum_scatter, ppermute, all_to_all, axis_index, pvary,
    pcast)
from ..core.primitives.control_flow import (  # noqa: F401,E402
    cond, switch, while_loop, fori_loop, scan, map)

from ..core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "lax")  # errors raised below a public function name it
