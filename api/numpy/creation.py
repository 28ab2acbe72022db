"""Array creation: zeros/ones/full(_like), arange, linspace, eye, tri, diag, meshgrid, grids."""
import builtins
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.avals import ShapeDtypeStruct
from ...core.errors import ConcretizationTypeError
from ...core.trace import get_aval
from ...core.vma import vary_like
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from .promotion import (asarray, astype, broadcast_shapes, broadcast_to, concrete_value,
                        _strong_const, lax_full, lax_select, moveaxis, promote_dtypes, ravel,
                        reshape, result_type, stack, _arrays, _axis, _check_args, _concrete_array,
                        _is_array, _real_dtype, _static_int, _to_inexact_dtype, _user_dtype,
                        _zero_scalar, staged_as)
from ..out_sharding import filled_like, strong_on_device, takes_placement
from .ufuncs import add, divide, log10, multiply, power, subtract


# ---------------------------------------------------------------- array creation

def _shape_arg(shape, name):
    if isinstance(shape, (tuple, list)):
        dims = shape
    elif hasattr(shape, "__iter__") and not _is_array(shape):
        raise TypeError(f"{name}: expected sequence object with len >= 0 or a single integer")
    else:
        dims = (shape,)
    try:
        out = tuple(_static_int(d, "") if _is_array(d) else operator.index(d) for d in dims)
    except ConcretizationTypeError:
        # JAX raises a plain TypeError (not a ConcretizationTypeError) for a traced shape.
        raise TypeError(_shapes_must(dims, f"the shape argument of jnp.{name}")) from None
    except TypeError:
        raise TypeError(_shapes_must(dims)) from None
    if builtins.any(d < 0 for d in out):
        raise TypeError(f"{name}: shape must have every element be nonnegative, got {out}.")
    return out


def _shapes_must(dims, traced=None):
    """JAX's message for a shape that is not a sequence of concrete integers (`traced` names
    the traced argument, which gets JAX's advice about jit)."""
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {tuple(dims)!r}."
    if traced is None:
        return msg
    return (f"{msg}\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
            f"subfunctions. (It arose in {traced}: the value depends on the arguments of the "
            "traced function.)")


def _creation_dtype(dtype, name):
    return _dt.default_float() if dtype is None else _user_dtype(dtype, name)


def _check_not_forgotten_tuple(name, shape, dtype):
    if isinstance(shape, int) and isinstance(dtype, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type. Did you accidentally write "
                        f"`jax.numpy.{name}({shape}, {dtype})` when you meant "
                        f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple "
                        "argument for the shape?")


@takes_placement("jnp.zeros")
def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (float32 by default)."""
    _check_not_forgotten_tuple("zeros", shape, dtype)
    return lax_full(_shape_arg(shape, "zeros"), 0, _creation_dtype(dtype, "zeros"))


@takes_placement("jnp.ones")
def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ones (float32 by default)."""
    _check_not_forgotten_tuple("ones", shape, dtype)
    return lax_full(_shape_arg(shape, "ones"), 1, _creation_dtype(dtype, "ones"))


@takes_placement("jnp.zeros")
def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Like zeros (XLA has no uninitialized memory)."""
    _check_not_forgotten_tuple("empty", shape, dtype)
    return zeros(shape, None if dtype is None else _user_dtype(dtype, "empty"))


@takes_placement("full", fills=True)
def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of `shape` filled with fill_value (weakly typed when fill_value is a
    Python scalar and no dtype is given, as in JAX)."""
    shape = _shape_arg(shape, "full")
    if dtype is not None:  # the fill value converts to dtype directly (no default int first)
        return broadcast_to(asarray(*_check_args("full", fill_value, checked_ints=False),
                                    dtype=_user_dtype(dtype, "full")), shape)
    return broadcast_to(asarray(*_check_args("full", fill_value)), shape)


def _model_aval(a, name):
    """The type a *_like function copies: an array's, a ShapeDtypeStruct's (as JAX's)."""
    if isinstance(a, ShapeDtypeStruct):
        return a.to_aval()
    return get_aval(a) if _is_array(a) or hasattr(a, "aval") else get_aval(asarray(
        _check_args(name, a)[0]))


def _like_shape_dtype(a, dtype, shape, name):
    aval = _model_aval(a, name)
    out_dtype = aval.dtype if dtype is None else _user_dtype(dtype, name)
    out_shape = aval.shape if shape is None else _shape_arg(shape, name)
    weak = dtype is None and aval.weak_type
    return out_shape, out_dtype, weak


@takes_placement("full_like", fills=True, passes_out=True)
def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array like a (shape, dtype, weak type) filled with fill_value."""
    out_shape, out_dtype, weak = _like_shape_dtype(a, dtype, shape, "full_like")
    fill = _check_args("full_like", fill_value)[0]
    fill = ew.convert_element_type(fill, out_dtype, weak_type=weak and np.ndim(fill) == 0)
    if np.ndim(fill) == 0:  # as lax.full_like
        out = filled_like(fill, out_shape, a, shape, device, out_sharding)
        return vary_like(out, _model_aval(a, "full_like").vma)
    if device is None:
        return broadcast_to(fill, out_shape, out_sharding=out_sharding)
    return strong_on_device(broadcast_to(fill, out_shape), device)


@takes_placement("jnp.zeros_like", fills=True, passes_out=True)
def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with a's shape and dtype."""
    dtype = None if dtype is None else _user_dtype(dtype, "zeros_like")  # (JAX's warning names it)
    return full_like(a, 0, dtype, shape, device=device, out_sharding=out_sharding)


@takes_placement("jnp.ones_like", fills=True, passes_out=True)
def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with a's shape and dtype."""
    dtype = None if dtype is None else _user_dtype(dtype, "ones_like")  # (JAX's warning names it)
    return full_like(a, 1, dtype, shape, device=device, out_sharding=out_sharding)


@takes_placement("jnp.empty_like", out_sharding=False, passes_out=True)
def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """Like zeros_like."""
    dtype = None if dtype is None else _user_dtype(dtype, "ones_like")  # JAX's name
    return zeros_like(prototype, dtype, shape, device=device)


def _arange_arg(x, name):
    if x is None:
        return None
    value = concrete_value(x, f"It arose in the jnp.arange argument '{name}'") \
        if _is_array(x) else x
    if np.ndim(value) != 0:
        raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={value}")
    if np.iscomplexobj(value):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported "
                         "starting in JAX v0.10.0.")
    return value.item() if hasattr(value, "item") else value


@takes_placement("jnp.arange", under_jit=True)
def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in [start, stop); the dtype follows JAX (ints give int32, floats
    float32); the bounds must be concrete."""
    start_name = "stop" if stop is None and step is None else "start"
    start_v = _arange_arg(start, start_name)
    stop_v, step_v = _arange_arg(stop, "stop"), _arange_arg(step, "step")
    if dtype is None:
        dtype = result_type(*(x for x in (start, stop, step) if x is not None))
    dtype = _user_dtype(dtype, "arange")
    if stop_v is None:
        start_v, stop_v = 0, start_v
    if step_v is not None:
        return _arange_stepped(start_v, stop_v, step_v, dtype)
    size = builtins.max(0, int(np.ceil(np.float64(stop_v) - np.float64(start_v))))
    out = st.iota(dtype, size)
    return out if start_v == 0 else ew.add(lax_full((size,), start_v, dtype), out)


def _arange_stepped(start, stop, step, dtype):
    if step == 0:
        raise ZeroDivisionError("jnp.arange: step must not be zero")
    size = builtins.max(0, int(np.ceil((stop - start) / step)))
    work = _dt.float32 if _dt.is_float(dtype) and _dt.finfo(dtype).bits < 32 else dtype
    steps = ew.mul(lax_full((size,), step, work), st.iota(work, size))
    out = ew.add(lax_full((size,), start, work), steps)
    return astype(out, dtype)


@takes_placement("jnp.linspace", out_sharding=False, under_jit=True)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """num evenly spaced samples from start to stop (inclusive when endpoint), along axis."""
    num = _static_int(num, "'num' argument of jnp.linspace")
    axis = _static_int(axis, "'axis' argument of jnp.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = _arrays("linspace", start, stop)
    dtype = None if dtype is None else _user_dtype(dtype, "linspace")
    return _linspace(start, stop, num=num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                     axis=axis)


@staged_as("_linspace", static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, *, num, endpoint, retstep, dtype, axis):
    """linspace's jit (JAX's _linspace), differentiable in start and stop."""
    dtype = _to_inexact_dtype(result_type(start, stop)) if dtype is None else dtype
    comp = _to_inexact_dtype(dtype)
    start, stop = astype(start, comp), astype(stop, comp)
    bounds = list(broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, bounds), broadcast_to(stop, bounds)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    out, delta = _linspace_body(start, stop, num, endpoint, comp, bounds, axis)
    if _dt.is_int(dtype) and not _dt.is_int(out.dtype):
        out = ew.floor(out)
    out = astype(out, dtype)
    return (out, delta) if retstep else out


def _linspace_body(start, stop, num, endpoint, comp, bounds, axis):
    expanded = bounds[:axis] + [1] + bounds[axis:]
    if num == 0:
        return zeros(bounds[:axis] + [0] + bounds[axis:], comp), lax_full((), np.nan, comp)
    if num == 1:
        delta = lax_full((), np.nan, comp) if endpoint else ew.sub(stop, start)
        return reshape(start, expanded), delta
    div = num - 1 if endpoint else num
    delta = ew.div(subtract(stop, start), _strong_const(start, div))
    iota_shape = [1] * len(expanded)
    iota_shape[axis] = div
    real = _real_dtype(comp)
    step = astype(reshape(ew.div(st.iota(real, div), np.array(div, real)), iota_shape), comp)
    out = add(multiply(reshape(start, expanded), subtract(1, step)),
              multiply(reshape(stop, expanded), step))
    if endpoint:
        kept = tuple(d for d in range(len(expanded)) if d != axis)
        out = st.concatenate([out, st.broadcast_in_dim(stop, tuple(expanded), kept)], axis)
    return out, delta


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop)."""
    start, stop = _arrays("logspace", start, stop)
    dtype = None if dtype is None else _user_dtype(dtype, "logspace")
    return _logspace(start, stop, base, num=_static_int(num, "'num' argument of jnp.logspace"),
                     endpoint=endpoint, dtype=dtype, axis=axis)


@staged_as("_logspace", static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start, stop, base, *, num, endpoint, dtype, axis):
    dtype = _to_inexact_dtype(result_type(start, stop)) if dtype is None else dtype
    comp = _to_inexact_dtype(dtype)
    lin = linspace(astype(start, comp), astype(stop, comp), num, endpoint=endpoint, axis=axis)
    return astype(power(base, lin), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples evenly spaced on a log scale from start to stop (same-sign bounds)."""
    start, stop = _arrays("geomspace", start, stop)
    dtype = None if dtype is None else _user_dtype(dtype, "geomspace")
    return _geomspace(start, stop, num=_static_int(num, "'num' argument of jnp.geomspace"),
                      endpoint=endpoint, dtype=dtype, axis=axis)


@staged_as("_geomspace", static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, *, num, endpoint, dtype, axis):
    dtype = _to_inexact_dtype(result_type(start, stop)) if dtype is None else dtype
    comp = _to_inexact_dtype(dtype)
    start, stop = astype(start, comp), astype(stop, comp)
    sign = ew.sign(start)
    res = multiply(sign, logspace(log10(divide(start, sign)), log10(divide(stop, sign)), num,
                                  endpoint=endpoint, base=10.0, dtype=comp, axis=0))
    return astype(moveaxis(res, 0, axis), dtype)


def _eye_mask(n, m, k):
    rows = st.broadcasted_iota(_dt.int32, (n, m), 0)
    cols = st.broadcasted_iota(_dt.int32, (n, m), 1)
    return ew.eq(ew.add(rows, np.int32(k)), cols)


def _dim(n, what):
    n = _static_int(n, what)
    if n < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n}")
    return n


@takes_placement("jnp.eye", out_sharding=False)
def eye(N, M=None, k=0, dtype=None, *, device=None):
    """A 2-d array with ones on the k-th diagonal."""
    n = _dim(N, "argument 'N' of jnp.eye()")
    m = n if M is None else _dim(M, "argument 'M' of jnp.eye()")
    k = _static_int(k, "argument 'k' of jnp.eye()")
    return astype(_eye_mask(n, m, k), _creation_dtype(dtype, "eye"))


def identity(n, dtype=None):
    """The n x n identity matrix."""
    return eye(n, dtype=None if dtype is None else _user_dtype(dtype, "identity"))


def _tri_mask(n, m, k):
    shifted = ew.add(st.broadcasted_iota(_dt.int32, (n, m), 0), np.int32(k))
    return ew.ge(shifted, st.broadcasted_iota(_dt.int32, (n, m), 1))


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal."""
    n = _static_int(N, _shapes_must((N, M), "argument 'N' of jnp.tri()"))
    m = n if M is None else _static_int(M, _shapes_must((N, M), "argument 'M' of jnp.tri()"))
    if n < 0 or m < 0:  # JAX's class (its iota rejects the shape)
        raise TypeError(f"jnp.tri: N and M must be non-negative, got N={n}, M={m}")
    return astype(_tri_mask(n, m, _static_int(k, "argument 'k' of jnp.tri()")),
                  _creation_dtype(dtype, "tri"))


def _triangle(name, m, keep_lower, k):
    m, = _arrays(name, m)
    if m.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    mask = broadcast_to(_tri_mask(*m.shape[-2:], k if keep_lower else k - 1), m.shape)
    zero = zeros_like(m)
    return lax_select(mask, m, zero) if keep_lower else lax_select(mask, zero, m)


@staged_as("tril", static_argnames=("k",))
def tril(m, k=0):
    """m with the elements above the k-th diagonal zeroed."""
    return _triangle("tril", m, True, _static_int(k, "k argument of jnp.tril"))


@staged_as("triu", static_argnames=("k",))
def triu(m, k=0):
    """m with the elements below the k-th diagonal zeroed."""
    return _triangle("triu", m, False, _static_int(k, "k argument of jnp.triu"))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The offset diagonal over axis1/axis2, appended as the last axis (a strided slice of
    the flattened matrices, so it is exact and linear)."""
    a, = _arrays("diagonal", a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = _static_int(offset, "'offset' argument of jnp.diagonal()")
    ax1, ax2 = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    if ax1 == ax2:
        raise ValueError(f"axis1 and axis2 cannot be the same (both {axis1})")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    return _last_two_diagonal(a, offset)


def _last_two_diagonal(a, offset):
    *batch, n, m = a.shape
    nd = len(batch)
    a = st.slice_in_dim(a, builtins.min(builtins.max(0, -offset), n), n, 1, nd)
    a = st.slice_in_dim(a, builtins.min(builtins.max(0, offset), m), m, 1, nd + 1)
    n, m = a.shape[-2:]
    d = builtins.min(n, m)
    if d == 0:
        return zeros_like(a, shape=tuple(batch) + (0,))
    flat = st.reshape(st.slice_in_dim(a, 0, d, 1, nd), tuple(batch) + (d * m,))
    return st.slice_in_dim(flat, 0, (d - 1) * (m + 1) + 1, m + 1, nd)


def diag(v, k=0):
    """The k-th diagonal of a 2-d v, or a 2-d array with 1-d v on its k-th diagonal."""
    v, = _arrays("diag", v)
    k = _static_int(k, "k argument of jnp.diag")
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = v.shape[0] + builtins.abs(k)
    padded = st.pad(v, _zero_scalar(v), [(builtins.max(0, -k), builtins.max(0, k), 0)])
    cols = broadcast_to(reshape(padded, (n, 1)), (n, n))
    return lax_select(_eye_mask(n, n, k), cols, zeros_like(cols))


def diagflat(v, k=0):
    """diag of the flattened v."""
    return diag(ravel(v), k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-d coordinate vectors ('xy' swaps the first two axes)."""
    arrays = _arrays("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if builtins.any(a.ndim != 1 for a in arrays):
        raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[a.shape for a in arrays]}")
    if indexing == "xy" and len(arrays) >= 2:
        arrays[0], arrays[1] = arrays[1], arrays[0]
    shape = tuple(a.shape[0] for a in arrays)
    out = [_grid_axis(a, i, shape, sparse) for i, a in enumerate(arrays)]
    if indexing == "xy" and len(arrays) >= 2:
        out[0], out[1] = out[1], out[0]
    return out


def _grid_axis(a, i, shape, sparse):
    if sparse:
        return reshape(a, tuple(s if j == i else 1 for j, s in enumerate(shape)))
    return st.broadcast_in_dim(a, shape, (i,))


def indices(dimensions, dtype=None, sparse=False):
    """An array (or tuple, when sparse) of the index grids of an array of this shape."""
    dims = _shape_arg(dimensions, "indices")
    dtype = _dt.default_int() if dtype is None else _user_dtype(dtype, "indices")
    grids = []
    for i, d in enumerate(dims):  # each an iota broadcast, as JAX's
        shape = tuple(d if j == i else (1 if sparse else s) for j, s in enumerate(dims))
        grids.append(st.broadcast_in_dim(st.iota(dtype, d), shape, (i,)))
    if sparse:
        return tuple(grids)
    return stack(grids) if grids else zeros((0,), dtype)


def _grid_from_slice(s, name):
    """arange(start, stop, step), or linspace for a complex step (its magnitude the count)."""
    start = _concrete_array(s.start, f"slice start of jnp.{name}") or 0  # JAX: 0.0 -> 0
    stop = _concrete_array(s.stop, f"slice stop of jnp.{name}")
    step = _concrete_array(s.step, f"slice step of jnp.{name}") or 1
    if np.iscomplex(step):
        return linspace(start, stop, int(builtins.abs(step)))
    return arange(start, stop, step)


class _Grid:
    """jnp.mgrid (dense) and jnp.ogrid (sparse): grids from slices, as NumPy's."""

    def __init__(self, name, sparse):
        self.name, self.sparse = name, sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_from_slice(key, self.name)
        axes = promote_dtypes(*(_grid_from_slice(k, self.name) for k in key))
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return grids
        return stack(grids, 0) if grids else arange(0)


mgrid = _Grid("mgrid", sparse=False)
ogrid = _Grid("ogrid", sparse=True)


def copy(a, order=None):
    """A copy of a."""
    a, = _arrays("copy", a)
    return st.copy(a)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle: nonzero of tril(ones), as JAX's."""
    return _tri_indices("tril", tril, n, k, m)


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle: nonzero of triu(ones), as JAX's."""
    return _tri_indices("triu", triu, n, k, m)


def _tri_indices(name, part, n, k, m):
    from .indexing import nonzero  # here, not at the top: indexing imports creation
    n, k = (operator.index(concrete_value(v, f"{what} argument of jnp.{name}_indices"))
            for v, what in ((n, "n"), (k, "k")))
    m = n if m is None else operator.index(concrete_value(m, f"m argument of jnp.{name}_indices"))
    if n < 0 or m < 0:  # JAX's error: its ones((n, m)) refuses the shape
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got "
                        f"{(n, m)}.")
    size = int(np.count_nonzero(getattr(np, name)(np.ones((n, m), bool), k)))
    return nonzero(part(ones((n, m)), k=k), size=size)


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x ... x n array."""
    if n < 0 or ndim < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    return (arange(n),) * ndim
