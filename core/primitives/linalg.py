"""dot_general (with lax.dot, lax.batch_matmul and lax.Precision) and all of its rules."""
import enum
import operator

import numpy as np

from .. import dtypes
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..config import config
from ..primitive import make_primitive
from ..sharding import P
from ..sharding.mesh import axes_of
from ..sharding_types import cotangent_sharding, insert_dim, out_type, param_spec
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero, defjvp
from . import elementwise as ew
from . import structural as st
from .dot_algorithm import DotAlgorithmPreset, is_algorithm
from .reductions import constrain


# ---------------------------------------------------------------- precision

class Precision(enum.Enum):
    """lax.Precision: a hint for float32 matmuls on accelerators (no effect on CPU)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_STRINGS.get(value)

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
}


def canonicalize_precision(precision):
    """None, a Precision/str, a pair of them, or a dot algorithm (or a preset's name) -> None,
    (Precision, Precision) or the algorithm, as JAX's."""
    if precision is None:
        default = config.read("jax_default_matmul_precision")
        return None if default is None else _default_precision(default)
    if isinstance(precision, (str, Precision)) and _as_precision(precision) is not None:
        p = _as_precision(precision)
        return p, p
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    if is_algorithm(precision):
        return precision
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        pair = tuple(_as_precision(p) for p in precision)
        if None not in pair:
            return pair
    raise ValueError(f"Precision argument must be one of:\n- None,\n- a string in "
                     f"{list(_PRECISION_STRINGS) + [None]},\n- a lax.Precision value,\n"
                     f"- a tuple of two lax.Precision values or strings,\n- a "
                     f"lax.DotAlgorithmPreset or the name of one of these presets, or\n- a "
                     f"lax.DotAlgorithm value;\nbut got {precision}.")


def _default_precision(default):
    try:
        return canonicalize_precision(default)
    except ValueError:
        raise ValueError(f"jax_default_matmul_precision flag must be set to None, a value in "
                         f"{list(_PRECISION_STRINGS) + [None]}, or the name of a "
                         f"lax.DotAlgorithmPreset, but got {default}") from None


def _as_precision(p):
    if isinstance(p, Precision):
        return p
    return _PRECISION_STRINGS.get(p) if isinstance(p, str) else None


# ---------------------------------------------------------------- dot_general

dot_general_p = make_primitive("dot_general")


def _check_dims_in_range(side, x, contract, batch):
    if not all(0 <= d < x.ndim for d in contract + batch):
        raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative and "
                        f"less than the number of axes of the {side} value, got {side}_batch of "
                        f"{batch} and {side}_contracting of {contract} for {side} of rank "
                        f"{x.ndim}")


def _check_distinct(side, contract, batch):
    if len(set(batch)) != len(batch):
        raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got "
                        f"{side}_batch {batch}.")
    if len(set(contract)) != len(contract):
        raise TypeError(f"dot_general requires {side} contracting dimensions to be distinct, "
                        f"got {side}_contracting {contract}.")
    if set(contract) & set(batch):
        raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                        f"contracting dimensions, got {side}_batch {batch} and "
                        f"{side}_contracting {contract}.")


def _check_dimension_numbers(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    _check_dims_in_range("lhs", lhs, lc, lb)
    _check_dims_in_range("rhs", rhs, rc, rb)
    if len(lb) != len(rb):
        raise TypeError(f"dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
    _check_distinct("lhs", lc, lb)
    _check_distinct("rhs", rc, rb)
    lbs, rbs = (tuple(x.shape[i] for i in b) for x, b in ((lhs, lb), (rhs, rb)))
    if lbs != rbs:
        raise TypeError(f"dot_general requires lhs batch dimensions and rhs batch dimensions "
                        f"to have the same shape, got {lbs} and {rbs}.")
    lcs, rcs = (tuple(x.shape[i] for i in c) for x, c in ((lhs, lc), (rhs, rc)))
    if lcs != rcs:
        raise TypeError(f"dot_general requires contracting dimensions to have the same shape, "
                        f"got {lcs} and {rcs}.")


def _free_dims(ndim, contract, batch):
    return tuple(i for i in range(ndim) if i not in contract and i not in batch)


def dot_general_shape(lhs_shape, rhs_shape, dimension_numbers):
    """Output shape: batch dims, then lhs free dims, then rhs free dims."""
    (lc, rc), (lb, rb) = dimension_numbers
    return (tuple(lhs_shape[i] for i in lb)
            + tuple(lhs_shape[i] for i in _free_dims(len(lhs_shape), lc, lb))
            + tuple(rhs_shape[i] for i in _free_dims(len(rhs_shape), rc, rb)))


def _bit_width(dtype):
    if dtypes.kind(dtype) == "b":
        return 1
    return dtypes.finfo(dtype).bits if dtypes.is_inexact(dtype) else dtypes.iinfo(dtype).bits


_COMPLEX_PART = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _type_rank(dtype):
    """XLA's HigherPrecisionType order: complex, exponent range, mantissa, width, signedness."""
    real = _COMPLEX_PART.get(dtype, dtype)
    fl = dtypes.is_float(real)
    return (dtypes.kind(dtype) == "c", dtypes.finfo(real).maxexp if fl else -1,
            dtypes.finfo(real).nmant if fl else -1, _bit_width(real), dtypes.kind(real) != "u")


def dot_general_out_dtype(lhs_dtype, rhs_dtype, preferred_element_type):
    """The output dtype: the higher of the two operand types (as XLA), or the preferred one."""
    for d in (lhs_dtype, rhs_dtype):
        if d == dtypes.float0:
            raise TypeError("dot_general does not accept dtype float0 (the tangent type of "
                            "integer values)")
    lr, rr = _type_rank(lhs_dtype), _type_rank(rhs_dtype)
    if lr == rr and lhs_dtype != rhs_dtype:
        raise TypeError(f"lax.dot_general argument type error: {lhs_dtype.name}, "
                        f"{rhs_dtype.name}")
    result = lhs_dtype if lr >= rr else rhs_dtype
    pet = preferred_element_type
    if pet is None or pet == result:
        return result
    if not dtypes.is_float(result) and _bit_width(pet) < _bit_width(result):
        raise TypeError(f"`preferred_element_type` must not be narrower than the original "
                        f"type, got preferred_element_type of {np.dtype(pet).name} for result "
                        f"type of {result.name}.")
    return np.dtype(pet)


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding=None):
    _check_dimension_numbers(lhs, rhs, dimension_numbers)
    dtype = dot_general_out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    return ShapedArray(dot_general_shape(lhs.shape, rhs.shape, dimension_numbers), dtype,
                       weak_type=lhs.weak_type and rhs.weak_type)


@dot_general_p.def_pp
def _dot_general_pp(eqn, context):
    # As JAX: dimension numbers as lists (shorter), no None params, no out_sharding (the
    # binder's type says it).
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    params = dict(eqn.params, dimension_numbers=((list(lc), list(rc)), (list(lb), list(rb))))
    return [(k, v) for k, v in sorted(params.items()) if v is not None and k != "out_sharding"]


def _index_tuple(dims):
    if isinstance(dims, (int, np.integer)):
        return (operator.index(dims),)
    return tuple(operator.index(d) for d in dims)


def _canonical_dimension_numbers(dimension_numbers):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return (_index_tuple(lc), _index_tuple(rc)), (_index_tuple(lb), _index_tuple(rb))
    except (TypeError, ValueError):
        raise TypeError(f"dot_general: dimension_numbers must have the form "
                        f"((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)) with "
                        f"sequences of ints, got {dimension_numbers!r}") from None


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *,
                out_sharding=None):
    """General contraction: dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)). The result has the batch dims, then lhs's free dims, then rhs's;
    it is laid out as `out_sharding` when given."""
    pet = None if preferred_element_type is None else \
        dtypes.canonicalize_dtype(preferred_element_type)
    typed_as = out_type(out_sharding, "dot_general")
    out = dot_general_p.bind(lhs, rhs,
                             dimension_numbers=_canonical_dimension_numbers(dimension_numbers),
                             precision=canonicalize_precision(precision),
                             preferred_element_type=pet, out_sharding=typed_as)
    return out if typed_as is not None else constrain(out, out_sharding)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """Vector/matrix products (contract lhs's last dim with rhs's first), or dot_general
    when dimension_numbers is given."""
    if dimension_numbers is None:
        ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
        if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]):
            raise ValueError("jax.lax.dot: dimension_numbers must be specified when not "
                             "performing simple un-batched matrix-matrix, matrix-vector, or "
                             f"vector-vector products; got lhs_shape={ls} rhs_shape={rs}")
        dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                       out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the last two dims, batched over all leading dims."""
    ln, rn = len(get_aval(lhs).shape), len(get_aval(rhs).shape)
    if min(ln, rn) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ln}, {rn}")
    if ln != rn:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {ln}, {rn}")
    batch = tuple(range(ln - 2))
    return dot_general(lhs, rhs, (((ln - 1,), (rn - 2,)), (batch, batch)), precision=precision)


defjvp(dot_general_p,
       lambda t, lhs, rhs, **params: dot_general_p.bind(t, rhs, **params),
       lambda t, lhs, rhs, **params: dot_general_p.bind(lhs, t, **params))


def _ranges_like(*xs):
    """Consecutive index ranges with the lengths of xs."""
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _transpose_lhs(ct, x_aval, y, *, dimension_numbers, precision, preferred_element_type,
                   swap_ans=False):
    """Cotangent of the lhs x: contract ct with y over y's free dims, then permute to x."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _free_dims(x_aval.ndim, x_contract, x_batch)
    y_kept = _free_dims(len(get_aval(y).shape), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    x_contract_sorted_by_y = tuple(np.take(x_contract, np.argsort(y_contract)).tolist())
    out_axes = np.argsort(x_batch + x_kept + x_contract_sorted_by_y)
    x_bar = st.transpose(dot_general_p.bind(ct, y, dimension_numbers=dims, precision=precision,
                                            preferred_element_type=preferred_element_type,
                                            out_sharding=_typed_like(x_aval, out_axes)),
                         tuple(out_axes.tolist()))
    if get_aval(x_bar).dtype != x_aval.dtype:
        x_bar = ew.convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
    return x_bar


def _typed_like(x_aval, out_axes):
    """The result type that, permuted by out_axes, is x's (None when x is untyped): a
    cotangent has its primal's sharding, as in JAX; that of a reduced primal is unreduced
    (each device's partial sum, left for the user's reshard)."""
    sharding = cotangent_sharding(x_aval)
    if sharding is None:
        return None
    x_spec = sharding.spec._normalized_spec_for_aval(x_aval.ndim).partitions
    entries = [None] * len(x_spec)
    for k, a in enumerate(out_axes):
        entries[a] = x_spec[k]
    return sharding.update(spec=P(*entries, unreduced=sharding.spec.unreduced))


def _transpose_rhs(ct, x, y_aval, *, dimension_numbers, **params):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _transpose_lhs(ct, y_aval, x, dimension_numbers=swapped, swap_ans=True, **params)


def _dot_general_transpose(ct, lhs, rhs, *, out_sharding, **params):
    lin_lhs, lin_rhs = ad.is_undefined_primal(lhs), ad.is_undefined_primal(rhs)
    if lin_lhs and lin_rhs:
        raise ValueError("dot_general is bilinear, not linear: it can be transposed with "
                         "respect to one operand only, with the other one known")
    if type(ct) is Zero:
        return [Zero(lhs.aval) if lin_lhs else None, Zero(rhs.aval) if lin_rhs else None]
    if lin_lhs:
        return [_transpose_lhs(ct, lhs.aval, rhs, **params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


dot_general_p.def_transpose(_dot_general_transpose)


def _bump(dims, b):
    """Dimension indices after inserting a new dimension at b."""
    return tuple(d + (d >= b) for d in dims)


def _batched_dimension_numbers(lhs_ndim, rhs_ndim, lbd, rbd, dimension_numbers):
    """New dimension numbers and the output's batch dim when lhs and/or rhs is vmapped."""
    (lc, rc), (lb, rb) = dimension_numbers
    if lbd is not None and rbd is not None:
        # Both mapped: the vmapped dims become a leading dot_general batch dimension.
        return ((_bump(lc, lbd), _bump(rc, rbd)),
                ((lbd,) + _bump(lb, lbd), (rbd,) + _bump(rb, rbd))), 0
    if rbd is None:
        # Only lhs mapped: its vmapped dim becomes one of lhs's free dims.
        free = _free_dims(lhs_ndim, _bump(lc, lbd), _bump(lb, lbd))
        return ((_bump(lc, lbd), rc), (_bump(lb, lbd), rb)), len(lb) + free.index(lbd)
    free = _free_dims(rhs_ndim, _bump(rc, rbd), _bump(rb, rbd))
    out_dim = lhs_ndim - len(lc) + free.index(rbd)
    return ((lc, _bump(rc, rbd)), (lb, _bump(rb, rbd))), out_dim


def _dot_general_batch(axis_data, vals, dims, *, dimension_numbers, out_sharding, **params):
    (lhs, rhs), (lbd, rbd) = vals, dims
    new_dims, out_dim = _batched_dimension_numbers(
        len(get_aval(lhs).shape), len(get_aval(rhs).shape), lbd, rbd, dimension_numbers)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=new_dims,
                              out_sharding=insert_dim(out_sharding, out_dim), **params), out_dim


dot_general_p.def_batch(_dot_general_batch)


@dot_general_p.def_sharding
def _dot_general_sharding(in_specs, in_avals, out_avals, *, dimension_numbers,
                          out_sharding=None, **_):
    """Batch dimensions keep the entry both operands agree on; free dimensions keep theirs
    (the result type out_sharding= gives, if any, decides)."""
    if out_sharding is not None:
        if out_sharding.spec.unreduced:
            _check_unreduced(in_specs, dimension_numbers, out_sharding.spec.unreduced)
        return [param_spec(out_sharding, out_avals[0].ndim)]
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = in_specs
    if sp.strict():
        _check_dot_types(ls, rs, dimension_numbers)
    lfree = [i for i in range(len(ls)) if i not in lc and i not in lb]
    rfree = [i for i in range(len(rs)) if i not in rc and i not in rb]
    out = [ls[i] if ls[i] == rs[j] or rs[j] is None or sp.strict() else None
           for i, j in zip(lb, rb)]
    out += [ls[i] for i in lfree] + [rs[i] for i in rfree]
    return [tuple(out) if sp.strict() else sp.dedupe(out)]  # typing: an axis used twice fails


def _check_unreduced(in_specs, dimension_numbers, unreduced):
    """An unreduced result (JAX's rule): the contracting dimensions sharded alike, over
    exactly the unreduced axes."""
    (lc, rc), _ = dimension_numbers
    lcs, rcs = tuple(in_specs[0][i] for i in lc), tuple(in_specs[1][i] for i in rc)
    if lcs != rcs:
        raise sp.reject("lhs and rhs contracting dims should be sharded identically when "
                        "out_sharding provided to dot_general mentions unreduced_axes. Got "
                        f"lhs_contracting_spec={lcs}, rhs_contracting_spec={rcs}")
    if frozenset(a for e in lcs for a in axes_of(e)) != unreduced:
        raise sp.reject("out_sharding's unreduced axes should be equal to the contracting "
                        f"specs. Got unreduced axes={unreduced} and contracting spec={lcs}")


def _check_dot_types(ls, rs, dimension_numbers):
    """JAX's refusals on Explicit axes: batch or contracting dimensions sharded on different
    axes, contracting dimensions sharded on both sides (the result's layout would be
    ambiguous)."""
    (lc, rc), (lb, rb) = dimension_numbers
    lbs, rbs = tuple(ls[i] for i in lb), tuple(rs[i] for i in rb)
    lcs, rcs = tuple(ls[i] for i in lc), tuple(rs[i] for i in rc)
    _check_consistent(lbs, rbs, "dot_general requires lhs batch dimensions and rhs batch "
                      f"dimensions to have the consistent sharding, got {lbs} and {rbs}.")
    _check_consistent(lcs, rcs, "dot_general requires contracting dimensions to have "
                      f"consistent sharding, got {lcs} and {rcs}.")
    if any(x is not None and y is not None for x, y in zip(lcs, rcs)):
        raise sp.reject("Contracting dimensions are sharded and it is ambiguous how the output "
                        "should be sharded. Please specify the output sharding via the "
                        "`out_sharding` parameter. Got lhs_contracting_spec="
                        f"{lcs} and rhs_contracting_spec={rcs}")


def _check_consistent(lspec, rspec, message):
    if any(x is not None and y is not None and x != y for x, y in zip(lspec, rspec)):
        raise sp.reject(message)


_KIND_ORDER = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def dot_compute_dtype(lhs_dtype, rhs_dtype, out_dtype):
    """The dtype both backends convert operands to before contracting, as XLA on CPU does:
    mixed operands go to the output type; operands of one type stay in it when the output
    is of a lower kind (complex -> real, float -> integer), the result converted after."""
    order = lambda d: _KIND_ORDER[dtypes.kind(d)]  # noqa: E731
    if lhs_dtype == rhs_dtype and order(out_dtype) < order(lhs_dtype):
        return lhs_dtype
    return out_dtype
