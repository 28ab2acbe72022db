"""ragged_dot_general (lax.ragged_dot): a matrix product whose lhs rows come in consecutive
groups, group j multiplied by rhs[j] (a mixture of experts' grouped matmul). refjax supports
the ragged_dot layout: lhs [m, k] ragged along m, rhs [g, k, n], group_sizes [g]; rows past
sum(group_sizes) give zeros."""
from typing import NamedTuple

from .. import dtypes
from .. import sharding_propagation as sp
from ..sharding import NamedSharding
from ..sharding_types import out_type, param_spec, strict
from .sharding_ops import constrain
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms.ad import Zero, instantiate, is_undefined_primal
from . import elementwise as ew
from . import structural as st
from .linalg import canonicalize_precision, dot_general, dot_general_out_dtype
from .reductions import cumsum

ragged_dot_general_p = make_primitive("ragged_dot_general")


class RaggedDotDimensionNumbers(NamedTuple):
    """Which lhs dimension is ragged and which rhs dimension indexes the groups, with the
    dot_general dimension numbers of the product."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple


RAGGED_DOT = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def _check(lhs, rhs, group_sizes, dims):
    if _normalized(dims) != RAGGED_DOT:
        raise NotImplementedError(
            f"ragged_dot_general: refjax supports the ragged_dot layout {RAGGED_DOT} (a ragged "
            f"lhs row dimension, grouped rhs), got {dims}")
    if not dtypes.is_int(group_sizes.dtype):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                        "np.integer.")
    if lhs.ndim != 2:
        raise TypeError("ragged_dot_general: dot_general requires lhs dimension numbers to be nonnegative and less "
                        "than the number of axes of the lhs value, got lhs_batch of () and "
                        f"lhs_contracting of (1,) for lhs of rank {lhs.ndim}")
    if rhs.ndim != 3 or lhs.shape[1] != rhs.shape[1]:
        raise TypeError("ragged_dot_general: dot_general requires contracting dimensions to have the same shape, "
                        f"got {lhs.shape[1:2]} and {rhs.shape[1:2]}.")
    if group_sizes.ndim != 1:
        raise TypeError(f"ragged_dot_general: group_sizes must be one-dimensional, got shape "
                        f"{group_sizes.shape}")
    if group_sizes.shape[0] != rhs.shape[0]:
        raise TypeError(f"ragged_dot_general: expected rhs group dimension size to be {group_sizes.shape[0]}, got "
                        f"{rhs.shape[0]}.")


def _normalized(dims):
    (contract, batch), ragged, group = dims
    return RaggedDotDimensionNumbers(
        tuple(tuple(tuple(d) for d in pair) for pair in (contract, batch)), tuple(ragged),
        tuple(group))


@ragged_dot_general_p.def_abstract_eval
def _abstract_eval(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision,
                   preferred_element_type, group_offset, out_sharding):
    _check(lhs, rhs, group_sizes, ragged_dot_dimension_numbers)
    dtype = _out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return ShapedArray((lhs.shape[0], rhs.shape[2]), dtype,
                       weak_type=lhs.weak_type and rhs.weak_type)


def _out_dtype(lhs, rhs, preferred):
    """JAX promotes mixed operands (bfloat16 x float32 -> float32) before the product."""
    return dot_general_out_dtype(*(2 * [dtypes.promote_types(lhs, rhs)]), preferred)


def group_mask(group_sizes, rows):
    """[rows, g] booleans: row i belongs to group j (groups are consecutive row ranges)."""
    ends = cumsum(group_sizes, 0)
    starts = ew.sub(ends, group_sizes)
    shape = (rows, get_aval(group_sizes).shape[0])
    row = st.broadcasted_iota(get_aval(group_sizes).dtype, shape, 0)
    return ew.bitwise_and(ew.ge(row, st.broadcast_in_dim(starts, shape, (1,))),
                          ew.lt(row, st.broadcast_in_dim(ends, shape, (1,))))


def _jvp(primals, tangents, **params):
    lhs, rhs, group_sizes = primals
    t_lhs, t_rhs, _ = tangents
    out = ragged_dot_general_p.bind(lhs, rhs, group_sizes, **params)
    total = Zero(get_aval(out).to_tangent_aval())
    if type(t_lhs) is not Zero:
        total = ragged_dot_general_p.bind(t_lhs, rhs, group_sizes, **params)
    if type(t_rhs) is not Zero:
        part = ragged_dot_general_p.bind(lhs, t_rhs, group_sizes, **params)
        total = part if type(total) is Zero else ew.add(total, part)
    return out, total


def _transpose(ct, lhs, rhs, group_sizes, **params):
    if is_undefined_primal(lhs) and is_undefined_primal(rhs):
        raise ValueError("ragged_dot_general is bilinear, not linear: it can be transposed with "
                         "respect to one operand only, with the other one known")
    if type(ct) is Zero:
        return [Zero(lhs.aval) if is_undefined_primal(lhs) else None,
                Zero(rhs.aval) if is_undefined_primal(rhs) else None, None]
    ct = instantiate(ct)
    if is_undefined_primal(lhs):  # ct [m, n] against rhs[j]^T [n, k], group by group
        out = ragged_dot_general_p.bind(ct, st.transpose(rhs, (0, 2, 1)), group_sizes,
                                        **dict(params, preferred_element_type=None))
        return [ew.convert_element_type(out, lhs.aval.dtype), None, None]
    mask = ew.convert_element_type(group_mask(group_sizes, lhs.shape[0]), lhs.dtype)
    m, k = lhs.shape
    g = mask.shape[1]
    # rhs_ct[j] = sum over the rows i of group j of outer(lhs[i], ct[i])
    grouped = ew.mul(st.broadcast_in_dim(mask, (m, g, k), (0, 1)),
                     st.broadcast_in_dim(lhs, (m, g, k), (0, 2)))
    out = dot_general(grouped, ct, (((0,), (0,)), ((), ())),
                      precision=params["precision"])
    return [None, ew.convert_element_type(out, rhs.aval.dtype), None]


def _batch(axis_data, vals, dims, **params):
    return st._unrolled_batch(ragged_dot_general_p, axis_data, vals, dims, **params), 0


def _sharding(in_specs, in_avals, out_avals, *, out_sharding, **_):
    """The result as out_sharding names it; without it, replicated (typing: JAX's
    NotImplementedError, which asks for out_sharding)."""
    if isinstance(out_sharding, NamedSharding):
        return [param_spec(out_sharding, len(out_avals[0].shape))]
    if strict():
        raise NotImplementedError("Explicit sharding inference for ragged_dot_general is not "
                                  "currently implemented. Please specify out_sharding.")
    return [sp.replicated(out_avals[0])]


ragged_dot_general_p.def_sharding(_sharding)
ragged_dot_general_p.def_jvp(_jvp)
ragged_dot_general_p.def_transpose(_transpose)
ragged_dot_general_p.def_batch(_batch)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """The grouped product described by ragged_dot_dimension_numbers (refjax: the ragged_dot
    layout; group_offset, which selects a shard of the groups, is not supported)."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported")
    pet = None if preferred_element_type is None else \
        dtypes.canonicalize_dtype(preferred_element_type)
    typed_as = out_type(out_sharding, "ragged_dot_general")
    out = ragged_dot_general_p.bind(
        lhs, rhs, group_sizes, ragged_dot_dimension_numbers=_normalized(
            ragged_dot_dimension_numbers), precision=canonicalize_precision(precision),
        preferred_element_type=pet, group_offset=None, out_sharding=typed_as)
    return out if typed_as is not None else constrain(out, out_sharding)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """out[i] = lhs[i] @ rhs[j] for the rows i of group j: lhs [m, k], rhs [g, k, n],
    group_sizes [g] (consecutive groups of rows; rows past their sum give zeros)."""
    return ragged_dot_general(lhs, rhs, group_sizes, RAGGED_DOT, precision,
                              preferred_element_type, group_offset, out_sharding)
