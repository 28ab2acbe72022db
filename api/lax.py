"""refjax.lax: the lax functions, each binding one primitive (re-exported from core/primitives)."""
import functools as _functools
import inspect as _inspect

from ..core import dtypes as _dtypes
from ..core.primitives.elementwise import weak_scalar as _weak_scalar
from ..core.array import BaseArray as _BaseArray
from ..core.trace import Tracer as _Tracer
from ..core.trace import get_aval as _get_aval
from ..core.primitives.elementwise import (  # noqa: F401
    neg, sign, floor, ceil, round, RoundingMethod, is_finite, exp, exp2, log, log1p, expm1, tanh,
    logistic, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, sqrt, rsqrt, cbrt,
    abs, bitwise_not, integer_pow, square, erf, erf_inv, lgamma, digamma, polygamma, real, imag,
    conj, add, sub, mul, div, rem, pow, max, min, atan2, nextafter, bitwise_and, bitwise_or,
    bitwise_xor, shift_left, shift_right_logical, shift_right_arithmetic, eq, ne, lt, le, gt, ge,
    select_n, clamp, full)
from ..core.primitives import elementwise as _ew
from ..core.primitives.structural import (  # noqa: F401
    broadcast_in_dim, broadcast, reshape, squeeze, expand_dims, transpose, rev, slice,
    slice_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_update_slice,
    dynamic_update_slice_in_dim, pad, concatenate, iota, broadcasted_iota, copy)

from ..core.primitives.sharding_ops import with_sharding_constraint  # noqa: F401,E402
from ..core.primitives.gather import (  # noqa: F401,E402
    gather, scatter_add, scatter_sub, scatter_mul, scatter_min, scatter_max, scatter, GatherDimensionNumbers,
    ScatterDimensionNumbers, GatherScatterMode)

bitwise_not = bitwise_not
not_ = bitwise_not


def _requested(requested, fun_name):
    """A user's dtype, canonical, with JAX's UserWarning naming fun_name when it is a 64-bit
    type and jax_enable_x64 is off (refjax's own code calls the core functions, unwarned)."""
    if requested is None or _dtypes.is_key_dtype(requested):
        return requested
    return _dtypes.explicit_dtype(requested, fun_name)


def convert_element_type(operand, new_dtype):
    """operand converted to new_dtype, C-style (floats truncate to integers); a 64-bit
    new_dtype with x64 off is its 32-bit counterpart, with JAX's warning."""
    return _ew.convert_element_type(operand, _requested(new_dtype, "convert_element_type"))


def _warns_of_truncation(fn, param, fun_name):
    """fn, warning as JAX's lax function does of a 64-bit dtype argument `param` with x64
    off; fun_name is the name JAX's warning gives."""
    params = list(_inspect.signature(fn).parameters.values())
    at = next(i for i, p in enumerate(params) if p.name == param)
    position = None if params[at].kind is _inspect.Parameter.KEYWORD_ONLY else at

    @_functools.wraps(fn)
    def warned(*args, **kwargs):
        positional = position is not None and len(args) > position
        _requested(args[position] if positional else kwargs.get(param), fun_name)
        return fn(*args, **kwargs)
    return warned


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
from ..core.primitives.dot_algorithm import DotAlgorithm, DotAlgorithmPreset  # noqa: F401,E402
from ..core.primitives.sorting import (  # noqa: F401,E402
    sort, sort_key_val, top_k, approx_max_k, approx_min_k)
from ..core.primitives.parallel import (  # noqa: F401,E402
    psum, pmean, pmax, pmin, all_gather, psum_scatter, ppermute, all_to_all, axis_index,
    ragged_all_to_all)
from ..core.primitives.parallel_vma import pcast, pvary  # noqa: F401,E402
from ..core.primitives.parallel import lax_axis_size as axis_size  # noqa: F401,E402
from ..core.primitives.parallel_more import pbroadcast, pshuffle, pswapaxes  # noqa: F401,E402
from ..core.primitives.control_flow import (  # noqa: F401,E402
    cond, switch, while_loop, fori_loop, scan, map)
from ..core.primitives.special import (  # noqa: F401,E402
    erfc, bessel_i0e, bessel_i1e, igamma, igammac, igamma_grad_a, zeta, random_gamma_grad,
    betainc)
from ..core.primitives.bits import (  # noqa: F401,E402
    bitcast_convert_type, population_count, clz, mulhi, complex)
from ..core.primitives.fft import fft, FftType  # noqa: F401,E402
from ..core.primitives.arrays import (  # noqa: F401,E402
    split, stack, unstack, tile, optimization_barrier)
from ..core.primitives.rng import (  # noqa: F401,E402
    RandomAlgorithm, rng_bit_generator, rng_uniform)
from ..core.primitives.custom_solve import (  # noqa: F401,E402
    custom_linear_solve, custom_root, custom_linear_solve_p as linear_solve_p)
from . import lax_linalg as linalg  # noqa: F401,E402
# Convolutions, windowed reductions, the generic reduce; their primitives as lax.<name>_p.
from ..core.primitives.convolution import (  # noqa: F401,E402
    ConvDimensionNumbers, conv_general_dilated, conv, conv_with_general_padding, conv_transpose,
    conv_dimension_numbers, conv_general_permutations, conv_general_dilated_patches,
    conv_shape_tuple, conv_general_shape_tuple, conv_transpose_shape_tuple,
    conv_general_dilated_p)
from .lax_conv_local import conv_general_dilated_local  # noqa: F401,E402
from ..core.primitives.window_shapes import padtype_to_pads  # noqa: F401,E402
from ..core.primitives.windowed import (  # noqa: F401,E402
    reduce_window, reduce_window_shape_tuple, reduce_window_p, reduce_window_sum_p,
    reduce_window_max_p, reduce_window_min_p, select_and_gather_add_p, select_and_scatter_add_p)
from ..core.primitives.windowed import select_and_scatter_p  # noqa: F401,E402
from ..core.primitives.reductions import (  # noqa: F401,E402
    reduce, reduce_xor, reduce_precision, cumlogsumexp, reduce_p, reduce_xor_p,
    reduce_precision_p, cumlogsumexp_p)
from ..core.primitives.elementwise import ge_p, le_p  # noqa: F401,E402


# ---------------------------------------------------------------- no implicit promotion

def _own_type(x):
    """A Python scalar as a weakly-typed value of its own default dtype (JAX's lax does not
    lift it to the other operands' dtype, so lax.add(uint8 array, 0) raises TypeError)."""
    if _dtypes.is_python_scalar(x) and type(x) is not bool:
        return _weak_scalar(x, _dtypes.python_scalar_dtype(x))
    return x


def _check_operands(name, args):
    """TypeError in JAX's words for an operand that is no JAX value or is a float0 array
    (Arrays, tracers and Python scalars need no aval here: the primitive reads theirs)."""
    for i, a in enumerate(args):
        operand_dtype = getattr(a, "dtype", None)
        if operand_dtype is not None and operand_dtype == _dtypes.float0:
            raise TypeError(f"{name}: float0s do not support any operations by design, as they "
                            "are not compatible with non-trivial vector spaces")
        if isinstance(a, (_BaseArray, _Tracer)) or _dtypes.is_python_scalar(a) or \
                _dtypes.is_key_dtype(operand_dtype):
            continue  # typed keys: refused by the primitive's dtype check
        try:
            _get_aval(a)
        except TypeError:
            raise TypeError(f"Error interpreting argument to {name} as a JAX value. The "
                            f"problematic value is of type {type(a)} and was passed to {name} "
                            f"at position {i}.") from None


def _strict(fn):
    @_functools.wraps(fn)
    def strict(*args):
        _check_operands(fn.__name__, args)
        return fn(*[_own_type(a) for a in args])  # (`map` is lax.map here)
    return strict


for _name in ("add", "sub", "mul", "div", "rem", "max", "min", "atan2", "nextafter",
              "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_logical",
              "shift_right_arithmetic", "eq", "ne", "lt", "le", "gt", "ge", "clamp",
              "polygamma", "igamma", "igammac", "igamma_grad_a", "zeta", "mulhi", "betainc"):
    globals()[_name] = _strict(globals()[_name])


def _export_primitives():
    """Every primitive object of core/primitives (and stop_gradient_p) as lax.<name>_p, as JAX's
    lax exports its own (tests/test_lax_misc.py lists the JAX ones refjax lacks)."""
    import importlib
    import pkgutil

    from ..core import primitives as package
    from ..core.primitive import Primitive
    from ..core.transforms import jvp
    modules = [jvp] + [importlib.import_module(m.name) for m in
                       pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    for module in modules:
        for attr, value in vars(module).items():
            if attr.endswith("_p") and not attr.startswith("_") and isinstance(value, Primitive):
                globals().setdefault(attr, value)


_export_primitives()

from ..core.primitives.ragged import (  # noqa: F401,E402
    RaggedDotDimensionNumbers, ragged_dot, ragged_dot_general, ragged_dot_general_p)
from ..core.transforms.composite import composite  # noqa: F401,E402
from .lax_helpers import (  # noqa: F401,E402
    broadcast_shapes, broadcast_to_rank, collapse, dtype, dynamic_index_in_dim, index_in_dim,
    dynamic_update_index_in_dim, full_like, reciprocal)
from .lax_helpers import full  # noqa: F401,E402,F811  (dtype optional, sharding=, as JAX's)
from .lax_helpers import broadcast_like, index_take, scatter_apply  # noqa: F401,E402
from ..core.primitives.arrays import empty, empty_p  # noqa: F401,E402

# JAX's names: iota's warning names broadcasted_iota, full_like's its `dtype` argument, the
# convolutions' conv_general_dilated, dot_general's and ragged_dot's dot
for _name, _param, _label in (
        ("full", "dtype", "full"), ("iota", "dtype", "broadcasted_iota"),
        ("broadcasted_iota", "dtype", "broadcasted_iota"), ("full_like", "dtype", "dtype"),
        ("bitcast_convert_type", "new_dtype", "bitcast_convert_type"),
        ("rng_bit_generator", "dtype", "rng_bit_generator"),
        ("dot", "preferred_element_type", "dot"), ("dot_general", "preferred_element_type", "dot"),
        ("ragged_dot", "preferred_element_type", "dot"),
        ("ragged_dot_general", "preferred_element_type", "dot"),
        ("conv_general_dilated", "preferred_element_type", "conv_general_dilated"),
        ("conv", "preferred_element_type", "conv_general_dilated"),
        ("conv_with_general_padding", "preferred_element_type", "conv_general_dilated"),
        ("conv_transpose", "preferred_element_type", "conv_general_dilated")):
    globals()[_name] = _warns_of_truncation(globals()[_name], _param, _label)

from ..core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "lax")  # errors raised below a public function name it
