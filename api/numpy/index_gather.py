"""x[idx] as the index array and dimension numbers of one gather (and x.at[idx] of one scatter),
built as JAX builds them (jax.numpy's _index_to_gather), so that the staged equations are JAX's."""
import builtins
from typing import NamedTuple

import numpy as np

from ...core import dtypes as _dt
from ...core.array import Array
from ...core.sharding_types import spec_of, typed_aval
from ...core.trace import Tracer, get_aval
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from .promotion import _scalar_like, broadcast_arrays, is_traced, lax_select


class GatherPlan(NamedTuple):
    """What x[idx] reads: `indices` (the gather's index array, index vectors on its last
    axis) and dimension numbers; `slice_shape` the shape x[idx] has before `newaxis_dims` are
    squeezed out (a scatter's updates are broadcast to it) and `reversed_dims` reversed;
    `basic` when no index array is involved (the indices are then sorted and unique);
    `slice_spec` the sharding type's entries of x[idx] before squeezing (JAX's slice_sharding:
    sliced dimensions keep x's, index arrays' dimensions theirs, new axes none)."""
    indices: object
    slice_sizes: tuple
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    slice_shape: tuple
    newaxis_dims: tuple
    reversed_dims: tuple
    basic: bool
    slice_spec: tuple


def _is_index(item):
    return not (item is None or item is Ellipsis or isinstance(item, slice))


def _is_array(item):
    return isinstance(item, (Array, Tracer, np.ndarray))


def index_to_gather(shape, items, normalize=True, spec=None):
    """The GatherPlan of x[items] for x of `shape` (typed by `spec`, its per-dimension
    entries); items hold ints, integer arrays (concrete or traced, any rank), slices, None and
    Ellipsis (boolean masks already expanded)."""
    positions = [k for k, i in enumerate(items) if _is_index(i)]
    contiguous = builtins.all(b - a == 1 for a, b in zip(positions, positions[1:]))
    items = _expand_ellipsis(items, len(shape))
    if normalize:
        items = _normalized(items, shape)
    builder = _Builder(shape, items, contiguous, spec or (None,) * len(shape))
    return builder.plan()


def _expand_ellipsis(items, ndim):
    used = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    out = []
    for item in items:
        out += [slice(None)] * (ndim - used) if item is Ellipsis else [item]
    has_ellipsis = builtins.any(i is Ellipsis for i in items)
    return out + [slice(None)] * (ndim - used) * (not has_ellipsis)


def _normalized(items, shape):
    """Negative indices counted from the end of their axis: Python ints now, arrays by a
    select (JAX's NDIndexer.normalize_indices)."""
    out, axis = [], 0
    for item in items:
        if item is not None:
            if _is_index(item):
                item = normalize_index(item, shape[axis])
            axis += 1
        out.append(item)
    return out


def normalize_index(index, size):
    """index in [-size, size) moved to [0, size) (JAX's _normalize_index): Python ints and
    concrete indices now, traced ones by a select; unsigned ones as they are."""
    if isinstance(index, (int, np.integer)) and not _is_array(index):
        return index if isinstance(index, np.unsignedinteger) or index >= 0 else index + size
    if not is_traced(index) and not _on_devices(index):
        index = np.asarray(index)
        return index if _dt.kind(index.dtype) == "u" else np.where(index < 0, index + size, index)
    dtype = get_aval(index).dtype
    if _dt.kind(dtype) == "u":
        return index
    # JAX's lax._const: the size is weakly typed when the index is
    return lax_select(ew.lt(index, 0), ew.add(index, _scalar_like(index, size)), index)


def _on_devices(index):
    """An Array index on several devices, normalized by lax operations as JAX's (which keep
    its layout for the gather's result)."""
    return type(index) is Array and len(index.sharding.device_set) > 1


class _Builder:
    """The walk over the items of _index_to_gather, one axis of x at a time."""

    def __init__(self, shape, items, contiguous, spec):
        self.shape, self.items, self.contiguous, self.spec = shape, items, contiguous, spec
        self.slice_spec = []
        self.advanced = _advanced(items)
        self.offset_dims, self.collapsed, self.start_index_map = [], [], []
        self.indices, self.indices_shape = [], []   # (array, first dim) pairs, and their shape
        self.slice_shape, self.newaxis_dims, self.reversed_dims = [], [], []
        self.slice_sizes = []  # the gather's window
        self.x_axis = self.y_axis = self.collapsed_y_axis = 0

    def plan(self):
        advanced_at = [k for k, _ in self.advanced]
        for k, item in enumerate(self.items):
            if self.advanced and k == (advanced_at[0] if self.contiguous else 0):
                self._advanced_indices()
            if k in advanced_at:
                self.x_axis += 1
                self.slice_sizes.append(1)
            elif item is None:
                self.slice_shape.append(1)
                self.slice_spec.append(None)
                self.newaxis_dims.append(self.y_axis)
                self.y_axis += 1
            elif isinstance(item, slice):
                self._slice(item)
            else:
                self._scalar(item)
        return GatherPlan(self._index_array(), tuple(self.slice_sizes), tuple(self.offset_dims),
                          tuple(sorted(self.collapsed)),
                          tuple(self.start_index_map), tuple(self.slice_shape),
                          tuple(self.newaxis_dims), tuple(self.reversed_dims), not self.advanced,
                          tuple(self.slice_spec))

    def _advanced_indices(self):
        arrays = broadcast_arrays(*(i for _, i in self.advanced))
        start = len(self.indices_shape)
        self.indices += [(_as_index(a), start) for a in arrays]
        self.indices_shape += list(arrays[0].shape)
        axes = [self._x_axis_of(k) for k, _ in self.advanced]
        self.start_index_map += axes
        self.collapsed += axes
        self.slice_shape += list(arrays[0].shape)
        self.slice_spec += spec_of(typed_aval(arrays[0]))
        self.y_axis += arrays[0].ndim
        self.collapsed_y_axis += arrays[0].ndim

    def _x_axis_of(self, k):
        return builtins.sum(1 for i in self.items[:k] if i is not None)

    def _scalar(self, item):
        if self.shape[self.x_axis] == 0:
            raise IndexError(f"index is out of bounds for axis {self.x_axis} with size 0")
        self.indices.append((_as_index(item), len(self.indices_shape)))
        self.slice_sizes.append(1)
        self.collapsed.append(self.x_axis)
        self.start_index_map.append(self.x_axis)
        self.x_axis += 1

    def _slice(self, item):
        start, stop, step = item.indices(self.shape[self.x_axis])
        size = len(range(start, stop, step))
        self.slice_shape.append(size)
        self.slice_spec.append(self.spec[self.x_axis])
        if step == 1:
            if size != self.shape[self.x_axis]:  # a full slice needs no index
                self.indices.append((_as_index(start), len(self.indices_shape)))
                self.start_index_map.append(self.x_axis)
            self.slice_sizes.append(size)
            self.offset_dims.append(self.collapsed_y_axis)
        else:
            self._strided_slice(start, step, size)
        self.collapsed_y_axis += 1
        self.y_axis += 1
        self.x_axis += 1

    def _strided_slice(self, start, step, size):
        iota = st.iota(_dt.int32, size)
        indices = ew.add(np.array(start, np.int32), ew.mul(np.array(step, np.int32), iota))
        if step < 0:
            self.reversed_dims.append(self.collapsed_y_axis)
            indices = st.rev(indices, (0,))
        self.indices.append((indices, len(self.indices_shape)))
        self.slice_sizes.append(1)
        self.start_index_map.append(self.x_axis)
        self.indices_shape.append(size)
        self.collapsed.append(self.x_axis)

    def _index_array(self):
        if not self.indices:
            return np.zeros((0,), np.int32)
        if len(self.indices) == 1:
            g, _ = self.indices[0]
            return st.expand_dims(g, (np.ndim(g) if not _is_array(g) else get_aval(g).ndim,))
        shape = tuple(self.indices_shape) + (1,)
        return st.concatenate([st.broadcast_in_dim(g, shape, tuple(range(i, i + _ndim(g))))
                               for g, i in self.indices], len(shape) - 1)


def gather(x, items, mode, fill_value=None, normalize=True):
    """x[items] as JAX computes it with index arrays (and `.at[items].get`): one gather of
    the plan's windows (none when no index is left), then reversed and new axes."""
    from .. import lax
    plan = index_to_gather(x.shape, items, normalize)
    if 0 in plan.slice_shape:
        return ew.full(plan.slice_shape, 0, x.dtype)
    out = x
    if _size(plan.indices):
        dn = lax.GatherDimensionNumbers(offset_dims=plan.offset_dims,
                                        collapsed_slice_dims=plan.collapsed_slice_dims,
                                        start_index_map=plan.start_index_map)
        out = lax.gather(out, plan.indices, dn, plan.slice_sizes, unique_indices=plan.basic,
                         indices_are_sorted=plan.basic, mode=mode, fill_value=fill_value)
    if plan.reversed_dims:
        out = st.rev(out, plan.reversed_dims)
    return st.expand_dims(out, plan.newaxis_dims) if plan.newaxis_dims else out


def _advanced(items):
    """(position, item) of the integer items when one of them is an array (of rank >= 1),
    counting positions without None; else none (every integer is a basic index)."""
    if not builtins.any(_is_array(i) and _ndim(i) > 0 for i in items if _is_index(i)):
        return []
    return [(k, i) for k, i in enumerate(items) if _is_index(i)]


def _ndim(x):
    return get_aval(x).ndim if isinstance(x, (Array, Tracer)) else np.ndim(x)


def _size(x):
    return get_aval(x).size if isinstance(x, (Array, Tracer)) else np.size(x)


def _as_index(i):
    """An index in int32 (a Python int as a constant, folded, as JAX's conversion)."""
    if is_traced(i) or isinstance(i, Array):
        return ew.convert_element_type(i, _dt.int32)
    return np.asarray(i).astype(np.int32)
