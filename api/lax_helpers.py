"""Small lax helpers built on the primitives: full_like, reciprocal, collapse,
broadcast_to_rank, broadcast_shapes, dynamic_index_in_dim / dynamic_update_index_in_dim, and
lax.dtype."""
import numpy as np

from ..core import dtypes as _dtypes
from ..core.primitives import elementwise as ew
from ..core.primitives import structural as st
from ..core.trace import get_aval


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like x (its shape and dtype unless given) filled with fill_value, laid out as
    `sharding` says, else eagerly as x is (see api/out_sharding.placed_like), as JAX's."""
    from .out_sharding import on_device, placed_like
    aval = get_aval(x)
    shape = aval.shape if shape is None else tuple(shape)
    out = ew.full(shape, fill_value, aval.dtype if dtype is None else dtype)
    return placed_like(out, x) if sharding is None else on_device(out, sharding)


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
