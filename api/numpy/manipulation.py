"""Shape manipulation: transposes, joins, splits, tile/repeat, flips, rolls, resize; and pad."""
import builtins
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from .. import lax
from .promotion import (_index_in_dim, asarray, astype, atleast_1d, atleast_2d, atleast_3d,
                        broadcast_to, concrete, concrete_value, is_traced, lax_full, lax_select,
                        moveaxis, promote_dtypes, ravel, reshape, transpose, _arrays, _axes, _axis,
                        _is_array, _static_int, _user_dtype, _with, _zero_scalar, staged_as)
from .ufuncs import add, minimum, multiply, remainder, round, subtract
from .creation import zeros, zeros_like, _shape_arg
from .indexing import take
from .reductions import max, mean, min, sum
from .quantiles import median


# ---------------------------------------------------------------- shape manipulation

def swapaxes(a, axis1, axis2):
    """a with two axes interchanged."""
    a, = _arrays("swapaxes", a)
    perm = list(range(a.ndim))
    try:
        perm[operator.index(axis1)], perm[operator.index(axis2)] = \
            perm[operator.index(axis2)], perm[operator.index(axis1)]
    except IndexError:
        raise IndexError(f"swapaxes: axes {axis1}, {axis2} are out of bounds for an array of "
                         f"dimension {a.ndim}") from None
    return st.transpose(a, perm)


def permute_dims(a, /, axes):
    """Array-API transpose."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    x, = _arrays("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={x.ndim}")
    return swapaxes(x, -1, -2)


def expand_dims(a, axis):
    """a with size-1 axes inserted at `axis` (positions in the result)."""
    a, = _arrays("expand_dims", a)
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(items)
    axes = tuple(_axis(x, nd, "expand_dims") for x in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in expand_dims: {axis}")
    return st.expand_dims(a, axes)


def concatenate(arrays, axis=0, dtype=None):
    """Arrays joined along an existing axis (flattened first when axis is None)."""
    arrays = _arrays("concatenate", *_sequence(arrays))
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0, dtype)
    if arrays[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if len({a.ndim for a in arrays}) != 1:
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(a.shape) for a in arrays)}.")
    axis = _axis(axis, arrays[0].ndim)
    arrays = promote_dtypes(*arrays) if dtype is None else \
        [astype(a, _user_dtype(dtype, "concatenate")) for a in arrays]
    return st.concatenate(arrays, axis)


def concat(arrays, /, *, axis=0):
    """Array-API concatenate."""
    return concatenate(arrays, axis)


def _sequence(tup, name="jnp"):
    """The items of a sequence, or the slices of an array along its first axis (TypeError
    naming jnp.`name` for a 0-d array, which has none)."""
    if _is_array(tup) or isinstance(tup, np.ndarray):
        if not np.ndim(tup):
            raise TypeError(f"{name}: iteration over a 0-d array (expected a sequence of arrays "
                            "or an array of at least one dimension)")
        return [tup[i] for i in range(np.shape(tup)[0])]
    return list(tup)


def hstack(tup, dtype=None):
    """Arrays joined along axis 1 (axis 0 for 1-d arrays)."""
    arrays = [atleast_1d(a) for a in _arrays("hstack", *_sequence(tup))]
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """Arrays joined along axis 0, 1-d ones as rows."""
    return concatenate([atleast_2d(a) for a in _arrays("vstack", *_sequence(tup))], 0, dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """Arrays joined along axis 2."""
    return concatenate([atleast_3d(a) for a in _arrays("dstack", *_sequence(tup))], 2, dtype)


def column_stack(tup):
    """1-d arrays as columns of a 2-d array; others joined along axis 1."""
    arrays = _arrays("column_stack", *_sequence(tup))
    return concatenate([atleast_2d(a).T if a.ndim < 2 else a for a in arrays], 1)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    x, = _arrays("unstack", x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = _axis(axis, x.ndim)
    return tuple(st.index_in_dim(x, i, axis) for i in range(x.shape[axis]))


def _split(name, ary, indices_or_sections, axis):
    ary, = _arrays(name, ary)
    axis = _static_int(axis, f"in jax.numpy.{name} argument `axis`")
    size = ary.shape[_axis(axis, ary.ndim)]
    if isinstance(indices_or_sections, (tuple, list)) or np.ndim(indices_or_sections) > 0:
        points = [_static_int(i, f"in jax.numpy.{name} argument 1")
                  for i in np.asarray(indices_or_sections).ravel()] \
            if not isinstance(indices_or_sections, (tuple, list)) else \
            [_static_int(i, f"in jax.numpy.{name} argument 1") for i in indices_or_sections]
        bounds = [_clip_index(i, size) for i in points]
        starts, stops = [0] + bounds, bounds + [size]
    else:
        sections = _static_int(indices_or_sections, f"in jax.numpy.{name} argument 1")
        starts, stops = _even_sections(name, size, sections)
    axis = _axis(axis, ary.ndim)
    if all(s <= e for s, e in zip(starts, stops)):  # pieces side by side: JAX's lax.split
        return list(lax.split(ary, [np.int64(e - s) for s, e in zip(starts, stops)], axis))
    return [st.slice_in_dim(ary, s, builtins.max(s, e), 1, axis) for s, e in zip(starts, stops)]


def _clip_index(i, size):
    return builtins.min(builtins.max(i + size if i < 0 else i, 0), size)


def _even_sections(name, size, sections):
    if sections <= 0:
        raise ValueError(f"jnp.{name}: number of sections must be larger than 0, got "
                         f"{sections}")
    part, rest = builtins.divmod(size, sections)
    if rest and name != "array_split":
        raise ValueError(f"array split does not result in an equal division: rest is {rest}")
    sizes = [part + 1] * rest + [part] * (sections - rest)
    stops = np.cumsum(sizes).tolist()
    return [0] + stops[:-1], stops


def split(ary, indices_or_sections, axis=0):
    """Equal sections of ary (or pieces between indices) along axis."""
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
    """Like split, allowing unequal sections."""
    return _split("array_split", ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-d arrays)."""
    a, = _arrays("hsplit", ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along axis 0 (arrays of 2 or more dimensions)."""
    a, = _arrays("vsplit", ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """split along axis 2 (arrays of 3 or more dimensions)."""
    a, = _arrays("dsplit", ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", a, indices_or_sections, 2)


def tile(A, reps):
    """A repeated reps times along each axis."""
    A, = _arrays("tile", A)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(_static_int(r, "reps argument of jnp.tile") for r in reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"jnp.tile: reps must be non-negative, got {reps}")
    reps = (1,) * (A.ndim - len(reps)) + reps
    if len(reps) > A.ndim:  # new leading axes first, as JAX stages it
        A = st.expand_dims(A, tuple(range(len(reps) - A.ndim)))
    return lax.tile(A, reps)


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element of a repeated `repeats` times along axis (flattened when None). Traced
    repeats need a static total_repeat_length (the output is cut, or padded with the last
    element, to it)."""
    a, = _arrays("repeat", a)
    if not isinstance(repeats, (int, np.integer)):
        repeats, = _arrays("repeat", repeats)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    if total_repeat_length is not None:
        return _repeat_to_length(a, repeats, axis, _static_int(
            total_repeat_length, "total_repeat_length argument of jnp.repeat"))
    reps = concrete_value(repeats, "When jit-compiling jnp.repeat, the total number of "
                                    "repeats must be static. To fix this, either specify a "
                                    "static value for `repeats`, or pass a static value to "
                                    "`total_repeat_length`.")
    if reps.ndim == 0 or reps.shape == (1,):
        return _repeat_scalar(a, int(reps.ravel()[0]), axis)
    return _repeat_each(a, reps, axis)


def _repeat_scalar(a, r, axis):
    if r < 0:
        raise ValueError(f"jnp.repeat: repeats must be non-negative, got {r}")
    shape = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
    dims = tuple(range(axis + 1)) + tuple(range(axis + 2, a.ndim + 1))
    return st.reshape(st.broadcast_in_dim(a, shape, dims), _with(a.shape, axis, a.shape[axis] * r))


def _repeat_each(a, reps, axis):
    if reps.shape != (a.shape[axis],):
        raise ValueError(f"jnp.repeat: repeats must be a scalar or have the length of axis "
                         f"{axis} ({a.shape[axis]}), got shape {reps.shape}")
    if (reps < 0).any():
        raise ValueError("jnp.repeat: repeats must be non-negative")
    pieces = [_repeat_scalar(st.slice_in_dim(a, i, i + 1, 1, axis), int(r), axis)
              for i, r in enumerate(reps) if r]
    return st.concatenate(pieces, axis) if pieces else \
        zeros_like(a, shape=_with(a.shape, axis, 0))


def _repeat_to_length(a, repeats, axis, total):
    """Output position j takes the element whose block (the running sum of repeats) covers
    it; positions past the sum take the last element, as in JAX."""
    n = a.shape[axis]
    if total == 0 or n == 0:
        return zeros_like(a, shape=_with(a.shape, axis, total)) if total == 0 else a
    if not is_traced(repeats):
        ends = np.cumsum(np.broadcast_to(np.ravel(concrete_value(repeats, "")), (n,)))
        idx = np.minimum(np.searchsorted(ends, np.arange(total), side="right"), n - 1)
        return take(a, concrete(idx.astype(np.int32)), axis=axis)
    ends = lax.cumsum(broadcast_to(astype(ravel(repeats), _dt.int32), (n,)), 0)
    covered = ew.le(st.broadcast_in_dim(ends, (total, n), (1,)),
                    st.broadcasted_iota(_dt.int32, (total, n), 0))
    idx = sum(covered, axis=1, dtype=_dt.int32)
    return take(a, minimum(idx, n - 1), axis=axis)


def flip(m, axis=None):
    """m reversed along axis (all axes when None)."""
    m, = _arrays("flip", m)
    return _flip(m, axis if axis is None or isinstance(axis, int) else tuple(axis))


@staged_as("_flip", static_argnames=("axis",))
def _flip(m, axis):
    return st.rev(m, _axes(axis, m.ndim)) if m.ndim else m


def fliplr(m):
    """m reversed along axis 1."""
    m, = _arrays("fliplr", m)
    if m.ndim < 2:
        raise ValueError("fliplr requires an array of at least two dimensions")
    return flip(m, 1)


def flipud(m):
    """m reversed along axis 0."""
    m, = _arrays("flipud", m)
    if m.ndim < 1:
        raise ValueError("flipud requires an array of at least one dimension")
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Elements shifted cyclically along axis (flattened when None); shift may be traced."""
    a, = _arrays("roll", a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = tuple(_axis(ax, a.ndim) for ax in (axis if isinstance(axis, (tuple, list))
                                              else (axis,)))
    if is_traced(shift):
        return _roll_dynamic(a, asarray(shift), axes)
    shifts = np.asarray(concrete_value(shift, "roll shift"))
    if shifts.ndim > 1 or np.ndim(axes) > 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    return _roll_static(a, tuple(int(s) for s in shifts.reshape(-1)), axes)


@staged_as("_roll_static", static_argnums=(1, 2))
def _roll_static(a, shifts, axes):
    """roll by static shifts: each axis's two slices concatenated, in a jit as JAX's."""
    for ax, s in zip(*np.broadcast_arrays(np.asarray(axes), np.asarray(shifts))):
        n = a.shape[ax]
        if n:
            i = int(-s % n)
            a = st.concatenate([st.slice_in_dim(a, i, n, 1, ax),
                                st.slice_in_dim(a, 0, i, 1, ax)], int(ax))
    return a


def _roll_dynamic(a, shift, axes):
    if shift.ndim > 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = broadcast_to(shift, np.broadcast_shapes(shift.shape, (len(axes),))
                          if shift.ndim or len(axes) > 1 else ())
    shifts = [shifts] if shifts.ndim == 0 else [shifts[i] for i in range(shifts.shape[0])]
    for s, ax in zip(shifts, np.broadcast_to(np.asarray(axes), (len(shifts),))):
        n = a.shape[ax]
        s = remainder(astype(s, _dt.int32), builtins.max(n, 1))
        doubled = st.concatenate([a, a], int(ax))
        a = st.dynamic_slice_in_dim(doubled, ew.sub(lax_full((), n, _dt.int32), s), n, int(ax))
    return a


@staged_as("rot90", static_argnames=("k", "axes"))
def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of axes."""
    m, = _arrays("rot90", m)
    if m.ndim < 2:
        raise ValueError(f"rot90 requires its first argument to have ndim at least two, but "
                         f"got first argument of shape {m.shape}, which has ndim {m.ndim}")
    ax1, ax2 = (_axis(x, m.ndim) for x in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = _static_int(k, "k argument of jnp.rot90") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (ax1, ax2))
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return st.transpose(flip(m, ax2), perm) if k == 1 else flip(st.transpose(m, perm), ax2)


@staged_as("append", static_argnames=("axis",))
def append(arr, values, axis=None):
    """values appended to arr along axis (both flattened when None)."""
    arr, values = _arrays("append", arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


@staged_as("rollaxis", static_argnames=("axis", "start"))
def rollaxis(a, axis, start=0):
    """a with `axis` moved to before position `start`."""
    a, = _arrays("rollaxis", a)
    axis = _axis(axis, a.ndim)
    start = operator.index(start)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"start={start} must satisfy {-a.ndim} <= start <= {a.ndim}")
    start = start + a.ndim if start < 0 else start
    return moveaxis(a, axis, start - 1 if axis < start else start)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries obj (an int, slice or static integer array) along axis."""
    a, = _arrays("delete", arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, slice):
        drop = np.arange(n)[obj]
    else:
        drop = concrete_value(obj, "jnp.delete: obj must be static (refjax has no "
                                    "assume_unique_indices path)").astype(np.int64).ravel()
        if ((drop < -n) | (drop >= n)).any():
            raise IndexError(f"jnp.delete: index out of bounds for axis {axis} with size {n}")
    keep = np.setdiff1d(np.arange(n), np.mod(drop, builtins.max(n, 1)))
    return take(a, concrete(keep.astype(np.int32)), axis=axis)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to val (JAX arrays are immutable: pass inplace=False)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, so fill_diagonal cannot operate "
                                  "in place; use jnp.fill_diagonal(a, val, inplace=False).")
    a, val = _arrays("fill_diagonal", a, val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if wrap and a.ndim == 2 and a.shape[0] > a.shape[1]:
        raise NotImplementedError("refjax.numpy.fill_diagonal does not implement wrap=True")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    values = astype(resize(val, (builtins.min(a.shape),)), a.dtype)
    return lax_select(_all_equal_iota(a.shape), _diag_values(values, a.shape), a)


def _all_equal_iota(shape):
    """True where every index is equal (the main diagonal of any rank)."""
    first = st.broadcasted_iota(_dt.int32, shape, 0)
    mask = lax_full(shape, True, _dt.bool_)
    for d in range(1, len(shape)):
        mask = ew.bitwise_and(mask, ew.eq(first, st.broadcasted_iota(_dt.int32, shape, d)))
    return mask


def _diag_values(values, shape):
    """values[i] at every position whose first index is i (< len(values))."""
    n = values.shape[0]
    padded = st.pad(values, _zero_scalar(values), [(0, shape[0] - n, 0)]) if shape[0] > n \
        else st.slice_in_dim(values, 0, shape[0], 1, 0)
    return st.broadcast_in_dim(padded, shape, (0,))


def resize(a, new_shape):
    """a flattened, cycled and reshaped to new_shape."""
    a, = _arrays("resize", a)
    return _resize(a, new_shape=tuple(_shape_arg(new_shape, "resize")))


@staged_as("resize", static_argnames=("new_shape",))
def _resize(a, new_shape):
    size = int(np.prod(new_shape, dtype=np.int64))
    flat = ravel(a)
    if flat.size == 0 or size == 0:
        return zeros(new_shape, a.dtype)
    reps = -(-size // flat.size)
    return reshape(_index_in_dim(tile(flat, reps), 0, size, 0), new_shape)


# ---------------------------------------------------------------- pad

def _pad_width(pad_width, ndim):
    value = concrete_value(pad_width, "pad_width argument of jnp.pad")
    if value.dtype.kind not in "iub":
        raise TypeError(f"`pad_width` must be of integral type, got {value.dtype}")
    try:
        widths = np.broadcast_to(value, (ndim, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: pad_width {pad_width!r} cannot be broadcast to "
                         f"({ndim}, 2)") from None
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    return tuple((lo, hi) for lo, hi in widths)  # NumPy integers, printed as JAX's


def pad(array, pad_width, mode="constant", **kwargs):
    """array padded by pad_width; modes constant, empty, edge, wrap, reflect, symmetric (with
    reflect_type 'even' or 'odd'), maximum, minimum, mean, median, linear_ramp, or a callable
    `mode(vector, (before, after), axis, kwargs) -> vector` applied along each axis in turn to
    the zero-padded array, as NumPy's."""
    array, = _arrays("pad", array)
    widths = _pad_width(pad_width, array.ndim)
    if callable(mode):
        return _pad_func(array, widths, mode, kwargs)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unexpected = set(kwargs) - _PAD_KWARGS.get(mode, set())
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unexpected}")
    options = tuple(sorted((k, _static_value(v)) for k, v in kwargs.items()
                           if k != "constant_values"))
    return _pad(array, widths, mode, kwargs.get("constant_values", 0), options)


def _static_value(value):
    """A pad option as a static argument: lists and NumPy arrays as tuples."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(_static_value(v) for v in value)
    return value


@staged_as("_pad", static_argnums=(1, 2, 4))
def _pad(array, widths, mode, constant_values, options):
    """pad's jit, as JAX's: the array and constant_values its operands."""
    if mode == "constant":
        return _pad_constant(array, widths, constant_values)
    if mode == "empty":
        return _pad_empty(array, widths)
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            array = _PAD_MODES[mode](array, axis, lo, hi, **dict(options))
    return array


def _pad_func(array, widths, func, kwargs):
    from .editing import apply_along_axis
    padded = _pad(array, widths, "constant", 0, ())
    for axis in range(padded.ndim):
        padded = apply_along_axis(func, axis, padded, widths[axis], axis, kwargs)
    return padded


def _pad_constant(array, widths, constant_values):
    values = astype(asarray(constant_values), array.dtype)
    if values.ndim == 0:
        return st.pad(array, values, [(lo, hi, 0) for lo, hi in widths])
    values = broadcast_to(values, (array.ndim, 2))
    for axis, (lo, hi) in enumerate(widths):
        for side, amount in enumerate((lo, hi)):
            config = [(0, 0, 0)] * array.ndim
            config[axis] = (amount, 0, 0) if side == 0 else (0, amount, 0)
            array = st.pad(array, values[axis, side], config)
    return array


def _pad_empty(array, widths):
    """Unspecified (here zero) values either side along every axis, as JAX's."""
    for axis, (lo, hi) in enumerate(widths):
        sides = [lax_full(_with(array.shape, axis, n), 0, array.dtype) for n in (lo, hi)]
        array = st.concatenate([sides[0], array, sides[1]], axis)
    return array


def _check_nonempty_axis(array, axis, mode):
    if array.shape[axis] == 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_edge(array, axis, lo, hi):
    _check_nonempty_axis(array, axis, "edge")
    n = array.shape[axis]
    first = _repeat_scalar(st.slice_in_dim(array, 0, 1, 1, axis), lo, axis)
    last = _repeat_scalar(st.slice_in_dim(array, n - 1, n, 1, axis), hi, axis)
    return st.concatenate([first, array, last], axis)


def _periodic(block, axis, start, length):
    """Elements start .. start+length of the periodic extension of block along axis."""
    p = block.shape[axis]
    first = start // p
    copies = -(-(start + length) // p) - first
    tiled = st.concatenate([block] * copies, axis) if copies > 1 else block
    offset = start - first * p
    return st.slice_in_dim(tiled, offset, offset + length, 1, axis)


def _pad_periodic(array, axis, lo, hi, block, origin):
    """array extended by lo/hi elements of the periodic signal `block` (array sits at
    offset `origin` of the block)."""
    n = array.shape[axis]
    left = _periodic(block, axis, origin - lo, lo) if lo else None
    right = _periodic(block, axis, origin + n, hi) if hi else None
    return st.concatenate([x for x in (left, array, right) if x is not None], axis)


def _pad_wrap(array, axis, lo, hi):
    _check_nonempty_axis(array, axis, "wrap")
    n = array.shape[axis]
    return _pad_periodic(array, axis, lo, hi, array, n * (-(-lo // n)))


def _reflect_block(array, axis, include_edge):
    n = array.shape[axis]
    back = st.rev(array, (axis,))
    if not include_edge:
        if n == 1:
            return array
        back = st.slice_in_dim(back, 1, n - 1, 1, axis)
    return st.concatenate([array, back], axis)


def _pad_reflect(array, axis, lo, hi, reflect_type="even", include_edge=False):
    mode = "symmetric" if include_edge else "reflect"
    _check_nonempty_axis(array, axis, mode)
    if reflect_type not in ("even", "odd"):  # JAX: a bare AssertionError
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got "
                         f"{reflect_type!r}")
    if reflect_type == "odd":
        array = _reflect_odd(array, axis, lo, include_edge, before=True)
        return _reflect_odd(array, axis, hi, include_edge, before=False)
    block = _reflect_block(array, axis, include_edge)
    p = block.shape[axis]
    return _pad_periodic(array, axis, lo, hi, block, p * (-(-lo // p)))


def _reflect_odd(array, axis, width, include_edge, before):
    """Odd reflection on one side, as NumPy's: chunks of at most n (n - 1 without the edge)
    elements, each the mirror image of the last one added through the current edge value
    (2 * edge - x), so that the signal continues with its slope."""
    n = array.shape[axis]
    offset = 0 if include_edge or n == 1 else 1
    edge = _end(array, axis, before)
    while width > 0:
        k, m = builtins.min(width, n - offset), array.shape[axis]
        width -= k
        start = offset if before else m - k - offset
        piece = subtract(multiply(edge, 2), st.rev(st.slice_in_dim(array, start, start + k, 1,
                                                                   axis), (axis,)))
        piece = astype(piece, array.dtype)
        if n > 1:
            edge = _end(piece, axis, before)
        array = st.concatenate([piece, array] if before else [array, piece], axis)
    return array


def _end(array, axis, first):
    m = array.shape[axis]
    return st.slice_in_dim(array, 0, 1, 1, axis) if first else \
        st.slice_in_dim(array, m - 1, m, 1, axis)


def _pad_symmetric(array, axis, lo, hi, reflect_type="even"):
    return _pad_reflect(array, axis, lo, hi, reflect_type, include_edge=True)


def _pad_stat(stat):
    def pad_fn(array, axis, lo, hi, stat_length=None):
        _check_nonempty_axis(array, axis, stat.__name__)
        n = array.shape[axis]
        first, last = (n, n) if stat_length is None else (int(v) for v in np.broadcast_to(
            np.asarray(stat_length), (array.ndim, 2))[axis])
        left = _stat_value(stat, st.slice_in_dim(array, 0, builtins.min(first, n), 1, axis),
                           axis, array.dtype)
        right = _stat_value(stat, st.slice_in_dim(array, n - builtins.min(last, n), n, 1, axis),
                            axis, array.dtype)
        return st.concatenate([_repeat_scalar(left, lo, axis), array,
                               _repeat_scalar(right, hi, axis)], axis)
    return pad_fn


def _stat_value(stat, block, axis, dtype):
    """stat of block along axis (kept as a size-1 axis), rounded for integer arrays."""
    value = stat(block, axis, keepdims=True)
    if _dt.is_int(dtype) and stat in (mean, median):
        value = round(value)
    return astype(value, dtype)


def _pad_linear_ramp(array, axis, lo, hi, end_values=0):
    """Ramps from end_values (per axis and side) to the edge values, excluding the end."""
    _check_nonempty_axis(array, axis, "linear_ramp")
    n = array.shape[axis]
    ends = np.broadcast_to(np.asarray(end_values), (array.ndim, 2))[axis]
    left = _ramp(st.slice_in_dim(array, 0, 1, 1, axis), ends[0], lo, axis, False)
    right = _ramp(st.slice_in_dim(array, n - 1, n, 1, axis), ends[1], hi, axis, True)
    return st.concatenate([left, array, right], axis)


def _ramp(edge, end, count, axis, reverse):
    """count values from end towards edge (exclusive) along axis; reversed for the far side."""
    steps = np.arange(count) / builtins.max(count, 1)
    if reverse:
        steps = steps[::-1]
    shape = [1] * edge.ndim
    shape[axis] = count
    frac = asarray(steps.reshape(shape), dtype=_dt.to_inexact_dtype(edge.dtype))
    start = astype(asarray(end), frac.dtype)
    values = add(start, multiply(subtract(astype(edge, frac.dtype), start), frac))
    return astype(values, edge.dtype)  # integers truncated, as NumPy and JAX


_PAD_MODES = {"constant": None, "empty": None, "edge": _pad_edge, "wrap": _pad_wrap,
              "reflect": _pad_reflect, "symmetric": _pad_symmetric,
              "maximum": _pad_stat(max), "minimum": _pad_stat(min), "mean": _pad_stat(mean),
              "median": _pad_stat(median), "linear_ramp": _pad_linear_ramp}
_PAD_KWARGS = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "linear_ramp": {"end_values"},
               "symmetric": {"reflect_type"}, **{m: {"stat_length"} for m in
                                                 ("maximum", "minimum", "mean", "median")}}
