"""The sort, top_k and approx_top_k primitives (sort: lexicographic over num_keys operands,
NaNs last) with all their rules."""
import operator

import numpy as np

from .. import dtypes
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero
from ..transforms.batching import bdim_at_front
from . import structural as st

sort_p = make_primitive("sort", multiple_results=True)


@sort_p.def_abstract_eval
def _sort_abstract_eval(*avals, dimension, is_stable, num_keys):
    if not avals:
        raise TypeError("sort requires at least one operand")
    if any(a.shape != avals[0].shape for a in avals):
        raise TypeError(f"Arguments to sort must have equal shapes, got: "
                        f"{' '.join(str(a.shape) for a in avals)}")
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands {len(avals)}")
    if not 0 <= dimension < avals[0].ndim:
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of shape "
                         f"{avals[0].shape}")
    if any(a.dtype == dtypes.float0 for a in avals):
        raise TypeError("sort does not accept dtype float0 (the tangent type of integer values)")
    return list(avals)


def _canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"sort: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort along `dimension`; NaNs go last and -0.0 equals 0.0. Given a tuple or list of
    arrays, sorts them all by the first num_keys (lexicographically) and returns a tuple."""
    if isinstance(operand, (tuple, list)):
        if not operand:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dim = _canonicalize_axis(dimension, len(get_aval(operand[0]).shape))
        return tuple(sort_p.bind(*operand, dimension=dim, is_stable=bool(is_stable),
                                 num_keys=int(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dim = _canonicalize_axis(dimension, len(get_aval(operand).shape))
    return sort_p.bind(operand, dimension=dim, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort `keys` along `dimension` and apply the same permutation to `values`."""
    dim = _canonicalize_axis(dimension, len(get_aval(keys).shape))
    k, v = sort_p.bind(keys, values, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return k, v


def _has_tangent(t):
    return type(t) is not Zero and get_aval(t).dtype != dtypes.float0


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """Tangents are sorted as extra non-key operands behind the keys, so they get the primals'
    permutation. A separate sort for the primals keeps them off the linear (tangent) side."""
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    outs = sort_p.bind(*primals, **params)
    live = [i for i, t in enumerate(tangents) if _has_tangent(t)]
    sorted_tangents = sort_p.bind(*primals[:num_keys], *[tangents[i] for i in live],
                                  **params)[num_keys:]
    tangents_out = [Zero(get_aval(o).to_tangent_aval()) for o in outs]
    for i, t in zip(live, sorted_tangents):
        tangents_out[i] = t
    return outs, tangents_out


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    if any(ad.is_undefined_primal(k) for k in operands[:num_keys]):
        raise ValueError("sort is not linear in its keys (the first num_keys operands); it can "
                         "only be transposed with respect to the other operands")
    keys = operands[:num_keys]
    iota = st.broadcasted_iota(dtypes.int32, get_aval(keys[0]).shape, dimension)
    perm = sort_p.bind(*keys, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)[-1]
    return [_unpermute(perm, ct, x, dimension) if ad.is_undefined_primal(x) else None
            for x, ct in zip(operands, cts)]


def _unpermute(perm, ct, x, dimension):
    """Apply the inverse of `perm` (out[j] = in[perm[j]]) to ct: sort ct by perm."""
    if type(ct) is Zero:
        return Zero(x.aval)
    return sort_p.bind(perm, ct, dimension=dimension, is_stable=True, num_keys=1)[1]


def _sort_batch(axis_data, vals, dims, *, dimension, **params):
    xs = [bdim_at_front(x, d, axis_data.size) for x, d in zip(vals, dims)]
    outs = sort_p.bind(*xs, dimension=dimension + 1, **params)
    return outs, [0] * len(outs)


sort_p.def_jvp(_sort_jvp)
sort_p.def_transpose(_sort_transpose)
sort_p.def_batch(_sort_batch)


# ---------------------------------------------------------------- top_k, approx_top_k

top_k_p = make_primitive("top_k", multiple_results=True)
approx_top_k_p = make_primitive("approx_top_k", multiple_results=True)


def _top_shapes(operand, k, axis, name):
    if operand.ndim == 0:
        raise TypeError(f"{name} operand must have >= 1 dimension, got {operand.shape}")
    if not -operand.ndim <= axis < operand.ndim:
        raise ValueError(f"{name}: axis argument out of range: axis={axis} for operand.shape="
                         f"{operand.shape}")
    if operand.shape[axis] < k:
        raise ValueError(f"k argument to {name} must be no larger than size along axis; got "
                         f"k={k} with shape={list(operand.shape)} and axis={axis}")
    shape = list(operand.shape)
    shape[axis] = k
    return [ShapedArray(tuple(shape), operand.dtype, weak_type=operand.weak_type),
            ShapedArray(tuple(shape), dtypes.int32, weak_type=operand.weak_type)]


@top_k_p.def_abstract_eval
def _top_k_abstract_eval(operand, *, k, axis):
    if dtypes.kind(operand.dtype) == "c":
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    shapes = _top_shapes(operand, k, axis, "top_k")
    int32_max = int(np.iinfo(np.int32).max)
    if operand.shape[axis] > int32_max:
        raise ValueError(f"top_k returns int32 indices, which will overflow for array dimensions "
                         f"larger than the maximum int32 ({int32_max}). Got "
                         f"operand.shape={operand.shape}")
    return shapes


@approx_top_k_p.def_abstract_eval
def _approx_top_k_abstract_eval(operand, *, k, reduction_dimension, recall_target, is_max_k,
                                reduction_input_size_override, aggregate_to_topk):
    if k <= 0:
        raise ValueError(f"approx_top_k: k must be positive, got {k}")
    if operand.ndim and not dtypes.is_float(operand.dtype):
        raise ValueError(f"approx_top_k: operand must be a floating type, got "
                         f"{operand.dtype.name}")
    avals = _top_shapes(operand, k, reduction_dimension, "approx_top_k")
    if aggregate_to_topk:
        return avals
    return _unaggregated(operand, reduction_dimension)


# XLA's CPU lowering keeps every candidate when the reduced dimension fits one TPU tile (1024
# for rank 1, else 128), so with aggregate_to_topk=False the output is the whole dimension,
# sorted; past a tile the candidate count follows TPU-specific rules refjax does not model.
def _unaggregated(operand, dim):
    tile = 1024 if operand.ndim == 1 else 128
    if operand.shape[dim] > tile:
        raise NotImplementedError(
            f"approx_top_k with aggregate_to_topk=False over a dimension of size "
            f"{operand.shape[dim]} > {tile}: the number of candidates XLA returns there is "
            f"TPU-specific; pass aggregate_to_topk=True")
    return [ShapedArray(operand.shape, operand.dtype, weak_type=operand.weak_type),
            ShapedArray(operand.shape, dtypes.int32, weak_type=operand.weak_type)]


def top_k(operand, k, *, axis=-1):
    """The k largest entries along `axis` and their int32 indices (lax.top_k): NaN above +inf,
    -NaN below -inf, -0.0 below +0.0; equal entries in index order."""
    k = operator.index(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    ndim = len(get_aval(operand).shape)
    axis = operator.index(axis)
    axis = axis % ndim if ndim and -ndim <= axis < ndim else axis
    return top_k_p.bind(operand, k=k, axis=axis)


def _approx(is_max_k):
    def approx_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
        return approx_top_k_p.bind(
            operand, k=operator.index(k), reduction_dimension=operator.index(reduction_dimension),
            recall_target=float(recall_target), is_max_k=is_max_k,
            reduction_input_size_override=operator.index(reduction_input_size_override),
            aggregate_to_topk=bool(aggregate_to_topk))
    approx_k.__name__ = "approx_max_k" if is_max_k else "approx_min_k"
    approx_k.__doc__ = (f"The k {'largest' if is_max_k else 'smallest'} entries along "
                        "reduction_dimension and their int32 indices (lax.approx_" +
                        ("max" if is_max_k else "min") + "_k). Exact in refjax (as XLA's CPU "
                        "lowering): -0.0 equals +0.0, equal entries in index order.")
    return approx_k


approx_max_k = _approx(True)
approx_min_k = _approx(False)


def _take_along(x, idx, axis):
    """x[..., idx, ...] along `axis` (idx of x's shape except there): a batched gather."""
    from .elementwise import full
    from .gather import GatherDimensionNumbers, gather
    aval = get_aval(idx)
    rank = len(aval.shape)
    if 0 in get_aval(x).shape:  # nothing to gather (a gather cannot slice an empty dimension)
        return full(aval.shape, 0, get_aval(x).dtype)
    others = tuple(i for i in range(rank) if i != axis)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                   start_index_map=(axis,), operand_batching_dims=others,
                                   start_indices_batching_dims=others)
    return gather(x, st.expand_dims(idx, (rank,)), dnums, (1,) * rank)


def _selection_jvp(prim, axis_param):
    def jvp(primals, tangents, **params):
        values, idx = prim.bind(*primals, **params)
        (t,) = tangents
        if type(t) is Zero:
            return [values, idx], [Zero(get_aval(values).to_tangent_aval()),
                                   Zero(get_aval(idx).to_tangent_aval())]
        axis = params[axis_param] % len(get_aval(idx).shape)
        return [values, idx], [_take_along(t, idx, axis), Zero(get_aval(idx).to_tangent_aval())]
    prim.def_jvp(jvp)


def _selection_batch(prim, axis_param):
    def batch(axis_data, vals, dims, **params):
        (x,), (d,) = vals, dims
        ndim = len(get_aval(x).shape) - 1
        axis = params[axis_param] % ndim if ndim else params[axis_param]
        params = dict(params, **{axis_param: axis + 1 if d <= axis else axis})
        return prim.bind(x, **params), [d, d]
    prim.def_batch(batch)


_selection_jvp(top_k_p, "axis")
_selection_jvp(approx_top_k_p, "reduction_dimension")
_selection_batch(top_k_p, "axis")
_selection_batch(approx_top_k_p, "reduction_dimension")
sort_p.def_sharding(sp.unsharded_dim(
    "dimension", "Arguments to sort must be unsharded over the sorting dimension. Got arg "
    "sharding={sharding} and sorting dimension={dim}"))
top_k_p.def_sharding(sp.unsharded_dim(
    "axis", "The input should be unsharded over the axis along which to compute the top_k "
    "values. Got input type={aval} and axis={dim}"))
approx_top_k_p.def_sharding(sp.unsharded_dim(
    "reduction_dimension", "reduction dimension {dim} in operand {short} should be unsharded "
    "i.e. the spec of that dim should be `None`."))
