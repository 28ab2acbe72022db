"""NumPy rules of the reference primitives: a reference is a box holding an immutable
(read-only) array, which a write replaces by a new one, so values read from it, and the
arrays it was made from, never change."""
import numpy as np

from ....core.primitives import state
from ....core.state import is_int_entry
from ..backend import RefBox, frozen
from ._common import rule


def np_index(indexer, idx, shape):
    """The NumPy index of a reference indexer and its integer (array) operands: negative
    integers count from the end and out-of-range ones are clamped, as XLA's dynamic slices."""
    if indexer is None:
        return ...
    idx = iter(idx)
    return tuple(_np_entry(e, dim, idx) for e, dim in zip(indexer, shape))


def _np_entry(entry, dim, idx):
    if is_int_entry(entry):
        i = np.asarray(next(idx)).astype(np.int64)
        i = np.clip(np.where(i < 0, i + dim, i), 0, dim - 1)
        return int(i) if entry is None else i
    start, size, stride = entry
    return slice(start, start + (size - 1) * stride + 1 if size else start, stride)


@rule(state.new_ref_p)
def _new_ref(x, **_):
    return RefBox(frozen(np.array(x)))


@rule(state.empty_ref_p)
def _empty_ref(*, ty, memory_space):
    # the contents of an empty reference are unspecified (XLA's are whatever the memory
    # held); zeros here
    return RefBox(frozen(np.zeros(ty.shape, ty.dtype)))


@rule(state.get_p)
def _get(box, *idx, indexer):
    return np.array(box.read()[np_index(indexer, idx, box.read().shape)])


def _updated(box, idx, indexer, update):
    """Replace the box's array by a copy with `update(copy, index)` applied."""
    new = np.array(box.read())
    update(new, np_index(indexer, idx, new.shape))
    box.array = frozen(new)


@rule(state.swap_p)
def _swap(box, val, *idx, indexer):
    old = _get(box, *idx, indexer=indexer)
    _updated(box, idx, indexer, lambda new, i: new.__setitem__(i, val))
    return old


@rule(state.addupdate_p)
def _addupdate(box, val, *idx, indexer):
    def add(new, i):  # repeated integer-array indices each add (a scatter-add)
        np.add.at(new, i, val)
    _updated(box, idx, indexer, add)
    return []


@rule(state.freeze_p)
def _freeze(box):
    return box.read()


@rule(state.free_ref_p)
def _free_ref(box):
    box.array = None
    return []
