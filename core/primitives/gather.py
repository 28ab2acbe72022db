"""Gather and scatter primitives (gather, scatter-add, scatter) with all their rules.

The dimension numbers, modes and params are those JAX's gather_p / scatter_add_p / scatter_p
bind (XLA's Gather and Scatter, with the index vector always the last dimension of the
indices). The scatters carry no update_jaxpr (the combiner is the primitive); they print
JAX's, made from the primitive (`_pp_scatter`)."""
import enum
from typing import NamedTuple

import numpy as np

from .. import dtypes, key_reuse
from .. import sharding_propagation as sp
from ..avals import ShapedArray
from ..jaxpr import Jaxpr, JaxprEqn, Var
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero
from ..transforms.batching import bdim_at_front, moveaxis, not_mapped
from . import structural as st
from .gather_types import gather_auto, gather_rule, scatter_rule
from ..sharding import P
from ..sharding_types import is_typed, typed_aval
from . import elementwise as ew
from .elementwise import add, div, eq, full, mul, neg, select_n, sub
from .elementwise import max as max_


class GatherDimensionNumbers(NamedTuple):
    """How a gather reads windows of the operand (as jax.lax.GatherDimensionNumbers).

    offset_dims: output dims holding the window (slice) dims; collapsed_slice_dims: operand
    dims of slice size 1 left out of the output; start_index_map: the operand dim each
    component of an index vector starts; operand_batching_dims / start_indices_batching_dims:
    operand and indices dims indexed together (a batch of independent gathers)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter writes windows of the updates (as jax.lax.ScatterDimensionNumbers)."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do. CLIP: clamped so the window is in bounds. FILL_OR_DROP:
    a gathered window is filled with fill_value, a scattered window is dropped.
    PROMISE_IN_BOUNDS: the caller promises in-bounds indices (gather clamps, scatter drops)."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    @staticmethod
    def from_any(mode):
        """A mode from a GatherScatterMode (refjax's or JAX's), its name, or None
        (FILL_OR_DROP, JAX's default for scatters)."""
        if mode is None:
            return GatherScatterMode.FILL_OR_DROP
        if isinstance(mode, GatherScatterMode):
            return mode
        name = getattr(mode, "name", mode)
        aliases = {"clip": "CLIP", "fill": "FILL_OR_DROP", "drop": "FILL_OR_DROP",
                   "promise_in_bounds": "PROMISE_IN_BOUNDS"}
        try:
            return GatherScatterMode[aliases.get(name, name)]
        except KeyError:
            raise ValueError(f"Unknown gather mode {mode!r}: use 'clip', 'fill' or "
                             f"'promise_in_bounds'") from None


_FILL, _CLIP = GatherScatterMode.FILL_OR_DROP, GatherScatterMode.CLIP


def _ints(dims):
    return tuple(int(d) for d in dims)


def gather_dnums(dn):
    """refjax GatherDimensionNumbers from any object with JAX's fields (JAX's own included)."""
    return GatherDimensionNumbers(*(_ints(getattr(dn, f, ()))
                                    for f in GatherDimensionNumbers._fields))


def scatter_dnums(dn):
    """refjax ScatterDimensionNumbers from any object with JAX's fields."""
    return ScatterDimensionNumbers(*(_ints(getattr(dn, f, ()))
                                     for f in ScatterDimensionNumbers._fields))


def default_fill_value(dtype):
    """JAX's fill for FILL_OR_DROP gathers: NaN (inexact), the minimum (signed), the maximum
    (unsigned), True (bool)."""
    k = dtypes.kind(dtype)
    if k in "fc":
        return np.nan
    if k == "i":
        return int(np.iinfo(dtype).min)
    if k == "u":
        return int(np.iinfo(dtype).max)
    return True


# ---------------------------------------------------------------- shape checks

def _op(name):
    """The op JAX's messages name: "gather", or "scatter" for every scatter primitive."""
    return "gather" if name == "gather" else "scatter"


def _sorted(name, dims, what):
    if list(dims) != sorted(dims):
        raise TypeError(f"{name}: {what} in {_op(name)} op must be sorted; got {dims}")


def _unique(name, dims, what):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name}: {what} in {_op(name)} op must not repeat; got: {dims}.")


def _in_range(name, dims, rank, what):
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"{name}: Invalid {what} set in {_op(name)} op; valid range is "
                            f"[0, {rank}); got: {d}.")


def _check_dims(name, dims, rank, what):
    """dims sorted, without repeats, each in [0, rank) (checked in JAX's order)."""
    _sorted(name, dims, what)
    _unique(name, dims, what)
    _in_range(name, dims, rank, what)


def _disjoint(name, a, b, what_a, what_b):
    if set(a) & set(b):
        raise TypeError(f"{name}: {what_a} and {what_b} in {_op(name)} op must be disjoint; "
                        f"got: {a} and {b}.")


def _check_indices(name, indices):
    if not dtypes.is_int(indices.dtype):
        raise ValueError(f"{name}: indices must have an integer type, got {indices.str_short()}")
    if indices.ndim < 1:
        raise TypeError(f"{name}: indices must have rank >= 1 (their last dimension is the index "
                        f"vector); got indices of shape {indices.shape}")


def _check_batching(name, operand, indices, dn, index_map, index_what):
    """The operand's and the indices' batching dims (dn's last two fields), JAX's checks in
    JAX's order; `index_map` (start_index_map or scatter_dims_to_operand_dims) must avoid the
    operand's."""
    operand_bdims, indices_bdims = dn[-2], dn[-1]
    op = _op(name).capitalize()
    _check_dims(name, operand_bdims, operand.ndim, "operand_batching_dims")
    _disjoint(name, dn[1], operand_bdims, dn._fields[1], "operand_batching_dims")
    _disjoint(name, index_map, operand_bdims, dn._fields[2], "operand_batching_dims")
    _unique(name, indices_bdims, index_what)
    _in_range(name, indices_bdims, indices.ndim, index_what)
    if indices.ndim - 1 in indices_bdims:
        raise TypeError(f"{name}: {op} op cannot have the index vector dimension as a batching "
                        f"dimension; got {indices_bdims}.")
    if len(operand_bdims) != len(indices_bdims):
        raise TypeError(f"{name}: {op} op requires equal numbers of operand_batching_dims and "
                        f"{index_what}, got {operand_bdims} and {indices_bdims}.")
    operand_shape = tuple(operand.shape[o] for o in operand_bdims)
    indices_shape = tuple(indices.shape[i] for i in indices_bdims)
    if operand_shape != indices_shape:
        raise TypeError(f"{name}: {op} op requires operand batching dimensions and indices "
                        f"batching dimensions to have the same shape, got {operand_shape} and "
                        f"{indices_shape}.")


def _check_index_map(name, operand, indices, index_map, what):
    op, vector_dim = _op(name).capitalize(), indices.ndim - 1
    if len(index_map) != indices.shape[-1]:
        raise TypeError(f"{name}: {op} op has {len(index_map)} elements in {what} and the bound "
                        f"of dimension index_vector_dim={vector_dim} of indices is "
                        f"{indices.shape[-1]}. These two numbers must be equal.")
    for i, d in enumerate(index_map):
        if not 0 <= d < operand.ndim:
            mapping = "start_index_map" if op == "Gather" else f"{what} mapping"
            raise TypeError(f"{name}: Invalid {mapping}; domain is [0, {operand.ndim}), got: "
                            f"{i}->{d}.")
    _unique(name, index_map, what)


def _check_offset_dims(name, dims, rank):
    _sorted(name, dims, "offset_dims")
    _unique(name, dims, "offset_dims")
    for i, d in enumerate(dims):
        if not 0 <= d < rank:
            raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, but "
                            f"should have been in [0, {rank})")


# ---------------------------------------------------------------- gather

gather_p = make_primitive("gather")


@gather_p.def_abstract_eval
def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes,
                          indices_are_sorted, unique_indices, mode, fill_value):
    dn, name = dimension_numbers, "gather"
    _check_indices(name, indices)
    _check_offset_dims(name, dn.offset_dims, len(dn.offset_dims) + indices.ndim - 1)
    _check_index_map(name, operand, indices, dn.start_index_map, "start_index_map")
    _check_dims(name, dn.collapsed_slice_dims, operand.ndim, "collapsed_slice_dims")
    _check_batching(name, operand, indices, dn, dn.start_index_map,
                    "start_indices_batching_dims")
    _check_slice_sizes(operand, dn, slice_sizes)
    return ShapedArray(_gather_shape(indices.shape, dn, slice_sizes), operand.dtype,
                       weak_type=operand.weak_type)


def _check_slice_sizes(operand, dn, slice_sizes):
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather: Gather op must have one slice size for every input "
                        f"dimension; got: len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim} "
                        f"(operand of shape {operand.shape})")
    dropped = dn.collapsed_slice_dims + dn.operand_batching_dims
    if len(dn.offset_dims) + len(dropped) != operand.ndim:
        # JAX's grammar ("a offset") kept: its tests match the phrase
        raise TypeError(f"All components of the offset index in a gather op must either be a "
                        f"offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, offset_dims={dn.offset_dims}, "
                        f"collapsed_slice_dims={dn.collapsed_slice_dims}, "
                        f"operand_batching_dims={dn.operand_batching_dims}.")
    for i, (s, d) in enumerate(zip(slice_sizes, operand.shape)):
        if not 0 <= s <= d:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {d} + 1), got {s}.")
    for i, d in enumerate(dn.collapsed_slice_dims):
        if slice_sizes[d] != 1:
            raise TypeError(f"gather: Gather op can only collapse slice dims with bound 1, but "
                            f"bound is {slice_sizes[d]} for index {d} at position {i}.")
    for i, d in enumerate(dn.operand_batching_dims):
        if slice_sizes[d] > 1:
            raise TypeError(f"gather: Gather op can only have operand batching dims with bound "
                            f"0/1, but bound is {slice_sizes[d]} for index {d} at position {i}.")


def _gather_shape(indices_shape, dn, slice_sizes):
    dropped = dn.collapsed_slice_dims + dn.operand_batching_dims
    window = iter(s for i, s in enumerate(slice_sizes) if i not in dropped)
    batch = iter(indices_shape[:-1])
    rank = len(dn.offset_dims) + len(indices_shape) - 1
    return tuple(next(window) if i in dn.offset_dims else next(batch) for i in range(rank))


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """Windows of `operand` of size `slice_sizes` starting at `start_indices` (lax.gather):
    mode None is PROMISE_IN_BOUNDS, as in JAX; FILL_OR_DROP fills out-of-bounds windows with
    fill_value (default: NaN, the dtype's minimum (signed), maximum (unsigned) or True)."""
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
        GatherScatterMode.from_any(mode)
    if mode is _FILL and fill_value is None:
        fill_value = default_fill_value(get_aval(operand).dtype)
    elif mode is not _FILL:
        fill_value = None
    return gather_p.bind(operand, start_indices,
                         dimension_numbers=gather_dnums(dimension_numbers),
                         slice_sizes=_ints(slice_sizes),
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=mode, fill_value=fill_value)


def _gather_jvp(primals, tangents, **params):
    (x, idx), (t, _) = primals, tangents
    out = gather_p.bind(x, idx, **params)
    if type(t) is Zero or get_aval(t).dtype == dtypes.float0:
        return out, Zero(get_aval(out).to_tangent_aval())
    fill = 0 if params["mode"] is _FILL else None   # the tangent of a fill is zero
    return out, gather_p.bind(t, idx, **dict(params, fill_value=fill))


def _gather_transpose(ct, x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted,
                      unique_indices, mode, fill_value):
    if ad.is_undefined_primal(idx):
        raise ValueError("gather is not linear in its indices")
    if type(ct) is Zero:
        return [Zero(x.aval), None]
    zeros = ad.zeros_like_aval(x.aval.update(dtype=get_aval(ct).dtype, weak_type=False))
    ct_x = scatter_add_p.bind(zeros, idx, ct, dimension_numbers=_as_scatter(dimension_numbers),
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode)
    return [ct_x, None]


def _as_scatter(dn):
    """The scatter dimension numbers writing back what a gather with `dn` reads."""
    return ScatterDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                                   dn.operand_batching_dims, dn.start_indices_batching_dims)


def _as_gather(dn):
    """The gather dimension numbers reading back what a scatter with `dn` writes."""
    return GatherDimensionNumbers(dn.update_window_dims, dn.inserted_window_dims,
                                  dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                                  dn.scatter_indices_batching_dims)


def _shift(dims):
    return tuple(d + 1 for d in dims)


def _gather_batch(axis_data, vals, dims, *, dimension_numbers, slice_sizes, **params):
    (x, idx), (dx, di), dn = vals, dims, dimension_numbers
    if di is not_mapped:   # the batch dim becomes a window dim spanning the whole axis
        dn = GatherDimensionNumbers((0,) + _shift(dn.offset_dims), _shift(dn.collapsed_slice_dims),
                                    _shift(dn.start_index_map), _shift(dn.operand_batching_dims),
                                    dn.start_indices_batching_dims)
        sizes = (axis_data.size,) + slice_sizes
        return gather_p.bind(moveaxis(x, dx, 0), idx, dimension_numbers=dn, slice_sizes=sizes,
                             **params), 0
    idx = moveaxis(idx, di, 0)
    if dx is not_mapped:   # the batch dim is one more batch dim of the indices; lanes may
        # read the same window, so the indices are no longer sorted or unique (JAX's)
        dn = dn._replace(offset_dims=_shift(dn.offset_dims),
                         start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
        params = dict(params, indices_are_sorted=False, unique_indices=False)
        return gather_p.bind(x, idx, dimension_numbers=dn, slice_sizes=slice_sizes, **params), 0
    dn = GatherDimensionNumbers(_shift(dn.offset_dims), _shift(dn.collapsed_slice_dims),
                                _shift(dn.start_index_map), (0,) + _shift(dn.operand_batching_dims),
                                (0,) + _shift(dn.start_indices_batching_dims))
    return gather_p.bind(moveaxis(x, dx, 0), idx, dimension_numbers=dn,
                         slice_sizes=(1,) + slice_sizes, **params), 0


gather_p.def_jvp(_gather_jvp)
gather_p.def_transpose(_gather_transpose)
gather_p.def_batch(_gather_batch)
gather_p.def_key_reuse(key_reuse.forward_rule)
gather_p.def_sharding(sp.typed_or(gather_rule, gather_auto))


def batched_dynamic_slice(axis_data, vals, dims, slice_sizes):
    """dynamic_slice with batched start indices, batched as JAX batches it: one gather
    reading each lane's window (clamped in bounds, as dynamic_slice clamps), so that
    sharded operands are typed by the gather's rule."""
    (x, *idx), (dx, *didx) = vals, dims
    everything = tuple(range(len(slice_sizes)))
    dn = GatherDimensionNumbers(everything, (), everything)
    return _gather_batch(axis_data, [x, _lane_indices(idx, didx, axis_data.size)], [dx, 0],
                         dimension_numbers=dn, slice_sizes=slice_sizes, indices_are_sorted=True,
                         unique_indices=True, mode=_CLIP, fill_value=None)


def batched_dynamic_update_slice(axis_data, vals, dims):
    """dynamic_update_slice with batched start indices: one scatter writing each lane's
    update (clamped in bounds), as JAX batches it."""
    (x, u, *idx), (dx, du, *didx) = vals, dims
    everything = tuple(range(len(idx)))
    dn = ScatterDimensionNumbers(everything, (), everything)
    return scatter_p.batch(axis_data, [x, _lane_indices(idx, didx, axis_data.size), u],
                           [dx, 0, du], dimension_numbers=dn, indices_are_sorted=True,
                           unique_indices=True, mode=_CLIP)


def _lane_indices(idx, dims, size):
    """The scalar start indices, some batched (along dim 0), as one (size, n) index array
    typed as the batched ones are along their batch dimension (JAX's)."""
    batched = next(i for i, d in zip(idx, dims) if d is not not_mapped)
    sharding = _typed_sharding(batched)
    out = None if sharding is None else sharding.update(spec=P(sharding.spec[0], None))
    return st.concatenate([st.broadcast_in_dim(
        i, (size, 1), (0,) if d is not not_mapped else (), out_sharding=out)
        for i, d in zip(idx, dims)], 1)


def _typed_sharding(x):
    aval = typed_aval(x)
    return aval.sharding if is_typed(aval) else None


# ------------------------------------------------- scatter-add, -mul, -min, -max, scatter

scatter_add_p = make_primitive("scatter-add")
scatter_sub_p = make_primitive("scatter-sub")
scatter_mul_p = make_primitive("scatter-mul")
scatter_min_p = make_primitive("scatter-min")
scatter_max_p = make_primitive("scatter-max")
scatter_p = make_primitive("scatter")


def _scatter_abstract_eval(name, operand, indices, updates, dn):
    _check_indices(name, indices)
    if operand.dtype != updates.dtype:
        raise TypeError(f"{name} requires the operand and the updates to have the same dtype, "
                        f"got {operand.dtype.name}, {updates.dtype.name}.")
    _check_dims(name, dn.update_window_dims, updates.ndim, "update_window_dims")
    _check_dims(name, dn.inserted_window_dims, operand.ndim, "inserted_window_dims")
    _check_batching(name, operand, indices, dn, dn.scatter_dims_to_operand_dims,
                    "scatter_indices_batching_dims")
    window = len(dn.update_window_dims) + len(dn.inserted_window_dims) + \
        len(dn.operand_batching_dims)
    if window != operand.ndim:
        raise TypeError(f"{name}: Scatter op has window of size {window}; doesn't match operand "
                        f"of rank {operand.ndim}.")
    _check_index_map(name, operand, indices, dn.scatter_dims_to_operand_dims,
                     "scatter_dims_to_operand_dims")
    _check_updates_shape(name, operand, indices, updates, dn)
    return ShapedArray(operand.shape, operand.dtype, weak_type=operand.weak_type)


def _check_updates_shape(name, operand, indices, updates, dn):
    rank = len(dn.update_window_dims) + indices.ndim - 1
    if updates.ndim != rank:
        raise TypeError(f"{name}: Updates tensor must be of rank {rank}; got {updates.ndim} "
                        f"(updates of shape {updates.shape}).")
    dropped = dn.inserted_window_dims + dn.operand_batching_dims
    bounds = [d for i, d in enumerate(operand.shape) if i not in dropped]
    for i, w in enumerate(dn.update_window_dims):
        if updates.shape[w] > bounds[i]:
            raise TypeError(f"{name}: Bounds of the window dimensions of updates must not exceed "
                            f"the bounds of the corresponding dimensions of operand. For "
                            f"dimension {w}, updates bound is {updates.shape[w]}, operand bound "
                            f"is {bounds[i]}.")
    scatter_dims = [i for i in range(updates.ndim) if i not in dn.update_window_dims]
    for i, (u, b) in enumerate(zip(scatter_dims, indices.shape[:-1])):
        if updates.shape[u] != b:
            raise TypeError(f"{name}: Bounds of the scatter dimensions of updates must be the "
                            f"same as the bounds of the corresponding dimensions of scatter "
                            f"indices. For scatter dimension {i}, updates bound is "
                            f"{updates.shape[u]}, indices bound is {b}.")


def _def_scatter_abstract_eval(prim, accepts_bool=True, combines="adds"):
    """The abstract eval of a scatter primitive; arithmetic combiners reject bool."""
    def abstract_eval(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                      unique_indices, mode):
        if not accepts_bool and operand.dtype == dtypes.bool_:
            raise TypeError(f"{prim.name} does not accept dtype bool (it {combines}); accepted "
                            f"dtypes are subtypes of integer, floating, complexfloating. Use "
                            f"scatter for bool.")
        return _scatter_abstract_eval(prim.name, operand, indices, updates, dimension_numbers)
    prim.def_abstract_eval(abstract_eval)
    prim.def_sharding(scatter_rule)


_def_scatter_abstract_eval(scatter_add_p, accepts_bool=False, combines="adds")
_def_scatter_abstract_eval(scatter_sub_p, accepts_bool=False, combines="subtracts")
_def_scatter_abstract_eval(scatter_mul_p, accepts_bool=False, combines="multiplies")
_def_scatter_abstract_eval(scatter_min_p)
_def_scatter_abstract_eval(scatter_max_p)
_def_scatter_abstract_eval(scatter_p)


def _bind_scatter(prim, operand, scatter_indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode):
    return prim.bind(operand, scatter_indices, updates,
                     dimension_numbers=scatter_dnums(dimension_numbers),
                     indices_are_sorted=bool(indices_are_sorted),
                     unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode))


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """operand with each window of `updates` added at its index (lax.scatter_add); repeated
    indices accumulate; mode None is FILL_OR_DROP (out-of-bounds windows are dropped)."""
    return _bind_scatter(scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """operand with each window of `updates` subtracted at its index (lax.scatter_sub);
    repeated indices accumulate; mode None is FILL_OR_DROP."""
    return _bind_scatter(scatter_sub_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """operand with each element a window of `updates` reaches multiplied by it
    (lax.scatter_mul); repeated indices multiply; mode None is FILL_OR_DROP."""
    return _bind_scatter(scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """operand with each element the minimum of itself and the updates that reach it
    (lax.scatter_min); mode None is FILL_OR_DROP."""
    return _bind_scatter(scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """operand with each element the maximum of itself and the updates that reach it
    (lax.scatter_max); mode None is FILL_OR_DROP."""
    return _bind_scatter(scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """operand with each window of `updates` written at its index (lax.scatter); which of
    several updates of one element wins is unspecified, as in JAX."""
    return _bind_scatter(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


def _aval(x):
    return x.aval if ad.is_undefined_primal(x) else typed_aval(x)


def _slice_sizes(operand_shape, dn, updates_shape):
    """The slice sizes of the gather that reads back a scatter's windows."""
    windows = iter(updates_shape[w] for w in dn.update_window_dims)
    dropped = dn.inserted_window_dims + dn.operand_batching_dims
    return tuple(1 if i in dropped else next(windows) for i in range(len(operand_shape)))


def _gather_back(ct, idx, dn, operand_shape, updates_shape, params):
    """The windows of ct a scatter with `dn` writes (out-of-bounds ones read as zeros)."""
    mode = params["mode"]
    return gather_p.bind(ct, idx, dimension_numbers=_as_gather(dn),
                         slice_sizes=_slice_sizes(operand_shape, dn, updates_shape),
                         indices_are_sorted=params["indices_are_sorted"],
                         unique_indices=params["unique_indices"], mode=mode,
                         fill_value=0 if mode is _FILL else None)


def _additive_jvp(prim):
    """scatter-add and scatter-sub are linear in the operand and the updates jointly."""
    def jvp(primals, tangents, *, dimension_numbers, **params):
        (x, idx, u), (tx, _, tu) = primals, tangents
        out = prim.bind(x, idx, u, dimension_numbers=dimension_numbers, **params)
        if type(tx) is Zero and type(tu) is Zero:
            return out, Zero(get_aval(out).to_tangent_aval())
        return out, prim.bind(ad.instantiate(tx), idx, ad.instantiate(tu),
                              dimension_numbers=dimension_numbers, **params)
    prim.def_jvp(jvp)


def _additive_transpose(prim, negate):
    """The operand's cotangent is ct; the updates' the windows of ct they reach (negated for
    scatter-sub)."""
    def transpose(ct, x, idx, u, *, dimension_numbers, **params):
        if ad.is_undefined_primal(idx):
            raise ValueError(f"{prim.name} is not linear in its indices")
        if type(ct) is Zero:
            return [Zero(x.aval) if ad.is_undefined_primal(x) else None, None,
                    Zero(u.aval) if ad.is_undefined_primal(u) else None]
        ct_x = ct if ad.is_undefined_primal(x) else None
        ct_u = None
        if ad.is_undefined_primal(u):
            ct_u = _gather_back(ct, idx, dimension_numbers, _aval(x).shape, u.aval.shape, params)
            ct_u = neg(ct_u) if negate else ct_u
        return [ct_x, None, ct_u]
    prim.def_transpose(transpose)


def _zero_cotangents(x, u):
    """Symbolic zero cotangents of the undefined primals among (operand, updates)."""
    return [Zero(x.aval) if ad.is_undefined_primal(x) else None, None,
            Zero(u.aval) if ad.is_undefined_primal(u) else None]


def _scatter_mul_jvp(primals, tangents, *, dimension_numbers, **params):
    """Linear in the operand (its tangent is scaled by the same updates); in the updates, the
    product rule (see _scatter_mul_updates_tangent)."""
    (x, idx, u), (tx, _, tu) = primals, tangents
    bind = lambda p, *a: p.bind(*a, dimension_numbers=dimension_numbers, **params)  # noqa: E731
    out = bind(scatter_mul_p, x, idx, u)
    t_out = Zero(get_aval(out).to_tangent_aval())
    if _no_tangent(out, tx, tu):
        return out, t_out
    if type(tx) is not Zero:
        t_out = bind(scatter_mul_p, tx, idx, u)
    if type(tu) is not Zero:
        t_out = ad.add_tangents(t_out, _scatter_mul_updates_tangent(
            x, idx, u, tu, dimension_numbers, params))
    return out, t_out


def _scatter_mul_updates_tangent(x, idx, u, tu, dn, params):
    """Each update's tangent times the operand element and the other updates reaching it.
    With unique_indices, JAX's rule: the operand times the scattered tangents. Otherwise
    (where JAX raises NotImplementedError) the product of the others is P, the product of the
    operand element and the non-zero updates reaching it, divided by the update when it is
    non-zero; P itself for a zero update; 0 when another zero update reaches the element."""
    bind = lambda p, *a: p.bind(*a, dimension_numbers=dn, **params)  # noqa: E731
    aval, u_shape = get_aval(x), get_aval(u).shape
    zeros_x = full(aval.shape, 0, aval.dtype)
    if params["unique_indices"]:
        return mul(x, bind(scatter_add_p, zeros_x, idx, tu))
    back = lambda a: _gather_back(a, idx, dn, aval.shape, u_shape, params)  # noqa: E731
    zero, one = full(u_shape, 0, aval.dtype), full(u_shape, 1, aval.dtype)
    is_zero = eq(u, zero)
    nonzero_u = select_n(is_zero, u, one)
    product = back(bind(scatter_mul_p, x, idx, nonzero_u))
    zero_count = select_n(is_zero, zero, one)
    other_zeros = sub(back(bind(scatter_add_p, zeros_x, idx, zero_count)), zero_count)
    others = select_n(eq(other_zeros, zero), zero, div(product, nonzero_u))
    return bind(scatter_add_p, zeros_x, idx, mul(tu, others))


def _scatter_mul_transpose(ct, x, idx, u, *, dimension_numbers, **params):
    if ad.is_undefined_primal(idx):
        raise ValueError("scatter-mul is not linear in its indices")
    if ad.is_undefined_primal(u):
        raise NotImplementedError("scatter-mul is not linear in its updates: it has a "
                                  "transpose rule for the operand only")
    if type(ct) is Zero:
        return _zero_cotangents(x, u)
    return [scatter_mul_p.bind(ct, idx, u, dimension_numbers=dimension_numbers, **params),
            None, None]


def _scatter_extremal_jvp(prim):
    """JAX's rule: the tangent at an element is shared equally by the contenders equal to the
    result (the operand element and the updates reaching it), so that ties split it as
    lax.max/min do. Per update: `won` (it equals the result there), `kept` (the operand
    element does), `winners` and `hits` (the updates reaching its element that win, resp.
    all of them); the operand's own tangent is scattered back with weight (share - 1) per
    hit. Unlike JAX's rule (whose gathers drop out-of-bounds windows), the gathers follow
    the scatter's mode, so CLIP-mode tangents are those of the clamped windows."""
    def jvp(primals, tangents, *, dimension_numbers, **params):
        (x, idx, u), (tx, _, tu) = primals, tangents
        dn = dimension_numbers
        out = prim.bind(x, idx, u, dimension_numbers=dn, **params)
        if _no_tangent(out, tx, tu):
            return out, Zero(get_aval(out).to_tangent_aval())
        tx, tu = ad.instantiate(tx), ad.instantiate(tu)
        shape, u_shape, dtype = get_aval(x).shape, get_aval(u).shape, get_aval(tx).dtype
        back = lambda a: _gather_back(a, idx, dn, shape, u_shape, params)  # noqa: E731
        add_up = lambda v: back(scatter_add_p.bind(  # noqa: E731
            full(shape, 0, dtype), idx, v, dimension_numbers=dn, **params))
        zeros, ones = full(u_shape, 0, dtype), full(u_shape, 1, dtype)
        result = back(out)
        won, kept = eq(u, result), eq(back(x), result)
        winners = add_up(select_n(won, zeros, ones))
        hits = max_(add_up(ones), ones)   # >= 1: out-of-bounds windows are dropped anyway
        share = div(ones, max_(add(winners, select_n(kept, zeros, ones)), ones))
        x_coef = div(sub(select_n(kept, zeros, share), ones), hits)
        t_updates = add(mul(back(tx), x_coef), mul(tu, select_n(won, zeros, share)))
        return out, scatter_add_p.bind(tx, idx, t_updates, dimension_numbers=dn, **params)
    prim.def_jvp(jvp)


def _no_tangent(out, tx, tu):
    """Both tangents symbolic zeros, or an integer / boolean output (float0 tangent)."""
    return (type(tx) is Zero and type(tu) is Zero) or \
        get_aval(out).to_tangent_aval().dtype == dtypes.float0


def _scatter_jvp(primals, tangents, *, dimension_numbers, **params):
    """With unique indices scatter is linear in (operand, updates) jointly. Otherwise, as JAX
    does, tag each update with an id, scatter the ids, gather them back: the elements whose
    id survived (and the operand elements no update overwrote) are the ones the output holds,
    so the tangent is a scatter-add of the tangents masked to them."""
    (x, idx, u), (tx, _, tu) = primals, tangents
    bind = lambda p, *a: p.bind(*a, dimension_numbers=dimension_numbers, **params)  # noqa: E731
    out = bind(scatter_p, x, idx, u)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    tx, tu = ad.instantiate(tx), ad.instantiate(tu)
    if params["unique_indices"]:
        return out, bind(scatter_p, tx, idx, tu)
    kept_x, kept_u = _surviving(x, idx, u, dimension_numbers, params)
    return out, bind(scatter_add_p, _masked(kept_x, tx), idx, _masked(kept_u, tu))


def _surviving(x, idx, u, dn, params):
    """Masks of the operand elements no update overwrites and of the updates that win."""
    shape, u_shape = get_aval(x).shape, get_aval(u).shape
    ids_shape = tuple(1 if i in dn.update_window_dims else d for i, d in enumerate(u_shape))
    n = int(np.prod(ids_shape, dtype=np.int64))
    ids = add(st.reshape(st.iota(dtypes.int32, n), ids_shape), full(ids_shape, 1, dtypes.int32))
    ids = st.broadcast_in_dim(ids, u_shape, tuple(range(len(u_shape))))
    scattered = scatter_p.bind(full(shape, 0, dtypes.int32), idx, ids, dimension_numbers=dn,
                               **params)
    back = _gather_back(scattered, idx, dn, shape, u_shape, params)
    return eq(scattered, full(shape, 0, dtypes.int32)), eq(ids, back)


def _masked(mask, t):
    aval = get_aval(t)
    return select_n(mask, full(aval.shape, 0, aval.dtype), t)


def _scatter_transpose(ct, x, idx, u, *, dimension_numbers, **params):
    if ad.is_undefined_primal(idx):
        raise ValueError("scatter is not linear in its indices")
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True (its JVP uses scatter-add otherwise)")
    if type(ct) is Zero:
        return [Zero(x.aval) if ad.is_undefined_primal(x) else None, None,
                Zero(u.aval) if ad.is_undefined_primal(u) else None]
    u_shape = _aval(u).shape
    ct_x = ct_u = None
    if ad.is_undefined_primal(x):
        zeros = ad.zeros_like_aval(_aval(u).update(dtype=get_aval(ct).dtype, weak_type=False))
        ct_x = scatter_p.bind(ct, idx, zeros, dimension_numbers=dimension_numbers, **params)
    if ad.is_undefined_primal(u):
        ct_u = _gather_back(ct, idx, dimension_numbers, _aval(x).shape, u_shape, params)
    return [ct_x, None, ct_u]


def _scatter_batcher(prim):
    def batch(axis_data, vals, dims, *, dimension_numbers, **params):
        (x, idx, u), (dx, di, du), dn = vals, dims, dimension_numbers
        x, u = bdim_at_front(x, dx, axis_data.size), bdim_at_front(u, du, axis_data.size)
        if di is not_mapped:   # the batch dim is a window dim spanning the whole axis
            dn = ScatterDimensionNumbers(
                (0,) + _shift(dn.update_window_dims), _shift(dn.inserted_window_dims),
                _shift(dn.scatter_dims_to_operand_dims), _shift(dn.operand_batching_dims),
                dn.scatter_indices_batching_dims)
        else:
            idx = moveaxis(idx, di, 0)
            dn = ScatterDimensionNumbers(
                _shift(dn.update_window_dims), _shift(dn.inserted_window_dims),
                _shift(dn.scatter_dims_to_operand_dims), (0,) + _shift(dn.operand_batching_dims),
                (0,) + _shift(dn.scatter_indices_batching_dims))
        return prim.bind(x, idx, u, dimension_numbers=dn, **params), 0
    prim.def_batch(batch)


_additive_jvp(scatter_add_p)
_additive_transpose(scatter_add_p, negate=False)
_additive_jvp(scatter_sub_p)
_additive_transpose(scatter_sub_p, negate=True)
scatter_mul_p.def_jvp(_scatter_mul_jvp)
scatter_mul_p.def_transpose(_scatter_mul_transpose)
_scatter_extremal_jvp(scatter_min_p)
_scatter_extremal_jvp(scatter_max_p)
scatter_p.def_jvp(_scatter_jvp)
scatter_p.def_transpose(_scatter_transpose)
for _p in (scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p, scatter_max_p, scatter_p):
    _scatter_batcher(_p)
scatter_p.def_key_reuse(key_reuse.update_rule(2))


def _pp_scatter(combiner):
    """Printed with JAX's update_consts and update_jaxpr: the scalar combiner JAX traces for
    each scatter (None for scatter), made anew for each printed equation, as JAX's are."""
    def rule(eqn, context):
        return sorted(eqn.params.items()) + [("update_consts", ()), (
            "update_jaxpr", None if combiner is None else _combiner(combiner, eqn.invars[0]))]
    return rule


def _combiner(prim, operand):
    a, b, out = (Var(ShapedArray((), operand.aval.dtype)) for _ in range(3))
    return Jaxpr([], [a, b], [out], [JaxprEqn(prim, [a, b], [out], {})])


for _p, _c in ((scatter_add_p, ew.add_p), (scatter_sub_p, ew.sub_p), (scatter_mul_p, ew.mul_p),
               (scatter_min_p, ew.min_p), (scatter_max_p, ew.max_p), (scatter_p, None)):
    _p.def_pp(_pp_scatter(_c))
