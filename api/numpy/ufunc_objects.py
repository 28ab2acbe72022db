"""jnp.ufunc objects: the binary ufuncs JAX exposes as objects (add, multiply, maximum, ...)
with reduce, accumulate, at, outer and reduceat, and frompyfunc for user functions."""
import numpy as np

from ...core.errors import naming_errors
from ...core.sharding.device_sets import renamed
from ...core.transforms.vmap import vmap
from .. import lax
from .promotion import asarray, astype, broadcast_to, concrete_value, moveaxis, ravel, reshape, _arrays, _axis
from .ufuncs import (add, bitwise_and, bitwise_or, bitwise_xor, logical_and, logical_or,
                     logical_xor, maximum, minimum, multiply, negative, subtract)
from .indexing import where
from .reductions import all, any, cumprod, cumsum, max, min, prod, sum
from .manipulation import concatenate, expand_dims
from .maths import logaddexp, logaddexp2
from .index_tricks import vectorize

_AT_INPLACE = ("Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like\n"
               "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; "
               "e.g.\n>>> arr = jnp.add.at(arr, ind, val, inplace=False)\n")


# the parameter names of JAX's jitted function behind a ufunc of n inputs
_PARAMS = {1: ("x",), 2: ("x", "y")}


class ufunc:
    """A NumPy-style universal function of `nin` inputs and `nout` outputs: callable, with
    reduce, accumulate, at, outer and reduceat (JAX's jnp.ufunc). Specialised
    implementations (e.g. sum for add.reduce) may be given; the rest run the function in a
    scan."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None,
                 reduce=None, accumulate=None, at=None, reduceat=None):
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = naming_errors(func, f"jnp.{self.__name__}") if callable(func) else func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = int(nargs or nin)
        self.identity = identity
        # A user's function sees scalars: vectorized over its array arguments, as JAX's.
        self._call = call or vectorize(self._func)
        self._reduce, self._accumulate, self._at = reduce, accumulate, at
        self._reduceat = reduceat
        self.__doc__ = getattr(func, "__doc__", None)

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __eq__(self, other):
        return isinstance(other, ufunc) and (self._func, self.nin, self.nout, self.identity) == (
            other._func, other.nin, other.nout, other.identity)

    def __hash__(self):
        return hash((self._func, self.nin, self.nout, self.identity))

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        try:
            return self._call(*args)
        except ValueError as e:  # devices refused: named as JAX's jitted ufuncs name them
            if not hasattr(e, "unnamed_fails"):
                raise
            raise renamed(e, self.__name__, zip(_PARAMS.get(len(args), ()), args)) from None

    def _binary(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    # ------------------------------------------------------------ reduce and accumulate

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """The reduction of a along axis (all axes when None) by this ufunc."""
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if self._reduce is not None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                                where=where)
        return self._reduce_via_scan(a, axis, dtype, keepdims, initial, where)

    def _reduce_via_scan(self, a, axis, dtype, keepdims, initial, where_):
        arr, = _arrays(f"{self.__name__}.reduce", a)
        arr = arr if dtype is None else astype(arr, dtype)
        shape, all_axes = arr.shape, axis is None
        if all_axes:
            arr, axis = ravel(arr), 0
        axis = _axis(axis, arr.ndim)
        arr = moveaxis(arr, axis, 0)
        mask = None if where_ is None else moveaxis(
            ravel(_full(where_, shape)) if all_axes else _full(where_, shape), axis, 0)
        start = initial if initial is not None else self.identity
        if start is None:
            if mask is not None:
                raise ValueError(f"reduction operation {self.__name__!r} with where requires "
                                 "an identity or initial value")
            if arr.shape[0] == 0:
                raise ValueError("zero-size array to reduction operation "
                                 f"{self.__name__} which has no identity")
            carry, arr = arr[0], arr[1:]
        else:
            carry = _full(asarray(start, dtype=arr.dtype), arr.shape[1:])
        out = self._fold(carry, arr, mask)
        if keepdims:
            out = reshape(out, (1,) * len(shape)) if all_axes else expand_dims(out, axis)
        return out

    def _fold(self, carry, xs, mask):
        def step(c, x):
            if mask is None:
                return self._func(c, x), None
            value, keep = x
            return where(keep, self._func(c, value), c), None
        return lax.scan(step, carry, xs if mask is None else (xs, mask))[0]

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reduction of a along axis."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        arr, = _arrays(f"{self.__name__}.accumulate", a)
        arr = arr if dtype is None else astype(arr, dtype)
        if axis is None:
            arr, axis = ravel(arr), 0
        axis = _axis(axis, arr.ndim)
        arr = moveaxis(arr, axis, 0)
        if arr.shape[0] == 0:
            return moveaxis(arr, 0, axis)

        def step(c, x):
            c = self._func(c, x)
            return c, c
        rest = lax.scan(step, arr[0], arr[1:])[1]
        return moveaxis(concatenate([arr[:1], rest]), 0, axis)

    # ------------------------------------------------------------ at, outer, reduceat

    def at(self, a, indices, b=None, /, *, inplace=True):
        """a with the ufunc applied at indices (with b for binary ufuncs; repeated indices
        applied in turn); inplace=False only."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        if b is None and self.nin != 1 or b is not None and self.nin != 2:
            raise ValueError(f"{self.__name__}.at: expected {self.nin - 1} value argument(s)")
        if self._at is not None:
            return self._at(a, indices, b)
        arr, = _arrays(f"{self.__name__}.at", a)
        idx = arr[indices]  # the shape the values broadcast to
        flat = tuple(ravel(i) for i in _index_arrays(arr, indices, idx.shape))

        def step(x, k):
            pos = tuple(i[k] for i in flat)
            new = self._func(x[pos]) if b is None else self._func(
                x[pos], ravel(_full(b, idx.shape))[k])
            return x.at[pos].set(new), None
        return lax.scan(step, arr, asarray(np.arange(idx.size)))[0]

    def outer(self, A, B, /, **kwargs):
        """func(a, b) for every pair of elements: shape A.shape + B.shape."""
        self._binary("outer")
        A, B = _arrays(f"{self.__name__}.outer", A, B)
        pairs = vmap(vmap(lambda x, y: self(x, y, **kwargs), (None, 0)), (0, None))
        return reshape(pairs(ravel(A), ravel(B)), A.shape + B.shape)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions of the slices a[indices[i]:indices[i+1]] along axis (a[indices[i]] where
        the next index is not larger); indices must be concrete."""
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        arr, = _arrays(f"{self.__name__}.reduceat", a)
        arr = moveaxis(arr, _axis(axis, arr.ndim), 0)
        idx = np.asarray(concrete_value(asarray(indices), f"indices of {self.__name__}"
                                                           ".reduceat"))
        if idx.ndim != 1:
            raise ValueError("reduceat: expect indices to be a 1-dimensional array")
        stops = list(idx[1:]) + [arr.shape[0]]
        parts = [self.reduce(arr[start:stop], axis=0, dtype=dtype) if start < stop else
                 (arr[start] if dtype is None else astype(arr[start], dtype))
                 for start, stop in zip(idx, stops)]
        return moveaxis(asarray(parts), 0, _axis(axis, arr.ndim))


def _full(x, shape):
    """x broadcast to shape (a bool mask or values)."""
    return broadcast_to(asarray(x), shape)


def _index_arrays(arr, indices, shape):
    """Integer index arrays (one per indexed dimension, broadcast to `shape`) equivalent to
    arr[indices], for the generic at."""
    grid = asarray(np.arange(arr.size).reshape(arr.shape))[indices]
    flat = ravel(grid)
    coords = []
    for n in reversed(arr.shape):
        coords.append(flat % n)
        flat = flat // n
    return [reshape(c, shape) for c in reversed(coords)]


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A jnp.ufunc from a function of scalars (which must be traceable with JAX's rules)."""
    return ufunc(func, nin, nout, identity=identity)


def _scatter(method):
    return lambda a, indices, b: getattr(asarray(a).at[indices], method)(b)


def _without_dtype(reduction):
    """A max/min/all/any reduce taking ufunc.reduce's dtype (a cast first) and initial."""
    def reduce(a, axis, dtype, keepdims, initial, where):
        a = asarray(a) if dtype is None else astype(asarray(a), dtype)
        extra = {} if initial is None else {"initial": initial}
        return reduction(a, axis=axis, keepdims=keepdims, where=where, **extra)
    return reduce


def _make(func, identity=None, **special):
    return ufunc(func, 2, 1, name=func.__name__, identity=identity, call=func, **special)


add = _make(add, 0, reduce=sum, accumulate=cumsum, at=_scatter("add"))
multiply = _make(multiply, 1, reduce=prod, accumulate=cumprod, at=_scatter("multiply"))
maximum = _make(maximum, reduce=_without_dtype(max), at=_scatter("max"))
minimum = _make(minimum, reduce=_without_dtype(min), at=_scatter("min"))
subtract = _make(subtract)
logical_and = _make(logical_and, True, reduce=_without_dtype(all))
logical_or = _make(logical_or, False, reduce=_without_dtype(any))
logical_xor = _make(logical_xor, False)
bitwise_and = _make(bitwise_and, -1)
bitwise_or = _make(bitwise_or, 0)
bitwise_xor = _make(bitwise_xor, 0)
logaddexp = _make(logaddexp, -np.inf)
logaddexp2 = _make(logaddexp2, -np.inf)
negative = ufunc(negative, 1, 1, name="negative", call=negative)
