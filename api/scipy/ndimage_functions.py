"""The implementation of refjax.scipy.ndimage (that module re-exports its public names)."""
import functools
import itertools
import operator

import numpy as np

from .. import lax
from .. import numpy as jnp


def _mirror(index, size):
    """Reflection about the edge samples: ... 2 1 | 0 1 2 ... n-1 | n-2 ..."""
    if size == 1:
        return jnp.zeros_like(index)
    period = size - 1
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect(index, size):
    """Reflection about the edges: ... 1 0 | 0 1 ... n-1 | n-1 n-2 ..."""
    return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2


_INDEX_FIXERS = {
    "constant": lambda index, size: jnp.clip(index, 0, size - 1),
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(a):
    return a if jnp.issubdtype(a.dtype, jnp.integer) else lax.round(a)


def _nearest(coordinate):
    """[(index, weight)]: the nearest sample (halves away from zero), weight 1."""
    return [(_round_half_away(coordinate).astype(np.int32), 1)]


def _linear(coordinate):
    """[(index, weight)] of the two samples around the coordinate, linearly weighted."""
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


_ORDERS = {0: _nearest, 1: _linear}


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """input interpolated (order 0: nearest, 1: linear) at the points whose i-th coordinates
    are coordinates[i]; outside the array, `mode` extends it ('constant' uses cval)."""
    arr = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    if len(coords) != arr.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coords)} != {arr.ndim}")
    if mode not in _INDEX_FIXERS:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates does not yet support mode "
                                  f"{mode}. Currently supported modes are {set(_INDEX_FIXERS)}.")
    if order not in _ORDERS:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
    cval = jnp.asarray(cval, arr.dtype)
    per_axis = [[(_INDEX_FIXERS[mode](i, size), (i >= 0) & (i < size), w)
                 for i, w in _ORDERS[order](c)] for c, size in zip(coords, arr.shape)]
    terms = []
    for nodes in itertools.product(*per_axis):
        indices, valid, weights = zip(*nodes)
        value = arr[indices]
        if mode == "constant":
            value = jnp.where(functools.reduce(operator.and_, valid), value, cval)
        terms.append(functools.reduce(operator.mul, weights) * value)
    result = functools.reduce(operator.add, terms)
    if jnp.issubdtype(arr.dtype, jnp.integer):
        result = _round_half_away(result)
    return result.astype(arr.dtype)
