"""Finite differences and phases: gradient (first- and second-order edges, uniform or given
coordinates) and unwrap; bit packing: packbits, unpackbits."""
import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import structural as st
from .promotion import (asarray, astype, reshape, _arrays, _axes, _axis, _promote_to_inexact)
from .ufuncs import absolute, add, divide, greater, left_shift, multiply, remainder, subtract
from .ufuncs import bitwise_and, logical_and, negative
from .creation import arange
from .indexing import where
from .reductions import cumsum, sum
from .manipulation import concatenate, expand_dims, pad, swapaxes
from .maths import diff


# ---------------------------------------------------------------- gradient

def _cut(a, axis):
    """a's slice [start:stop] along axis (negative bounds from the end)."""
    return lambda start, stop=None: st.slice_in_dim(a, *slice(start, stop).indices(
        a.shape[axis])[:2], 1, axis)


def _uniform(a, h, axis, edge_order):
    f = _cut(a, axis)
    inner = divide(multiply(subtract(f(2), f(0, -2)), 0.5), h)
    if edge_order == 1:
        first, last = subtract(f(1, 2), f(0, 1)), subtract(f(-1), f(-2, -1))
    else:
        first = add(add(multiply(-1.5, f(0, 1)), multiply(2.0, f(1, 2))), multiply(-0.5, f(2, 3)))
        last = add(add(multiply(0.5, f(-3, -2)), multiply(-2.0, f(-2, -1))), multiply(1.5, f(-1)))
    return concatenate([divide(first, h), inner, divide(last, h)], axis=axis)


def _nonuniform(a, x, axis, edge_order):
    if x.shape[0] != a.shape[axis]:
        raise ValueError("Spacing arrays must have the same length as the dimension along "
                         "which the gradient is calculated.")
    x = reshape(x, tuple(x.shape[0] if d == axis else 1 for d in range(a.ndim)))
    f, c = _cut(a, axis), _cut(x, axis)
    dx1, dx2 = subtract(c(1, -1), c(0, -2)), subtract(c(2), c(1, -1))
    inner = _weighted(f(0, -2), f(1, -1), f(2), divide(negative(dx2), multiply(dx1, add(dx1, dx2))),
                      divide(subtract(dx2, dx1), multiply(dx1, dx2)),
                      divide(dx1, multiply(dx2, add(dx1, dx2))))
    if edge_order == 1:
        first = divide(subtract(f(1, 2), f(0, 1)), subtract(c(1, 2), c(0, 1)))
        last = divide(subtract(f(-1), f(-2, -1)), subtract(c(-1), c(-2, -1)))
    else:
        first, last = _second_order_edges(f, c)
    return concatenate([first, inner, last], axis=axis)


def _weighted(f0, f1, f2, w0, w1, w2):
    return add(add(multiply(w0, f0), multiply(w1, f1)), multiply(w2, f2))


def _second_order_edges(f, c):
    """NumPy's one-sided second-order differences at both ends, for coordinates c."""
    d1, d2 = subtract(c(1, 2), c(0, 1)), subtract(c(2, 3), c(1, 2))
    s = add(d1, d2)
    first = _weighted(f(0, 1), f(1, 2), f(2, 3), divide(negative(add(add(d1, d1), d2)),
                                                        multiply(d1, s)),
                      divide(s, multiply(d1, d2)), divide(negative(d1), multiply(d2, s)))
    d1, d2 = subtract(c(-2, -1), c(-3, -2)), subtract(c(-1), c(-2, -1))
    s = add(d1, d2)
    last = _weighted(f(-3, -2), f(-2, -1), f(-1), divide(d2, multiply(d1, s)),
                     divide(negative(s), multiply(d1, d2)),
                     divide(add(add(d2, d2), d1), multiply(d2, s)))
    return first, last


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled values f: central differences inside, one-sided differences of
    order edge_order (1, the default, or 2) at the edges; spacings are scalars or coordinate
    arrays, one for all axes or one per axis."""
    a, = _promote_to_inexact(*_arrays("gradient", f))
    a = asarray(a)
    edge_order = 1 if edge_order is None else edge_order
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    axes = tuple(range(a.ndim)) if axis is None else _axes(axis, a.ndim, name="gradient")
    if any(a.shape[i] < edge_order + 1 for i in axes):
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "(edge_order + 1) elements are required.")
    spacings = _spacings(varargs, len(axes))
    out = [_along(a, h, ax, edge_order) for ax, h in zip(axes, spacings)]
    return out[0] if len(axes) == 1 else out


def _spacings(varargs, n):
    spacings = [asarray(h) for h in _arrays("gradient", *varargs)] if varargs else []
    if not spacings:
        return [1.0] * n
    if len(spacings) == 1:
        return spacings * n
    if len(spacings) != n:
        raise TypeError(f"Invalid number of spacing arguments {len(spacings)}")
    return spacings


def _along(a, h, axis, edge_order):
    if np.ndim(h) == 0:
        return _uniform(a, h, axis, edge_order)
    if np.ndim(h) == 1:
        return _nonuniform(a, astype(h, a.dtype) if not _dt.is_inexact(h.dtype) else h, axis,
                           edge_order)
    raise ValueError("Spacing arrays must be 1D arrays or scalars.")


# ---------------------------------------------------------------- unwrap

def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """p with jumps larger than discont (period / 2 by default) along axis replaced by their
    complement modulo period."""
    p, = _arrays("unwrap", p)
    if _dt.kind(p.dtype) == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    axis = _axis(axis, p.ndim)
    if p.shape[axis] == 0:  # JAX promotes only here; otherwise the arithmetic decides
        return asarray(_promote_to_inexact(p)[0])
    discont = period / 2 if discont is None else discont
    half = period / 2
    dd = diff(p, axis=axis)
    ddmod = subtract(remainder(add(dd, half), period), half)
    ddmod = where(logical_and(ddmod == -half, greater(dd, 0)), half, ddmod)
    correction = where(absolute(dd) < discont, 0, subtract(ddmod, dd))
    f = _cut(p, axis)
    return concatenate([f(0, 1), add(f(1), cumsum(correction, axis=axis))], axis=axis)


# ---------------------------------------------------------------- bit packing

def _bit_order(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = arange(8, dtype=np.uint8)
    return bits[::-1] if bitorder == "big" else bits


def packbits(a, axis=None, bitorder="big"):
    """The truthiness of a's elements packed eight to a uint8 along axis (flattened when
    None), zero-padded at the end."""
    arr, = _arrays("packbits", a)
    if not (_dt.is_int(arr.dtype) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    bits = _bit_order(bitorder)
    arr = astype(greater(arr, 0), np.uint8)
    if axis is None:
        arr, axis = reshape(arr, (-1,)), 0
    arr = swapaxes(arr, axis, -1)
    extra = -arr.shape[-1] % 8
    arr = pad(arr, [(0, 0)] * (arr.ndim - 1) + [(0, extra)])
    arr = reshape(arr, arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    packed = astype(sum(left_shift(arr, bits), axis=-1), np.uint8)
    return swapaxes(packed, axis, -1)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array along axis (flattened when None), the first `count` kept
    (or zero-padded to count)."""
    arr, = _arrays("unpackbits", a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    masks = left_shift(asarray(1, dtype=np.uint8), _bit_order(bitorder))
    if axis is None:
        arr, axis = reshape(arr, (-1,)), 0
    arr = swapaxes(arr, axis, -1)
    unpacked = astype(greater(bitwise_and(expand_dims(arr, -1), masks), 0), np.uint8)
    unpacked = reshape(unpacked, unpacked.shape[:-2] + (-1,))
    if count is not None:
        if count > unpacked.shape[-1]:
            unpacked = pad(unpacked, [(0, 0)] * (unpacked.ndim - 1)
                           + [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)
