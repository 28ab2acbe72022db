"""Views of traced references (`ref.at[idx]` inside jit, JAX's TransformedRef): reads and
writes of the part of a reference a chain of indices selects, composed into one index."""
import numpy as np

from ..core.primitives import state
from ..core.state import indexed_shape, make_indexer


class RefView:
    """`ref.at[idx]` of a traced reference, as JAX's TransformedRef: `get()`, `set(value)`,
    `view[idx]`, `view[idx] = value` and `view.at[idx]` act on the part of `ref` it selects
    (`items`: one index entry per dimension of `ref`)."""

    __slots__ = ("ref", "items")

    def __init__(self, ref, items):
        self.ref, self.items = ref, items

    @property
    def shape(self):
        return indexed_shape(make_indexer(self.items, self.ref.shape)[0], self.ref.shape)

    dtype = property(lambda self: self.ref.dtype)
    ndim = property(lambda self: len(self.shape))
    at = property(lambda self: _At(self))

    def get(self):
        return state.get(self.ref, self.items)

    def set(self, value):
        state.set(self.ref, self.items, value)

    def __getitem__(self, idx):
        return state.get(self.ref, _compose(self, idx))

    def __setitem__(self, idx, value):
        state.set(self.ref, _compose(self, idx), value)


class _At:
    """`view.at`: `view.at[idx]` is the view of that part of it."""

    __slots__ = ("view",)

    def __init__(self, view):
        self.view = view

    def __getitem__(self, idx):
        return RefView(self.view.ref, _compose(self.view, idx))


def ref_at(ref):
    """`ref.at` of a traced reference."""
    return _At(RefView(ref, tuple(slice(0, d, 1) for d in ref.shape)))


def _compose(view, idx):
    """The index into the reference selecting `view[idx]`: each dimension the view keeps
    (a slice) narrowed by idx's entry for it."""
    items = list(view.items)
    kept = [k for k, e in enumerate(items) if type(e) is slice]
    if len(kept) != len(view.shape):  # an integer-array index reshapes what the view keeps
        raise NotImplementedError("indexing a view of a reference selected by integer arrays")
    for k, entry in zip(kept, _per_dim(idx, view.shape)):
        items[k] = _within(items[k], entry)
    return tuple(items)


def _per_dim(idx, shape):
    """idx as one entry per dimension of `shape` ('...' expanded, trailing dimensions whole,
    slices static and normalized, negative Python integers counted from the end)."""
    items = list(idx) if type(idx) is tuple else [idx]
    if any(i is Ellipsis for i in items):
        at = next(k for k, i in enumerate(items) if i is Ellipsis)
        items[at:at + 1] = [slice(None)] * (len(shape) - len(items) + 1)
    items += [slice(None)] * (len(shape) - len(items))
    return [slice(*i.indices(d)) if type(i) is slice else
            i + d if isinstance(i, (int, np.integer)) and i < 0 else i
            for i, d in zip(items, shape)]


def _within(parent, entry):
    """`entry` (an index into the `parent` slice's elements) as an index of the dimension."""
    start, step = parent.start, parent.step
    if type(entry) is not slice:
        return start + entry * step
    count = len(range(entry.start, entry.stop, entry.step))
    first = start + entry.start * step
    return slice(first, first + count * step * entry.step, step * entry.step)
