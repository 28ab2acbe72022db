"""Indexing (x[idx], basic and advanced) and take, where, select, clip, nonzero, unravel_index."""
import builtins
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.array import Array
from ...core.errors import NonConcreteBooleanIndexError
from ...core.trace import Tracer, get_aval
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from .. import lax
from .promotion import (transpose, _lax_scalar, asarray, astype, atleast_1d, broadcast_shapes,
                        broadcast_to, concrete, concrete_value, is_traced, promote_dtypes, ravel,
                        reshape, stack, _arrays, _axis, _broadcast_all, _check_args, _is_array,
                        _no_out, _static_int, _where, _with, staged_as)
from .type_predicates import iscomplexobj
from .ufuncs import add, floor_divide, less, maximum, minimum, multiply, remainder
from .creation import zeros, zeros_like, _shape_arg
from .index_gather import gather, normalize_index


# ---------------------------------------------------------------- indexing

def getitem(x, idx):
    """x[idx]: basic indexing (ints, slices, None, Ellipsis, traced integer scalars) and
    NumPy's advanced indexing with integer arrays and concrete boolean masks (a take on the
    merged indexed axes; out-of-bounds indices are clamped, as in JAX)."""
    x = asarray(x)
    idx = idx if isinstance(idx, tuple) else (idx,)
    items = expand_masks(expand_ellipsis(idx, x.ndim), x.shape)
    _check_static_slices(items)
    if builtins.any(_is_index_array(i) for i in items):
        return _advanced_index(x, items)
    if _sharded_partial(x, items):
        return gather(x, items, "promise_in_bounds")
    return _basic_index(x, items)


def _sharded_partial(x, items):
    """JAX's eager rule: an Array on several devices indexed by a static integer or a slice
    of part of a dimension is a gather (whose layout and sharding type follow gather's
    rule); an integer Array index stays a dynamic_slice."""
    if not st.spread_on_devices(x):
        return False
    dims = iter(x.shape)
    for item in items:
        if item is None:
            continue
        size = next(dims)
        if isinstance(item, (int, np.integer)) or isinstance(item, slice) and _partial(item, size):
            return True
    return False


def _partial(item, size):
    lo, hi, step = item.indices(size)
    return builtins.abs(step) != 1 or builtins.abs(hi - lo) != size


def _check_static_slices(items):
    """JAX's IndexError for a slice with a traced start, stop or step."""
    for item in items:
        if isinstance(item, slice) and builtins.any(
                is_traced(e) for e in (item.start, item.stop, item.step)):
            raise IndexError(
                "Array slice indices must have static start/stop/step to be used with NumPy "
                f"indexing syntax. Found {item}. To index a statically sized array at a "
                "dynamic position, try lax.dynamic_slice/dynamic_update_slice (JAX does not "
                "support dynamically sized arrays within JIT compiled functions).")


def _basic_index(x, idx):
    """x[idx] for ints, slices, None and scalar integer arrays, as JAX's: one static `slice`
    when every item is static, else one `dynamic_slice` (unit steps), then `rev`, `squeeze`
    and `expand_dims` as needed."""
    items = [i for i in idx if i is not Ellipsis]  # an Ellipsis left here stands for nothing
    for item in items:
        if not (item is None or isinstance(item, slice) or _is_int_index(item)):
            raise _unsupported_index(item, x.shape)
    if builtins.all(item is None or isinstance(item, (slice, int, np.integer)) for item in items):
        return _static_slice_index(x, items)
    if builtins.any(isinstance(i, slice) and i.step not in (None, 1, -1) for i in items):
        return _strided_dynamic_index(x, items)
    return _dynamic_slice_index(x, items)


def _static_slice_index(x, items):
    start, limit, strides, layout = [], [], [], _IndexLayout()
    for axis, size, item in layout.axes(items, x.shape):
        if isinstance(item, slice):
            lo, hi, step = item.indices(size)
            if step < 0:  # JAX's: slice forwards with the stride, then reverse
                lo, hi = builtins.min(size, hi + 1 + builtins.abs(lo - hi - 1) % -step), lo + 1
                layout.rev_axes.append(axis)
            start.append(lo)
            limit.append(builtins.max(lo, hi))
            strides.append(builtins.abs(step))
        else:
            i = int(item) + size if int(item) < 0 else int(item)
            i = builtins.min(builtins.max(i, 0), size - 1)  # clamped, as JAX's retrieval
            start, limit, strides = start + [i], limit + [i + 1], strides + [1]
    return layout.apply(st.slice(x, start, limit, strides))


def _dynamic_slice_index(x, items):
    starts, sizes, layout = [], [], _IndexLayout()
    for axis, size, item in layout.axes(items, x.shape):
        if not isinstance(item, slice):
            starts.append(asarray(item))
            sizes.append(1)
            continue
        lo, hi, step = item.indices(size)
        if step < 0:
            starts.append(hi + 1)
            sizes.append(builtins.max(0, lo - hi))
            layout.rev_axes.append(axis)
        else:
            starts.append(lo)
            sizes.append(builtins.max(0, hi - lo))
    if len(starts) > 1:  # as JAX: start indices of one dtype (static ones as constants)
        starts = [concrete(np.array(i, np.int32)) if isinstance(i, int) else
                  ew.convert_element_type(i, _dt.int32) for i in starts]
    return layout.apply(st.dynamic_slice(x, starts, sizes))


def _strided_dynamic_index(x, items):
    """Traced integers next to a slice with a step other than 1 or -1: the slices first
    (a static slice), then the traced integers and None (a dynamic slice)."""
    static = [i if isinstance(i, slice) else slice(None) for i in items if i is not None]
    dynamic = [slice(None) if isinstance(i, slice) else i for i in items]
    return _dynamic_slice_index(_static_slice_index(x, static), dynamic)


class _IndexLayout:
    """What follows basic indexing's slice: dimensions reversed (negative steps), squeezed
    (integer items) and inserted (None items), in JAX's order."""

    def __init__(self):
        self.rev_axes, self.squeeze_axes, self.newaxis_dims = [], [], []

    def axes(self, items, shape):
        """(axis, size, item) per item indexing an axis of x; None items are new axes and
        integer items squeezed axes (IndexError for an integer into an empty axis)."""
        axis = 0
        for item in items:
            if item is None:
                self.newaxis_dims.append(axis - len(self.squeeze_axes) + len(self.newaxis_dims))
                continue
            if not isinstance(item, slice):
                if shape[axis] == 0:
                    raise IndexError(f"index is out of bounds for axis {axis} with size 0")
                self.squeeze_axes.append(axis)
            yield axis, shape[axis], item
            axis += 1

    def apply(self, out):
        if self.rev_axes:
            out = st.rev(out, tuple(self.rev_axes))
        if self.squeeze_axes:
            out = st.squeeze(out, tuple(self.squeeze_axes))
        if self.newaxis_dims:
            out = st.expand_dims(out, tuple(self.newaxis_dims))
        return out


def _unsupported_index(item, shape):
    if isinstance(item, str):
        return TypeError(f"JAX does not support string indexing; got idx={item!r}")
    dtype = np.asarray(item).dtype if isinstance(item, (float, complex)) else \
        getattr(item, "dtype", None)
    if dtype is not None:
        return TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                         f"{np.dtype(dtype).name} (indexing an array of shape {shape})")
    return TypeError(f"refjax indexing supports ints, slices, None, Ellipsis, integer arrays and "
                     f"concrete boolean masks; got {type(item).__name__} {item!r} for an array "
                     f"of shape {shape}.")


def _is_mask(item):
    return isinstance(item, (np.ndarray, Array, Tracer)) and get_aval(item).dtype == _dt.bool_ \
        and get_aval(item).ndim > 0


def expand_masks(idx, shape):
    """Index items with boolean masks replaced by their nonzero() integer arrays (one per
    masked dimension; masks must be concrete and match the shape they index)."""
    out, dim = [], 0
    for item in idx:
        if isinstance(item, list):
            raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                            "allowed; use `arr[array(seq)]` instead of `arr[seq]`.")
        if not _is_mask(item):
            out.append(item)
            dim += item is not None and item is not Ellipsis
            continue
        if is_traced(item):
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {item}. Use "
                             "jnp.where(mask, x, other) or a static `size`.")
        expected = tuple(shape[dim:dim + item.ndim])
        if tuple(item.shape) != expected:
            raise IndexError(f"boolean index did not match shape of indexed array in index "
                             f"{len(out)}: got {tuple(item.shape)}, expected {expected}")
        out.extend(concrete(i.astype(np.int32)) for i in np.nonzero(np.asarray(item)))
        dim += item.ndim
    return tuple(out)


def _is_index_array(item):
    if not isinstance(item, (np.ndarray, Array, Tracer)):
        return False
    aval = get_aval(item)
    if aval.ndim and not _dt.is_int(aval.dtype):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{aval.dtype}")
    return aval.ndim > 0


def _advanced_index(x, idx):
    """x[idx] with index arrays: one `gather` (integer scalars count as index arrays then, as
    in NumPy), as in JAX: negative indices wrap, out-of-bounds ones are clamped
    (PROMISE_IN_BOUNDS) and get no gradient (the transposed scatter drops them)."""
    _, advanced, _ = split_advanced(x, idx)
    if builtins.any(n == 0 for _, n, _ in advanced):
        shape = np.broadcast_shapes(*(np.shape(i) if not is_traced(i) else i.shape
                                      for _, _, i in advanced))
        if int(np.prod(shape, dtype=np.int64)):
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    return gather(x, idx, "promise_in_bounds")


def split_advanced(x, idx):
    """The basic index (advanced items made full slices); per advanced item, its axis in the
    basic result, the indexed size and the item; and whether a slice, None or Ellipsis
    separates advanced items."""
    basic, advanced, dim, kinds = [], [], 0, []
    for item in idx:
        is_advanced = not (item is None or item is Ellipsis or isinstance(item, slice))
        kinds.append(is_advanced)
        if item is Ellipsis:
            continue
        if is_advanced:
            if not (_is_index_array(item) or _is_int_index(item)):
                raise _unsupported_index(item, x.shape)
            advanced.append((len(basic), x.shape[dim], item))
            item = slice(None)
        basic.append(item)
        dim += item is not None
    first, last = kinds.index(True), len(kinds) - 1 - kinds[::-1].index(True)
    return tuple(basic), advanced, not builtins.all(kinds[first:last + 1])


def expand_ellipsis(idx, ndim):
    """idx with its Ellipsis replaced by the full slices it stands for. An Ellipsis standing
    for no dimension stays when advanced indices lie on both sides: it still separates them
    (NumPy then puts their dimensions first), and every consumer skips it otherwise."""
    n_ell = builtins.sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(_consumed_dims(i) for i in idx)
    if used > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {used} were indexed")
    if n_ell == 0:
        return tuple(idx) + (slice(None),) * (ndim - used)
    pos = next(k for k, item in enumerate(idx) if item is Ellipsis)
    fill = (slice(None),) * (ndim - used)
    before, after = idx[:pos], idx[pos + 1:]
    if not fill and _has_array_index(before + after) and _has_advanced(before) \
            and _has_advanced(after):
        fill = (Ellipsis,)
    return tuple(idx[:pos]) + fill + tuple(idx[pos + 1:])


def _has_array_index(items):
    """Whether an index array (integer or boolean, one dimension or more) is among items."""
    return builtins.any(get_aval(i).ndim > 0 if isinstance(i, (Array, Tracer)) else
                        isinstance(i, (np.ndarray, list)) and np.ndim(i) > 0 for i in items)


def _has_advanced(items):
    """Whether an item that is advanced next to an index array (an array or an integer) is
    among items."""
    return builtins.any(not (i is None or i is Ellipsis or isinstance(i, slice)) for i in items)


def _consumed_dims(item):
    """How many dimensions of the indexed array an index item consumes."""
    if item is None or item is Ellipsis:
        return 0
    return get_aval(item).ndim if _is_mask(item) else 1


def _is_int_index(item):
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, (int, np.integer)):
        return True
    if _is_array(item) or isinstance(item, np.ndarray):
        aval = get_aval(item)
        return aval.shape == () and _dt.is_int(aval.dtype)
    return False


# ---------------------------------------------------------------- take, where, select, nonzero

# JAX's: take has 'wrap' and not 'promise_in_bounds'; take_along_axis passes its mode to the
# gather ('drop' is 'fill' there) and has no 'wrap'.
_TAKE_MODES = (None, "fill", "clip", "wrap")
_TAKE_ALONG_MODES = (None, "fill", "drop", "clip", "promise_in_bounds")


def gather_fill_value(dtype, fill_value):
    """The value jnp's gathers give out-of-bounds indices in 'fill' mode."""
    if fill_value is not None:
        return fill_value
    if _dt.is_inexact(dtype):
        return np.nan
    if dtype == _dt.bool_:
        return True
    info = _dt.iinfo(dtype)
    return int(info.min if _dt.kind(dtype) == "i" else info.max)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of a at `indices` along axis (flattened when None): one `gather`, with JAX's
    dimension numbers. Out-of-bounds indices give fill_value (NaN, the int minimum, True) in
    the default 'fill' mode (negative ones wrap once), are clamped in 'clip' mode, taken
    modulo the axis size in 'wrap' mode."""
    _no_out("take", out)
    return _take(a, indices, None if axis is None else operator.index(axis), mode=mode,
                 unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                 fill_value=fill_value)


@staged_as("_take", static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted",
                                     "fill_value"))
def _take(a, indices, axis, *, mode, unique_indices, indices_are_sorted, fill_value):
    a, indices = _arrays("take", a, indices)
    if not _dt.is_int(indices.dtype):
        raise ValueError("indices must have an integer type")
    _check_take_mode("take", mode)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    out_shape = a.shape[:axis] + indices.shape + a.shape[axis + 1:]
    if n == 0:
        if indices.size:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if indices.size == 0:
        return zeros_like(a, shape=out_shape)
    idx, gather_mode = _take_indices(indices, n, mode, wrap_negative=mode in (None, "fill"))
    k = indices.ndim
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + k, a.ndim - 1 + k)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    return lax.gather(a, st.expand_dims(idx, (k,)), dn, _with(a.shape, axis, 1),
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=gather_mode, fill_value=gather_fill_value(a.dtype, fill_value)
                      if gather_mode == "fill" else None)


_GATHER_MODES = {None: "fill", "fill": "fill", "drop": "fill", "clip": "clip",
                 "wrap": "promise_in_bounds",
                 "promise_in_bounds": "promise_in_bounds"}


def _take_indices(indices, n, mode, wrap_negative, normalize=None):
    """The indices a take's gather reads (negative ones wrapped when `wrap_negative`, by
    `normalize(indices, n)` when traced; all of them taken modulo n in 'wrap' mode; with
    NumPy when concrete) and the gather's mode."""
    if not is_traced(indices):
        idx = concrete_value(indices, "").astype(np.int64)
        idx = np.mod(idx, n) if mode == "wrap" else np.where(idx < 0, idx + n, idx) \
            if wrap_negative else idx
        if indices.dtype != np.int64:   # beyond int32 is out of bounds either way
            idx = np.clip(idx, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32)
        return concrete(idx), _GATHER_MODES[mode]
    if mode == "wrap":
        return remainder(indices, n), _GATHER_MODES[mode]
    if wrap_negative:
        indices = (normalize or _wrap_negative)(indices, n)
    return indices, _GATHER_MODES[mode]


def _wrap_negative(indices, n):
    return where(less(indices, 0), add(indices, n), indices)


def _check_take_mode(name, mode):
    if name == "take_along_axis":
        if mode not in _TAKE_ALONG_MODES:
            raise ValueError(f'Unknown gather mode "{mode}"')
        return
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{name} is not supported.")
    if mode not in _TAKE_MODES:
        raise ValueError(f"Invalid mode '{mode}' for np.{name}")


@staged_as("take_along_axis", static_argnames=("axis", "mode", "fill_value",
                                               "wrap_negative_indices"))
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """arr[..., indices[..., i, ...], ...] along axis, other dimensions broadcasting: one
    `gather` (dimensions of size 1 in indices read whole windows of arr, equal ones are
    batching dims)."""
    a, indices = _arrays("take_along_axis", arr, indices)
    if not _dt.is_int(indices.dtype):
        raise TypeError(f"take_along_axis indices must be of integer type, got "
                        f"{indices.dtype}")
    _check_take_mode("take_along_axis", mode)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{indices.shape}")
        a, axis = ravel(a), 0
    if a.ndim != indices.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{indices.ndim} vs. {a.ndim}")
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    out_shape = broadcast_shapes(indices.shape, _with(a.shape, axis, 1))
    if n == 0 or 0 in out_shape:
        return zeros(out_shape, a.dtype)
    wrap = mode != "promise_in_bounds" if wrap_negative_indices is None \
        else wrap_negative_indices
    idx, gather_mode = _take_indices(indices, n, mode, wrap, normalize_index)
    return _gather_along(a, idx, axis, gather_mode,
                         gather_fill_value(a.dtype, fill_value) if gather_mode == "fill" else None)


def _gather_along(a, idx, axis, mode, fill):
    """The gather of take_along_axis: a dim where idx has size 1 and a does not is a window
    (offset) dim; a dim where a has size 1 and idx does not is collapsed; equal sizes are
    batching dims."""
    offset, collapsed, batching, kept = [], [axis], [], []
    for d in range(a.ndim):
        if d == axis:
            kept.append(d)
        elif idx.shape[d] == 1 and a.shape[d] != 1:
            offset.append(d)
        else:
            (collapsed if a.shape[d] == 1 and idx.shape[d] != 1 else batching).append(d)
            kept.append(d)
    idx = reshape(idx, tuple(idx.shape[d] for d in kept) + (1,))
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(offset), collapsed_slice_dims=tuple(sorted(collapsed)),
        start_index_map=(axis,), operand_batching_dims=tuple(batching),
        start_indices_batching_dims=tuple(kept.index(d) for d in batching))
    sizes = tuple(a.shape[d] if d in offset else 1 for d in range(a.ndim))
    return lax.gather(a, idx, dn, sizes, mode=mode, fill_value=fill)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """x where condition else y (NumPy broadcasting and promotion). With one argument,
    jnp.nonzero(condition) (needs a concrete condition, or a static `size`)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError("jnp.where: either both or neither of x and y must be given")
    return _where(*_check_args("where", condition, x, y))


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else default."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    conds = _arrays("select", *condlist)
    choices = promote_dtypes(*_check_args("select", default, *choicelist))
    # as JAX's: the default first, under a False condition (argmax finds the first True)
    conditions = astype(stack(_broadcast_all(asarray(False), *conds)), _dt.bool_)
    which = lax.argmax(conditions, 0, _dt.default_int())
    return ew.select_n(*_broadcast_all(which, *(asarray(c) for c in choices)))


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) (or a constant) where condlist[i] holds (the last true one wins),
    funclist[len(condlist)] or 0 elsewhere; every function is evaluated on all of x."""
    x, = _arrays("piecewise", x)
    conds = [condlist] if _is_array(condlist) and condlist.ndim == x.ndim else list(condlist)
    nc, nf = len(conds), len(funclist)
    if nf not in (nc, nc + 1):
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    out = _piece(funclist[nc] if nf == nc + 1 else 0, x, args, kw)
    for cond, fn in zip(conds, funclist):
        out = where(cond, _piece(fn, x, args, kw), out)
    return out


def _piece(fn, x, args, kw):
    value = fn(x, *args, **kw) if callable(fn) else fn
    return broadcast_to(astype(asarray(value), x.dtype), x.shape)


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """arr limited to [min, max] (either bound optional). The a/a_min/a_max keywords of older
    JAX versions are accepted with a DeprecationWarning."""
    return _clip(*_clip_legacy_args(arr, min, max, a, a_min, a_max))


@staged_as("clip")
def _clip(arr, min, max):
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    _check_args("clip", arr)
    if builtins.any(iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the real "
                         "or imaginary components via jax.numpy.real/imag respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return asarray(arr)


def _clip_legacy_args(arr, lo, hi, a, a_min, a_max):
    import warnings
    for old, new, value in (("a", "arr", a), ("a_min", "min", a_min), ("a_max", "max", a_max)):
        if value is not None:
            warnings.warn(f"Passing `{old}` to jnp.clip is deprecated (and removed in recent "
                          f"JAX); pass `{new}` instead.", DeprecationWarning, stacklevel=3)
    return (arr if a is None else a, lo if a_min is None else a_min,
            hi if a_max is None else a_max)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements, one int32 array per dimension. Needs a concrete
    `a` unless a static `size` is given (then padded with fill_value or truncated)."""
    a, = _arrays("nonzero", a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        value = concrete_value(a, "The size argument of jnp.nonzero must be statically "
                                   "specified to use jnp.nonzero within JAX transformations.")
        return tuple(concrete(np.asarray(i, _dt.default_int())) for i in np.nonzero(value))
    size = _static_int(size, "size argument of jnp.nonzero")
    if size < 0:
        raise TypeError(f"nonzero: size must be a non-negative integer, got {size}")
    return _nonzero_sized(a, size, fill_value)


def _nonzero_sized(a, size, fill_value):
    """The first `size` non-zero positions, as JAX finds them: the running count of
    non-zeros binned into `size` slots and summed again gives each slot's flat index."""
    from .reductions import cumsum, sum  # here, not at the top: reductions imports indexing
    mask = a if a.dtype == _dt.bool_ else ew.ne(a, _lax_scalar(a, 0))
    int_t = _dt.default_int()
    if a.size == 0 or size == 0:
        return tuple(zeros(size, int_t) for _ in a.shape)
    counts = cumsum(mask)
    binned = zeros(size, int_t).at[clip(counts, 0)].add(np.array(1, int_t), mode="drop")
    flat_index = cumsum(binned)
    strides = (np.cumprod(a.shape[::-1])[::-1] // a.shape).astype(int_t)
    out = [remainder(floor_divide(flat_index, stride), n) for stride, n in zip(strides, a.shape)]
    if fill_value is None:
        return tuple(out)
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * a.ndim
    if len(fills) != a.ndim or any(np.shape(f) != () for f in fills):
        raise ValueError(f"fill_value must be a scalar or a tuple of length {a.ndim}; got "
                         f"{fill_value}")
    unfilled = ew.ge(st.iota(int_t, size), sum(mask))
    return tuple(where(unfilled, f, i) for f, i in zip(fills, out))


def _unravel(flat_index, shape):
    out = []
    for d in reversed(shape):
        out.append(remainder(flat_index, builtins.max(d, 1)))
        flat_index = floor_divide(flat_index, builtins.max(d, 1))
    return out[::-1]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements as an (N, ndim) array."""
    from .manipulation import vstack  # here, not at the top: manipulation imports indexing
    a, = _arrays("argwhere", a)
    result = transpose(vstack(nonzero(atleast_1d(a), size=size, fill_value=fill_value)))
    if a.ndim == 0:
        return reshape(result[:0], (result.shape[0], 0))
    return reshape(result, (result.shape[0], a.ndim))


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements of the flattened a."""
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr where condition holds (concrete unless size is given)."""
    condition, arr = _arrays("extract", condition, arr)
    if size is None:
        idx = flatnonzero(condition)
        return take(ravel(arr), idx)
    flat = ravel(arr)
    idx = flatnonzero(condition, size=size, fill_value=flat.shape[0])
    return take(flat, idx, fill_value=fill_value)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis where the 1-d condition holds: the condition must be
    concrete unless `size` is given, which pads the result with `fill_value` (as JAX's)."""
    _no_out("compress", out)
    condition, a = _arrays("compress", condition, a)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1D array")
    a, axis = (ravel(a), 0) if axis is None else (a, _axis(axis, a.ndim))
    n = builtins.min(a.shape[axis], condition.shape[0])
    a = lax.slice_in_dim(a, 0, n, axis=axis)  # entries past the shorter of the two are ignored
    if size is None:
        return take(a, concrete(_compress_indices(condition, n)), axis)
    if not 0 <= size <= n:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={n}")
    idx = flatnonzero(lax.slice_in_dim(condition, 0, n), size=size, fill_value=n)
    return take(a, idx, axis, fill_value=fill_value)


def _compress_indices(condition, n):
    """The positions where the concrete condition holds (none of them past n, the length of
    the array's axis)."""
    mask = np.asarray(concrete_value(condition, _COMPRESS_SIZE)).astype(bool)
    if mask[n:].any():
        raise ValueError("condition contains entries that are out of bounds")
    return np.nonzero(mask)[0].astype(np.int32)


_COMPRESS_SIZE = ("The size argument of jnp.compress must be specified in order to use "
                  "jnp.compress within JAX transformations like jax.jit, jax.vmap, and jax.grad.")


def unravel_index(indices, shape):
    """The coordinates of flat indices in an array of this shape."""
    indices, = _arrays("unravel_index", indices)
    shape = _shape_arg(shape, "unravel_index")
    total = int(np.prod(shape, dtype=np.int64))
    indices = where(less(indices, 0), add(indices, total), indices)
    indices = clip(indices, 0, builtins.max(total - 1, 0))
    return tuple(_unravel(indices, shape))


_RAVEL_RAISE = ("The error occurred because ravel_multi_index was jit-compiled with "
                "mode='raise'. Use mode='wrap' or mode='clip' instead.")


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of coordinates in an array of shape dims (mode 'wrap' or 'clip')."""
    coords = _arrays("ravel_multi_index", *multi_index)
    dims = _shape_arg(dims, "ravel_multi_index")
    if mode == "raise":
        values = [concrete_value(c, _RAVEL_RAISE) for c in coords]
        if builtins.any(((v < 0) | (v >= d)).any() for v, d in zip(values, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        coords = [remainder(c, d) for c, d in zip(coords, dims)]
    elif mode == "clip":
        coords = [clip(c, 0, d - 1) for c, d in zip(coords, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    out, stride = asarray(0), 1
    for i in reversed(list(order_dims)):
        out = add(out, multiply(coords[i], stride))
        stride *= dims[i]
    return astype(out, _dt.default_int())
