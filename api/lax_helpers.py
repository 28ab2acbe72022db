"""Small lax helpers built on the primitives: full_like, reciprocal, collapse,
broadcast_to_rank, broadcast_shapes, broadcast_like, dynamic_index_in_dim /
dynamic_update_index_in_dim, index_take, scatter_apply and lax.dtype."""
import numpy as np

from ..core import dtypes as _dtypes
from ..core.avals import ShapeDtypeStruct
from ..core.primitives import elementwise as ew
from ..core.primitives import structural as st
from ..core.trace import as_value, get_aval
from ..core.vma import vary_like


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like x (its shape and dtype unless given) filled with fill_value, laid out as
    `sharding` says, else eagerly as x is (see api/out_sharding.placed_like), as JAX's."""
    from .out_sharding import filled_like
    aval = x.to_aval() if isinstance(x, ShapeDtypeStruct) else get_aval(x)
    out_shape = aval.shape if shape is None else tuple(shape)
    # as JAX's: a weakly typed x gives a weakly typed result unless a dtype is given
    fill = ew.full((), fill_value, aval.dtype if dtype is None else dtype,
                   weak_type=dtype is None and aval.weak_type)
    return vary_like(filled_like(fill, out_shape, x, shape, sharding, None), aval.vma)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with the scalar fill_value (its dtype and weak type unless
    dtype is given), committed eagerly to `sharding` (then not weakly typed), as JAX's."""
    from .out_sharding import strong_on_device
    if np.shape(fill_value):
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if dtype is None:
        aval = get_aval(fill_value)
        out = ew.full(tuple(shape), fill_value, aval.dtype, aval.weak_type)
    else:
        out = ew.full(tuple(shape), fill_value, dtype)
    return out if sharding is None else strong_on_device(out, sharding)


def reciprocal(x):
    """1 / x elementwise (lax.reciprocal: integer_pow with exponent -1)."""
    return ew.integer_pow(x, -1)


def collapse(operand, start_dimension, stop_dimension=None):
    """operand with the dimensions [start_dimension, stop_dimension) merged into one."""
    shape = tuple(get_aval(operand).shape)
    lo, hi = slice(start_dimension, stop_dimension).indices(len(shape))[:2]
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return st.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def broadcast_to_rank(x, rank):
    """x with leading dimensions of size 1 added up to `rank`."""
    shape = tuple(get_aval(x).shape)
    if len(shape) >= rank:
        return x
    return st.broadcast(x, (1,) * (rank - len(shape)))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the shapes (ValueError, as JAX, when incompatible)."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") \
            from None


def index_in_dim(operand, index, axis=0, keepdims=True):
    """operand's slice at the static `index` (negative counts from the end) along `axis`,
    kept with size 1 if keepdims (JAX's IndexError out of bounds)."""
    index, axis = int(index), int(axis)
    size = get_aval(operand).shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = st.slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else st.squeeze(out, (axis,))


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """operand's slice at the traced `index` along `axis` (kept with size 1 if keepdims)."""
    out = st.dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else st.squeeze(out, (axis,))


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):
    """operand with `update` written at the traced `index` along `axis` (update may lack
    that dimension)."""
    if get_aval(update).ndim == get_aval(operand).ndim - 1:
        update = st.expand_dims(update, (axis,))
    return st.dynamic_update_slice_in_dim(operand, update, index, axis)


def dtype(x):
    """The canonical dtype of x (an array, a scalar or a dtype-like), as lax.dtype."""
    if hasattr(x, "dtype") and not isinstance(x, type):
        return _dtypes.canonicalize_dtype(x.dtype)
    return _dtypes.canonicalize_dtype(_dtypes.python_scalar_dtype(x)
                                      if _dtypes.is_python_scalar(x) else np.dtype(x))


def broadcast_like(arr, like_arr):
    """arr broadcast to the shape of like_arr as lax broadcasts (new leading dimensions; each
    trailing one equal or 1): lax.broadcast_like."""
    arr = as_value(arr)
    aval, shape = get_aval(arr), tuple(get_aval(as_value(like_arr)).shape)
    if tuple(aval.shape) == shape:
        return arr
    if len(shape) < aval.ndim:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={tuple(aval.shape)} shape={shape}")
    lead = len(shape) - aval.ndim
    if any(d not in (1, s) for d, s in zip(aval.shape, shape[lead:])):
        raise ValueError(f"Incompatible types for broadcasting: input type={_type(aval.shape, aval)}"
                         f" and requested type={_type(shape, aval)}")
    return st.broadcast_in_dim(arr, shape, tuple(range(lead, len(shape))))


def _type(shape, aval):
    return f"{np.dtype(aval.dtype).name}[{','.join(map(str, shape))}]"


def index_take(src, idxs, axes):
    """src[idxs[0], idxs[1], ...] with idxs[k] indexing axis axes[k] (negative indices wrap,
    as Python's): one gather, lax.index_take."""
    from ..core.primitives.gather import GatherDimensionNumbers, gather
    from .numpy.ufuncs import remainder
    shape = get_aval(src).shape
    indices = st.concatenate([st.expand_dims(as_value(i), (1,)) for i in idxs], 1)
    sizes = np.array([shape[ax] for ax in axes], get_aval(indices).dtype)
    indices = remainder(indices, st.expand_dims(sizes, tuple(range(get_aval(indices).ndim - 1))))
    slice_sizes = [1 if ax in axes else n for ax, n in enumerate(shape)]
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
        collapsed_slice_dims=tuple(axes), start_index_map=tuple(axes))
    return gather(src, indices, dnums, tuple(slice_sizes))


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with func applied to each element a scatter of `update_shape` updates reaches
    (once per update reaching it: duplicates apply func again), lax.scatter_apply. func is
    applied to scalars, as JAX's; unlike JAX's, the result is differentiable."""
    from ..core.primitives.control_flow import fori_loop
    from ..core.primitives.gather import scatter_add
    from ..core.transforms.vmap import vmap
    operand = as_value(operand)
    shape = tuple(get_aval(operand).shape)
    ones = ew.full(tuple(update_shape), 1, _dtypes.int32)
    hits = scatter_add(ew.full(shape, 0, _dtypes.int32), scatter_indices, ones,
                       dimension_numbers, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode=mode)
    apply = vmap(func)

    def body(k, x):
        flat = st.reshape(x, (int(np.prod(shape, dtype=np.int64)),))
        y = st.reshape(ew.convert_element_type(apply(flat), get_aval(x).dtype), shape)
        return ew.select_n(ew.gt(hits, st.broadcast_in_dim(k, shape, ())), x, y)
    # an element is reached at most once per update: that many rounds, each applying func
    # where the element has rounds left
    updates = int(np.prod(tuple(update_shape), dtype=np.int64))
    return fori_loop(0, updates, body, operand) if updates else operand
