"""Structural primitives (broadcast_in_dim, reshape, squeeze, transpose, rev, slice,
dynamic_slice, dynamic_update_slice, concatenate, iota, copy) with all their rules; pad is in
pad.py (re-exported here)."""
import operator

import numpy as np

from .. import dtypes, errors
from .. import key_reuse as kr
from .. import sharding_propagation as sp
from ..array import Array
from ..avals import ShapedArray
from ..jaxpr import pp_hiding
from ..primitive import make_primitive
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero, deflinear
from ..transforms.batching import bdim_at_front, moveaxis, not_mapped
from .reshape_types import reshape_type
from .sharding_ops import constrain, reshard
from ..sharding import P
from ..sharding_unreduced import sets_of
from ..sharding_types import (concrete_sharding, cotangent_sharding, out_type, param_spec,
                              type_constraint, typed_aval)
from .elementwise import (add, convert_element_type, lt, select_n,
                          weak_scalar)


def _shape(x):
    return tuple(get_aval(x).shape)


def static_ints(name, values, what="shapes"):
    """values as a tuple of Python ints (ints, NumPy integers, concrete integer arrays). A
    float or any other value raises TypeError naming the operation, as in JAX (int() would
    silently truncate 2.5); a traced value raises its own concretization error."""
    try:
        return tuple(operator.index(v) for v in values)
    except errors.JAXTypeError:
        if what != "shapes":
            raise
        # JAX raises a plain TypeError, not a concretization error, for a traced shape.
        raise TypeError(f"{name}: Shapes must be 1D sequences of concrete values of integer "
                        f"type, got {tuple(values)!r}.\nIf using `jit`, try using "
                        "`static_argnums` or applying `jit` to smaller subfunctions (the value "
                        "depends on the arguments of the traced function).") from None
    except TypeError as err:
        if what == "shapes":  # JAX's wording
            raise TypeError(f"{name}: Shapes must be 1D sequences of concrete values of integer "
                            f"type, got {tuple(values)!r}.") from None
        raise TypeError(f"{name}: {what} must be sequences of integers, got {values!r}: "
                        f"{err}") from None


def _as_shape(name, shape):
    return static_ints(name, shape)


# ---------------------------------------------------------------- broadcast_in_dim

broadcast_in_dim_p = make_primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions, sharding=None):
    _check_nonnegative("broadcast_in_dim", shape)
    dims = broadcast_dimensions
    if len(dims) != x.ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to operand "
                        f"ndim; got broadcast_dimensions {dims} for operand ndim {x.ndim}.")
    if x.ndim > len(shape):
        raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or higher rank "
                        f"to the operand shape; got operand ndim {x.ndim} and target broadcast "
                        f"ndim {len(shape)}.")
    if any(not 0 <= d < len(shape) for d in dims):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {dims} for operand ndim {x.ndim} and shape {shape}.")
    if len(set(dims)) != len(dims):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                        f"got broadcast_dimensions {dims}")
    if list(dims) != sorted(dims):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be strictly increasing and "
                        f"within the output rank {len(shape)}; got {dims}")
    for i, d in enumerate(dims):
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            raise TypeError(f"broadcast_in_dim operand dimension sizes must either be 1, or be "
                            f"equal to their corresponding dimensions in the target broadcast "
                            f"shape; got operand of shape {x.shape}, target broadcast shape "
                            f"{shape}, broadcast_dimensions {dims}")
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


# The shape and sharding are the binder's type; no broadcast dimensions need no saying.
broadcast_in_dim_p.def_pp(pp_hiding("shape", "sharding", broadcast_dimensions=()))


def broadcast_in_dim(x, shape, broadcast_dimensions, out_sharding=None):
    """x broadcast to `shape`, operand dim i becoming output dim broadcast_dimensions[i]."""
    shape = _as_shape("broadcast_in_dim", shape)
    dims = _numpy_ints_kept(broadcast_dimensions, static_ints(
        "broadcast_in_dim", broadcast_dimensions, "broadcast_dimensions"))
    if _shape(x) == shape and dims == tuple(range(len(shape))):
        if out_sharding is None:
            return x
        target = out_type(out_sharding, "broadcast_in_dim")
        if _retyped(x, target) and concrete_sharding(target) is not None:
            return reshard(x, concrete_sharding(target))  # as JAX: a reshard, not a broadcast
    typed_as = out_type(out_sharding, "broadcast_in_dim")
    out = broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims, sharding=typed_as)
    return out if typed_as is not None else constrain(out, out_sharding)


def _numpy_ints_kept(given, ints):
    """ints, with the NumPy integers among `given` kept as they were (JAX keeps a param's
    values, and prints np.int64(1) for one)."""
    return tuple(g if isinstance(g, np.integer) else i for g, i in zip(given, ints))


def _retyped(x, sharding):
    """Whether laying x out as `sharding` (a type on Explicit axes, or None) changes its type."""
    aval = typed_aval(x)
    return sharding is not None and type_constraint(aval, sharding) != aval


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding):
    from .reductions import reduce_sum
    in_shape, ct_type = x.aval.shape, cotangent_sharding(x.aval)
    summed = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    expanded = tuple(d for i, d in enumerate(broadcast_dimensions)
                     if in_shape[i] == 1 and shape[d] != 1)
    if not (summed or expanded):
        return [ct]
    kept = [i for i, d in enumerate(broadcast_dimensions) if d not in expanded]
    out = reduce_sum(ct, tuple(sorted(summed + expanded)),
                     out_sharding=_kept_entries(ct_type, kept))
    return [reshape(out, in_shape, out_sharding=ct_type) if expanded else out]


def _kept_entries(sharding, dims):
    """A sharding type (or None) keeping only the entries of dimensions `dims`."""
    if sharding is None:
        return None
    entries = sharding.spec.partitions
    return sharding.update(spec=P(*[entries[i] if i < len(entries) else None for i in dims]))


def _broadcast_in_dim_batch(axis_data, vals, dims, *, shape, broadcast_dimensions, sharding):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return broadcast_in_dim_p.bind(
        x, shape=(axis_data.size,) + shape,
        broadcast_dimensions=(0,) + tuple(b + 1 for b in broadcast_dimensions), sharding=None), 0


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
broadcast_in_dim_p.def_batch(_broadcast_in_dim_batch)


@broadcast_in_dim_p.def_sharding
def _broadcast_in_dim_sharding(in_specs, in_avals, out_avals, *, shape, broadcast_dimensions,
                               sharding=None):
    if sharding is not None:
        return [param_spec(sharding, len(shape))]
    out = [None] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if in_avals[0].shape[i] == shape[d]:
            out[d] = in_specs[0][i]
    return [tuple(out)]


def broadcast(x, sizes):
    """Prepend dimensions of `sizes` to x (lax.broadcast)."""
    shape = tuple(sizes) + _shape(x)
    return broadcast_in_dim(x, shape, tuple(range(len(sizes), len(shape))))


# ---------------------------------------------------------------- reshape

reshape_p = make_primitive("reshape")


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(x, *, new_sizes, dimensions=None, sharding=None):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size or any(d < 0 for d in new_sizes):
        raise ValueError(f"reshape: cannot reshape array of shape {x.shape} (size {x.size}) into shape "
                        f"{tuple(new_sizes)} (size {int(np.prod(new_sizes, dtype=np.int64))})")
    return ShapedArray(new_sizes, x.dtype, weak_type=x.weak_type)


def reshape(x, new_sizes, dimensions=None, out_sharding=None):
    """x with a new shape of the same size (lax.reshape; dimensions permutes first)."""
    new_sizes = _as_shape("reshape", new_sizes)
    if dimensions is not None and tuple(dimensions) != tuple(range(len(_shape(x)))):
        x = transpose(x, tuple(dimensions))
    if _shape(x) == new_sizes and out_sharding is None:
        return x
    typed_as = out_type(out_sharding, "reshape")
    out = reshape_p.bind(x, new_sizes=new_sizes, dimensions=None, sharding=typed_as)
    return out if typed_as is not None else constrain(out, out_sharding)


deflinear(reshape_p, lambda ct, x, **p: [reshape(ct, x.aval.shape,
                                                 out_sharding=cotangent_sharding(x.aval))])


def _reshape_batch(axis_data, vals, dims, *, new_sizes, dimensions, sharding):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return reshape_p.bind(x, new_sizes=(axis_data.size,) + new_sizes, dimensions=None,
                          sharding=None), 0


reshape_p.def_batch(_reshape_batch)


@reshape_p.def_sharding
def _reshape_sharding(in_specs, in_avals, out_avals, *, new_sizes, sharding=None, **_):
    """Dimensions that survive unsplit and unmerged (same size at the same prefix) keep
    their entry; every other dimension is replicated (typing Explicit axes: JAX's rule; the
    result type out_sharding= gives, if any, decides)."""
    if sharding is not None:
        return [param_spec(sharding, len(new_sizes))]
    if sp.strict():
        return [reshape_type(in_avals[0], in_specs[0], new_sizes)]
    old, spec = in_avals[0].shape, in_specs[0]
    out, i, j, po, pn = [None] * len(new_sizes), 0, 0, 1, 1
    while i < len(old) and j < len(new_sizes):
        if po == pn and old[i] == new_sizes[j]:
            out[j] = spec[i]
            po, pn, i, j = po * old[i], pn * new_sizes[j], i + 1, j + 1
        elif po * old[i] <= pn * new_sizes[j]:
            po, i = po * old[i], i + 1
        else:
            pn, j = pn * new_sizes[j], j + 1
    return [tuple(out)]


# ---------------------------------------------------------------- squeeze / expand_dims

squeeze_p = make_primitive("squeeze")


def _canonical_axes(name, axes, ndim):
    out = []
    for a in static_ints(name, axes, "dimensions"):
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: dimensions are not unique (repeated axis): {tuple(axes)}")
    return tuple(sorted(out))


@squeeze_p.def_abstract_eval
def _squeeze_abstract_eval(x, *, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                             f"one, got shape={x.shape} and dimensions={dimensions}")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def squeeze(x, dimensions):
    """x without the given size-1 dimensions."""
    dims = _canonical_axes("squeeze", dimensions, len(_shape(x)))
    if not dims:
        return x
    return squeeze_p.bind(x, dimensions=dims)


deflinear(squeeze_p, lambda ct, x, *, dimensions: [expand_dims(ct, dimensions)])  # as JAX's


def _squeeze_batch(axis_data, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return squeeze_p.bind(x, dimensions=tuple(a + 1 for a in dimensions)), 0


squeeze_p.def_batch(_squeeze_batch)


@squeeze_p.def_sharding
def _squeeze_sharding(in_specs, in_avals, out_avals, *, dimensions):
    return [tuple(e for i, e in enumerate(in_specs[0]) if i not in dimensions)]


def expand_dims(x, dimensions):
    """x with size-1 dimensions inserted (a broadcast_in_dim, as in JAX)."""
    shape = list(_shape(x))
    nd = len(shape) + len(dimensions)
    dims = _canonical_axes("expand_dims", dimensions, nd)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(nd) if i not in dims)
    return broadcast_in_dim(x, tuple(shape), kept)


# ---------------------------------------------------------------- transpose

transpose_p = make_primitive("transpose")


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(x, *, permutation):
    if tuple(sorted(permutation)) != tuple(range(x.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, weak_type=x.weak_type)


def transpose(x, permutation):
    """x with its dimensions permuted."""
    permutation = static_ints("transpose", permutation, "permutations")
    if permutation == tuple(range(len(_shape(x)))):
        return x
    return transpose_p.bind(x, permutation=permutation)


deflinear(transpose_p, lambda ct, x, *, permutation: [
    transpose(ct, tuple(np.argsort(permutation)))])


def _transpose_batch(axis_data, vals, dims, *, permutation):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return transpose_p.bind(x, permutation=(0,) + tuple(p + 1 for p in permutation)), 0


transpose_p.def_batch(_transpose_batch)


@transpose_p.def_sharding
def _transpose_sharding(in_specs, in_avals, out_avals, *, permutation):
    return [tuple(in_specs[0][p] for p in permutation)]


# ---------------------------------------------------------------- rev

rev_p = make_primitive("rev")


@rev_p.def_abstract_eval
def _rev_abstract_eval(x, *, dimensions):
    if any(not 0 <= d < x.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique and within rank {x.ndim}, got {dimensions}")
    return x


def rev(x, dimensions):
    """x reversed along the given dimensions."""
    return rev_p.bind(x, dimensions=static_ints("rev", dimensions, "dimensions"))


deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


def _rev_batch(axis_data, vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return rev_p.bind(x, dimensions=tuple(a + 1 for a in dimensions)), 0


rev_p.def_batch(_rev_batch)
rev_p.def_sharding(lambda in_specs, *_, **__: [in_specs[0]])  # (on Auto axes too, as XLA's)


# ---------------------------------------------------------------- slice

slice_p = make_primitive("slice")


@slice_p.def_abstract_eval
def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise TypeError(f"slice start_indices, limit_indices and strides must have the operand's "
                        f"rank {x.ndim}; got {start_indices}, {limit_indices}, {strides}")
    for s, lim, d in zip(start_indices, limit_indices, x.shape):
        if not 0 <= s <= lim <= d:
            raise TypeError(f"slice indices must satisfy 0 <= start <= limit <= shape; got "
                            f"start_indices {start_indices}, limit_indices {limit_indices} for "
                            f"operand shape {x.shape}")
    if any(st < 1 for st in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    shape = tuple(-(-(lim - s) // st) for s, lim, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type)


def slice(x, start_indices, limit_indices, strides=None):
    """x[start:limit:stride] per dimension (static bounds)."""
    start = static_ints("slice", start_indices, "start_indices")
    limit = static_ints("slice", limit_indices, "limit_indices")
    strides = None if strides is None else static_ints("slice", strides, "strides")
    strides = None if strides is None or all(s == 1 for s in strides) else strides
    if start == (0,) * len(start) and limit == _shape(x) and strides is None:
        return x
    return _bind_slice(x, start, limit, strides)


def _bind_slice(x, start, limit, strides):
    if (strides is None or all(s == 1 for s in strides)) and spread_on_devices(x) and all(
            0 <= lo <= hi <= n for lo, hi, n in zip(start, limit, _shape(x))):
        # JAX applies an eager slice as a dynamic_slice: its layout and type are that one's
        return dynamic_slice(x, [np.int32(i) for i in start],
                             [hi - lo for lo, hi in zip(start, limit)])
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


def spread_on_devices(x):
    """Whether x is a concrete Array on several devices (where JAX's eager indexing and
    slicing take other paths than under jit) whose type holds no unreduced or reduced axes
    (refjax slices those device by device, where JAX's paths refuse them)."""
    return type(x) is Array and len(x.sharding.device_set) > 1 and not any(
        sets_of(typed_aval(x)))


def slice_in_dim(x, start, limit, stride=1, axis=0):
    """x[start:limit:stride] along axis, its strides printed as JAX's (1,)s included."""
    shape = _shape(x)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    bounds = [static_ints("slice", b, name) for b, name in (
        (starts, "start_indices"), (limits, "limit_indices"), (strides, "strides"))]
    if bounds[0] == (0,) * len(shape) and bounds[1] == shape and stride == 1:
        return x  # all of x (refjax's callers rely on it)
    return _bind_slice(x, *bounds)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    out_shape = get_aval(ct).shape
    real_limits = [s + (o - 1) * st + 1 if o else s
                   for s, o, st in zip(start_indices, out_shape, strides)]
    config = [(s, d - lim, st - 1) for s, d, lim, st in zip(start_indices, shape, real_limits, strides)]
    return [pad(ct, _zero_scalar(ct), config)]


def _weak_zero(dtype):
    """A weakly-typed 0: operands a batching rule adds must not make a weak result strong."""
    return weak_scalar(0, dtype)


def _zero_scalar(x):
    return convert_element_type(0, get_aval(x).dtype)


deflinear(slice_p, _slice_transpose)


def _slice_batch(axis_data, vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    x = moveaxis(x, d, 0)
    return slice_p.bind(x, start_indices=(0,) + start_indices,
                        limit_indices=(axis_data.size,) + limit_indices,
                        strides=None if strides is None else (1,) + strides), 0


slice_p.def_batch(_slice_batch)
# on Auto axes a static slice keeps the axes that still tile each resized dimension, a
# dynamic one (its start known only when it runs) none of a resized dimension's (XLA's)
slice_p.def_sharding(sp.typed_or(sp.varying_shape("slicing"), sp.resized(sp.dividing_prefix)))
# (a dynamic_slice at constant start indices is folded into a static slice by XLA)
_static_slice_layout = sp.typed_or(sp.varying_shape("dynamic_slice"),
                                   sp.resized(sp.dividing_prefix))


# ---------------------------------------------------------------- dynamic_slice

dynamic_slice_p = make_primitive("dynamic_slice")


def _check_indices(name, x, idx):
    """The primitive's own check: TypeError, as JAX's shape rule (lax.dynamic_slice and
    lax.dynamic_update_slice check the count before binding, with JAX's ValueError)."""
    if len(idx) != x.ndim:
        raise TypeError(f"{name} start_indices must have length equal to the rank of operand, "
                        f"got {len(idx)} indices for operand of shape {x.shape}")
    for i in idx:
        if i.shape != () or not dtypes.is_int(i.dtype):
            raise TypeError(f"{name}: start indices must be integer scalars, got {i.str_short()}")


def _check_index_count(name, n, shape, what="start indices"):
    """ValueError (lax.dynamic_slice's class in JAX) unless there is one entry per operand
    dimension."""
    if n != len(shape):
        raise ValueError(f"{name}: {what} must have one entry per operand dimension; got {n} "
                         f"for operand of shape {shape}")


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(x, *idx, slice_sizes):
    _check_indices("dynamic_slice", x, idx)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= d for s, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice slice_sizes must be non-negative and at most the operand "
                        f"shape; got slice_sizes {slice_sizes} for operand shape {x.shape}")
    return ShapedArray(slice_sizes, x.dtype, weak_type=x.weak_type)


def dynamic_slice(x, start_indices, slice_sizes):
    """A slice of static size at traced start indices: negative indices count from the end,
    then indices are clamped so the slice stays in bounds (as jax.lax.dynamic_slice)."""
    _check_index_count("dynamic_slice", len(start_indices), _shape(x))
    sizes = static_ints("dynamic_slice", slice_sizes, "slice_sizes")
    _check_index_count("dynamic_slice", len(sizes), _shape(x), "slice_sizes")
    idx = _wrapped_indices("dynamic_slice", start_indices, _shape(x))
    return dynamic_slice_p.bind(x, *idx, slice_sizes=sizes)


def _wrapped_indices(name, start_indices, shape):
    """JAX's: a negative start index counts from the end of its dimension (static indices
    adjusted here, traced ones by a select), each index keeping its integer type (one type
    for all, as JAX requires); a static index beyond its type's range is clamped now, as the
    primitive would clamp it."""
    out = _wrapped_each(name, start_indices, shape)
    if len({get_aval(i).dtype for i in out}) > 1:
        raise TypeError(f"index arguments to {name} must be integers of the same type, got: "
                        f"{', '.join(get_aval(i).dtype.name for i in out)}")
    return out


def _wrapped_each(name, start_indices, shape):
    out = []
    for i, d in zip(start_indices, shape):
        if dtypes.is_python_scalar(i) or isinstance(i, (np.integer, np.floating, np.ndarray)):
            value, = static_ints(name, (i,), "start indices")
            value = value + d if value < 0 else value
            dtype = (dtypes.canonicalize_dtype(np.asarray(i).dtype)
                     if isinstance(i, (np.generic, np.ndarray)) else dtypes.default_int())
            if not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
                value = min(max(value, 0), d)
            out.append(np.array(value, dtype))
        elif dtypes.kind(get_aval(i).dtype) == "u":
            out.append(i)
        else:
            dtype = get_aval(i).dtype
            negative = lt(i, 0)
            # i + d as jnp adds them: a weakly typed i is made strong first
            out.append(select_n(negative, i, add(convert_element_type(i, dtype),
                                                 np.array(d, dtype))))
    return out


def _index_scalar(i):
    if dtypes.is_python_scalar(i) or isinstance(i, (np.integer, np.ndarray)):
        return convert_element_type(int(i), dtypes.int32)
    if get_aval(i).dtype != dtypes.int32:
        return convert_element_type(i, dtypes.int32)
    return i


def dynamic_slice_in_dim(x, start, size, axis=0):
    shape = _shape(x)
    starts = [0] * len(shape)
    sizes = list(shape)
    starts[axis], sizes[axis] = start, size
    return dynamic_slice(x, starts, sizes)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *idx = primals
    out = dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes)
    if type(tangents[0]) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, dynamic_slice_p.bind(tangents[0], *idx, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *idx, slice_sizes):
    if any(ad.is_undefined_primal(i) for i in idx):
        raise ValueError("dynamic_slice is not linear in its start indices")
    if type(ct) is Zero:
        return [Zero(x.aval)] + [None] * len(idx)
    zeros = ad.zeros_like_aval(x.aval.update(weak_type=False))  # of x's type
    return [dynamic_update_slice_p.bind(zeros, ct, *idx)] + [None] * len(idx)


def _dynamic_slice_batch(axis_data, vals, dims, *, slice_sizes):
    x, *idx = vals
    if all(d is not_mapped for d in dims[1:]):
        x = moveaxis(x, dims[0], 0)
        zero = _index_scalar(0)
        return dynamic_slice_p.bind(x, zero, *idx, slice_sizes=(axis_data.size,) + slice_sizes), 0
    from .gather import batched_dynamic_slice
    return batched_dynamic_slice(axis_data, vals, dims, slice_sizes)


def _unrolled_batch(prim, axis_data, vals, dims, **params):
    """Apply the primitive per batch member and stack the results (O(batch) equations)."""
    pieces = []
    for b in range(axis_data.size):
        args = [v if d is not_mapped else index_in_dim(v, b, d) for v, d in zip(vals, dims)]
        pieces.append(expand_dims(prim.bind(*args, **params), (0,)))
    return concatenate(pieces, 0)


def index_in_dim(x, i, axis):
    """x[..., i, ...] along `axis` with a static i, the axis removed."""
    return squeeze(slice_in_dim(x, i, i + 1, 1, axis), (axis,))


dynamic_slice_p.def_jvp(_dynamic_slice_jvp)
dynamic_slice_p.def_transpose(_dynamic_slice_transpose)
dynamic_slice_p.def_sharding(sp.typed_or(sp.varying_shape("dynamic_slice"),
                                         sp.resized(lambda entry, size: None)))
dynamic_slice_p.sharding.when_folded = _static_slice_layout
dynamic_slice_p.def_batch(_dynamic_slice_batch)


# ---------------------------------------------------------------- dynamic_update_slice

dynamic_update_slice_p = make_primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_abstract_eval
def _dus_abstract_eval(x, update, *idx):
    _check_indices("dynamic_update_slice", x, idx)
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand shape, "
                        f"got update shape {update.shape} for operand shape {x.shape}.")
    if update.dtype != x.dtype:
        raise TypeError(f"dynamic_update_slice update must have the operand's dtype, got "
                        f"{update.dtype.name} and {x.dtype.name}")
    return ShapedArray(x.shape, x.dtype, weak_type=all(a.weak_type for a in (x, update, *idx)))


def dynamic_update_slice(x, update, start_indices):
    """x with `update` written at traced start indices (negative ones count from the end;
    then clamped to stay in bounds, as jax.lax.dynamic_update_slice)."""
    _check_index_count("dynamic_update_slice", len(start_indices), _shape(x))
    idx = _wrapped_indices("dynamic_update_slice", start_indices, _shape(x))
    return dynamic_update_slice_p.bind(x, update, *idx)


def dynamic_update_slice_in_dim(x, update, start, axis):
    starts = [0] * len(_shape(x))
    starts[axis] = start
    return dynamic_update_slice(x, update, starts)


def _dus_jvp(primals, tangents):
    x, update, *idx = primals
    out = dynamic_update_slice_p.bind(x, update, *idx)
    tx, tu = tangents[:2]
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, dynamic_update_slice_p.bind(ad.instantiate(tx), ad.instantiate(tu), *idx)


def _dus_transpose(ct, x, update, *idx):
    if any(ad.is_undefined_primal(i) for i in idx):
        raise ValueError("dynamic_update_slice is not linear in its start indices")
    rest = [None] * len(idx)
    if type(ct) is Zero:
        return [Zero(x.aval) if ad.is_undefined_primal(x) else None,
                Zero(update.aval) if ad.is_undefined_primal(update) else None] + rest
    ct_x = ct_u = None
    if ad.is_undefined_primal(x):
        ct_x = dynamic_update_slice_p.bind(ct, ad.zeros_like_aval(_aval(update)), *idx)
    if ad.is_undefined_primal(update):
        ct_u = dynamic_slice_p.bind(ct, *idx, slice_sizes=_aval(update).shape)
    return [ct_x, ct_u] + rest


def _aval(x):
    return x.aval if ad.is_undefined_primal(x) else typed_aval(x)


def _dus_batch(axis_data, vals, dims):
    x, update, *idx = vals
    if all(d is not_mapped for d in dims[2:]):
        x = bdim_at_front(x, dims[0], axis_data.size)
        update = bdim_at_front(update, dims[1], axis_data.size)
        return dynamic_update_slice_p.bind(x, update, _weak_zero(dtypes.int32), *idx), 0
    from .gather import batched_dynamic_update_slice
    return batched_dynamic_update_slice(axis_data, vals, dims)


dynamic_update_slice_p.def_jvp(_dus_jvp)
dynamic_update_slice_p.def_transpose(_dus_transpose)
dynamic_update_slice_p.def_sharding(sp.like_update)
dynamic_update_slice_p.def_batch(_dus_batch)


# ---------------------------------------------------------------- concatenate

concatenate_p = make_primitive("concatenate")


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*xs, dimension):
    if not xs:
        raise TypeError("concatenate requires at least one operand")
    nd = xs[0].ndim
    if not 0 <= dimension < max(nd, 1) or nd == 0:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{', '.join(str(x.shape) for x in xs)}.")
    for x in xs:
        if x.ndim != nd or any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape))
                               if i != dimension):
            raise TypeError(f"Cannot concatenate arrays with shapes that differ in dimensions other "
                            f"than the one being concatenated: concatenating along dimension "
                            f"{dimension} for shapes {', '.join(str(x.shape) for x in xs)}.")
        if x.dtype != xs[0].dtype:
            raise TypeError(f"concatenate requires operands of one dtype, got "
                            f"{', '.join(x.dtype.name for x in xs)}")
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, xs[0].dtype, weak_type=all(x.weak_type for x in xs))


def concatenate(operands, dimension):
    """Operands joined along `dimension`."""
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    dimension, = static_ints("concatenate", (dimension,), "dimension")
    return concatenate_p.bind(*operands, dimension=dimension)


def _concatenate_transpose(ct, *xs, dimension):
    if type(ct) is Zero:
        return [Zero(x.aval) if ad.is_undefined_primal(x) else None for x in xs]
    outs, start = [], 0
    for x in xs:
        size = _aval(x).shape[dimension]
        outs.append(slice_in_dim(ct, start, start + size, 1, dimension)
                    if ad.is_undefined_primal(x) else None)
        start += size
    return outs


def _concatenate_batch(axis_data, vals, dims, *, dimension):
    xs = [bdim_at_front(x, d, axis_data.size) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


deflinear(concatenate_p, _concatenate_transpose)
concatenate_p.def_batch(_concatenate_batch)
concatenate_p.def_sharding(sp.all_alike)


# ---------------------------------------------------------------- iota, copy

iota_p = make_primitive("iota")


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype, shape, dimension, sharding=None):
    if dtypes.kind(dtype) not in "iufc":
        raise TypeError(f"iota does not accept dtype {np.dtype(dtype).name}. Accepted dtypes "
                        "are subtypes of integer, floating, complexfloating.")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape) {len(shape)}, got "
                         f"dimension={dimension}")
    _check_nonnegative("iota", shape)
    return ShapedArray(shape, dtype)


def _check_nonnegative(name, shape):
    if any(d < 0 for d in shape):
        raise TypeError(f"{name} shape must have every element be nonnegative, got {shape}.")


def iota(dtype, size):
    """[0, 1, ..., size-1] of dtype."""
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype),
                       shape=static_ints("iota", (size,)), dimension=0, sharding=None)


def broadcasted_iota(dtype, shape, dimension):
    """Indices along `dimension`, broadcast to `shape`."""
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=_as_shape("iota", shape),
                       dimension=operator.index(dimension), sharding=None)


ad.defnondiff(iota_p)

copy_p = make_primitive("copy")
copy_p.def_abstract_eval(lambda x: x)


def copy(x):
    """A copy of x (binds `copy`)."""
    return copy_p.bind(x)


deflinear(copy_p, lambda ct, x: [copy(ct)])
copy_p.def_batch(lambda axis_data, vals, dims: (copy_p.bind(vals[0]), dims[0]))
copy_p.def_sharding(sp.elementwise)
for _p in (broadcast_in_dim_p, reshape_p, squeeze_p, dynamic_slice_p, copy_p):
    _p.def_key_reuse(kr.forward_rule)  # as JAX's: a key passed on, not consumed
slice_p.def_key_reuse(kr.slice_rule)
concatenate_p.def_key_reuse(kr.concatenate_rule)
dynamic_update_slice_p.def_key_reuse(kr.update_rule(1))


from .pad import pad, pad_p  # noqa: E402,F401 (pad.py uses this module's functions)
