"""refjax.numpy: jax.numpy's functions, built on the lax primitives with NumPy's promotion."""
import builtins
import math as _math
import operator

import numpy as np

from ..core import dtypes as _dt
from ..core.array import Array
from ..core.avals import ShapedArray
from ..core.trace import Tracer, get_aval
from ..core.primitives import elementwise as ew
from ..core.primitives import structural as st
from . import lax


class _ScalarMeta(type):
    """The class of jnp.float32 and friends: a dtype argument (np.dtype(jnp.float32) works)
    and a constructor, `jnp.float32(3)` being a 0-d Array (JAX has no scalar objects)."""

    @property
    def __numpy_dtype__(cls):
        return cls.dtype

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)


def _make_scalar_type(np_type):
    name = np.dtype(np_type).name
    return _ScalarMeta(name, (object,), {
        "dtype": np.dtype(np_type), "__module__": "refjax.numpy",
        "__doc__": f"A refjax scalar constructor of type {name}: `jnp.{name}(x)` is an Array."})


bool_ = _make_scalar_type(np.bool_)
int8, int16, int32, int64 = map(_make_scalar_type, (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = map(_make_scalar_type, (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = map(_make_scalar_type, (np.float16, np.float32, np.float64))
bfloat16 = _make_scalar_type(_dt.bfloat16.type)
complex64, complex128 = map(_make_scalar_type, (np.complex64, np.complex128))
single, double, csingle, cdouble = float32, float64, complex64, complex128
int_, uint, float_, complex_ = int64, uint64, float64, complex128
float0 = _dt.float0
inexact, floating, integer, signedinteger, unsignedinteger, number, complexfloating = (
    np.inexact, np.floating, np.integer, np.signedinteger, np.unsignedinteger, np.number,
    np.complexfloating)
generic = np.generic
dtype = np.dtype
pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
newaxis = None
ndarray = Array
promote_types = _dt.promote_types
finfo, iinfo = _dt.finfo, _dt.iinfo


def issubdtype(a, b):
    """np.issubdtype that knows bfloat16 is floating."""
    return _dt.issubdtype(a, b)


def _is_array(x):
    return isinstance(x, (Array, Tracer))


def ndim(x):
    return len(np.shape(x)) if not _is_array(x) else x.ndim


def shape(x):
    return tuple(x.shape) if _is_array(x) else np.shape(x)


def size(x, axis=None):
    s = shape(x)
    return int(np.prod(s)) if axis is None else s[axis]


# ---------------------------------------------------------------- array creation

def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """An Array from a(n) Array, tracer, NumPy array, Python scalar or nested sequence."""
    if _is_array(a):
        return a if dtype is None else astype(a, dtype)
    if _dt.is_python_scalar(a):
        target = _dt.canonicalize_dtype(dtype) if dtype is not None else _dt.python_scalar_dtype(a)
        return ew.weak_scalar(a, target) if dtype is None else _concrete(np.asarray(a, target))
    if isinstance(a, (list, tuple)) and _contains_traced(a):
        return stack([asarray(x) for x in a]).astype(dtype) if dtype else stack([asarray(x) for x in a])
    value = np.asarray(a)
    if value.dtype == object:
        raise TypeError(f"jnp.asarray: cannot convert {a!r} of type {type(a).__name__} "
                        "to a JAX array")
    if value.dtype.kind in "USO":
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {value.dtype}")
    target = _dt.canonicalize_dtype(dtype if dtype is not None else value.dtype)
    return _concrete(value.astype(target, copy=False))


def _contains_traced(seq):
    return builtins.any(_is_array(x) or (isinstance(x, (list, tuple)) and _contains_traced(x))
                        for x in seq)


def _concrete(value):
    from ..backends.base import make_array
    return make_array(value, ShapedArray(value.shape, value.dtype))


def array(object, dtype=None, copy=True, order="K", ndmin=0):
    """Like asarray; `ndmin` prepends dimensions."""
    out = asarray(object, dtype=dtype)
    if _dt.is_python_scalar(object) and dtype is None:
        out = asarray(object)
    if ndmin > out.ndim:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def astype(x, dtype, copy=False, device=None):
    """x converted to dtype."""
    x = asarray(x)
    dtype = _dt.canonicalize_dtype(dtype)
    if x.dtype == dtype and not x.weak_type:
        return x
    return ew.convert_element_type(x, dtype)


# ---------------------------------------------------------------- promotion and broadcasting

def _dtype_weak(x):
    if _dt.is_python_scalar(x):
        return _dt.python_scalar_dtype(x), type(x) is not bool
    aval = get_aval(asarray(x) if isinstance(x, (list, tuple)) else x)
    return aval.dtype, aval.weak_type


def result_type(*args, return_weak_type_flag=False):
    """The dtype jnp computes in for these operands (JAX's lattice)."""
    pairs = []
    for a in args:
        if isinstance(a, (np.dtype, type, str)) and not _dt.is_python_scalar(a):
            pairs.append((np.dtype(a), False))
        else:
            pairs.append(_dtype_weak(a))
    dtype, weak = _dt.result_type_of(pairs)
    return (dtype, weak) if return_weak_type_flag else dtype


def _promote_dtypes(*args):
    """Convert operands to their common dtype (keeping Python scalars as weak literals)."""
    dtype, weak = result_type(*args, return_weak_type_flag=True)
    return [_convert(a, dtype, weak) for a in args]


def _convert(a, dtype, weak):
    if _dt.is_python_scalar(a):
        return ew.weak_scalar(a, dtype) if weak or _dt.kind(dtype) != "b" else \
            ew.convert_element_type(a, dtype)
    a = asarray(a)
    aval = get_aval(a)
    if aval.dtype == dtype and aval.weak_type == weak:
        return a
    return ew.convert_element_type(a, dtype, weak_type=weak)


def _promote_to_inexact(*args):
    dtype, weak = result_type(*args, return_weak_type_flag=True)
    if not _dt.is_inexact(dtype):
        dtype = _dt.default_float()
    return [_convert(a, dtype, weak) for a in args]


def broadcast_shapes(*shapes):
    """NumPy broadcasting of shapes; ValueError when incompatible (as jnp)."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}") \
            from None


def broadcast_to(x, shape):
    """x broadcast to shape with NumPy's rules."""
    x = asarray(x)
    shape = tuple(operator.index(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    xs = x.shape
    if xs == shape:
        return x
    nd = len(shape)
    if len(xs) > nd or builtins.any(a != 1 and a != b for a, b in zip(xs[::-1], shape[::-1])):
        raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested shape {shape}")
    lead = nd - len(xs)
    squeeze_dims = tuple(i for i, (a, b) in enumerate(zip(xs, shape[lead:])) if a == 1 and b != 1)
    if squeeze_dims:
        x = st.reshape(x, tuple(d for i, d in enumerate(xs) if i not in squeeze_dims))
    kept = tuple(lead + i for i in range(len(xs)) if i not in squeeze_dims)
    return st.broadcast_in_dim(x, shape, kept)


def _broadcast_args(*args):
    shapes = [np.shape(a) if _dt.is_python_scalar(a) else tuple(get_aval(a).shape) for a in args]
    full = broadcast_shapes(*shapes)
    return [a if s == full or s == () else broadcast_to(a, full) for a, s in zip(args, shapes)]


def _binary(lax_fn, name, promote=_promote_dtypes):
    def fn(x, y, /):
        x, y = promote(*_check_args(name, x, y))
        x, y = _broadcast_args(x, y)
        return lax_fn(x, y)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} with NumPy broadcasting and JAX type promotion."
    return fn


def _check_args(name, *args):
    out = []
    for a in args:
        if _is_array(a) or _dt.is_python_scalar(a):
            out.append(a)
        elif isinstance(a, (np.ndarray, np.generic)):
            out.append(asarray(a))
        elif isinstance(a, (list, tuple)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, but got "
                            f"{type(a).__name__} at position {len(out)}.")
        else:
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a).__name__}")
    return out


def _unary(lax_fn, name, promote=_promote_dtypes):
    def fn(x, /):
        x, = promote(*_check_args(name, x))
        return lax_fn(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}."
    return fn


add = _binary(ew.add, "add")
subtract = _binary(ew.sub, "subtract")
maximum = _binary(ew.max, "maximum")
minimum = _binary(ew.min, "minimum")
equal = _binary(ew.eq, "equal")
not_equal = _binary(ew.ne, "not_equal")
less = _binary(ew.lt, "less")
less_equal = _binary(ew.le, "less_equal")
greater = _binary(ew.gt, "greater")
greater_equal = _binary(ew.ge, "greater_equal")
arctan2 = _binary(ew.atan2, "arctan2", _promote_to_inexact)
nextafter = _binary(ew.nextafter, "nextafter", _promote_to_inexact)
true_divide = divide = _binary(ew.div, "true_divide", _promote_to_inexact)
left_shift = _binary(ew.shift_left, "left_shift")


def _mul(x, y):
    if get_aval(x).dtype == _dt.bool_:
        return ew.bitwise_and(x, y)
    return ew.mul(x, y)


multiply = _binary(_mul, "multiply")


def _bool_or(lax_fn, name):
    return _binary(lax_fn, name)


bitwise_and = _binary(ew.bitwise_and, "bitwise_and")
bitwise_or = _binary(ew.bitwise_or, "bitwise_or")
bitwise_xor = _binary(ew.bitwise_xor, "bitwise_xor")


def _right_shift(x, y):
    if _dt.kind(get_aval(x).dtype) == "u":
        return ew.shift_right_logical(x, y)
    return ew.shift_right_arithmetic(x, y)


right_shift = _binary(_right_shift, "right_shift")


def _logical(lax_fn, name):
    def fn(x, y, /):
        return lax_fn(*_broadcast_args(astype(asarray(x), bool), astype(asarray(y), bool)))
    fn.__name__ = name
    return fn


logical_and = _logical(ew.bitwise_and, "logical_and")
logical_or = _logical(ew.bitwise_or, "logical_or")
logical_xor = _logical(ew.bitwise_xor, "logical_xor")


def logical_not(x, /):
    return ew.bitwise_not(astype(asarray(x), bool))


def _floor_divide(x, y):
    dtype = get_aval(x).dtype
    if _dt.is_int(dtype):
        q = ew.div(x, y)
        r = ew.rem(x, y)
        zero = _zeros_of(r)
        fix = ew.bitwise_and(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, _zeros_of(y))))
        return ew.select_n(fix, q, ew.sub(q, _ones_of(q)))
    if dtype == _dt.bool_:
        return ew.bitwise_and(x, y)
    return ew.floor(ew.div(x, y))


def _zeros_of(x):
    return ew.full(get_aval(x).shape, 0, get_aval(x).dtype)


def _ones_of(x):
    return ew.full(get_aval(x).shape, 1, get_aval(x).dtype)


floor_divide = _binary(_floor_divide, "floor_divide")


def _remainder(x, y):
    r = ew.rem(x, y)
    zero = _zeros_of(r)
    fix = ew.bitwise_and(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(y, _zeros_of(y))))
    return ew.select_n(fix, r, ew.add(r, y))


remainder = mod = _binary(_remainder, "remainder")
fmod = _binary(ew.rem, "fmod")


def _power(x, y):
    dtype = get_aval(x).dtype
    if _dt.is_int(dtype):
        return _int_power(x, y)
    return ew.pow(x, y)


def _int_power(x, y):
    """Integer power by squaring, unrolled over the bits of the exponent's dtype."""
    acc = _ones_of(x)
    bits = get_aval(y).dtype.itemsize * 8
    for _ in range(bits):
        acc = ew.select_n(ew.eq(ew.bitwise_and(y, _ones_of(y)), _zeros_of(y)), ew.mul(acc, x), acc)
        x = ew.mul(x, x)
        y = ew.shift_right_logical(y, _ones_of(y))
    return acc


def power(x1, x2, /):
    """x1 ** x2; a static integer exponent uses lax.integer_pow, as jnp does."""
    if isinstance(x2, int) and not isinstance(x2, bool) and _is_array(x1) and (
            _dt.is_inexact(x1.dtype) or x2 >= 0):
        return ew.integer_pow(x1, x2)
    return _binary(_power, "power")(x1, x2)


pow = power


def float_power(x1, x2, /):
    return power(*_promote_to_inexact(x1, x2))


negative = _unary(ew.neg, "negative")
sign = _unary(ew.sign, "sign")
floor = _unary(lambda x: x if _dt.is_int(x.dtype) or x.dtype == _dt.bool_ else ew.floor(x), "floor")
ceil = _unary(lambda x: x if _dt.is_int(x.dtype) or x.dtype == _dt.bool_ else ew.ceil(x), "ceil")
exp = _unary(ew.exp, "exp", _promote_to_inexact)
exp2 = _unary(ew.exp2, "exp2", _promote_to_inexact)
log = _unary(ew.log, "log", _promote_to_inexact)
log1p = _unary(ew.log1p, "log1p", _promote_to_inexact)
expm1 = _unary(ew.expm1, "expm1", _promote_to_inexact)
tanh = _unary(ew.tanh, "tanh", _promote_to_inexact)
sin = _unary(ew.sin, "sin", _promote_to_inexact)
cos = _unary(ew.cos, "cos", _promote_to_inexact)
tan = _unary(ew.tan, "tan", _promote_to_inexact)
arcsin = _unary(ew.asin, "arcsin", _promote_to_inexact)
arccos = _unary(ew.acos, "arccos", _promote_to_inexact)
arctan = _unary(ew.atan, "arctan", _promote_to_inexact)
sinh = _unary(ew.sinh, "sinh", _promote_to_inexact)
cosh = _unary(ew.cosh, "cosh", _promote_to_inexact)
arcsinh = _unary(ew.asinh, "arcsinh", _promote_to_inexact)
arccosh = _unary(ew.acosh, "arccosh", _promote_to_inexact)
arctanh = _unary(ew.atanh, "arctanh", _promote_to_inexact)
sqrt = _unary(ew.sqrt, "sqrt", _promote_to_inexact)
cbrt = _unary(ew.cbrt, "cbrt", _promote_to_inexact)
square = _unary(lambda x: ew.integer_pow(x, 2), "square")
isfinite = _unary(lambda x: ew.is_finite(x) if _dt.is_inexact(x.dtype) else _full_bool(x, True),
                  "isfinite")
reciprocal = _unary(lambda x: ew.integer_pow(x, -1), "reciprocal", _promote_to_inexact)
conjugate = conj = _unary(lambda x: ew.conj(x) if x.dtype.kind == "c" else x, "conjugate")
real = _unary(lambda x: ew.real(x) if x.dtype.kind == "c" else x, "real")
imag = _unary(lambda x: ew.imag(x) if x.dtype.kind == "c" else _zeros_of(x), "imag")
deg2rad = radians = _unary(lambda x: ew.mul(x, ew._const(x, np.pi / 180)), "deg2rad",
                           _promote_to_inexact)
rad2deg = degrees = _unary(lambda x: ew.mul(x, ew._const(x, 180 / np.pi)), "rad2deg",
                           _promote_to_inexact)
log2 = _unary(lambda x: ew.div(ew.log(x), ew._const(x, np.log(2))), "log2", _promote_to_inexact)
log10 = _unary(lambda x: ew.div(ew.log(x), ew._const(x, np.log(10))), "log10", _promote_to_inexact)


def _full_bool(x, value):
    return ew.full(get_aval(x).shape, value, _dt.bool_)


def absolute(x, /):
    """|x| (unsigned and bool pass through)."""
    x = asarray(x)
    if _dt.kind(x.dtype) in "ub":
        return x
    return ew.abs(x)


abs = absolute


def positive(x, /):
    return asarray(x)


def invert(x, /):
    return ew.bitwise_not(asarray(x))


bitwise_not = bitwise_invert = invert


def rint(x, /):
    x, = _promote_to_inexact(asarray(x))
    return ew.round(x, ew.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals=0, out=None):
    """Round half to even, at `decimals` digits (jnp.round)."""
    a = asarray(a)
    if _dt.is_int(a.dtype) or a.dtype == _dt.bool_:
        return a
    if decimals == 0:
        return ew.round(a, ew.RoundingMethod.TO_NEAREST_EVEN)
    factor = ew._const(a, 10.0 ** decimals)
    return ew.div(ew.round(ew.mul(a, factor), ew.RoundingMethod.TO_NEAREST_EVEN), factor)


around = round


def trunc(x, /):
    x = asarray(x)
    if not _dt.is_inexact(x.dtype):
        return x
    return ew.select_n(ew.lt(x, _zeros_of(x)), ew.floor(x), ew.ceil(x))


fix = trunc


def isnan(x, /):
    x = asarray(x)
    return ew.ne(x, x) if _dt.is_inexact(x.dtype) else _full_bool(x, False)


def isinf(x, /):
    x = asarray(x)
    if not _dt.is_inexact(x.dtype):
        return _full_bool(x, False)
    return ew.eq(ew.abs(x), ew._const(ew.abs(x), np.inf))


def isposinf(x, /):
    x = asarray(x)
    return ew.eq(x, ew._const(x, np.inf)) if _dt.is_inexact(x.dtype) else _full_bool(x, False)


def isneginf(x, /):
    x = asarray(x)
    return ew.eq(x, ew._const(x, -np.inf)) if _dt.is_inexact(x.dtype) else _full_bool(x, False)


def signbit(x, /):
    x = asarray(x)
    if _dt.kind(x.dtype) in "ub":
        return _full_bool(x, False)
    if _dt.is_int(x.dtype):
        return ew.lt(x, _zeros_of(x))
    bits = lax.bitcast_convert_type(x, np.dtype(f"int{x.dtype.itemsize * 8}")) \
        if hasattr(lax, "bitcast_convert_type") else None
    if bits is None:
        return ew.bitwise_or(ew.lt(x, _zeros_of(x)),
                             ew.bitwise_and(ew.eq(x, _zeros_of(x)),
                                            ew.lt(ew.div(_ones_of(x), x), _zeros_of(x))))
    return ew.lt(bits, _zeros_of(bits))


def matmul(a, b, /, *, precision=None, preferred_element_type=None):
    """NumPy matmul: 1-d operands are promoted, leading dims broadcast as batch dims."""
    a, b = _promote_dtypes(*_check_args("matmul", a, b))
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: inputs must be at least 1-dimensional, got shapes {a.shape} "
                         f"and {b.shape}")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    a2 = reshape(a, (1,) + a.shape) if a_vec else a
    b2 = reshape(b, b.shape + (1,)) if b_vec else b
    if a2.shape[-1] != b2.shape[-2]:
        raise TypeError(f"matmul: contracting dimensions must agree, got shapes {a.shape} and "
                        f"{b.shape} (dimension {a2.shape[-1]} != {b2.shape[-2]})")
    batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = broadcast_to(a2, batch + a2.shape[-2:])
    b2 = broadcast_to(b2, batch + b2.shape[-2:])
    nb = len(batch)
    dims = (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    out = lax.dot_general(a2, b2, dims, precision=precision,
                          preferred_element_type=preferred_element_type)
    if a_vec:
        out = st.squeeze(out, (nb,))
    if b_vec:
        out = st.squeeze(out, (out.ndim - 1,))
    return out


# ---------------------------------------------------------------- shape manipulation (used by methods)

def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """a with a new shape; one dimension may be -1."""
    a = asarray(a)
    shape = newshape if shape is None else shape
    if isinstance(shape, int) or not isinstance(shape, (tuple, list)):
        shape = (shape,)
    shape = [operator.index(d) for d in shape]
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        if known == 0 or a.size % known:
            raise TypeError(f"cannot reshape array of shape {a.shape} (size {a.size}) into shape "
                            f"{tuple(shape)}")
        shape[shape.index(-1)] = a.size // known
    if order == "F":
        return transpose(st.reshape(transpose(a), tuple(shape[::-1])))
    return st.reshape(a, tuple(shape))


def transpose(a, axes=None):
    """a with axes permuted (reversed by default)."""
    a = asarray(a)
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    axes = tuple(_canon_axis(ax, a.ndim, "transpose") for ax in axes)
    return st.transpose(a, axes)


def _canon_axis(axis, ndim, name="axis"):
    axis = operator.index(axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays of one shape along a new axis."""
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    arrays = _promote_dtypes(*arrays)
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {sorted(shapes)}")
    axis = _canon_axis(axis, arrays[0].ndim + 1, "stack")
    out = st.concatenate([st.expand_dims(a, (axis,)) for a in arrays], axis)
    return astype(out, dtype) if dtype is not None else out


# ---------------------------------------------------------------- indexing

def _index(x, idx):
    """x[idx] for ints, slices, None, Ellipsis and traced integer scalars."""
    x = asarray(x)
    idx = idx if isinstance(idx, tuple) else (idx,)
    idx = _expand_ellipsis(idx, x.ndim)
    out, dims_to_squeeze, new_axes, dim = x, [], [], 0
    out_dim = 0
    for item in idx:
        if item is None:
            new_axes.append(out_dim)
            out_dim += 1
            continue
        if isinstance(item, slice):
            out = _static_slice(out, dim, item)
            dim += 1
            out_dim += 1
        elif _is_int_index(item):
            out = _int_index(out, dim, item)
            dims_to_squeeze.append(dim)
            dim += 1
        else:
            raise TypeError(
                f"refjax indexing supports ints, slices, None, Ellipsis and integer scalars; "
                f"got {type(item).__name__} {item!r} for an array of shape {x.shape}. Use "
                "jnp.take / lax.dynamic_slice for array indices.")
    out = st.squeeze(out, tuple(dims_to_squeeze)) if dims_to_squeeze else out
    return st.expand_dims(out, tuple(new_axes)) if new_axes else out


def _expand_ellipsis(idx, ndim):
    n_ell = builtins.sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {used} were indexed")
    if n_ell == 0:
        return tuple(idx) + (slice(None),) * (ndim - used)
    pos = idx.index(Ellipsis)
    return tuple(idx[:pos]) + (slice(None),) * (ndim - used) + tuple(idx[pos + 1:])


def _is_int_index(item):
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, (int, np.integer)):
        return True
    if _is_array(item) or isinstance(item, np.ndarray):
        aval = get_aval(item)
        return aval.shape == () and _dt.is_int(aval.dtype)
    return False


def _static_slice(x, dim, s):
    start, stop, step = s.indices(x.shape[dim])
    if step > 0:
        return st.slice_in_dim(x, start, builtins.max(start, stop), step, dim)
    n = len(range(start, stop, step))
    if n == 0:
        return st.slice_in_dim(x, 0, 0, 1, dim)
    flipped = st.rev(x, (dim,))
    first = x.shape[dim] - 1 - start
    return st.slice_in_dim(flipped, first, first + (n - 1) * (-step) + 1, -step, dim)


def _int_index(x, dim, i):
    size = x.shape[dim]
    if isinstance(i, (int, np.integer)):
        i = int(i)
        if not -size <= i < size:
            raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
        i = i % size
        return st.slice_in_dim(x, i, i + 1, 1, dim)
    i = asarray(i)
    i = ew.select_n(ew.lt(i, _zeros_of(i)), i, ew.add(i, ew._const(i, size)))
    return st.dynamic_slice_in_dim(x, i, 1, dim)


# ---------------------------------------------------------------- argument helpers

def _arrays(name, *args):
    """Arrays from array-likes (Arrays, tracers, NumPy values, Python scalars); a TypeError,
    as in jnp, for lists and other objects."""
    return [asarray(a) for a in _check_args(name, *args)]


def _axis(axis, ndim):
    """A non-negative axis; ValueError when out of bounds, TypeError when not an integer."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _axes(axis, ndim, allow_none=True):
    """A tuple of distinct non-negative axes from None (all), an int or a sequence."""
    if axis is None and allow_none:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    axes = tuple(_axis(a, ndim) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return axes


def _static_int(x, context):
    """x as a Python int; ConcretizationTypeError (a TypeError) for traced values."""
    if isinstance(x, Tracer):
        x = _concrete_array(x, context)
    return operator.index(x)


def _concrete_array(x, context):
    from ..core.errors import ConcretizationTypeError
    value = x.to_concrete_value() if isinstance(x, Tracer) else x
    if value is None:
        raise ConcretizationTypeError(x, context)
    return value


def _concrete_value(x, context):
    """The NumPy value of x, or ConcretizationTypeError when x is traced."""
    return np.asarray(_concrete_array(x, context))


def _is_traced(x):
    return isinstance(x, Tracer) and x.to_concrete_value() is None


def _user_dtype(dtype, name):
    """A canonical dtype from a user's dtype argument (TypeError for non-numeric ones)."""
    try:
        d = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(f"{name}: cannot interpret {dtype!r} as a data type ({err})") from None
    if d not in _dt.SUPPORTED:
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {d} in {name}")
    return _dt.canonicalize_dtype(d)


def _to_inexact_dtype(d):
    return d if _dt.is_inexact(d) else _dt.default_float()


def _real_dtype(d):
    return {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}.get(np.dtype(d), np.dtype(d))


def _full(shape, value, dtype):
    return ew.full(tuple(shape), value, dtype)


def _const_like(x, value):
    """value as a strongly typed array of x's dtype and shape."""
    return _full(x.shape, value, x.dtype)


def _select(pred, on_true, on_false):
    return ew.select_n(pred, on_false, on_true)


def _move_to_end(x, axis):
    return moveaxis(x, axis, -1)


# ---------------------------------------------------------------- array creation

def _shape_arg(shape, name):
    if isinstance(shape, (tuple, list)):
        dims = shape
    elif hasattr(shape, "__iter__") and not _is_array(shape):
        raise TypeError(f"{name}: expected sequence object with len >= 0 or a single integer")
    else:
        dims = (shape,)
    try:
        out = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {tuple(dims)!r}.") from None
    if builtins.any(d < 0 for d in out):
        raise TypeError(f"{name}: shape must have every element be nonnegative, got {out}.")
    return out


def _creation_dtype(dtype, name, shape_given_dtype_check=True):
    return _dt.default_float() if dtype is None else _user_dtype(dtype, name)


def _check_not_forgotten_tuple(name, shape, dtype):
    if isinstance(shape, int) and isinstance(dtype, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type. Did you accidentally write "
                        f"`jax.numpy.{name}({shape}, {dtype})` when you meant "
                        f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple "
                        "argument for the shape?")


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (float32 by default)."""
    _check_not_forgotten_tuple("zeros", shape, dtype)
    return _full(_shape_arg(shape, "zeros"), 0, _creation_dtype(dtype, "zeros"))


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ones (float32 by default)."""
    _check_not_forgotten_tuple("ones", shape, dtype)
    return _full(_shape_arg(shape, "ones"), 1, _creation_dtype(dtype, "ones"))


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Like zeros (XLA has no uninitialized memory)."""
    _check_not_forgotten_tuple("empty", shape, dtype)
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of `shape` filled with fill_value (weakly typed when fill_value is a
    Python scalar and no dtype is given, as in JAX)."""
    shape = _shape_arg(shape, "full")
    fill, = _check_args("full", fill_value)
    fill = asarray(fill) if dtype is None else astype(asarray(fill), _user_dtype(dtype, "full"))
    return broadcast_to(fill, shape)


def _like_shape_dtype(a, dtype, shape, name):
    aval = get_aval(a) if _is_array(a) or hasattr(a, "aval") else get_aval(asarray(
        _check_args(name, a)[0]))
    out_dtype = aval.dtype if dtype is None else _user_dtype(dtype, name)
    out_shape = aval.shape if shape is None else _shape_arg(shape, name)
    weak = dtype is None and aval.weak_type
    return out_shape, out_dtype, weak


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array like a (shape, dtype, weak type) filled with fill_value."""
    out_shape, out_dtype, weak = _like_shape_dtype(a, dtype, shape, "full_like")
    fill = asarray(_check_args("full_like", fill_value)[0])
    fill = ew.convert_element_type(fill, out_dtype, weak_type=weak and fill.ndim == 0)
    return broadcast_to(fill, out_shape)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with a's shape and dtype."""
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with a's shape and dtype."""
    return full_like(a, 1, dtype, shape)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """Like zeros_like."""
    return zeros_like(prototype, dtype, shape)


def _arange_arg(x, name):
    if x is None:
        return None
    value = _concrete_value(x, f"It arose in the jnp.arange argument '{name}'") \
        if _is_array(x) else x
    if np.ndim(value) != 0:
        raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={value}")
    if np.iscomplexobj(value):
        raise ValueError("Passing complex start/stop/step to jnp.arange is not supported.")
    return value.item() if hasattr(value, "item") else value


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
    return out if start_v == 0 else ew.add(_full((size,), start_v, dtype), out)


def _arange_stepped(start, stop, step, dtype):
    if step == 0:
        raise ZeroDivisionError("jnp.arange: step must not be zero")
    size = builtins.max(0, int(np.ceil((stop - start) / step)))
    work = _dt.float32 if _dt.is_float(dtype) and _dt.finfo(dtype).bits < 32 else dtype
    out = ew.add(_full((size,), start, work), ew.mul(_full((size,), step, work), st.iota(work, size)))
    return astype(out, dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """num evenly spaced samples from start to stop (inclusive when endpoint), along axis."""
    num = _static_int(num, "'num' argument of jnp.linspace")
    axis = _static_int(axis, "'axis' argument of jnp.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = _arrays("linspace", start, stop)
    dtype = _to_inexact_dtype(result_type(start, stop)) if dtype is None else \
        _user_dtype(dtype, "linspace")
    comp = _to_inexact_dtype(dtype)
    start, stop = broadcast_arrays(astype(start, comp), astype(stop, comp))
    bounds = list(start.shape)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    out, delta = _linspace_body(start, stop, num, endpoint, comp, bounds, axis)
    if _dt.is_int(dtype) and not _dt.is_int(out.dtype):
        out = ew.floor(out)
    out = astype(out, dtype)
    return (out, delta) if retstep else out


def _linspace_body(start, stop, num, endpoint, comp, bounds, axis):
    expanded = bounds[:axis] + [1] + bounds[axis:]
    if num == 0:
        return zeros(bounds[:axis] + [0] + bounds[axis:], comp), _full((), np.nan, comp)
    if num == 1:
        delta = _full((), np.nan, comp) if endpoint else ew.sub(stop, start)
        return reshape(start, expanded), delta
    div = num - 1 if endpoint else num
    delta = ew.div(ew.sub(stop, start), _full(start.shape, div, comp))
    iota_shape = [1] * len(expanded)
    iota_shape[axis] = div
    real = _real_dtype(comp)
    step = ew.div(st.iota(real, div), _full((div,), div, real))
    step = broadcast_to(reshape(astype(step, comp), iota_shape), _with(expanded, axis, div))
    lo = broadcast_to(reshape(start, expanded), step.shape)
    hi = broadcast_to(reshape(stop, expanded), step.shape)
    out = ew.add(ew.mul(lo, ew.sub(_const_like(step, 1), step)), ew.mul(hi, step))
    if endpoint:
        out = st.concatenate([out, reshape(stop, expanded)], axis)
    return out, delta


def _with(seq, i, value):
    out = list(seq)
    out[i] = value
    return tuple(out)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop)."""
    start, stop = _arrays("logspace", start, stop)
    dtype = _to_inexact_dtype(result_type(start, stop)) if dtype is None else \
        _user_dtype(dtype, "logspace")
    comp = _to_inexact_dtype(dtype)
    lin = linspace(astype(start, comp), astype(stop, comp), num, endpoint=endpoint, axis=axis)
    return astype(power(base, lin), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples evenly spaced on a log scale from start to stop (same-sign bounds)."""
    start, stop = _arrays("geomspace", start, stop)
    dtype = _to_inexact_dtype(result_type(start, stop)) if dtype is None else \
        _user_dtype(dtype, "geomspace")
    comp = _to_inexact_dtype(dtype)
    start, stop = astype(start, comp), astype(stop, comp)
    sign = ew.sign(start)
    res = logspace(log10(divide(start, sign)), log10(divide(stop, sign)), num,
                   endpoint=endpoint, base=10.0, dtype=comp, axis=0)
    return astype(moveaxis(multiply(res, sign), 0, axis), dtype)


def _eye_mask(n, m, k):
    rows = st.broadcasted_iota(_dt.int32, (n, m), 0)
    cols = st.broadcasted_iota(_dt.int32, (n, m), 1)
    return ew.eq(ew.add(rows, _full((n, m), k, _dt.int32)), cols)


def _dim(n, what):
    n = _static_int(n, what)
    if n < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n}")
    return n


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """A 2-d array with ones on the k-th diagonal."""
    n = _dim(N, "argument 'N' of jnp.eye()")
    m = n if M is None else _dim(M, "argument 'M' of jnp.eye()")
    k = _static_int(k, "argument 'k' of jnp.eye()")
    return astype(_eye_mask(n, m, k), _creation_dtype(dtype, "eye"))


def identity(n, dtype=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype)


def _tri_mask(n, m, k):
    rows = st.broadcasted_iota(_dt.int32, (n, m), 0)
    cols = st.broadcasted_iota(_dt.int32, (n, m), 1)
    return ew.ge(ew.add(rows, _full((n, m), k, _dt.int32)), cols)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal."""
    n = _dim(N, "argument 'N' of jnp.tri()")
    m = n if M is None else _dim(M, "argument 'M' of jnp.tri()")
    return astype(_tri_mask(n, m, _static_int(k, "argument 'k' of jnp.tri()")),
                  _creation_dtype(dtype, "tri"))


def _triangle(name, m, keep_lower, k):
    m, = _arrays(name, m)
    if m.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    mask = broadcast_to(_tri_mask(*m.shape[-2:], k if keep_lower else k - 1), m.shape)
    zero = zeros_like(m)
    return _select(mask, m, zero) if keep_lower else _select(mask, zero, m)


def tril(m, k=0):
    """m with the elements above the k-th diagonal zeroed."""
    return _triangle("tril", m, True, _static_int(k, "k argument of jnp.tril"))


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
    return _select(_eye_mask(n, n, k), cols, zeros_like(cols))


def _zero_scalar(x):
    return _full((), 0, x.dtype)


def diagflat(v, k=0):
    """diag of the flattened v."""
    return diag(ravel(v), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along the offset diagonal (integers accumulate in the default int type, as sum)."""
    _no_out("trace", out)
    a, = _arrays("trace", a)
    if a.ndim >= 2 and _axis(axis1, a.ndim) == _axis(axis2, a.ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


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
    for i, d in enumerate(dims):
        shape = tuple(d if j == i else (1 if sparse else s) for j, s in enumerate(dims))
        grids.append(st.broadcasted_iota(dtype, shape, i))
    if sparse:
        return tuple(grids)
    return stack(grids) if grids else zeros((0,), dtype)


def copy(a, order=None):
    """A copy of a."""
    a, = _arrays("copy", a)
    return st.copy(a)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (concrete)."""
    return tuple(_concrete(np.asarray(i, _dt.default_int())) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (concrete)."""
    return tuple(_concrete(np.asarray(i, _dt.default_int())) for i in np.triu_indices(n, k, m))


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x ... x n array."""
    if n < 0 or ndim < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    return (arange(n),) * ndim
