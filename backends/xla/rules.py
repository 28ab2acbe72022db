"""jax.lax lowerings of refjax's primitives, one rule per primitive, matching numpy_ref's values."""
import importlib

import numpy as np
from jax import lax

from ...core import dtypes
from ...core.primitive import all_primitives
from ...core.sharding import NamedSharding
from ...core.primitives import elementwise as ew
from ...core.primitives import sharding_ops
from ...core.primitives import structural as st
from ...core.transforms import custom
from ...core.transforms import jit as jit_mod
from ...core.transforms import jvp as jvp_mod
from ..base import get_backend, register_rule
from .backend import XlaBackend

rule = lambda *prims: register_rule(XlaBackend, *prims)  # noqa: E731
_LOW = (dtypes.float16, dtypes.bfloat16)


def _broadcast(*xs):
    """lax wants equal shapes; refjax's n-ary elementwise ops let rank-0 operands broadcast."""
    shape = max((np.shape(x) for x in xs), key=len)
    return [x if np.shape(x) == shape else lax.broadcast_in_dim(x, shape, ()) for x in xs]


def _nary(fn):
    def lowered(*xs, **params):
        return fn(*_broadcast(*xs), **params)
    return lowered


def _wide(x):
    """Half floats are accumulated in float32, near numpy_ref's exact accumulation."""
    return lax.convert_element_type(x, np.float32) if x.dtype in _LOW else x


def _narrow(out, like):
    return lax.convert_element_type(out, like.dtype) if out.dtype != like.dtype else out


# ---------------------------------------------------------------- elementwise

_UNARY = {
    ew.neg_p: lax.neg, ew.sign_p: lax.sign, ew.floor_p: lax.floor, ew.ceil_p: lax.ceil,
    ew.is_finite_p: lax.is_finite, ew.exp_p: lax.exp, ew.exp2_p: lax.exp2, ew.log_p: lax.log,
    ew.log1p_p: lax.log1p, ew.expm1_p: lax.expm1, ew.tanh_p: lax.tanh,
    ew.logistic_p: lax.logistic, ew.sin_p: lax.sin, ew.cos_p: lax.cos, ew.tan_p: lax.tan,
    ew.asin_p: lax.asin, ew.acos_p: lax.acos, ew.atan_p: lax.atan, ew.sinh_p: lax.sinh,
    ew.cosh_p: lax.cosh, ew.asinh_p: lax.asinh, ew.acosh_p: lax.acosh, ew.atanh_p: lax.atanh,
    ew.sqrt_p: lax.sqrt, ew.rsqrt_p: lax.rsqrt, ew.cbrt_p: lax.cbrt, ew.square_p: lax.square,
    ew.real_p: lax.real, ew.imag_p: lax.imag, ew.not_p: lax.bitwise_not,
    ew.erf_p: lax.erf, ew.erf_inv_p: lax.erf_inv, ew.lgamma_p: lax.lgamma,
    ew.digamma_p: lax.digamma, jvp_mod.stop_gradient_p: lambda x: x, st.copy_p: lambda x: x,
}
for _p, _f in _UNARY.items():
    rule(_p)(_f)


@rule(ew.abs_p)
def _abs(x):
    return x if dtypes.kind(x.dtype) == "u" else lax.abs(x)  # lax.abs rejects unsigned


@rule(ew.conj_p)
def _conj(x):
    return lax.conj(x)  # complex for a float32/float64 operand, as refjax's conj


@rule(ew.round_p)
def _round(x, *, rounding_method):
    return lax.round(x, lax.RoundingMethod(rounding_method))


@rule(ew.integer_pow_p)
def _integer_pow(x, *, y):
    if y < 0 and dtypes.is_int(x.dtype):
        # lax rejects it; numpy_ref truncates 1/x**-y, i.e. integer division.
        return lax.div(lax.full_like(x, 1), lax.integer_pow(x, -y))
    return lax.integer_pow(x, y)


_BINARY = {
    ew.add_p: lax.add, ew.sub_p: lax.sub, ew.add_any_p: lax.add, ew.mul_p: lax.mul,
    ew.div_p: lax.div,
    ew.rem_p: lax.rem, ew.pow_p: lax.pow, ew.max_p: lax.max, ew.min_p: lax.min,
    ew.atan2_p: lax.atan2, ew.nextafter_p: lax.nextafter, ew.and_p: lax.bitwise_and,
    ew.or_p: lax.bitwise_or, ew.xor_p: lax.bitwise_xor, ew.shift_left_p: lax.shift_left,
    ew.shift_right_logical_p: lax.shift_right_logical,
    ew.shift_right_arithmetic_p: lax.shift_right_arithmetic, ew.eq_p: lax.eq, ew.ne_p: lax.ne,
    ew.polygamma_p: lax.polygamma,
}
for _p, _f in _BINARY.items():
    rule(_p)(_nary(_f))


def _ordering(compare):
    """lax orders no complex numbers; numpy_ref (NumPy) orders them lexicographically."""
    def lowered(x, y):
        if dtypes.kind(x.dtype) != "c":
            return compare(x, y)
        xr, yr = lax.real(x), lax.real(y)
        return lax.bitwise_or(lax.lt(xr, yr) if compare in (lax.lt, lax.le) else lax.gt(xr, yr),
                              lax.bitwise_and(lax.eq(xr, yr), compare(lax.imag(x), lax.imag(y))))
    return _nary(lowered)


for _p, _f in ((ew.lt_p, lax.lt), (ew.le_p, lax.le), (ew.gt_p, lax.gt), (ew.ge_p, lax.ge)):
    rule(_p)(_ordering(_f))


@rule(ew.select_n_p)
def _select_n(which, *cases):
    return lax.select_n(which, *cases)


@rule(ew.clamp_p)
def _clamp(lo, x, hi):
    return lax.clamp(lo, x, hi)


@rule(ew.convert_element_type_p)
def _convert(x, *, new_dtype, weak_type=False, sharding=None):
    return convert(x, new_dtype)


def convert(x, new_dtype):
    """numpy_ref's conversion: to bool is real(x) != 0 (as JAX); complex to real
    keeps the real part; float to int truncates, saturates, NaN to 0 (as XLA does)."""
    new_dtype = np.dtype(new_dtype)
    if new_dtype == x.dtype:
        return x
    if new_dtype == np.bool_:
        x = lax.real(x) if dtypes.kind(x.dtype) == "c" else x
        return lax.ne(x, lax.full_like(x, 0))
    if dtypes.kind(x.dtype) == "c" and dtypes.kind(new_dtype) != "c":
        x = lax.real(x)
    return lax.convert_element_type(x, new_dtype)


# ---------------------------------------------------------------- structural

@rule(st.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding=None):
    return lax.broadcast_in_dim(x, shape, broadcast_dimensions)


@rule(st.reshape_p)
def _reshape(x, *, new_sizes, dimensions=None, sharding=None):
    return lax.reshape(x, new_sizes, dimensions)


@rule(st.squeeze_p)
def _squeeze(x, *, dimensions):
    return lax.squeeze(x, dimensions)


@rule(st.transpose_p)
def _transpose(x, *, permutation):
    return lax.transpose(x, permutation)


@rule(st.rev_p)
def _rev(x, *, dimensions):
    return lax.rev(x, dimensions)


@rule(st.slice_p)
def _slice(x, *, start_indices, limit_indices, strides):
    return lax.slice(x, start_indices, limit_indices, strides)


def _clamped_starts(shape, sizes, idx):
    """Start indices clamped into [0, dim - size], the primitive's (HLO's) semantics; the
    public lax functions would first wrap negative indices around, which refjax's don't."""
    return [lax.clamp(lax.full_like(i, 0), i, lax.full_like(i, d - s))
            for i, d, s in zip(idx, shape, sizes)]


@rule(st.dynamic_slice_p)
def _dynamic_slice(x, *idx, slice_sizes):
    return lax.dynamic_slice(x, _clamped_starts(x.shape, slice_sizes, idx), slice_sizes)


@rule(st.dynamic_update_slice_p)
def _dynamic_update_slice(x, update, *idx):
    return lax.dynamic_update_slice(x, update, _clamped_starts(x.shape, update.shape, idx))


@rule(st.pad_p)
def _pad(x, padding_value, *, padding_config):
    return lax.pad(x, padding_value, padding_config)


@rule(st.concatenate_p)
def _concatenate(*xs, dimension):
    return lax.concatenate(xs, dimension)


@rule(st.iota_p)
def _iota(*, dtype, shape, dimension, sharding=None):
    return lax.broadcasted_iota(dtype, shape, dimension)


# ---------------------------------------------------------------- calls and layouts

@rule(jit_mod.jit_p)
def _jit(*args, jaxpr, **_):
    return get_backend("xla").interpret(jaxpr, args)


@rule(custom.custom_jvp_call_p, custom.custom_vjp_call_p)
def _custom_call(*args, call_jaxpr, **_):
    return get_backend("xla").interpret(call_jaxpr, args)


@rule(custom.custom_lin_p)
def _custom_lin(*args, **_):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


@rule(sharding_ops.sharding_constraint_p)
def _sharding_constraint(x, *, sharding):
    """Inside jax.jit, a mesh layout constrains the partitioner; a single device is only where
    the value ends up, which the outputs' out_shardings decide."""
    if isinstance(sharding, NamedSharding):
        return lax.with_sharding_constraint(x, get_backend("xla").jax_sharding(sharding))
    return x


# ---------------------------------------------------------------- families in their own modules
# Registered only if core/primitives/<family>.py imports: these modules were written
# alongside this backend, and the backend must load while one is still missing.

def _family(name):
    """core.primitives.<name>, or None while that module does not exist yet."""
    full = f"{__package__.rsplit('.', 2)[0]}.core.primitives.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as e:
        if e.name != full:
            raise
        return None


def _register_reductions(red):
    """reduce_*, argmax/argmin, cumulative reductions (sums and products of half floats
    accumulate in float32, like numpy_ref's wide accumulation)."""
    def accumulated(fn):
        return lambda x, *, axes, **_: _narrow(fn(_wide(x), axes), x)

    rule(red.reduce_sum_p)(accumulated(lax.reduce_sum))
    rule(red.reduce_prod_p)(accumulated(lax.reduce_prod))
    for prim, fn in ((red.reduce_max_p, lax.reduce_max), (red.reduce_min_p, lax.reduce_min),
                     (red.reduce_and_p, lax.reduce_and), (red.reduce_or_p, lax.reduce_or)):
        rule(prim)(lambda x, *, axes, _fn=fn, **_: _fn(x, axes))
    rule(red.argmax_p)(lambda x, *, axes, index_dtype: lax.argmax(x, axes[0], index_dtype))
    rule(red.argmin_p)(lambda x, *, axes, index_dtype: lax.argmin(x, axes[0], index_dtype))
    for prim, fn, wide in ((red.cumsum_p, lax.cumsum, True), (red.cumprod_p, lax.cumprod, True),
                           (red.cummax_p, lax.cummax, False), (red.cummin_p, lax.cummin, False)):
        rule(prim)(_cumulative(fn, wide))


def _cumulative(fn, wide):
    def lowered(x, *, axis, reverse):
        return _narrow(fn(_wide(x) if wide else x, axis, reverse), x)
    return lowered


def _register_linalg(linalg):
    """dot_general with numpy_ref's dtype semantics: operands converted to the compute dtype,
    accumulated (see _dot_accumulation_dtype), converted to the output dtype."""
    def dot_general(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                    out_sharding=None):
        out_dtype = linalg.dot_general_out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
        compute = linalg.dot_compute_dtype(lhs.dtype, rhs.dtype, out_dtype)
        acc = _dot_accumulation_dtype(compute)
        lhs, rhs = (convert(convert(x, compute), acc) for x in (lhs, rhs))
        out = lax.dot_general(lhs, rhs, dimension_numbers, _jax_precision(precision),
                              preferred_element_type=acc)
        return convert(convert(out, compute), out_dtype)
    rule(linalg.dot_general_p)(dot_general)


def _dot_accumulation_dtype(compute):
    """bool products are counted in int32 (nonzero count is the OR of ANDs); half floats in
    float32 (numpy_ref accumulates exactly)."""
    if compute == np.bool_:
        return np.dtype(np.int32)
    return np.dtype(np.float32) if compute in _LOW else compute


def _jax_precision(precision):
    if precision is None:
        return None
    return tuple(lax.Precision[p.name] for p in precision)


def _register_sorting(sorting):
    """sort, always stable: numpy_ref's (lexsort) order of equal keys is the input order."""
    def sort(*operands, dimension, is_stable, num_keys):
        return list(lax.sort(operands, dimension=dimension, is_stable=True, num_keys=num_keys))
    rule(sorting.sort_p)(sort)


def _register_control_flow(cf):
    """cond, while and scan (rules_control_flow.py imports core/primitives/control_flow)."""
    importlib.import_module(".rules_control_flow", __package__)


_FAMILIES = {"reductions": _register_reductions, "linalg": _register_linalg,
             "sorting": _register_sorting, "control_flow": _register_control_flow}


def register_families():
    """Register the lowerings of every family module that exists (idempotent)."""
    for name, register in _FAMILIES.items():
        module = _family(name)
        if module is not None:
            register(module)


register_families()


def missing_rules():
    """Names of registered refjax primitives without an xla lowering (should be empty)."""
    from ..base import _rules
    missing = []
    for name, prim in sorted(all_primitives().items()):
        try:
            fn = _rules.dispatch(XlaBackend, type(prim))
        except NotImplementedError:
            fn = None
        if fn is None:
            missing.append(name)
    return missing
