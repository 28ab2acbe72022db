"""The implementation of refjax.scipy.interpolate (that module re-exports its public names):
linear and nearest-neighbour interpolation on a rectilinear grid."""
import functools
import itertools
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.pytree import register_pytree_node
from .. import numpy as jnp
from ..numpy.promotion import _arrays
from ..nn.functions import _inexact

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _points(xi, ndim):
    """xi as an array [..., ndim] of sample points (a tuple of coordinate arrays is stacked)."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = jnp.broadcast_arrays(*xi)
        return jnp.stack([p.astype(_dt.default_float()) for p in parts], axis=-1)
    xi = _arrays("RegularGridInterpolator", xi)[0]
    return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolation of `values` given on the grid `points` (one increasing coordinate array per
    leading dimension of values), linear or nearest; points outside the grid get fill_value (or
    are extrapolated for None). bounds_error=True is not supported (as in JAX)."""

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=np.nan):
        _check_method(method)
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values = _inexact("RegularGridInterpolator", values)[0]
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        if fill_value is not None:
            fill_value = jnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.method, self.bounds_error, self.fill_value = method, bounds_error, fill_value
        self.grid = tuple(_arrays("RegularGridInterpolator", *points))
        self.values = values

    def __call__(self, xi, method=None):
        """The interpolated values at the points xi ([..., ndim], or a tuple of coordinates)."""
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, but "
                             f"this RegularGridInterpolator has dimension {ndim}")
        flat = xi.reshape(-1, ndim)
        cells, fractions, outside = self._locate(flat.T)
        evaluate = self._linear if method == "linear" else self._nearest
        result = evaluate(cells, fractions)
        if self.fill_value is not None:
            outside = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
            result = jnp.where(outside, self.fill_value, result)
        return result.reshape(xi.shape[:-1] + self.values.shape[ndim:])

    def _locate(self, xi):
        """(cell index, fraction of the way across it, whether outside) per axis and point."""
        cells, fractions = [], []
        outside = jnp.zeros(xi.shape[1:], bool)
        for x, g in zip(xi, self.grid):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            cells.append(i)
            fractions.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return cells, fractions, outside

    def _linear(self, cells, fractions):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(cells))
        terms = []
        for corner in itertools.product(*[(i, i + 1) for i in cells]):
            weights = [jnp.where(c == i, 1 - f, f) for c, i, f in zip(corner, cells, fractions)]
            weight = functools.reduce(operator.mul, weights)
            terms.append(self.values[corner] * weight[trailing])
        return functools.reduce(operator.add, terms)

    def _nearest(self, cells, fractions):
        return self.values[tuple(jnp.where(f <= 0.5, i, i + 1) for i, f in zip(cells, fractions))]


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]))
