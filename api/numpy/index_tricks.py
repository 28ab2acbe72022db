"""Index tricks: r_, c_, s_, index_exp, ix_, the *_indices_from helpers, mask_indices,
fromfunction, and vectorize (NumPy's generalised ufuncs on vmap)."""
import functools
import re

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives import structural as st
from ...core.transforms.vmap import vmap
from .promotion import (array, asarray, broadcast_shapes, broadcast_to, transpose, _arrays,
                        _static_int)
from .creation import (arange, diag_indices, ones, tril_indices, triu_indices, zeros,
                       _grid_from_slice)
from .indexing import nonzero
from .manipulation import concatenate, expand_dims

s_ = np.s_
index_exp = np.index_exp


# ---------------------------------------------------------------- r_ and c_

class _AxisConcat:
    """Concatenation by indexing (`jnp.r_[...]`, `jnp.c_[...]`): slices become aranges (a
    complex step: linspace), a leading string sets "axis,ndmin,trans1d" or "r"/"c"."""

    def __init__(self, name, axis, ndmin, trans1d):
        self.name, self.params = name, (axis, ndmin, trans1d)

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        (axis, ndmin, trans1d), matrix = self.params, -1
        if items and isinstance(items[0], str):
            (axis, ndmin, trans1d), matrix = self._directive(items[0])
            items = items[1:]
        out = concatenate([self._piece(item, ndmin, trans1d) for item in items], axis=axis)
        return expand_dims(out, matrix) if matrix != -1 and out.ndim == 1 else out

    def _directive(self, directive):
        if directive in ("r", "c"):
            return self.params, "rc".index(directive)
        fields = directive.split(",")
        if len(fields) > 3:
            raise ValueError(f"could not understand directive {directive!r}")
        try:
            return tuple(map(int, fields)) + self.params[len(fields):], -1
        except ValueError as err:
            raise ValueError(f"could not understand directive {directive!r}") from err

    def _piece(self, item, ndmin, trans1d):
        if isinstance(item, str):
            raise ValueError("string directive must be placed at the beginning")
        if isinstance(item, slice):
            obj, item_ndim = _grid_from_slice(item, self.name), 0
        else:
            obj = asarray(item)
            item_ndim = obj.ndim
        obj = array(obj, copy=False, ndmin=ndmin)
        if trans1d != -1 and ndmin - item_ndim > 0:
            shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
            order = tuple(range(ndmin))
            obj = transpose(obj, order[shifts:] + order[:shifts])
        return obj


r_ = _AxisConcat("r_", axis=0, ndmin=1, trans1d=-1)
c_ = _AxisConcat("c_", axis=-1, ndmin=2, trans1d=0)


# ---------------------------------------------------------------- index helpers

def ix_(*args):
    """Open-mesh index arrays: the i-th argument (1-d; booleans: their nonzero positions)
    reshaped to extend along axis i only."""
    args = _arrays("ix_", *args)
    out = []
    for i, a in enumerate(args):
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}")
        if a.dtype == np.bool_:
            a, = nonzero(a)
        shape = [1] * len(args)
        shape[i] = a.shape[0]
        out.append(zeros(shape, _dt.default_int()) if a.size == 0
                   else st.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(out)


def diag_indices_from(arr):
    """diag_indices for an n x ... x n array."""
    arr, = _arrays("diag_indices_from", arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


def _square_2d(name, arr):
    arr, = _arrays(name, arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return arr.shape


def tril_indices_from(arr, k=0):
    """tril_indices for a 2-d array's shape."""
    n, m = _square_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """triu_indices for a 2-d array's shape."""
    n, m = _square_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where mask_func(ones((n, n)), k) is non-zero (e.g. mask_func=jnp.triu)."""
    return nonzero(mask_func(ones((n, n)), k) != 0, size=size)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*index_grids) for the index grids of `shape`, by one vmap per axis (so the
    function sees scalars of dtype, as in JAX)."""
    shape = tuple(_static_int(s, "shape argument of jnp.fromfunction()") for s in shape)
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(arange(s, dtype=dtype) for s in shape), **kwargs)


# ---------------------------------------------------------------- vectorize

_DIMS = r"\w+"
_CORE = rf"(?:{_DIMS}(?:,{_DIMS})*)?"
_ARGS = rf"\({_CORE}\)(?:,\({_CORE}\))*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"


def _parse_signature(signature):
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    signature = signature.replace(" ", "")
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    return tuple([tuple(re.findall(_DIMS, arg)) for arg in re.findall(rf"\({_CORE}\)", side)]
                 for side in signature.split("->"))


def _loop_shape(args, core_dims, context):
    """The broadcast loop shape of the arguments and the size of each named core dimension."""
    sizes = {}
    for arg, dims in zip(args, core_dims):
        if arg.ndim < len(dims):
            raise ValueError(f"input with shape {arg.shape!r} does not have enough dimensions "
                             f"for all core dimensions {dims!r} {context}")
        for dim, size in zip(dims, arg.shape[arg.ndim - len(dims):]):
            if sizes.setdefault(dim, size) != size:
                raise ValueError(f"inconsistent size for core dimension {dim!r}: {size} vs "
                                 f"{sizes[dim]} {context}")
    loops = [arg.shape[:arg.ndim - len(dims)] for arg, dims in zip(args, core_dims)]
    return broadcast_shapes(*loops), sizes


def _checked(func, sizes, out_dims, context):
    """func, checking its outputs' shapes against the signature's output core dimensions."""
    def wrapped(*args):
        out = func(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_dims):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: "
                            f"{out!r}" if len(out_dims) > 1 and not isinstance(out, tuple) else
                            f"wrong number of output arguments: expected {len(out_dims)}, got "
                            f"{len(outs)} {context}")
        for o, dims in zip(outs, out_dims):
            shape = asarray(o).shape
            if len(shape) != len(dims):
                raise ValueError(f"output shape {shape!r} does not match core dimensions "
                                 f"{dims!r} {context}")
            for d, size in zip(dims, shape):
                if sizes.setdefault(d, size) != size:
                    raise ValueError(f"inconsistent size for core dimension {d!r}: {size} vs "
                                     f"{sizes[d]} {context}")
        return out
    return wrapped


def _bind_excluded(func, excluded, args, kwargs):
    """func with the excluded positional and keyword arguments bound, and what remains."""
    positions = sorted(e for e in excluded if isinstance(e, int) and e < len(args))
    fixed = {i: args[i] for i in positions}
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
    rest = [a for i, a in enumerate(args) if i not in fixed]
    kwargs = {k: v for k, v in kwargs.items() if k not in excluded}

    def bound(*dynamic, **dynamic_kwargs):
        it = iter(dynamic)
        full = [fixed[i] if i in fixed else next(it) for i in range(len(fixed) + len(dynamic))]
        return func(*full, **static_kwargs, **dynamic_kwargs)
    return bound, rest, kwargs


def _keywords_as_scalars(func, args, in_dims, kwargs):
    """Keyword arguments vectorized as scalar (core-dimensionless) arguments, as NumPy's
    vectorize does (JAX 0.10 silently drops them, calling pyfunc with its defaults)."""
    names, n = list(kwargs), len(args)

    def positional(*all_args):
        return func(*all_args[:n], **dict(zip(names, all_args[n:])))
    return positional, list(args) + list(kwargs.values()), list(in_dims) + [()] * len(names)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc mapped over the leading (loop) dimensions of its array arguments, broadcast
    together, by nested vmaps; `signature` names core dimensions as NumPy's gufuncs, and
    `excluded` positions or keywords are passed through unchanged."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, args, kwargs = _bind_excluded(pyfunc, excluded, args, kwargs)
        in_dims, out_dims = (_parse_signature(signature) if signature is not None
                             else ([()] * len(args), None))
        if len(in_dims) != len(args):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_dims)}, "
                            f"got {len(args)} {context}")
        func, args, in_dims = _keywords_as_scalars(func, args, in_dims, kwargs)
        args = [asarray(a) for a in args]
        loop, sizes = _loop_shape(args, in_dims, context)
        if out_dims is not None:
            func = _checked(func, sizes, out_dims, context)
        args = [broadcast_to(a, loop + a.shape[a.ndim - len(d):]) for a, d in zip(args, in_dims)]
        for _ in loop:
            func = vmap(func)
        return func(*args)
    return wrapped
