"""refjax.numpy: jax.numpy's functions, built on the lax primitives with NumPy's promotion."""
import builtins
import operator

import numpy as np

from ..core import dtypes as _dt
from ..core.array import Array
from ..core.avals import ShapedArray
from ..core.errors import ConcretizationTypeError
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
    """The number of dimensions of x."""
    return len(np.shape(x)) if not _is_array(x) else x.ndim


def shape(x):
    """The shape of x."""
    return tuple(x.shape) if _is_array(x) else np.shape(x)


def size(x, axis=None):
    """The number of elements of x (along axis)."""
    s = shape(x)
    return int(np.prod(s)) if axis is None else s[axis]


# ---------------------------------------------------------------- asarray and astype

def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """An Array from a(n) Array, tracer, NumPy array, Python scalar or nested sequence."""
    if _is_array(a):
        return a if dtype is None else astype(a, dtype)
    if _dt.is_python_scalar(a) and type(a) is not bool:
        target = _dt.canonicalize_dtype(dtype) if dtype is not None else _dt.python_scalar_dtype(a)
        return ew.weak_scalar(a, target) if dtype is None else _concrete(np.asarray(a, target))
    if isinstance(a, (list, tuple)) and _contains_traced(a):
        out = stack([asarray(x) for x in a])
        return astype(out, out.dtype if dtype is None else dtype)  # never weakly typed
    value = np.asarray(a) if dtype is None else np.asarray(a, _dt.canonicalize_dtype(dtype))
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
        value = _wrap_int(a, dtype)
        return ew.weak_scalar(value, dtype) if weak else _concrete(np.asarray(value, dtype))
    a = asarray(a)
    aval = get_aval(a)
    if aval.dtype == dtype and aval.weak_type == weak:
        return a
    return ew.convert_element_type(a, dtype, weak_type=weak)


def _wrap_int(a, dtype):
    """A Python int taken modulo the range of an integer dtype (C-style, as JAX does for
    weakly typed operands: uint8 array + 300 adds 44)."""
    if _dt.is_int(dtype) and type(a) is int:
        return np.asarray(a).astype(dtype).item()
    return a


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
        listed = [tuple(s) for s in shapes]
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={listed}") from None


def broadcast_to(x, shape):
    """x broadcast to shape with NumPy's rules."""
    x = asarray(x)
    shape = tuple(operator.index(d) for d in
                  (shape if isinstance(shape, (tuple, list)) else (shape,)))
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
        return lax_fn(asarray(x))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name}."
    return fn


def _promote_to_numeric(*args):
    """Common dtype, with bool promoted to the default int (JAX's promote_args_numeric)."""
    dtype, weak = result_type(*args, return_weak_type_flag=True)
    if dtype == _dt.bool_:
        dtype = _dt.default_int()
    return [_convert(a, dtype, weak) for a in args]


def _lax_const(x, value):
    """A constant of x's dtype, weakly typed only when x is a weakly typed scalar (as JAX's
    lax._const: other weak operands come out strong after meeting it)."""
    out = _full(x.shape, value, x.dtype)
    return ew.convert_element_type(out, x.dtype, weak_type=True) if x.weak_type and x.ndim == 0 \
        else out


def _strong_const(x, value):
    """A strongly typed constant of x's dtype (JAX's _constant_like)."""
    return ew.convert_element_type(ew.weak_scalar(value, x.dtype), x.dtype)


def _complex_from_parts(re, im, dtype):
    """re + i*im as dtype (exact for finite im; refjax has no lax.complex)."""
    i = ew.weak_scalar(1j, dtype)
    return ew.add(ew.convert_element_type(re, dtype, weak_type=re.weak_type),
                  ew.mul(ew.convert_element_type(im, dtype, weak_type=im.weak_type), i))


def _complex_ordered(lax_op):
    """lax_op, lexicographic (real part, then imaginary part) on complex operands, as jnp."""
    def op(x, y):
        if _dt.kind(get_aval(x).dtype) != "c":
            return lax_op(x, y)
        re_x, re_y = ew.real(x), ew.real(y)
        return ew.select_n(ew.eq(re_x, re_y), lax_op(re_x, re_y),
                           lax_op(ew.imag(x), ew.imag(y)))
    return op


def _add(x, y):
    return ew.bitwise_or(x, y) if get_aval(x).dtype == _dt.bool_ else ew.add(x, y)


def _mul(x, y):
    return ew.bitwise_and(x, y) if get_aval(x).dtype == _dt.bool_ else ew.mul(x, y)


add = _binary(_add, "add")
subtract = _binary(ew.sub, "subtract")
multiply = _binary(_mul, "multiply")
maximum = _binary(ew.max, "maximum")
minimum = _binary(ew.min, "minimum")
equal = _binary(ew.eq, "equal")
not_equal = _binary(ew.ne, "not_equal")
less = _binary(_complex_ordered(ew.lt), "less")
less_equal = _binary(_complex_ordered(ew.le), "less_equal")
greater = _binary(_complex_ordered(ew.gt), "greater")
greater_equal = _binary(_complex_ordered(ew.ge), "greater_equal")
arctan2 = _binary(ew.atan2, "arctan2", _promote_to_inexact)
nextafter = _binary(ew.nextafter, "nextafter", _promote_to_inexact)
true_divide = divide = _binary(ew.div, "true_divide", _promote_to_inexact)
float_power = _binary(ew.pow, "float_power", _promote_to_inexact)
left_shift = _binary(ew.shift_left, "left_shift", _promote_to_numeric)
bitwise_and = _binary(ew.bitwise_and, "bitwise_and")
bitwise_or = _binary(ew.bitwise_or, "bitwise_or")
bitwise_xor = _binary(ew.bitwise_xor, "bitwise_xor")


def _right_shift(x, y):
    if _dt.kind(get_aval(x).dtype) == "u":
        return ew.shift_right_logical(x, y)
    return ew.shift_right_arithmetic(x, y)


right_shift = _binary(_right_shift, "right_shift", _promote_to_numeric)


def _to_bool(x):
    return x if x.dtype == _dt.bool_ else ew.ne(x, _lax_const(x, 0))


def _logical(lax_fn, name):
    def fn(x, y, /):
        x, y = _broadcast_args(*_promote_dtypes(*_check_args(name, x, y)))
        return lax_fn(_to_bool(asarray(x)), _to_bool(asarray(y)))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} of the truth values."
    return fn


logical_and = _logical(ew.bitwise_and, "logical_and")
logical_or = _logical(ew.bitwise_or, "logical_or")
logical_xor = _logical(ew.bitwise_xor, "logical_xor")


def logical_not(x, /):
    """Elementwise logical negation of the truth values."""
    x, = _promote_dtypes(*_check_args("logical_not", x))
    return ew.bitwise_not(_to_bool(asarray(x)))


def _floor_divide(x, y):
    dtype = get_aval(x).dtype
    if _dt.kind(dtype) == "u":
        return ew.div(x, y)
    if _dt.is_int(dtype):
        q = ew.div(x, y)
        fix = ew.bitwise_and(ew.ne(ew.sign(x), ew.sign(y)), ew.ne(ew.rem(x, y), _zeros_of(q)))
        return ew.select_n(fix, q, ew.sub(q, _const_like(q, 1)))
    if _dt.kind(dtype) == "c":
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x, y)[0]


def _float_divmod(x, y):
    """NumPy's floating divmod: the quotient from (x - fmod(x, y)) / y, then corrected."""
    x, y = _broadcast_all(x, y)
    mod = ew.rem(x, y)
    corrected = _select(ew.eq(y, _zeros_of(y)), x, ew.sub(x, mod))
    div = ew.div(corrected, y)
    fix = ew.bitwise_and(ew.ne(mod, _zeros_of(mod)), ew.ne(ew.sign(y), ew.sign(mod)))
    mod = _select(fix, ew.add(mod, y), mod)
    div = _select(fix, ew.sub(div, _const_like(div, 1)), div)
    return ew.round(div, ew.RoundingMethod.TO_NEAREST_EVEN), mod


def _zeros_of(x):
    return ew.full(get_aval(x).shape, 0, get_aval(x).dtype)


def _ones_of(x):
    return ew.full(get_aval(x).shape, 1, get_aval(x).dtype)


floor_divide = _binary(_floor_divide, "floor_divide", _promote_to_numeric)


def _nonzero_divisor(y):
    """Integer divisors with zeros replaced by ones (JAX's remainder and fmod never trap)."""
    if not _dt.is_int(get_aval(y).dtype):
        return y
    return _select(ew.eq(y, _zeros_of(y)), _const_like(y, 1), y)


def _remainder(x, y):
    x, y = _broadcast_all(x, y)
    y = _nonzero_divisor(y)
    r = ew.rem(x, y)
    zero = _zeros_of(r)
    fix = ew.bitwise_and(ew.ne(ew.lt(r, zero), ew.lt(y, zero)), ew.ne(r, zero))
    return _select(fix, ew.add(r, y), r)


remainder = mod = _binary(_remainder, "remainder", _promote_to_numeric)
fmod = _binary(lambda x, y: ew.rem(*_broadcast_all(x, _nonzero_divisor(y))), "fmod",
               _promote_to_numeric)


def _int_power(x, y):
    """Integer power by squaring over the 6 bits that cannot overflow (as JAX)."""
    x, y = _broadcast_all(x, y)
    one = _ones_of(y)
    zero_base = ew.bitwise_and(ew.eq(x, _zeros_of(x)), ew.ne(y, _zeros_of(y)))
    acc = _select(zero_base, _zeros_of(x), _ones_of(x))
    for _ in range(6):
        acc = _select(ew.ne(ew.bitwise_and(y, one), _zeros_of(y)), ew.mul(acc, x), acc)
        x = ew.mul(x, x)
        y = ew.shift_right_logical(y, one)
    return acc


def _power(x, y):
    if _dt.is_int(get_aval(x).dtype):
        return _int_power(x, y)
    return ew.pow(x, y)


def power(x1, x2, /):
    """x1 ** x2; a concrete integer exponent uses lax.integer_pow, as jnp does."""
    x1, x2 = _check_args("power", x1, x2)
    if not _is_traced(x2) and np.ndim(x2) == 0 and _is_integer_like(x2):
        x1, = _promote_to_numeric(x1)
        return ew.integer_pow(asarray(x1), int(x2))
    a1, a2 = asarray(x1), asarray(x2)
    if _dt.is_inexact(a1.dtype) and _dt.is_int(a2.dtype):
        # As lax.pow(float, int) in JAX: the exponent does not promote the base.
        return ew.pow(*_broadcast_args(a1, astype(a2, a1.dtype)))
    return _binary(_power, "power", _promote_to_numeric)(x1, x2)


def _is_integer_like(x):
    try:
        operator.index(x)
    except TypeError:
        return False
    return True


pow = power


def _floor_or_ceil(name, lax_fn):
    def fn(x, /):
        x, = _arrays(name, x)
        if _dt.kind(x.dtype) in "iub":
            return x
        return lax_fn(x)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} (integers and booleans pass through)."
    return fn


negative = _unary(ew.neg, "negative")
sign = _unary(ew.sign, "sign")
floor = _floor_or_ceil("floor", ew.floor)
ceil = _floor_or_ceil("ceil", ew.ceil)
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
square = _unary(lambda x: ew.integer_pow(x, 2), "square", _promote_to_numeric)
reciprocal = _unary(lambda x: ew.integer_pow(x, -1), "reciprocal", _promote_to_inexact)
deg2rad = radians = _unary(lambda x: ew.mul(x, _lax_const(x, np.pi / 180)), "deg2rad",
                           _promote_to_inexact)
rad2deg = degrees = _unary(lambda x: ew.mul(x, _lax_const(x, 180 / np.pi)), "rad2deg",
                           _promote_to_inexact)


def _log_base(name, base):
    """log(x) / log(base), with a strongly typed constant (per part for complex x)."""
    def fn(x, /):
        x, = _promote_to_inexact(*_check_args(name, x))
        r = ew.log(asarray(x))
        if _dt.kind(r.dtype) != "c":
            return ew.div(r, _strong_const(r, np.log(base)))
        re, im = ew.real(r), ew.imag(r)
        scale = _strong_const(re, np.log(base))
        return _complex_from_parts(ew.div(re, scale), ew.div(im, scale), r.dtype)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise base-{base} logarithm."
    return fn


log2 = _log_base("log2", 2)
log10 = _log_base("log10", 10)


def conjugate(x, /):
    """Complex conjugate (real inputs pass through)."""
    x, = _arrays("conjugate", x)
    return ew.conj(x) if _dt.kind(x.dtype) == "c" else x


conj = conjugate


def real(val, /):
    """The real part (real inputs pass through)."""
    val, = _arrays("real", val)
    return ew.real(val) if _dt.kind(val.dtype) == "c" else val


def imag(val, /):
    """The imaginary part (zeros, with the input's weak type, for real inputs)."""
    val, = _arrays("imag", val)
    return ew.imag(val) if _dt.kind(val.dtype) == "c" else zeros_like(val)


def _full_bool(x, value):
    return ew.full(get_aval(x).shape, value, _dt.bool_)


def absolute(x, /):
    """|x| (unsigned and bool pass through)."""
    x, = _arrays("absolute", x)
    if _dt.kind(x.dtype) in "ub":
        return x
    return ew.abs(x)


abs = absolute


def positive(x, /):
    """x (after promotion)."""
    x, = _promote_dtypes(*_check_args("positive", x))
    return asarray(x)


def invert(x, /):
    """Bitwise (logical, for bool) NOT."""
    x, = _promote_dtypes(*_check_args("invert", x))
    return ew.bitwise_not(asarray(x))


bitwise_not = bitwise_invert = invert


def _round_parts(x, round_real):
    """round_real applied to the real and imaginary parts of complex x: x plus the (finite)
    corrections, which keeps infinite parts infinite."""
    re, im = ew.real(x), ew.imag(x)
    deltas = [_select(ew.is_finite(p), ew.sub(round_real(p), p), zeros_like(p)) for p in (re, im)]
    return ew.add(x, _complex_from_parts(deltas[0], deltas[1], x.dtype))


def rint(x, /):
    """Round to the nearest integer, ties to even (integers become float32)."""
    x, = _arrays("rint", x)
    if _dt.kind(x.dtype) in "iub":
        return astype(x, _dt.default_float())
    to_even = lambda v: ew.round(v, ew.RoundingMethod.TO_NEAREST_EVEN)  # noqa: E731
    return _round_parts(x, to_even) if _dt.kind(x.dtype) == "c" else to_even(x)


def round(a, decimals=0, out=None):
    """Round half to even, at `decimals` digits (jnp.round)."""
    _no_out("round", out)
    a, = _arrays("round", a)
    decimals = _static_int(decimals, "'decimals' argument of jnp.round")
    if _dt.is_int(a.dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if a.dtype == _dt.bool_:
        raise ValueError(f"jnp.round is not defined for dtype {a.dtype}")
    if decimals > np.log10(float(_dt.finfo(a.dtype).max)):
        return a
    rounder = lambda v: _round_float(v, decimals)  # noqa: E731
    return _round_parts(a, rounder) if _dt.kind(a.dtype) == "c" else rounder(a)


def _round_float(x, decimals):
    if decimals == 0:
        return ew.round(x, ew.RoundingMethod.TO_NEAREST_EVEN)
    dtype = x.dtype
    x = ew.convert_element_type(x, _dt.float32, weak_type=x.weak_type) if dtype == _dt.float16 \
        else x
    factor = _lax_const(x, 10.0 ** decimals)
    out = ew.div(ew.round(ew.mul(x, factor), ew.RoundingMethod.TO_NEAREST_EVEN), factor)
    return ew.convert_element_type(out, dtype, weak_type=out.weak_type) if dtype == _dt.float16 \
        else out


around = round


def trunc(x, /):
    """Round towards zero (integers and booleans pass through)."""
    x, = _arrays("trunc", x)
    if not _dt.is_inexact(x.dtype):
        return x
    return ew.select_n(ew.lt(x, _lax_const(x, 0)), ew.floor(x), ew.ceil(x))


fix = trunc


def isnan(x, /):
    """Elementwise x != x."""
    x, = _arrays("isnan", x)
    return ew.ne(x, x)


def isfinite(x, /):
    """Elementwise: neither infinite nor NaN (always true for integers)."""
    x, = _arrays("isfinite", x)
    if _dt.kind(x.dtype) == "f":
        return ew.is_finite(x)
    if _dt.kind(x.dtype) == "c":
        return ew.bitwise_and(ew.is_finite(ew.real(x)), ew.is_finite(ew.imag(x)))
    return _full_bool(x, True)


def isinf(x, /):
    """Elementwise: +inf or -inf (in either part of complex x)."""
    x, = _arrays("isinf", x)
    if _dt.kind(x.dtype) == "f":
        return ew.eq(ew.abs(x), _strong_const(x, np.inf))
    if _dt.kind(x.dtype) == "c":
        re, im = ew.real(x), ew.imag(x)
        return ew.bitwise_or(ew.eq(ew.abs(re), _strong_const(re, np.inf)),
                             ew.eq(ew.abs(im), _strong_const(im, np.inf)))
    return _full_bool(x, False)


def _isposneginf(name, infinity, x):
    x, = _arrays(name, x)
    if _dt.kind(x.dtype) == "c":
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if _dt.kind(x.dtype) == "f":
        return ew.eq(x, _strong_const(x, infinity))
    return _full_bool(x, False)


def isposinf(x, /, out=None):
    """Elementwise x == +inf."""
    _no_out("isposinf", out)
    return _isposneginf("isposinf", np.inf, x)


def isneginf(x, /, out=None):
    """Elementwise x == -inf."""
    _no_out("isneginf", out)
    return _isposneginf("isneginf", -np.inf, x)


def signbit(x, /):
    """Elementwise: the sign bit is set (true for -0.0 and negative NaNs)."""
    x, = _promote_dtypes(*_check_args("signbit", x))
    x = asarray(x)
    if _dt.kind(x.dtype) in "ub":
        return _full_bool(x, False)
    if _dt.is_int(x.dtype):
        return ew.lt(x, _strong_const(x, 0))
    if _dt.kind(x.dtype) != "f":
        raise ValueError(f"jax.numpy.signbit is not well defined for {x.dtype}")
    bits = lax.bitcast_convert_type(x, np.dtype(f"int{x.dtype.itemsize * 8}")) \
        if hasattr(lax, "bitcast_convert_type") else None
    if bits is None:
        zero = _zeros_of(x)
        negative_zero = ew.bitwise_and(ew.eq(x, zero), ew.lt(ew.div(_ones_of(x), x), zero))
        return ew.bitwise_or(ew.lt(x, zero), negative_zero)
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


# ---------------------------------------------------------------- reshape, transpose, stack

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
    """x[idx]: basic indexing (ints, slices, None, Ellipsis, traced integer scalars) and
    NumPy's advanced indexing with integer arrays and concrete boolean masks (a take on the
    merged indexed axes; out-of-bounds indices are clamped, as in JAX)."""
    x = asarray(x)
    idx = idx if isinstance(idx, tuple) else (idx,)
    items = _expand_masks(_expand_ellipsis(idx, x.ndim), x.shape)
    if builtins.any(_is_index_array(i) for i in items):
        return _advanced_index(x, items)
    return _basic_index(x, items)


def _basic_index(x, idx):
    out, dims_to_squeeze, new_axes, dim = x, [], [], 0
    out_dim = 0
    for item in idx:
        if item is Ellipsis:  # standing for no dimension (see _expand_ellipsis)
            continue
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
            raise _unsupported_index(item, x.shape)
    out = st.squeeze(out, tuple(dims_to_squeeze)) if dims_to_squeeze else out
    return st.expand_dims(out, tuple(new_axes)) if new_axes else out


def _unsupported_index(item, shape):
    return TypeError(f"refjax indexing supports ints, slices, None, Ellipsis, integer arrays and "
                     f"concrete boolean masks; got {type(item).__name__} {item!r} for an array "
                     f"of shape {shape}.")


def _is_mask(item):
    return isinstance(item, (np.ndarray, Array, Tracer)) and get_aval(item).dtype == _dt.bool_ \
        and get_aval(item).ndim > 0


def _expand_masks(idx, shape):
    """Index items with boolean masks replaced by their nonzero() integer arrays (one per
    masked dimension; masks must be concrete and match the shape they index)."""
    out, dim = [], 0
    for item in idx:
        if isinstance(item, list):
            raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                            "allowed; use `arr[array(seq)]` instead of `arr[seq]`.")
        if not _is_mask(item):
            out.append(item)
            dim += item is not None and item is not Ellipsis
            continue
        if _is_traced(item):
            raise IndexError(f"Array boolean indices must be concrete; got {item}. Use "
                             "jnp.where(mask, x, other) or a static `size`.")
        expected = tuple(shape[dim:dim + item.ndim])
        if tuple(item.shape) != expected:
            raise IndexError(f"boolean index did not match shape of indexed array in index "
                             f"{len(out)}: got {tuple(item.shape)}, expected {expected}")
        out.extend(_concrete(i.astype(np.int32)) for i in np.nonzero(np.asarray(item)))
        dim += item.ndim
    return tuple(out)


def _is_index_array(item):
    if not isinstance(item, (np.ndarray, Array, Tracer)):
        return False
    aval = get_aval(item)
    if aval.ndim and not _dt.is_int(aval.dtype):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{aval.dtype}")
    return aval.ndim > 0


def _advanced_index(x, idx):
    """Basic indexing with the advanced items replaced by full slices, then one `gather` of
    the advanced axes (integer scalars count as advanced, as in NumPy), as in JAX: negative
    indices wrap, out-of-bounds ones are clamped (PROMISE_IN_BOUNDS), and get no gradient."""
    basic, advanced, separated = _split_advanced(x, idx)
    y = _basic_index(x, basic)
    positions = [p for p, _, _ in advanced]
    if builtins.any(y.shape[p] == 0 for p in positions):
        return _advanced_index_of_empty(y, advanced, separated)
    index = _advanced_index_vector(advanced)
    nb = index.ndim - 1
    rest = [d for d in range(y.ndim) if d not in positions]
    dn = lax.GatherDimensionNumbers(offset_dims=tuple(range(nb, nb + len(rest))),
                                    collapsed_slice_dims=tuple(positions),
                                    start_index_map=tuple(positions))
    sizes = tuple(1 if d in positions else y.shape[d] for d in range(y.ndim))
    out = lax.gather(y, index, dn, sizes, mode="promise_in_bounds")
    return _place_advanced_dims(out, nb, positions, separated)


def _place_advanced_dims(out, nb, positions, separated):
    """The advanced dims (leading in `out`) where NumPy puts them: first when separated by a
    slice, None or Ellipsis, else where the first advanced item was."""
    if separated:
        return out
    return moveaxis(out, tuple(range(nb)), tuple(range(positions[0], positions[0] + nb)))


def _advanced_index_vector(advanced):
    """The advanced items broadcast together, negative entries wrapped, stacked along a new
    last axis (the gather's index vector); computed with NumPy when every item is concrete."""
    sizes = [n for _, n, _ in advanced]
    items = [i for _, _, i in advanced]
    if not builtins.any(_is_traced(i) for i in items):
        arrays = np.broadcast_arrays(*(np.asarray(i).astype(np.int64) for i in items))
        wrapped = [np.where(a < 0, a + n, a) for a, n in zip(arrays, sizes)]
        return _concrete(np.clip(np.stack(wrapped, -1), -(1 << 31), (1 << 31) - 1)
                         .astype(np.int32))
    arrays = broadcast_arrays(*(astype(asarray(i), _dt.int32) for i in items))
    wrapped = [where(less(a, 0), add(a, n), a) for a, n in zip(arrays, sizes)]
    return stack(wrapped, axis=-1)


def _advanced_index_of_empty(y, advanced, separated):
    """An advanced index into an empty axis: only empty index arrays are valid there."""
    shape = np.broadcast_shapes(*(np.shape(i) for _, _, i in advanced))
    if int(np.prod(shape, dtype=np.int64)):
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    positions = [p for p, _, _ in advanced]
    rest = tuple(y.shape[d] for d in range(y.ndim) if d not in positions)
    out = zeros(tuple(shape) + rest, y.dtype)
    return _place_advanced_dims(out, len(shape), positions, separated)


def _split_advanced(x, idx):
    """The basic index (advanced items made full slices); per advanced item, its axis in the
    basic result, the indexed size and the item; and whether a slice, None or Ellipsis
    separates advanced items."""
    basic, advanced, dim, kinds = [], [], 0, []
    for item in idx:
        is_advanced = not (item is None or item is Ellipsis or isinstance(item, slice))
        kinds.append(is_advanced)
        if item is Ellipsis:
            continue
        if is_advanced:
            if not (_is_index_array(item) or _is_int_index(item)):
                raise _unsupported_index(item, x.shape)
            advanced.append((len(basic), x.shape[dim], item))
            item = slice(None)
        basic.append(item)
        dim += item is not None
    first, last = kinds.index(True), len(kinds) - 1 - kinds[::-1].index(True)
    return tuple(basic), advanced, not builtins.all(kinds[first:last + 1])


def _expand_ellipsis(idx, ndim):
    """idx with its Ellipsis replaced by the full slices it stands for. An Ellipsis standing
    for no dimension stays when advanced indices lie on both sides: it still separates them
    (NumPy then puts their dimensions first), and every consumer skips it otherwise."""
    n_ell = builtins.sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(_consumed_dims(i) for i in idx)
    if used > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {used} were indexed")
    if n_ell == 0:
        return tuple(idx) + (slice(None),) * (ndim - used)
    pos = next(k for k, item in enumerate(idx) if item is Ellipsis)
    fill = (slice(None),) * (ndim - used)
    before, after = idx[:pos], idx[pos + 1:]
    if not fill and _has_array_index(before + after) and _has_advanced(before) \
            and _has_advanced(after):
        fill = (Ellipsis,)
    return tuple(idx[:pos]) + fill + tuple(idx[pos + 1:])


def _has_array_index(items):
    """Whether an index array (integer or boolean, one dimension or more) is among items."""
    return builtins.any(get_aval(i).ndim > 0 if isinstance(i, (Array, Tracer)) else
                        isinstance(i, (np.ndarray, list)) and np.ndim(i) > 0 for i in items)


def _has_advanced(items):
    """Whether an item that is advanced next to an index array (an array or an integer) is
    among items."""
    return builtins.any(not (i is None or i is Ellipsis or isinstance(i, slice)) for i in items)


def _consumed_dims(item):
    """How many dimensions of the indexed array an index item consumes."""
    if item is None or item is Ellipsis:
        return 0
    return get_aval(item).ndim if _is_mask(item) else 1


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
        if size == 0:
            raise IndexError(f"index {int(i)} is out of bounds for axis {dim} with size 0")
        # Out-of-bounds indices are clamped, as in JAX's retrieval.
        i = builtins.min(builtins.max(int(i) + size if i < 0 else int(i), 0), size - 1)
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
    if not isinstance(x, Tracer):
        return x
    value = x.to_concrete_value()
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
    """value as an array of x's shape, dtype and weak type."""
    out = _full(x.shape, value, x.dtype)
    return ew.convert_element_type(out, x.dtype, weak_type=True) if x.weak_type else out


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
        out = tuple(_static_int(d, f"The shape argument of jnp.{name}") if _is_array(d)
                    else operator.index(d) for d in dims)
    except TypeError as err:
        if isinstance(err, ConcretizationTypeError):
            raise
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {tuple(dims)!r}.") from None
    if builtins.any(d < 0 for d in out):
        raise TypeError(f"{name}: shape must have every element be nonnegative, got {out}.")
    return out


def _creation_dtype(dtype, name):
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
    steps = ew.mul(_full((size,), step, work), st.iota(work, size))
    out = ew.add(_full((size,), start, work), steps)
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


def _grid_from_slice(s, name):
    """arange(start, stop, step), or linspace for a complex step (its magnitude the count)."""
    context = f"slice bounds of jnp.{name}"
    start = _concrete_array(s.start, context) or 0  # `or`: JAX turns a 0.0 start into 0
    stop = _concrete_array(s.stop, context)
    step = _concrete_array(s.step, context) or 1
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
        axes = _promote_dtypes(*(_grid_from_slice(k, self.name) for k in key))
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


# ---------------------------------------------------------------- reductions

def _promote_integer_dtype(d):
    """Small integer (and bool) sums accumulate in the default int (uint) type, as in JAX."""
    if d == _dt.bool_:
        return _dt.default_int()
    if _dt.kind(d) == "u" and d.itemsize < _dt.canonicalize_dtype(_dt.uint64).itemsize:
        return _dt.canonicalize_dtype(_dt.uint64)
    if _dt.kind(d) == "i" and d.itemsize < _dt.default_int().itemsize:
        return _dt.default_int()
    return d


def _upcast_f16(d):
    return _dt.float32 if d in (_dt.float16, _dt.bfloat16) else d


def _check_where(name, where):
    if where is None:
        return None
    where, = _arrays(name, where)
    if where.dtype != _dt.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={where.dtype}.")
    return where


def _init_value(identity, dtype):
    """The reduction's identity in dtype (inf saturating to the finite range of ints)."""
    if dtype == _dt.bool_:
        return identity > 0
    if np.isinf(identity) and _dt.is_int(dtype):
        info = _dt.iinfo(dtype)
        return int(info.min if identity < 0 else info.max)
    return identity


class _Monoid:
    """A reduction: its lax reducer, elementwise op and identity (with bool variants)."""

    def __init__(self, reduce, op, identity, bool_reduce=None, bool_op=None):
        self.reduce, self.op, self.identity = reduce, op, identity
        self.bool_reduce, self.bool_op = bool_reduce or reduce, bool_op or op

    def for_dtype(self, dtype):
        if dtype == _dt.bool_:
            return self.bool_reduce, self.bool_op
        return self.reduce, self.op


_SUM = _Monoid(lax.reduce_sum, ew.add, 0, lax.reduce_or, ew.bitwise_or)
_PROD = _Monoid(lax.reduce_prod, ew.mul, 1, lax.reduce_and, ew.bitwise_and)
_MAX = _Monoid(lax.reduce_max, ew.max, -np.inf, lax.reduce_or, ew.bitwise_or)
_MIN = _Monoid(lax.reduce_min, ew.min, np.inf, lax.reduce_and, ew.bitwise_and)
_ALL = _Monoid(lax.reduce_and, ew.bitwise_and, True)
_ANY = _Monoid(lax.reduce_or, ew.bitwise_or, False)


def _reduction(a, name, monoid, *, axis=None, dtype=None, out=None, keepdims=False,
               initial=None, where=None, has_identity=True, preproc=None,
               promote_integers=False, upcast_f16=False):
    """jnp's reductions: promotion, where-masking, initial and keepdims around a lax reducer.
    The result is never weakly typed (as in JAX)."""
    _no_out(name, out)
    a, = _arrays(name, a)
    where = _check_where(name, where)
    a = preproc(a) if preproc else a
    axes = _axes(axis, a.ndim)
    if initial is None and not has_identity:
        _check_nonempty(name, a, axes, where)
    result_dtype, comp = _reduction_dtypes(name, a.dtype, dtype, promote_integers, upcast_f16)
    a = ew.convert_element_type(a, comp) if a.dtype != comp or a.weak_type else a
    reduce, op = monoid.for_dtype(comp)
    if where is not None:
        a = _select(broadcast_to(where, a.shape),
                    a, _const_like(a, _init_value(monoid.identity, comp)))
    result = reduce(a, axes) if axes else a
    if initial is not None:
        result = op(broadcast_to(_initial(initial, comp), result.shape), result)
    if keepdims:
        result = st.expand_dims(result, axes)
    return astype(result, result_dtype)


def _reduction_dtypes(name, a_dtype, dtype, promote_integers, upcast_f16):
    """The result dtype and the (float16-upcast) computation dtype of a reduction."""
    if dtype is not None:
        result = _user_dtype(dtype, name)
    else:
        result = _promote_integer_dtype(a_dtype) if promote_integers else a_dtype
    return result, _upcast_f16(result) if upcast_f16 and _dt.is_inexact(result) else result


def _check_nonempty(name, a, axes, where):
    if where is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if builtins.any(a.shape[d] == 0 for d in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


def _initial(initial, dtype):
    init = ew.convert_element_type(asarray(_check_args("initial", initial)[0]), dtype)
    if init.shape != ():
        raise ValueError(f"initial value must be a scalar. Got array of shape {init.shape}")
    return init


def _cast_to_numeric(a):
    return astype(a, _dt.default_int()) if a.dtype == _dt.bool_ else a


def _cast_to_bool(a):
    if _dt.kind(a.dtype) == "c":
        a = ew.real(a)
    return astype(a, _dt.bool_)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    """Sum over axis (small ints and bools accumulate in int32; float16 in float32)."""
    return _reduction(a, "sum", _SUM, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                      initial=initial, where=where, preproc=_cast_to_numeric,
                      promote_integers=promote_integers, upcast_f16=dtype is None)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Product over axis."""
    return _reduction(a, "prod", _PROD, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                      initial=initial, where=where, preproc=_cast_to_numeric,
                      promote_integers=promote_integers, upcast_f16=dtype is None)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum over axis (NaN propagates; an empty reduction needs `initial`)."""
    return _reduction(a, "max", _MAX, axis=axis, out=out, keepdims=keepdims, initial=initial,
                      where=where, has_identity=False)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum over axis (NaN propagates; an empty reduction needs `initial`)."""
    return _reduction(a, "min", _MIN, axis=axis, out=out, keepdims=keepdims, initial=initial,
                      where=where, has_identity=False)


amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether all elements along axis are truthy."""
    return _reduction(a, "all", _ALL, axis=axis, out=out, keepdims=keepdims, where=where,
                      preproc=_cast_to_bool)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """Whether any element along axis is truthy."""
    return _reduction(a, "any", _ANY, axis=axis, out=out, keepdims=keepdims, where=where,
                      preproc=_cast_to_bool)


def _count(a, axis, keepdims, where, dtype):
    """The number of elements each reduction combines, as an array of dtype."""
    if where is None:
        axes = _axes(axis, a.ndim)
        n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
        shape = _reduced_shape(a.shape, axes, keepdims)
        return _full(shape, n, dtype)
    return sum(broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean (integers give float32)."""
    _no_out("mean", out)
    a, = _arrays("mean", a)
    where = _check_where("mean", where)
    result_dtype = _to_inexact_dtype(a.dtype) if dtype is None else _user_dtype(dtype, "mean")
    comp = _upcast_f16(result_dtype) if dtype is None and _dt.is_inexact(result_dtype) \
        else result_dtype
    total = sum(a, axis, dtype=comp, keepdims=keepdims, where=where)
    return astype(ew.div(total, _count(a, axis, keepdims, where, comp)), result_dtype)


def _var_dtypes(a_dtype, dtype):
    if dtype is not None:
        if _dt.kind(a_dtype) == "c" and _dt.kind(dtype) != "c":
            raise ValueError("jax.numpy.var does not support real dtype parameters when "
                             "computing the variance of an array of complex values.")
        return _upcast_f16(dtype), dtype
    if not _dt.is_inexact(a_dtype):
        d = _to_inexact_dtype(a_dtype)
        return _upcast_f16(d), d
    return _upcast_f16(a_dtype), _real_dtype(a_dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Variance with `ddof` (or `correction`) degrees of freedom removed; NaN when none
    remain."""
    _no_out("var", out)
    correction = _correction(ddof, correction)
    a, = _arrays("var", a)
    where = _check_where("var", where)
    comp, dtype = _var_dtypes(a.dtype, None if dtype is None else _user_dtype(dtype, "var"))
    a = astype(a, comp)
    a_mean = _mean_fn(a, axis, dtype=comp, keepdims=True, where=where) if mean is None \
        else astype(asarray(mean), comp)
    centered = subtract(a, a_mean)
    if _dt.kind(comp) == "c":
        centered = ew.real(ew.mul(centered, ew.conj(centered)))
        comp = centered.dtype
    else:
        centered = ew.integer_pow(centered, 2)
    normalizer = ew.sub(_count(a, axis, keepdims, where, comp),
                        _full(_reduced_shape(a.shape, _axes(axis, a.ndim), keepdims),
                              correction, comp))
    result = astype(ew.div(sum(centered, axis, dtype=comp, keepdims=keepdims, where=where),
                           normalizer), dtype)
    return _select(ew.gt(normalizer, _const_like(normalizer, 0)), result,
                   _const_like(result, np.nan))


_mean_fn = mean


def _correction(ddof, correction):
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Standard deviation: the square root of var."""
    return ew.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                       correction=correction))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean; with returned=True also the sum of the weights."""
    a, = _arrays("average", a)
    axes = _axes(axis, a.ndim)
    if weights is None:
        a, = _promote_to_inexact(a)
        avg = mean(a, axis, keepdims=keepdims)
        n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
        weights_sum = _full((), n, avg.dtype)
    else:
        a, weights = _promote_to_inexact(*_arrays("average", a, weights))
        weights = _average_weights(a, weights, axis, axes)
        weights_sum = sum(weights, axis, keepdims=keepdims)
        avg = divide(sum(multiply(a, weights), axis, keepdims=keepdims), weights_sum)
    if returned:
        return avg, broadcast_to(weights_sum, avg.shape)
    return avg


def _average_weights(a, weights, axis, axes):
    if a.shape == weights.shape:
        return weights
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if weights.shape != tuple(a.shape[d] for d in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")
    shape = tuple(d if i in axes else 1 for i, d in enumerate(a.shape))
    return st.reshape(weights, shape, dimensions=tuple(np.argsort(axes)))


def _argminmax(name, lax_name, a, axis, out, keepdims):
    _no_out(name, out)
    a, = _arrays(name, a)
    if axis is None:
        flat = ravel(a)
        if flat.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = getattr(lax, lax_name)(flat, 0, _dt.default_int())
        return reshape(result, (1,) * a.ndim) if keepdims else result
    ax = _axis(axis, a.ndim)
    if a.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = getattr(lax, lax_name)(a, ax, _dt.default_int())
    return st.expand_dims(result, (ax,)) if keepdims else result


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the first maximum (flattened when axis is None; NaN counts as maximal)."""
    return _argminmax("argmax", "argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the first minimum (flattened when axis is None; NaN counts as minimal)."""
    return _argminmax("argmin", "argmin", a, axis, out, keepdims)


def _nan_arg(name, fn, fill, a, axis, out, keepdims):
    a, = _arrays(name, a)
    if not _dt.is_inexact(a.dtype):
        return fn(a, axis, out, keepdims)
    mask = isnan(a)
    res = fn(_select(mask, _const_like(a, fill), a), axis, out, keepdims)
    all_nan = all(mask, axis, keepdims=bool(keepdims))
    return _select(all_nan, _const_like(res, -1), res)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """argmax ignoring NaNs (-1 where all are NaN)."""
    return _nan_arg("nanargmax", argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """argmin ignoring NaNs (-1 where all are NaN)."""
    return _nan_arg("nanargmin", argmin, np.inf, a, axis, out, keepdims)


def _nan_filled(name, a, fill):
    a, = _arrays(name, a)
    if not _dt.is_inexact(a.dtype):
        return a
    return _select(isnan(a), _const_like(a, fill), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """sum treating NaNs as zero."""
    return sum(_nan_filled("nansum", a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """prod treating NaNs as one."""
    return prod(_nan_filled("nanprod", a, 1), axis, dtype, out, keepdims, initial, where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """max ignoring NaNs (NaN where all are NaN)."""
    a, = _arrays("nanmax", a)
    res = max(_nan_filled("nanmax", a, -np.inf), axis, out, keepdims, initial, where)
    return _nan_where_all_nan(a, res, axis, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """min ignoring NaNs (NaN where all are NaN)."""
    a, = _arrays("nanmin", a)
    res = min(_nan_filled("nanmin", a, np.inf), axis, out, keepdims, initial, where)
    return _nan_where_all_nan(a, res, axis, keepdims)


def _nan_where_all_nan(a, res, axis, keepdims):
    if not _dt.is_inexact(a.dtype):
        return res
    return _select(all(isnan(a), axis, keepdims=keepdims), _const_like(res, np.nan), res)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """mean of the non-NaN elements."""
    _no_out("nanmean", out)
    a, = _arrays("nanmean", a)
    if not _dt.is_inexact(a.dtype):
        return mean(a, axis, dtype, out, keepdims, where=where)
    dtype = _to_inexact_dtype(a.dtype) if dtype is None else _user_dtype(dtype, "nanmean")
    normalizer = sum(logical_not(isnan(a)), axis, dtype=dtype, keepdims=keepdims, where=where)
    total = nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    return divide(total, normalizer)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """var of the non-NaN elements."""
    _no_out("nanvar", out)
    a, = _arrays("nanvar", a)
    comp, dtype = _var_dtypes(a.dtype, None if dtype is None else _user_dtype(dtype, "nanvar"))
    a = astype(a, comp)
    a_mean = nanmean(a, axis, dtype=comp, keepdims=True, where=where) if mean is None else \
        astype(asarray(mean), comp)
    centered = _select(isnan(a), _const_like(a, 0), subtract(a, a_mean))
    centered = ew.real(ew.mul(centered, ew.conj(centered))) if _dt.kind(comp) == "c" \
        else ew.integer_pow(centered, 2)
    normalizer = sum(logical_not(isnan(a)), axis, keepdims=keepdims, where=where)
    normalizer = ew.sub(astype(normalizer, centered.dtype), _const_like(
        astype(normalizer, centered.dtype), ddof))
    result = sum(centered, axis, keepdims=keepdims, where=where)
    out = ew.div(result, normalizer)
    out = _select(ew.gt(normalizer, _const_like(normalizer, 0)), out, _const_like(out, np.nan))
    return astype(out, dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """std of the non-NaN elements."""
    return ew.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean))


def count_nonzero(a, axis=None, keepdims=False):
    """The number of non-zero elements along axis (int32)."""
    a, = _arrays("count_nonzero", a)
    return sum(ew.ne(a, _const_like(a, 0)), axis, dtype=_dt.default_int(), keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min along axis."""
    _no_out("ptp", out)
    a, = _arrays("ptp", a)
    return ew.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


# ---------------------------------------------------------------- cumulative reductions

def _cumulative(name, lax_name, a, axis, dtype, out, fill_nan=False, fill_value=0,
                promote_integers=False):
    _no_out(name, out)
    a, = _arrays(name, a)
    if axis is None or a.ndim == 0:
        a = ravel(a)
    axis = _axis(0 if axis is None else axis, a.ndim)
    if fill_nan and _dt.is_inexact(a.dtype):
        a = _select(isnan(a), _const_like(a, fill_value), a)
    if dtype is None:
        result = _promote_integer_dtype(a.dtype) if promote_integers or a.dtype == _dt.bool_ \
            else a.dtype
        comp = result
    else:
        result = _user_dtype(dtype, name)
        if result == _dt.bool_ and a.dtype != _dt.bool_:
            a = ew.ne(a, _const_like(a, 0))
        comp = _promote_integer_dtype(result) if result == _dt.bool_ else result
    a = ew.convert_element_type(a, comp)
    return astype(getattr(lax, lax_name)(a, axis), result)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along axis (flattened when axis is None; bools count as int32)."""
    return _cumulative("cumsum", "cumsum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along axis (flattened when axis is None)."""
    return _cumulative("cumprod", "cumprod", a, axis, dtype, out)


cumproduct = cumprod


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum treating NaNs as zero."""
    return _cumulative("nancumsum", "cumsum", a, axis, dtype, out, fill_nan=True)


def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod treating NaNs as one."""
    return _cumulative("nancumprod", "cumprod", a, axis, dtype, out, fill_nan=True,
                       fill_value=1)


def _cumulative_api(name, fn, identity, x, axis, dtype, include_initial):
    x, = _arrays(name, x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"The array passed to {name} must be 0D or 1D when axis is "
                             f"not specified, got shape {x.shape}.")
        axis = 0
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        ax = _axis(axis, out.ndim)
        out = st.concatenate([_full(_with(out.shape, ax, 1), identity, out.dtype), out], ax)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative sum (include_initial prepends a zero)."""
    return _cumulative_api("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API cumulative product (include_initial prepends a one)."""
    return _cumulative_api("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


# ---------------------------------------------------------------- order statistics

_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The q-th quantiles along axis (q in [0, 1]; the q dimensions come first)."""
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     squash_nans=False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The q-th percentiles along axis (q in [0, 100])."""
    a, q = _arrays("percentile", a, q)
    q = true_divide(q, 100.0)
    return _quantile("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     squash_nans=False)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along axis (NaN when the slice holds a NaN)."""
    return _quantile("median", a, 0.5, axis, out, overwrite_input, "midpoint", keepdims, None,
                     squash_nans=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
    """quantile ignoring NaNs."""
    return _quantile("nanquantile", a, q, axis, out, overwrite_input, method, keepdims, None,
                     squash_nans=True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
    """percentile ignoring NaNs."""
    a, q = _arrays("nanpercentile", a, q)
    return _quantile("nanpercentile", a, true_divide(q, 100.0), axis, out, overwrite_input,
                     method, keepdims, None, squash_nans=True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaNs."""
    return _quantile("nanmedian", a, 0.5, axis, out, overwrite_input, "midpoint", keepdims,
                     None, squash_nans=True)


def _quantile(name, a, q, axis, out, overwrite_input, method, keepdims, weights, squash_nans):
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")
    if weights is not None:
        raise NotImplementedError(f"refjax.numpy.{name} does not support weights")
    if method not in _QUANTILE_METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint' or "
                         "'nearest'")
    a, q = _arrays(name, a, q)
    a, = _promote_to_inexact(a)
    if _dt.kind(a.dtype) == "c":
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    a, keep_shape = _reduce_to_last_axis(a, axis, keepdims)
    if a.shape[-1] == 0:
        raise ValueError(f"jnp.{name}: cannot compute quantiles of an empty axis")
    result = _quantile_last_axis(a, q, method, squash_nans)
    if keep_shape is not None:
        result = reshape(result, q.shape + keep_shape)
    return astype(result, a.dtype)


def _reduce_to_last_axis(a, axis, keepdims):
    """a with the reduced axes merged into a last one, and the keepdims shape (or None)."""
    axes = _axes(axis, a.ndim)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape)) if keepdims \
        else None
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    merged = st.reshape(a, tuple(a.shape[i] for i in kept) + (n,), dimensions=kept + axes)
    return merged, keep_shape


def _quantile_last_axis(a, q, method, squash_nans):
    """Quantiles of the sorted last axis; q's dimensions lead the result."""
    n = a.shape[-1]
    if squash_nans:
        a = lax.sort(a, a.ndim - 1)
        counts = astype(sum(logical_not(isnan(a)), -1, keepdims=True), q.dtype)
    else:
        has_nan = any(isnan(a), -1, keepdims=True)
        a = lax.sort(_select(broadcast_to(has_nan, a.shape), _const_like(a, np.nan), a),
                     a.ndim - 1)
        counts = _full((1,) * a.ndim, n, q.dtype)
    qb = reshape(q, q.shape + (1,) * a.ndim)
    pos = multiply(qb, subtract(counts, 1))
    low, high = floor(pos), ceil(pos)
    high_weight = subtract(pos, low)
    low_weight = subtract(1, high_weight)
    hi_idx = maximum(0, minimum(high, subtract(counts, 1)))
    lo_idx = maximum(0, minimum(low, subtract(counts, 1)))
    low_value = _take_last(a, astype(lo_idx, _dt.int32))
    high_value = _take_last(a, astype(hi_idx, _dt.int32))
    return _quantile_combine(method, low_value, high_value, low_weight, high_weight, q)


def _take_last(a, idx):
    """a[..., idx] where idx has shape q.shape + (..., 1) broadcasting against a's batch."""
    nq = idx.ndim - a.ndim
    batch = broadcast_shapes(idx.shape[nq:-1], a.shape[:-1])
    idx = broadcast_to(idx, idx.shape[:nq] + batch + (1,))
    a_b = broadcast_to(a, idx.shape[:nq] + batch + a.shape[-1:])
    return st.squeeze(take_along_axis(a_b, idx, -1), (idx.ndim - 1,))


def _quantile_combine(method, low_value, high_value, low_weight, high_weight, q):
    lw = squeeze(low_weight, -1)
    hw = squeeze(high_weight, -1)
    if method == "linear":
        return add(multiply(astype(low_value, q.dtype), lw),
                   multiply(astype(high_value, q.dtype), hw))
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        return where(less_equal(hw, 0.5), low_value, high_value)
    return multiply(add(low_value, high_value), 0.5)


# ---------------------------------------------------------------- shape manipulation

def swapaxes(a, axis1, axis2):
    """a with two axes interchanged."""
    a, = _arrays("swapaxes", a)
    perm = list(range(a.ndim))
    try:
        perm[operator.index(axis1)], perm[operator.index(axis2)] = \
            perm[operator.index(axis2)], perm[operator.index(axis1)]
    except IndexError:
        raise IndexError(f"swapaxes: axes {axis1}, {axis2} are out of bounds for an array of "
                         f"dimension {a.ndim}") from None
    return st.transpose(a, perm)


def moveaxis(a, source, destination):
    """a with the source axes moved to the destination positions."""
    a, = _arrays("moveaxis", a)
    src = _axes(source, a.ndim, allow_none=False)
    dst = _axes(destination, a.ndim, allow_none=False)
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return st.transpose(a, perm)


def permute_dims(a, /, axes):
    """Array-API transpose."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    x, = _arrays("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={x.ndim}")
    return swapaxes(x, -1, -2)


def expand_dims(a, axis):
    """a with size-1 axes inserted at `axis` (positions in the result)."""
    a, = _arrays("expand_dims", a)
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(items)
    axes = tuple(_axis(x, nd) for x in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in expand_dims: {axis}")
    return st.expand_dims(a, axes)


def squeeze(a, axis=None):
    """a without size-1 axes (all of them when axis is None)."""
    a, = _arrays("squeeze", a)
    if axis is None:
        return st.squeeze(a, tuple(i for i, d in enumerate(a.shape) if d == 1))
    axes = _axes(axis, a.ndim, allow_none=False)
    if builtins.any(a.shape[d] != 1 for d in axes):
        raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={a.shape} and dimensions={axes}")
    return st.squeeze(a, axes)


def ravel(a, order="C", *, out_sharding=None):
    """a flattened to 1-d (order 'C' or 'F')."""
    a, = _arrays("ravel", a)
    if order not in ("C", "F", "K", "A"):
        raise ValueError(f"Unsupported order {order!r} for jnp.ravel")
    return reshape(a, (a.size,), order="F" if order == "F" else "C")


def concatenate(arrays, axis=0, dtype=None):
    """Arrays joined along an existing axis (flattened first when axis is None)."""
    arrays = _arrays("concatenate", *_sequence(arrays))
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0, dtype)
    if arrays[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if len({a.ndim for a in arrays}) != 1:
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(a.shape) for a in arrays)}.")
    axis = _axis(axis, arrays[0].ndim)
    arrays = _promote_dtypes(*arrays) if dtype is None else \
        [astype(a, _user_dtype(dtype, "concatenate")) for a in arrays]
    return st.concatenate(arrays, axis)


def concat(arrays, /, *, axis=0):
    """Array-API concatenate."""
    return concatenate(arrays, axis)


def _sequence(tup):
    """The items of a sequence, or the slices of an array along its first axis."""
    if _is_array(tup) or isinstance(tup, np.ndarray):
        return [tup[i] for i in range(np.shape(tup)[0])]
    return list(tup)


def hstack(tup, dtype=None):
    """Arrays joined along axis 1 (axis 0 for 1-d arrays)."""
    arrays = [_atleast_one(a, 1) for a in _arrays("hstack", *_sequence(tup))]
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """Arrays joined along axis 0, 1-d ones as rows."""
    return concatenate([_atleast_one(a, 2) for a in _arrays("vstack", *_sequence(tup))], 0,
                       dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """Arrays joined along axis 2."""
    return concatenate([_atleast_one(a, 3) for a in _arrays("dstack", *_sequence(tup))], 2,
                       dtype)


def column_stack(tup):
    """1-d arrays as columns of a 2-d array; others joined along axis 1."""
    arrays = _arrays("column_stack", *_sequence(tup))
    return concatenate([reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in arrays], 1)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    x, = _arrays("unstack", x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = _axis(axis, x.ndim)
    return tuple(st.index_in_dim(x, i, axis) for i in range(x.shape[axis]))


def _split(name, ary, indices_or_sections, axis):
    ary, = _arrays(name, ary)
    axis = _static_int(axis, f"in jax.numpy.{name} argument `axis`")
    size = ary.shape[_axis(axis, ary.ndim)]
    if isinstance(indices_or_sections, (tuple, list)) or np.ndim(indices_or_sections) > 0:
        points = [_static_int(i, f"in jax.numpy.{name} argument 1")
                  for i in np.asarray(indices_or_sections).ravel()] \
            if not isinstance(indices_or_sections, (tuple, list)) else \
            [_static_int(i, f"in jax.numpy.{name} argument 1") for i in indices_or_sections]
        bounds = [_clip_index(i, size) for i in points]
        starts, stops = [0] + bounds, bounds + [size]
    else:
        sections = _static_int(indices_or_sections, f"in jax.numpy.{name} argument 1")
        starts, stops = _even_sections(name, size, sections)
    axis = _axis(axis, ary.ndim)
    return [st.slice_in_dim(ary, s, builtins.max(s, e), 1, axis) for s, e in zip(starts, stops)]


def _clip_index(i, size):
    return builtins.min(builtins.max(i + size if i < 0 else i, 0), size)


def _even_sections(name, size, sections):
    if sections <= 0:
        raise ValueError(f"jnp.{name}: number of sections must be larger than 0, got "
                         f"{sections}")
    part, rest = builtins.divmod(size, sections)
    if rest and name != "array_split":
        raise ValueError(f"array split does not result in an equal division: rest is {rest}")
    sizes = [part + 1] * rest + [part] * (sections - rest)
    stops = np.cumsum(sizes).tolist()
    return [0] + stops[:-1], stops


def split(ary, indices_or_sections, axis=0):
    """Equal sections of ary (or pieces between indices) along axis."""
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
    """Like split, allowing unequal sections."""
    return _split("array_split", ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-d arrays)."""
    a, = _arrays("hsplit", ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split("hsplit", a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along axis 0 (arrays of 2 or more dimensions)."""
    a, = _arrays("vsplit", ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split("vsplit", a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """split along axis 2 (arrays of 3 or more dimensions)."""
    a, = _arrays("dsplit", ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split("dsplit", a, indices_or_sections, 2)


def tile(A, reps):
    """A repeated reps times along each axis."""
    A, = _arrays("tile", A)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(_static_int(r, "reps argument of jnp.tile") for r in reps)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"jnp.tile: reps must be non-negative, got {reps}")
    reps = (1,) * (A.ndim - len(reps)) + reps
    A = reshape(A, (1,) * (len(reps) - A.ndim) + A.shape)
    # Broadcast a new size-r axis before each axis, then merge the pairs.
    shape = builtins.sum(((r, d) for r, d in zip(reps, A.shape)), ())
    tiled = st.broadcast_in_dim(A, shape, tuple(range(1, 2 * A.ndim, 2)))
    return st.reshape(tiled, tuple(r * d for r, d in zip(reps, A.shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element of a repeated `repeats` times along axis (flattened when None). Traced
    repeats need a static total_repeat_length (the output is cut, or padded with the last
    element, to it)."""
    a, = _arrays("repeat", a)
    if not isinstance(repeats, (int, np.integer)):
        repeats, = _arrays("repeat", repeats)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    if total_repeat_length is not None:
        return _repeat_to_length(a, repeats, axis, _static_int(
            total_repeat_length, "total_repeat_length argument of jnp.repeat"))
    reps = _concrete_value(repeats, "When jit-compiling jnp.repeat, the total number of "
                                    "repeats must be static. To fix this, either specify a "
                                    "static value for `repeats`, or pass a static value to "
                                    "`total_repeat_length`.")
    if reps.ndim == 0 or reps.shape == (1,):
        return _repeat_scalar(a, int(reps.ravel()[0]), axis)
    return _repeat_each(a, reps, axis)


def _repeat_scalar(a, r, axis):
    if r < 0:
        raise ValueError(f"jnp.repeat: repeats must be non-negative, got {r}")
    shape = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
    dims = tuple(range(axis + 1)) + tuple(range(axis + 2, a.ndim + 1))
    return st.reshape(st.broadcast_in_dim(a, shape, dims), _with(a.shape, axis, a.shape[axis] * r))


def _repeat_each(a, reps, axis):
    if reps.shape != (a.shape[axis],):
        raise ValueError(f"jnp.repeat: repeats must be a scalar or have the length of axis "
                         f"{axis} ({a.shape[axis]}), got shape {reps.shape}")
    if (reps < 0).any():
        raise ValueError("jnp.repeat: repeats must be non-negative")
    pieces = [_repeat_scalar(st.slice_in_dim(a, i, i + 1, 1, axis), int(r), axis)
              for i, r in enumerate(reps) if r]
    return st.concatenate(pieces, axis) if pieces else \
        zeros_like(a, shape=_with(a.shape, axis, 0))


def _repeat_to_length(a, repeats, axis, total):
    """Output position j takes the element whose block (the running sum of repeats) covers
    it; positions past the sum take the last element, as in JAX."""
    n = a.shape[axis]
    if total == 0 or n == 0:
        return zeros_like(a, shape=_with(a.shape, axis, total)) if total == 0 else a
    if not _is_traced(repeats):
        ends = np.cumsum(np.broadcast_to(np.ravel(_concrete_value(repeats, "")), (n,)))
        idx = np.minimum(np.searchsorted(ends, np.arange(total), side="right"), n - 1)
        return take(a, _concrete(idx.astype(np.int32)), axis=axis)
    ends = lax.cumsum(broadcast_to(astype(ravel(repeats), _dt.int32), (n,)), 0)
    covered = ew.le(st.broadcast_in_dim(ends, (total, n), (1,)),
                    st.broadcasted_iota(_dt.int32, (total, n), 0))
    idx = sum(covered, axis=1, dtype=_dt.int32)
    return take(a, minimum(idx, n - 1), axis=axis)


def flip(m, axis=None):
    """m reversed along axis (all axes when None)."""
    m, = _arrays("flip", m)
    return st.rev(m, _axes(axis, m.ndim)) if m.ndim else m


def fliplr(m):
    """m reversed along axis 1."""
    m, = _arrays("fliplr", m)
    if m.ndim < 2:
        raise ValueError("fliplr requires an array of at least two dimensions")
    return flip(m, 1)


def flipud(m):
    """m reversed along axis 0."""
    m, = _arrays("flipud", m)
    if m.ndim < 1:
        raise ValueError("flipud requires an array of at least one dimension")
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Elements shifted cyclically along axis (flattened when None); shift may be traced."""
    a, = _arrays("roll", a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = tuple(_axis(ax, a.ndim) for ax in (axis if isinstance(axis, (tuple, list))
                                              else (axis,)))
    if _is_traced(shift):
        return _roll_dynamic(a, asarray(shift), axes)
    shifts = np.asarray(_concrete_value(shift, "roll shift"))
    if shifts.ndim > 1 or np.ndim(axes) > 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    for ax, s in zip(*np.broadcast_arrays(np.asarray(axes), shifts)):
        a = _roll_static(a, int(s), int(ax))
    return a


def _roll_static(a, s, ax):
    n = a.shape[ax]
    if n == 0:
        return a
    i = -s % n
    return st.concatenate([st.slice_in_dim(a, i, n, 1, ax), st.slice_in_dim(a, 0, i, 1, ax)], ax)


def _roll_dynamic(a, shift, axes):
    if shift.ndim > 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = broadcast_to(shift, np.broadcast_shapes(shift.shape, (len(axes),))
                          if shift.ndim or len(axes) > 1 else ())
    shifts = [shifts] if shifts.ndim == 0 else [shifts[i] for i in range(shifts.shape[0])]
    for s, ax in zip(shifts, np.broadcast_to(np.asarray(axes), (len(shifts),))):
        n = a.shape[ax]
        s = remainder(astype(s, _dt.int32), builtins.max(n, 1))
        doubled = st.concatenate([a, a], int(ax))
        a = st.dynamic_slice_in_dim(doubled, ew.sub(_full((), n, _dt.int32), s), n, int(ax))
    return a


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of axes."""
    m, = _arrays("rot90", m)
    if m.ndim < 2:
        raise ValueError(f"rot90 requires its first argument to have ndim at least two, but "
                         f"got first argument of shape {m.shape}, which has ndim {m.ndim}")
    ax1, ax2 = (_axis(x, m.ndim) for x in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = _static_int(k, "k argument of jnp.rot90") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (ax1, ax2))
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    return st.transpose(flip(m, ax2), perm) if k == 1 else flip(st.transpose(m, perm), ax2)


def broadcast_arrays(*args):
    """The arguments broadcast against each other."""
    arrays = _arrays("broadcast_arrays", *args)
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def _atleast(name, n, arys):
    arrays = _arrays(name, *arys)
    out = [_atleast_one(a, n) for a in arrays]
    return out[0] if len(out) == 1 else out


def _atleast_one(a, n):
    if a.ndim >= n:
        return a
    if n == 3 and a.ndim == 1:
        return reshape(a, (1,) + a.shape + (1,))
    if n == 3 and a.ndim == 2:
        return reshape(a, a.shape + (1,))
    return reshape(a, (1,) * (n - a.ndim) + a.shape)


def atleast_1d(*arys):
    """Arrays with at least one dimension."""
    return _atleast("atleast_1d", 1, arys)


def atleast_2d(*arys):
    """Arrays with at least two dimensions (1-d ones as rows)."""
    return _atleast("atleast_2d", 2, arys)


def atleast_3d(*arys):
    """Arrays with at least three dimensions (NumPy's placement of the new axes)."""
    return _atleast("atleast_3d", 3, arys)


def append(arr, values, axis=None):
    """values appended to arr along axis (both flattened when None)."""
    arr, values = _arrays("append", arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def rollaxis(a, axis, start=0):
    """a with `axis` moved to before position `start`."""
    a, = _arrays("rollaxis", a)
    axis = _axis(axis, a.ndim)
    start = operator.index(start)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"start={start} must satisfy {-a.ndim} <= start <= {a.ndim}")
    start = start + a.ndim if start < 0 else start
    return moveaxis(a, axis, start - 1 if axis < start else start)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries obj (an int, slice or static integer array) along axis."""
    a, = _arrays("delete", arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, slice):
        drop = np.arange(n)[obj]
    else:
        drop = _concrete_value(obj, "jnp.delete: obj must be static (refjax has no "
                                    "assume_unique_indices path)").astype(np.int64).ravel()
        if ((drop < -n) | (drop >= n)).any():
            raise IndexError(f"jnp.delete: index out of bounds for axis {axis} with size {n}")
    keep = np.setdiff1d(np.arange(n), np.mod(drop, builtins.max(n, 1)))
    return take(a, _concrete(keep.astype(np.int32)), axis=axis)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to val (JAX arrays are immutable: pass inplace=False)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, so fill_diagonal cannot operate "
                                  "in place; use jnp.fill_diagonal(a, val, inplace=False).")
    a, val = _arrays("fill_diagonal", a, val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if wrap and a.ndim == 2 and a.shape[0] > a.shape[1]:
        raise NotImplementedError("refjax.numpy.fill_diagonal does not implement wrap=True")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    values = astype(resize(val, (builtins.min(a.shape),)), a.dtype)
    return _select(_all_equal_iota(a.shape), _diag_values(values, a.shape), a)


def _all_equal_iota(shape):
    """True where every index is equal (the main diagonal of any rank)."""
    first = st.broadcasted_iota(_dt.int32, shape, 0)
    mask = _full(shape, True, _dt.bool_)
    for d in range(1, len(shape)):
        mask = ew.bitwise_and(mask, ew.eq(first, st.broadcasted_iota(_dt.int32, shape, d)))
    return mask


def _diag_values(values, shape):
    """values[i] at every position whose first index is i (< len(values))."""
    n = values.shape[0]
    padded = st.pad(values, _zero_scalar(values), [(0, shape[0] - n, 0)]) if shape[0] > n \
        else st.slice_in_dim(values, 0, shape[0], 1, 0)
    return st.broadcast_in_dim(padded, shape, (0,))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows (columns when not rowvar) of m,
    with optional integer frequency weights and observation weights (NumPy's formula)."""
    m, = _promote_to_inexact(*_arrays("cov", m))
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = atleast_2d(m)
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return reshape(asarray([], dtype=x.dtype), (0, 0))
    if y is not None:
        y2 = atleast_2d(_promote_to_inexact(*_arrays("cov", y))[0])
        x = concatenate([x, y2.T if not rowvar and y2.shape[0] != 1 else y2], axis=0)
    ddof = (0 if bias else 1) if ddof is None else ddof
    w = _cov_weights(fweights, aweights, x.shape[1])
    if w is None:
        avg, fact = mean(x, axis=1, keepdims=True), x.shape[1] - ddof
    else:
        v1 = sum(w)
        avg = divide(sum(multiply(x, w), axis=1, keepdims=True), v1)
        fact = subtract(v1, ddof if aweights is None
                        else divide(multiply(ddof, sum(multiply(w, aweights))), v1))
    centered = subtract(x, avg)
    weighted = centered if w is None else multiply(centered, w)
    return squeeze(divide(dot(weighted, conj(centered).T), fact))


def _cov_weights(fweights, aweights, n):
    """The product of the frequency and observation weights (None without either), checked
    as JAX checks them."""
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        weights = asarray(weights)
        if name == "fweights" and not _dt.is_int(weights.dtype):
            raise TypeError("fweights must be integer.")
        if weights.ndim > 1:
            raise RuntimeError(f"cannot handle multidimensional {name}")
        if weights.shape[0] != n:
            raise RuntimeError(f"incompatible numbers of samples and {name}")
        w = weights if w is None else multiply(w, weights)
    return w


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients (cov normalised by the standard deviations)."""
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return divide(c, c)
    d = diagonal(c)
    stddev = sqrt(real(d))
    c = divide(divide(c, stddev[:, None]), stddev[None, :])
    return clip(c, -1, 1) if _dt.kind(c.dtype) != "c" else c


def resize(a, new_shape):
    """a flattened, cycled and reshaped to new_shape."""
    a, = _arrays("resize", a)
    new_shape = _shape_arg(new_shape, "resize")
    size = int(np.prod(new_shape, dtype=np.int64))
    flat = ravel(a)
    if flat.size == 0 or size == 0:
        return zeros(new_shape, a.dtype)
    reps = -(-size // flat.size)
    return reshape(st.slice_in_dim(tile(flat, reps), 0, size, 1, 0), new_shape)


# ---------------------------------------------------------------- pad

def _pad_width(pad_width, ndim):
    value = _concrete_value(pad_width, "pad_width argument of jnp.pad")
    if value.dtype.kind not in "iub":
        raise TypeError(f"`pad_width` must be of integral type, got {value.dtype}")
    try:
        widths = np.broadcast_to(value, (ndim, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: pad_width {pad_width!r} cannot be broadcast to "
                         f"({ndim}, 2)") from None
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    return [(int(lo), int(hi)) for lo, hi in widths]


def pad(array, pad_width, mode="constant", **kwargs):
    """array padded by pad_width; modes constant, empty, edge, wrap, reflect, symmetric,
    maximum, minimum, mean, median (the statistics over the whole axis)."""
    array, = _arrays("pad", array)
    widths = _pad_width(pad_width, array.ndim)
    if callable(mode) or mode not in _PAD_MODES:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unexpected = set(kwargs) - _PAD_KWARGS.get(mode, set())
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unexpected}")
    if mode in ("constant", "empty"):
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    for axis, (lo, hi) in enumerate(widths):
        if lo or hi:
            array = _PAD_MODES[mode](array, axis, lo, hi, **kwargs)
    return array


def _pad_constant(array, widths, constant_values):
    values = astype(asarray(constant_values), array.dtype)
    if values.ndim == 0:
        return st.pad(array, values, [(lo, hi, 0) for lo, hi in widths])
    values = broadcast_to(values, (array.ndim, 2))
    for axis, (lo, hi) in enumerate(widths):
        for side, amount in enumerate((lo, hi)):
            config = [(0, 0, 0)] * array.ndim
            config[axis] = (amount, 0, 0) if side == 0 else (0, amount, 0)
            array = st.pad(array, values[axis, side], config)
    return array


def _check_nonempty_axis(array, axis, mode):
    if array.shape[axis] == 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_edge(array, axis, lo, hi):
    _check_nonempty_axis(array, axis, "edge")
    n = array.shape[axis]
    first = _repeat_scalar(st.slice_in_dim(array, 0, 1, 1, axis), lo, axis)
    last = _repeat_scalar(st.slice_in_dim(array, n - 1, n, 1, axis), hi, axis)
    return st.concatenate([first, array, last], axis)


def _periodic(block, axis, start, length):
    """Elements start .. start+length of the periodic extension of block along axis."""
    p = block.shape[axis]
    first = start // p
    copies = -(-(start + length) // p) - first
    tiled = st.concatenate([block] * copies, axis) if copies > 1 else block
    offset = start - first * p
    return st.slice_in_dim(tiled, offset, offset + length, 1, axis)


def _pad_periodic(array, axis, lo, hi, block, origin):
    """array extended by lo/hi elements of the periodic signal `block` (array sits at
    offset `origin` of the block)."""
    n = array.shape[axis]
    left = _periodic(block, axis, origin - lo, lo) if lo else None
    right = _periodic(block, axis, origin + n, hi) if hi else None
    return st.concatenate([x for x in (left, array, right) if x is not None], axis)


def _pad_wrap(array, axis, lo, hi):
    _check_nonempty_axis(array, axis, "wrap")
    n = array.shape[axis]
    return _pad_periodic(array, axis, lo, hi, array, n * (-(-lo // n)))


def _reflect_block(array, axis, include_edge):
    n = array.shape[axis]
    back = st.rev(array, (axis,))
    if not include_edge:
        if n == 1:
            return array
        back = st.slice_in_dim(back, 1, n - 1, 1, axis)
    return st.concatenate([array, back], axis)


def _pad_reflect(array, axis, lo, hi, reflect_type="even", include_edge=False):
    mode = "symmetric" if include_edge else "reflect"
    _check_nonempty_axis(array, axis, mode)
    if reflect_type != "even":
        raise NotImplementedError(f"refjax.numpy.pad: reflect_type={reflect_type!r} is not "
                                  "implemented (only 'even')")
    block = _reflect_block(array, axis, include_edge)
    p = block.shape[axis]
    return _pad_periodic(array, axis, lo, hi, block, p * (-(-lo // p)))


def _pad_symmetric(array, axis, lo, hi, reflect_type="even"):
    return _pad_reflect(array, axis, lo, hi, reflect_type, include_edge=True)


def _pad_stat(stat):
    def pad_fn(array, axis, lo, hi, stat_length=None):
        if stat_length is not None:
            raise NotImplementedError("refjax.numpy.pad: stat_length is not implemented")
        _check_nonempty_axis(array, axis, stat.__name__)
        value = stat(array, axis, keepdims=True)
        if _dt.is_int(array.dtype) and stat in (mean, median):
            value = round(value)
        value = astype(value, array.dtype)
        return st.concatenate([_repeat_scalar(value, lo, axis), array,
                               _repeat_scalar(value, hi, axis)], axis)
    return pad_fn


_PAD_MODES = {"constant": None, "empty": None, "edge": _pad_edge, "wrap": _pad_wrap,
              "reflect": _pad_reflect, "symmetric": _pad_symmetric,
              "maximum": _pad_stat(max), "minimum": _pad_stat(min), "mean": _pad_stat(mean),
              "median": _pad_stat(median)}
_PAD_KWARGS = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}, **{m: {"stat_length"} for m in
                                                 ("maximum", "minimum", "mean", "median")}}


# ---------------------------------------------------------------- take, where, select, nonzero

# JAX's: take has 'wrap' and not 'promise_in_bounds'; take_along_axis passes its mode to the
# gather ('drop' is 'fill' there) and has no 'wrap'.
_TAKE_MODES = (None, "fill", "clip", "wrap")
_TAKE_ALONG_MODES = (None, "fill", "drop", "clip", "promise_in_bounds")


def _fill_value(dtype, fill_value):
    """The value jnp's gathers give out-of-bounds indices in 'fill' mode."""
    if fill_value is not None:
        return fill_value
    if _dt.is_inexact(dtype):
        return np.nan
    if dtype == _dt.bool_:
        return True
    info = _dt.iinfo(dtype)
    return int(info.min if _dt.kind(dtype) == "i" else info.max)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of a at `indices` along axis (flattened when None): one `gather`, with JAX's
    dimension numbers. Out-of-bounds indices give fill_value (NaN, the int minimum, True) in
    the default 'fill' mode (negative ones wrap once), are clamped in 'clip' mode, taken
    modulo the axis size in 'wrap' mode."""
    _no_out("take", out)
    a, indices = _arrays("take", a, indices)
    if not _dt.is_int(indices.dtype):
        raise ValueError("indices must have an integer type")
    _check_take_mode("take", mode)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    out_shape = a.shape[:axis] + indices.shape + a.shape[axis + 1:]
    if n == 0:
        if indices.size:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if indices.size == 0:
        return zeros_like(a, shape=out_shape)
    idx, gather_mode = _take_indices(indices, n, mode, wrap_negative=mode in (None, "fill"))
    k = indices.ndim
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + k, a.ndim - 1 + k)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    return lax.gather(a, st.expand_dims(idx, (k,)), dn, _with(a.shape, axis, 1),
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=gather_mode, fill_value=_fill_value(a.dtype, fill_value)
                      if gather_mode == "fill" else None)


_GATHER_MODES = {None: "fill", "fill": "fill", "drop": "fill", "clip": "clip",
                 "wrap": "promise_in_bounds",
                 "promise_in_bounds": "promise_in_bounds"}


def _take_indices(indices, n, mode, wrap_negative):
    """The indices a take's gather reads (negative ones wrapped when `wrap_negative`, all of
    them taken modulo n in 'wrap' mode; with NumPy when concrete) and the gather's mode."""
    if not _is_traced(indices):
        idx = _concrete_value(indices, "").astype(np.int64)
        idx = np.mod(idx, n) if mode == "wrap" else np.where(idx < 0, idx + n, idx) \
            if wrap_negative else idx
        if indices.dtype != np.int64:   # beyond int32 is out of bounds either way
            idx = np.clip(idx, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32)
        return _concrete(idx), _GATHER_MODES[mode]
    if mode == "wrap":
        return remainder(indices, n), _GATHER_MODES[mode]
    if wrap_negative:
        indices = where(less(indices, 0), add(indices, n), indices)
    return indices, _GATHER_MODES[mode]


def _check_take_mode(name, mode):
    if name == "take_along_axis":
        if mode not in _TAKE_ALONG_MODES:
            raise ValueError(f'Unknown gather mode "{mode}"')
        return
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{name} is not supported.")
    if mode not in _TAKE_MODES:
        raise ValueError(f"Invalid mode '{mode}' for np.{name}")


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """arr[..., indices[..., i, ...], ...] along axis, other dimensions broadcasting: one
    `gather` (dimensions of size 1 in indices read whole windows of arr, equal ones are
    batching dims)."""
    a, indices = _arrays("take_along_axis", arr, indices)
    if not _dt.is_int(indices.dtype):
        raise TypeError(f"take_along_axis indices must be of integer type, got "
                        f"{indices.dtype}")
    _check_take_mode("take_along_axis", mode)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{indices.shape}")
        a, axis = ravel(a), 0
    if a.ndim != indices.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{indices.ndim} vs. {a.ndim}")
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    out_shape = broadcast_shapes(indices.shape, _with(a.shape, axis, 1))
    if n == 0 or 0 in out_shape:
        return zeros(out_shape, a.dtype)
    wrap = mode != "promise_in_bounds" if wrap_negative_indices is None \
        else wrap_negative_indices
    idx, gather_mode = _take_indices(indices, n, mode, wrap)
    return _gather_along(a, idx, axis, gather_mode,
                         _fill_value(a.dtype, fill_value) if gather_mode == "fill" else None)


def _gather_along(a, idx, axis, mode, fill):
    """The gather of take_along_axis: a dim where idx has size 1 and a does not is a window
    (offset) dim; a dim where a has size 1 and idx does not is collapsed; equal sizes are
    batching dims."""
    offset, collapsed, batching, kept = [], [axis], [], []
    for d in range(a.ndim):
        if d == axis:
            kept.append(d)
        elif idx.shape[d] == 1 and a.shape[d] != 1:
            offset.append(d)
        else:
            (collapsed if a.shape[d] == 1 and idx.shape[d] != 1 else batching).append(d)
            kept.append(d)
    idx = reshape(idx, tuple(idx.shape[d] for d in kept) + (1,))
    dn = lax.GatherDimensionNumbers(
        offset_dims=tuple(offset), collapsed_slice_dims=tuple(sorted(collapsed)),
        start_index_map=(axis,), operand_batching_dims=tuple(batching),
        start_indices_batching_dims=tuple(kept.index(d) for d in batching))
    sizes = tuple(a.shape[d] if d in offset else 1 for d in range(a.ndim))
    return lax.gather(a, idx, dn, sizes, mode=mode, fill_value=fill)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """x where condition else y (NumPy broadcasting and promotion). With one argument,
    jnp.nonzero(condition) (needs a concrete condition, or a static `size`)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError("jnp.where: either both or neither of x and y must be given")
    condition, x, y = _check_args("where", condition, x, y)
    x, y = _promote_dtypes(x, y)
    condition = asarray(condition)
    if condition.dtype != _dt.bool_:
        condition = ew.ne(condition, _const_like(condition, 0))
    condition, x, y = _broadcast_all(condition, x, y)
    return ew.select_n(condition, y, x)


def _broadcast_all(*arrays):
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else default."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    conds = _arrays("select", *condlist)
    default, *choices = _promote_dtypes(*_check_args("select", default, *choicelist))
    out = asarray(default)
    for cond, choice in reversed(list(zip(conds, choices))):
        cond = cond if cond.dtype == _dt.bool_ else ew.ne(cond, _const_like(cond, 0))
        cond, choice, out = _broadcast_all(cond, asarray(choice), out)
        out = ew.select_n(cond, out, choice)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) (or a constant) where condlist[i] holds (the last true one wins),
    funclist[len(condlist)] or 0 elsewhere; every function is evaluated on all of x."""
    x, = _arrays("piecewise", x)
    conds = [condlist] if _is_array(condlist) and condlist.ndim == x.ndim else list(condlist)
    nc, nf = len(conds), len(funclist)
    if nf not in (nc, nc + 1):
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    out = _piece(funclist[nc] if nf == nc + 1 else 0, x, args, kw)
    for cond, fn in zip(conds, funclist):
        out = where(cond, _piece(fn, x, args, kw), out)
    return out


def _piece(fn, x, args, kw):
    value = fn(x, *args, **kw) if callable(fn) else fn
    return broadcast_to(astype(asarray(value), x.dtype), x.shape)


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """arr limited to [min, max] (either bound optional). The a/a_min/a_max keywords of older
    JAX versions are accepted with a DeprecationWarning."""
    arr, min, max = _clip_legacy_args(arr, min, max, a, a_min, a_max)
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    _check_args("clip", arr)
    if builtins.any(iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the real "
                         "or imaginary components via jax.numpy.real/imag respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return asarray(arr)


def _clip_legacy_args(arr, lo, hi, a, a_min, a_max):
    import warnings
    for old, new, value in (("a", "arr", a), ("a_min", "min", a_min), ("a_max", "max", a_max)):
        if value is not None:
            warnings.warn(f"Passing `{old}` to jnp.clip is deprecated (and removed in recent "
                          f"JAX); pass `{new}` instead.", DeprecationWarning, stacklevel=3)
    return (arr if a is None else a, lo if a_min is None else a_min,
            hi if a_max is None else a_max)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements, one int32 array per dimension. Needs a concrete
    `a` unless a static `size` is given (then padded with fill_value or truncated)."""
    a, = _arrays("nonzero", a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        value = _concrete_value(a, "The size argument of jnp.nonzero must be statically "
                                   "specified to use jnp.nonzero within JAX transformations.")
        return tuple(_concrete(np.asarray(i, _dt.default_int())) for i in np.nonzero(value))
    size = _static_int(size, "size argument of jnp.nonzero")
    return _nonzero_sized(a, size, fill_value)


def _nonzero_sized(a, size, fill_value):
    """The first `size` non-zero positions, found with a one-hot match of each output slot
    against the running count of non-zeros (traceable)."""
    flat = ravel(ew.ne(a, _const_like(a, 0)))
    n, int_t = flat.shape[0], _dt.default_int()
    slot = ew.sub(lax.cumsum(astype(flat, int_t), 0), _full((n,), 1, int_t))
    hit = ew.bitwise_and(st.broadcast_in_dim(flat, (size, n), (1,)), ew.eq(
        st.broadcast_in_dim(slot, (size, n), (1,)), st.broadcasted_iota(int_t, (size, n), 0)))
    found = lax.reduce_or(hit, (1,))
    flat_index = lax.reduce_sum(_select(hit, st.broadcasted_iota(int_t, (size, n), 1),
                                        _full((size, n), 0, int_t)), (1,))
    fills = fill_value if isinstance(fill_value, (tuple, list)) else \
        [0 if fill_value is None else fill_value] * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {a.ndim}; got "
                         f"{fill_value}")
    return tuple(where(found, i, astype(asarray(f), int_t))
                 for i, f in zip(_unravel(flat_index, a.shape), fills))


def _unravel(flat_index, shape):
    out = []
    for d in reversed(shape):
        out.append(remainder(flat_index, builtins.max(d, 1)))
        flat_index = floor_divide(flat_index, builtins.max(d, 1))
    return out[::-1]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements as an (N, ndim) array."""
    a, = _arrays("argwhere", a)
    result = nonzero(atleast_1d(a), size=size, fill_value=fill_value)
    return stack(result, axis=1) if a.ndim else zeros((result[0].shape[0], 0), _dt.int32)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the non-zero elements of the flattened a."""
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr where condition holds (concrete unless size is given)."""
    condition, arr = _arrays("extract", condition, arr)
    if size is None:
        idx = flatnonzero(condition)
        return take(ravel(arr), idx)
    flat = ravel(arr)
    idx = flatnonzero(condition, size=size, fill_value=flat.shape[0])
    return take(flat, idx, fill_value=fill_value)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis where the 1-d condition holds (concrete condition)."""
    _no_out("compress", out)
    condition, a = _arrays("compress", condition, a)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        a, axis = ravel(a), 0
    mask = _concrete_value(condition, "condition argument of jnp.compress")
    idx = np.nonzero(mask[:a.shape[_axis(axis, a.ndim)]])[0]
    return take(a, _concrete(idx.astype(np.int32)), axis)


def unravel_index(indices, shape):
    """The coordinates of flat indices in an array of this shape."""
    indices, = _arrays("unravel_index", indices)
    shape = _shape_arg(shape, "unravel_index")
    total = int(np.prod(shape, dtype=np.int64))
    indices = where(less(indices, 0), add(indices, total), indices)
    indices = clip(indices, 0, builtins.max(total - 1, 0))
    return tuple(_unravel(indices, shape))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """The flat indices of coordinates in an array of shape dims (mode 'wrap' or 'clip')."""
    coords = _arrays("ravel_multi_index", *multi_index)
    dims = _shape_arg(dims, "ravel_multi_index")
    if mode == "raise":
        values = [_concrete_value(c, "ravel_multi_index with mode='raise'") for c in coords]
        if builtins.any(((v < 0) | (v >= d)).any() for v, d in zip(values, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        coords = [remainder(c, d) for c, d in zip(coords, dims)]
    elif mode == "clip":
        coords = [clip(c, 0, d - 1) for c, d in zip(coords, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    out, stride = asarray(0), 1
    for i in reversed(list(order_dims)):
        out = add(out, multiply(coords[i], stride))
        stride *= dims[i]
    return astype(out, _dt.default_int())


# ---------------------------------------------------------------- products

def _product_dtype(name, arrays, preferred_element_type):
    """Operands promoted to one dtype, the output dtype and its weak type (as jnp.dot)."""
    if preferred_element_type is None:
        dtype, weak = result_type(*arrays, return_weak_type_flag=True)
    else:
        dtype, weak = _user_dtype(preferred_element_type, name), False
    return _promote_dtypes(*arrays), dtype, weak


def _dot_general(a, b, dims, precision, dtype, weak):
    pet = None if dtype == a.dtype else dtype
    out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=pet)
    return ew.convert_element_type(out, dtype, weak_type=weak) \
        if (out.dtype, out.weak_type) != (dtype, weak) else out


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy dot: contracts a's last axis with b's second-to-last (or only) axis."""
    (a, b), dtype, weak = _product_dtype("dot", _arrays("dot", a, b), preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        contract = ((), ())
    else:
        contract = ((a.ndim - 1,), (builtins.max(b.ndim - 2, 0),))
    return _dot_general(a, b, (contract, ((), ())), precision, dtype, weak)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating a."""
    a, b = _arrays("vdot", a, b)
    if _dt.kind(a.dtype) == "c":
        a = ew.conj(a)
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugated dot product along axis, broadcasting the other axes."""
    x1, x2 = _arrays("vecdot", x1, x2)
    if x1.shape[_axis(axis, x1.ndim)] != x2.shape[_axis(axis, x2.ndim)]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"axis={axis}")
    x1, x2 = _move_to_end(x1, axis), _move_to_end(x2, axis)
    if _dt.kind(x1.dtype) == "c":
        x1 = ew.conj(x1)
    return einsum("...i,...i->...", x1, x2, precision=precision,
                  preferred_element_type=preferred_element_type)


def matvec(x1, x2, /):
    """Matrix-vector products, batched over leading axes."""
    x1, x2 = _arrays("matvec", x1, x2)
    return einsum("...ij,...j->...i", x1, x2)


def vecmat(x1, x2, /):
    """Vector-matrix products (conjugating the vector), batched over leading axes."""
    x1, x2 = _arrays("vecmat", x1, x2)
    if _dt.kind(x1.dtype) == "c":
        x1 = ew.conj(x1)
    return einsum("...i,...ij->...j", x1, x2)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contraction over the last axes of a and b."""
    a, b = _arrays("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        if preferred_element_type is not None:
            a, b = astype(a, preferred_element_type), astype(b, preferred_element_type)
        return multiply(a, b)
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


def outer(a, b, out=None):
    """The outer product of the flattened arrays."""
    _no_out("outer", out)
    a, b = _promote_dtypes(*_arrays("outer", a, b))
    return multiply(ravel(a)[:, None], ravel(b)[None, :])


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Contraction of the last `axes` axes of a with the first of b, or of explicit axis
    lists ((a_axes), (b_axes))."""
    (a, b), dtype, weak = _product_dtype("tensordot", _arrays("tensordot", a, b),
                                         preferred_element_type)
    contract = _tensordot_axes(a, b, axes)
    return _dot_general(a, b, (contract, ((), ())), precision, dtype, weak)


def _tensordot_axes(a, b, axes):
    if type(axes) is int:
        if axes > builtins.min(a.ndim, b.ndim) or axes < 0:
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({a.shape} and {b.shape})")
        return tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    if isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            return (_axis(ax1, a.ndim),), (_axis(ax2, b.ndim),)
        if isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError(f"tensordot requires axes lists to have equal length, got "
                                f"{ax1} and {ax2}.")
            return tuple(_axis(i, a.ndim) for i in ax1), tuple(_axis(i, b.ndim) for i in ax2)
        raise TypeError(f"tensordot requires both axes lists to be either ints, tuples or "
                        f"lists, got {ax1} and {ax2}")
    raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                    "lists/tuples of ints.")


def kron(a, b):
    """The Kronecker product."""
    a, b = _promote_dtypes(*_arrays("kron", a, b))
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    a_e = st.expand_dims(a, tuple(range(1, 2 * nd, 2)))
    b_e = st.expand_dims(b, tuple(range(0, 2 * nd, 2)))
    return reshape(multiply(a_e, b_e), tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-vectors along the given axes."""
    a, b = _promote_dtypes(*_arrays("cross", a, b))
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _move_to_end(a, axisa), _move_to_end(b, axisb)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return subtract(multiply(a[..., 0], b[..., 1]), multiply(a[..., 1], b[..., 0]))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2] if a.shape[-1] == 3 else zeros_like(a[..., 0])
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2] if b.shape[-1] == 3 else zeros_like(b[..., 0])
    c = stack(_broadcast_all(subtract(multiply(a1, b2), multiply(a2, b1)),
                             subtract(multiply(a2, b0), multiply(a0, b2)),
                             subtract(multiply(a0, b1), multiply(a1, b0))), -1)
    return moveaxis(c, -1, axisc)


# ---------------------------------------------------------------- einsum

def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    """Einstein summation: repeated labels within an operand take diagonals, labels absent
    from the output are summed (reduce_sum) or contracted (dot_general, pairwise, smallest
    intermediate first), '...' broadcasts, and the implicit output is the sorted labels
    that appear once."""
    _no_out("einsum", out)
    if not isinstance(subscripts, str):
        subscripts, operands = _einsum_from_sublists(subscripts, operands)
    if not operands:
        raise ValueError("einsum: no operands were given")
    arrays, dtype, weak = _product_dtype("einsum", _arrays("einsum", *operands),
                                         preferred_element_type)
    arrays = [astype(x, dtype) for x in arrays]
    terms, output = _parse_einsum(subscripts, [x.ndim for x in arrays])
    sizes = _label_sizes(terms, arrays)
    ops = [_einsum_prepare(x, t, sizes) for x, t in zip(arrays, terms)]
    op = _einsum_contract(ops, output, sizes, precision)
    result = st.transpose(op.array, [op.labels.index(c) for c in output])
    return ew.convert_element_type(result, dtype, weak_type=weak) \
        if (result.dtype, result.weak_type) != (dtype, weak) else result


class _Labeled:
    """An einsum operand with one label per axis."""

    def __init__(self, array, labels):
        self.array, self.labels = array, list(labels)


_ELLIPSIS_LABELS = [chr(c) for c in range(0x3b1, 0x3c9)]  # Greek letters, never subscripts


def _parse_einsum(subscripts, ndims):
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"Number of einsum subscripts, {len(terms)}, must be equal to the "
                         f"number of operands, {len(ndims)}.")
    n_ell = builtins.max([nd - len(t.replace("...", "")) for t, nd in zip(terms, ndims)
                          if "..." in t], default=0)
    ell = _ELLIPSIS_LABELS[:builtins.max(n_ell, 0)]
    terms = [_expand_term(t, nd, ell, i) for i, (t, nd) in enumerate(zip(terms, ndims))]
    if arrow:
        output = _expand_output(rhs, ell, terms)
    else:
        counts = {c: builtins.sum(t.count(c) for t in terms) for t in terms for c in t}
        output = [c for c in ell if c in counts] + sorted(
            c for c, k in counts.items() if k == 1 and c not in ell)
    return terms, output


def _expand_term(term, ndim, ell, i):
    if "..." in term:
        before, _, after = term.partition("...")
        k = ndim - len(before) - len(after)
        if k < 0 or "." in before + after:
            raise ValueError(f"Einstein sum subscript '{term}' does not contain the correct "
                             f"number of indices for operand {i}.")
        labels = list(before) + ell[len(ell) - k:] + list(after)
    else:
        labels = list(term)
    if len(labels) != ndim:
        raise ValueError(f"Einstein sum subscript '{term}' does not contain the correct "
                         f"number of indices for operand {i}.")
    for c in labels:
        if c not in ell and not c.isalpha():
            raise ValueError(f"Character '{c}' is not a valid symbol in einsum subscripts.")
    return labels


def _expand_output(rhs, ell, terms):
    before, dots, after = rhs.partition("...")
    output = list(before) + (ell if dots else []) + list(after)
    seen = {c for t in terms for c in t}
    for c in output:
        if c not in seen:
            raise ValueError(f"Output character '{c}' did not appear in the input")
    if len(set(output)) != len(output):
        raise ValueError(f"Output subscripts '{rhs}' contain a repeated label")
    return [c for c in output if c not in ell or c in seen]


def _label_sizes(terms, arrays):
    sizes = {}
    for i, (t, x) in enumerate(zip(terms, arrays)):
        for c, d in zip(t, x.shape):
            prev = sizes.get(c, 1)
            if d != 1 and prev != 1 and d != prev:
                raise ValueError(f"Size of label '{c}' for operand {i} ({d}) does not match "
                                 f"previous terms ({prev}).")
            sizes[c] = builtins.max(prev, d) if prev != 0 and d != 0 else 0
    return sizes


def _einsum_prepare(x, labels, sizes):
    """Diagonals for repeated labels, then size-1 axes broadcast to the label's size."""
    labels = list(labels)
    for c in list(dict.fromkeys(labels)):
        while labels.count(c) > 1:
            i = labels.index(c)
            j = labels.index(c, i + 1)
            x = diagonal(x, 0, i, j)
            labels = [l for k, l in enumerate(labels) if k not in (i, j)] + [c]
    target = tuple(sizes[c] for c in labels)
    if x.shape != target:
        x = broadcast_to(x, target)
    return _Labeled(x, labels)


def _sum_labels(op, keep):
    """op with the axes whose labels are not in `keep` summed out."""
    axes = tuple(i for i, c in enumerate(op.labels) if c not in keep)
    if not axes:
        return op
    reducer = lax.reduce_or if op.array.dtype == _dt.bool_ else lax.reduce_sum
    return _Labeled(reducer(op.array, axes), [c for c in op.labels if c in keep])


def _einsum_contract(ops, output, sizes, precision):
    while len(ops) > 1:
        i, j = _cheapest_pair(ops, output, sizes)
        rest = [op for k, op in enumerate(ops) if k not in (i, j)]
        ops = rest + [_contract_pair(ops[i], ops[j], rest, output, precision)]
    return _sum_labels(ops[0], set(output))


def _needed(rest, output):
    return set(output).union(*(op.labels for op in rest))


def _cheapest_pair(ops, output, sizes):
    best = None
    for i in range(len(ops)):
        for j in range(i + 1, len(ops)):
            rest = [op for k, op in enumerate(ops) if k not in (i, j)]
            keep = _needed(rest, output)
            labels = set(ops[i].labels) ^ set(ops[j].labels) | (
                set(ops[i].labels) & set(ops[j].labels) & keep)
            cost = int(np.prod([sizes[c] for c in labels if c in keep], dtype=np.int64))
            if best is None or cost < best[0]:
                best = (cost, i, j)
    return best[1], best[2]


def _contract_pair(a, b, rest, output, precision):
    keep = _needed(rest, output)
    a = _sum_labels(a, keep | set(b.labels))
    b = _sum_labels(b, keep | set(a.labels))
    shared = [c for c in a.labels if c in b.labels]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    positions = lambda op, labels: tuple(op.labels.index(c) for c in labels)  # noqa: E731
    dims = ((positions(a, contract), positions(b, contract)),
            (positions(a, batch), positions(b, batch)))
    out = lax.dot_general(a.array, b.array, dims, precision=precision)
    labels = batch + [c for c in a.labels if c not in shared] + \
        [c for c in b.labels if c not in shared]
    return _Labeled(out, labels)


def _einsum_from_sublists(first, rest):
    """The interleaved form einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])."""
    args = (first,) + tuple(rest)
    out = args[-1] if len(args) % 2 else None
    args = args[:-1] if len(args) % 2 else args
    to_str = lambda sub: "".join("..." if s is Ellipsis else _sublist_char(s) for s in sub)
    spec = ",".join(map(to_str, args[1::2])) + ("" if out is None else "->" + to_str(out))
    return spec, args[0::2]


def _sublist_char(s):
    s = operator.index(s)
    if not 0 <= s < 52:
        raise ValueError(f"einsum sublist entries must be in [0, 52), got {s}")
    return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[s]


# ---------------------------------------------------------------- sorting and searching

def _sort_axis(name, a, axis, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")
    if axis is None:
        return ravel(a), 0
    return a, _axis(axis, a.ndim)


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """a sorted along axis (flattened when None); NaNs last."""
    a, = _arrays("sort", a)
    a, axis = _sort_axis("sort", a, axis, kind, order)
    out = lax.sort(a, axis, is_stable=stable)
    return st.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """The indices that sort a along axis (a stable sort of (a, iota) pairs)."""
    a, = _arrays("argsort", a)
    a, axis = _sort_axis("argsort", a, axis, kind, order)
    idx_dtype = _dt.default_int() if dtype is None else _user_dtype(dtype, "argsort")
    iota = st.broadcasted_iota(idx_dtype, a.shape, axis)
    if descending and stable:
        a, iota = st.rev(a, (axis,)), st.rev(iota, (axis,))
    _, indices = lax.sort_key_val(a, iota, axis, is_stable=stable)
    return st.rev(indices, (axis,)) if descending else indices


def lexsort(keys, axis=-1):
    """Indices sorting by the last key, then the one before, ... (stable)."""
    keys = _arrays("lexsort", *_sequence(keys))
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    if keys[0].ndim == 0:
        return _full((), 0, _dt.default_int())
    axis = _axis(axis, keys[0].ndim)
    iota = st.broadcasted_iota(_dt.default_int(), keys[0].shape, axis)
    return lax.sort((*keys[::-1], iota), axis, num_keys=len(keys))[-1]


def msort(a):
    """a sorted along axis 0."""
    return sort(a, axis=0)


def sort_complex(a):
    """a sorted (lexicographically by real, then imaginary part) as complex."""
    a, = _arrays("sort_complex", a)
    return astype(sort(a), _dt.default_complex() if _dt.kind(a.dtype) != "c" else a.dtype)


def _nan_last_less(x, y, inclusive):
    """x < y (x <= y) in sort order: NaNs after every number."""
    if not _dt.is_inexact(x.dtype):
        return (less_equal if inclusive else less)(x, y)
    x_nan, y_nan = isnan(x), isnan(y)
    base = (less_equal if inclusive else less)(x, y)
    if inclusive:
        return logical_or(base, y_nan)
    return logical_or(base, logical_and(logical_not(x_nan), y_nan))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion indices of v into the sorted 1-d a (counting a's elements before each v:
    an all-pairs comparison, any method argument)."""
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"invalid argument method={method!r}, expected one of 'scan', "
                         "'scan_unrolled', 'sort' or 'compare_all'")
    a, v = _arrays("searchsorted", a, v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = take(a, sorter)
    a, v = _promote_dtypes(a, v)
    n = a.shape[0]
    a_b = st.broadcast_in_dim(a, v.shape + (n,), (v.ndim,))
    v_b = st.broadcast_in_dim(v, v.shape + (n,), tuple(range(v.ndim)))
    before = _nan_last_less(a_b, v_b, inclusive=side == "right")
    return sum(before, -1, dtype=_dt.default_int()) if n else zeros(v.shape, _dt.default_int())


def digitize(x, bins, right=False, *, method=None):
    """The indices of the bins (monotonic 1-d) to which each x belongs."""
    x, bins = _arrays("digitize", x, bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return zeros_like(x, dtype=_dt.int32)
    side = "left" if right else "right"
    increasing = searchsorted(bins, x, side=side)
    decreasing = subtract(bins.shape[0], searchsorted(flip(bins), x,
                                                      side="right" if right else "left"))
    return where(greater_equal(bins[-1], bins[0]), increasing, decreasing)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique elements (concrete arrays only; refjax has no traced variant)."""
    ar, = _arrays("unique", ar)
    if size is not None:
        raise NotImplementedError("refjax.numpy.unique does not support `size`")
    value = _concrete_value(ar, "The error arose for the first argument of jnp.unique(). "
                                "Use the size argument (not supported by refjax) or call "
                                "it outside transformations.")
    res = np.unique(value, return_index=return_index, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    if not isinstance(res, tuple):
        return _concrete(res.astype(value.dtype))
    first, *rest = res
    return (_concrete(first.astype(value.dtype)),
            *(_concrete(r.astype(_dt.default_int())) for r in rest))


def unique_values(x, /):
    """Array-API unique values."""
    return unique(x)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element is in test_elements (an all-pairs comparison)."""
    element, test_elements = _arrays("isin", element, test_elements)
    tests = ravel(test_elements)
    e_b = st.broadcast_in_dim(element, element.shape + tests.shape, tuple(range(element.ndim)))
    t_b = st.broadcast_in_dim(tests, element.shape + tests.shape, (element.ndim,))
    found = any(equal(e_b, t_b), -1)
    return logical_not(found) if invert else found


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative int in x; `length` makes it
    traceable, else x must be concrete."""
    x, = _arrays("bincount", x)
    if not _dt.is_int(x.dtype):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    if length is None:
        value = _concrete_value(x, "The error occurred because of argument 'x' of "
                                   "jnp.bincount. To avoid this error, pass a static `length`.")
        length = builtins.max(int(minlength), int(value.max(initial=-1)) + 1)
    length = _static_int(length, "length argument of jnp.bincount")
    hot = ew.eq(st.broadcast_in_dim(x, (length,) + x.shape, (1,)),
                st.broadcasted_iota(x.dtype, (length,) + x.shape, 0))
    if weights is None:
        return sum(hot, -1, dtype=_dt.default_int())
    w, = _arrays("bincount", weights)
    w = broadcast_to(w, x.shape)
    return sum(where(hot, st.broadcast_in_dim(w, (length,) + x.shape, (1,)), 0), -1)


# ---------------------------------------------------------------- comparisons and misc maths

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise (equal infinities are close)."""
    a, b = _promote_dtypes(*_check_args("isclose", a, b))
    if not _dt.is_inexact(result_type(a, b)):
        return equal(a, b)
    a, b = _promote_to_inexact(a, b)
    a, b = _broadcast_all(asarray(a), asarray(b))
    real = _real_dtype(a.dtype)
    rtol_ = broadcast_to(astype(asarray(rtol), real), a.shape)
    atol_ = broadcast_to(astype(asarray(atol), real), a.shape)
    in_range = ew.le(ew.abs(ew.sub(a, b)), ew.add(atol_, ew.mul(rtol_, ew.abs(b))))
    out = logical_or(ew.eq(a, b), logical_and(isfinite(b), in_range))
    return logical_or(out, logical_and(isnan(a), isnan(b))) if equal_nan else out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close (an Array, as in JAX)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether the arrays have one shape and equal elements."""
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    """Whether the arrays broadcast to one shape with equal elements."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        return all(equal(a1, a2))
    except ValueError:
        return asarray(False)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """x with NaN, +inf and -inf replaced (by 0, the largest and the smallest finite)."""
    x, = _arrays("nan_to_num", x)
    if not _dt.is_inexact(x.dtype):
        return x
    if _dt.kind(x.dtype) == "c":
        parts = [nan_to_num(f(x), nan=nan, posinf=posinf, neginf=neginf)
                 for f in (ew.real, ew.imag)]
        return add(parts[0], multiply(parts[1], _full((), 1j, x.dtype)))
    info = _dt.finfo(x.dtype)
    out = where(isnan(x), astype(asarray(nan), x.dtype), x)
    out = where(isposinf(out), astype(asarray(info.max if posinf is None else posinf), x.dtype),
                out)
    return where(isneginf(out), astype(asarray(info.min if neginf is None else neginf), x.dtype),
                 out)


def heaviside(x1, x2, /):
    """0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0."""
    x1, x2 = (asarray(x) for x in _promote_to_inexact(*_check_args("heaviside", x1, x2)))
    zero, one = _lax_const(x1, 0), _lax_const(x1, 1)
    inner = where(isnan(x1), x1, x2)
    return where(ew.lt(x1, zero), zero, where(ew.gt(x1, zero), one, inner))


def _logaddexp_impl(x1, x2, exp_fn, scale):
    if _dt.kind(x1.dtype) != "f":
        raise ValueError(f"logaddexp requires real floating-point inputs in refjax; got "
                         f"{x1.dtype}")
    amax = ew.max(x1, x2)
    delta = ew.sub(x1, x2)
    softplus = ew.log1p(exp_fn(ew.neg(ew.abs(delta))))
    if scale != 1:
        softplus = ew.mul(softplus, ew._const(softplus, scale))
    return _select(isnan(delta), ew.add(x1, x2), ew.add(amax, softplus))


def _replace_inf(x):
    return _select(isposinf(x), zeros_like(x), x)


def _logaddexp_rule(exp_fn, scale):
    """JAX's JVP of logaddexp: t1 * exp(x1 - out) + t2 * exp(x2 - out) (in base 2 for
    logaddexp2), with +inf replaced by 0 so that equal infinities give no NaN."""
    from ..core.transforms.custom import custom_jvp

    @custom_jvp
    def fn(x1, x2):
        return _logaddexp_impl(x1, x2, exp_fn, scale)

    @fn.defjvp
    def _jvp(primals, tangents):
        (x1, x2), (t1, t2) = primals, tangents
        out = fn(x1, x2)
        w1 = exp_fn(ew.sub(_replace_inf(x1), _replace_inf(out)))
        w2 = exp_fn(ew.sub(_replace_inf(x2), _replace_inf(out)))
        return out, ew.add(ew.mul(t1, w1), ew.mul(t2, w2))
    return fn


_logaddexp_e = _logaddexp_rule(ew.exp, 1)
_logaddexp_2 = _logaddexp_rule(ew.exp2, 1 / np.log(2))


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in _promote_to_inexact(
        *_check_args("logaddexp", x1, x2))))
    return _logaddexp_e(x1, x2)


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2) without overflow."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in _promote_to_inexact(
        *_check_args("logaddexp2", x1, x2))))
    return _logaddexp_2(x1, x2)


def hypot(x1, x2, /):
    """sqrt(x1**2 + x2**2) without intermediate overflow."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in _promote_to_inexact(
        *_check_args("hypot", x1, x2))))
    if _dt.kind(x1.dtype) == "c":
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    x1, x2 = ew.abs(x1), ew.abs(x2)
    is_inf = logical_or(isposinf(x1), isposinf(x2))
    big, small = ew.max(x1, x2), ew.min(x1, x2)
    zero = ew.eq(big, _const_like(big, 0))
    ratio = ew.div(small, _select(zero, _const_like(big, 1), big))
    r = _select(zero, big, ew.mul(big, ew.sqrt(ew.add(_const_like(big, 1),
                                                       ew.integer_pow(ratio, 2)))))
    return _select(is_inf, _lax_const(r, np.inf), r)


def copysign(x1, x2, /):
    """|x1| with the sign of x2."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in _promote_to_inexact(
        *_check_args("copysign", x1, x2))))
    if _dt.kind(x1.dtype) == "c":
        raise TypeError("copysign does not support complex-valued inputs")
    return _select(signbit(x2), ew.neg(ew.abs(x1)), ew.abs(x1))


def sinc(x, /):
    """sin(pi x) / (pi x), 1 at 0."""
    x, = _promote_to_inexact(*_check_args("sinc", x))
    x = asarray(x)
    is_zero = ew.eq(x, _lax_const(x, 0))
    pi_x = ew.mul(_lax_const(x, np.pi), x)
    safe = _select(is_zero, _lax_const(x, 1), pi_x)
    # The zero branch is x * 0 + 1, so its derivative at 0 is the true one (0), not NaN.
    at_zero = ew.add(ew.mul(pi_x, _lax_const(x, 0)), _lax_const(x, 1))
    return _select(is_zero, at_zero, ew.div(ew.sin(safe), safe))


def fmax(x1, x2):
    """Elementwise maximum ignoring NaNs."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in _promote_dtypes(*_check_args("fmax", x1, x2))))
    return where(logical_or(_complex_ordered(ew.gt)(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2):
    """Elementwise minimum ignoring NaNs."""
    x1, x2 = _broadcast_all(*(asarray(x) for x in _promote_dtypes(*_check_args("fmin", x1, x2))))
    return where(logical_or(_complex_ordered(ew.lt)(x1, x2), isnan(x2)), x1, x2)


def divmod(x1, x2, /):
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    return floor_divide(x1, x2), remainder(x1, x2)


def modf(x, /, out=None):
    """The fractional and integral parts of x."""
    _no_out("modf", out)
    whole = trunc(_promote_to_inexact(*_check_args("modf", x))[0])
    return subtract(x, whole), whole


def angle(z, deg=False):
    """The argument of complex z (in degrees when deg); float32 for integer z."""
    z, = _arrays("angle", z)
    re, im = real(z), imag(z)
    if not _dt.is_inexact(re.dtype) or (_dt.kind(z.dtype) == "f" and z.ndim == 0):
        re, im = astype(re, _dt.default_float()), astype(im, _dt.default_float())
    out = ew.atan2(im, re)
    return rad2deg(out) if deg else out


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along axis (not_equal for booleans)."""
    arr, = _arrays("diff", a)
    n = _static_int(n, "'n' argument of jnp.diff")
    axis = _static_int(axis, "'axis' argument of jnp.diff")
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = _axis(axis, arr.ndim)
    parts = [_diff_edge(prepend, arr, axis), arr, _diff_edge(append, arr, axis)]
    parts = [p for p in parts if p is not None]
    arr = concatenate(parts, axis) if len(parts) > 1 else arr
    op = not_equal if arr.dtype == _dt.bool_ else subtract
    for _ in range(n):
        size = arr.shape[axis]
        arr = op(st.slice_in_dim(arr, 1, builtins.max(size, 1), 1, axis),
                 st.slice_in_dim(arr, 0, builtins.max(size - 1, 0), 1, axis))
    return arr


def _diff_edge(value, arr, axis):
    if value is None:
        return None
    value, = _arrays("diff", value)
    return broadcast_to(value, _with(arr.shape, axis, 1)) if value.ndim == 0 else value


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array."""
    ary, = _arrays("ediff1d", ary)
    flat = ravel(ary)
    out = subtract(flat[1:], flat[:-1]) if flat.size else flat
    parts = [ravel(asarray(to_begin))] if to_begin is not None else []
    parts += [out] + ([ravel(asarray(to_end))] if to_end is not None else [])
    return concatenate(parts) if len(parts) > 1 else out


def _windows(x, m):
    """(len(x) - m + 1, m) sliding windows of the 1-d x: the rows of x repeated, flattened
    and re-cut with one extra column so row k starts at element k."""
    length = x.shape[0]
    count = length - m + 1
    rows = st.broadcast_in_dim(x, (count, length), (1,))
    flat = st.pad(st.reshape(rows, (count * length,)), _zero_scalar(x), [(0, count, 0)])
    return st.slice_in_dim(st.reshape(flat, (count, length + 1)), 0, m, 1, 1)


def _correlate_valid(x, y, precision, pet):
    return dot(_windows(x, y.shape[0]), y, precision=precision, preferred_element_type=pet)


def _conv(name, a, v, mode, precision, preferred_element_type):
    a, v = _arrays(name, a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    a, v = (_promote_to_inexact if preferred_element_type is None else _promote_dtypes)(a, v)
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}.")
    reverse = False
    if name == "correlate":
        v = conj(v)
        if a.shape[0] < v.shape[0]:
            a, v, reverse = v, a, True
    else:
        if a.shape[0] < v.shape[0]:
            a, v = v, a
        v = flip(v)
    m = v.shape[0]
    pads = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}
    if mode not in pads:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    a = st.pad(a, _zero_scalar(a), [pads[mode] + (0,)])
    out = _correlate_valid(a, v, precision, preferred_element_type)
    return flip(out) if reverse else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of 1-d arrays."""
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of 1-d arrays."""
    return _conv("correlate", a, v, mode, precision, preferred_element_type)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of (xp, fp) at x."""
    x, xp, fp = _arrays("interp", x, xp, fp)
    if xp.shape != fp.shape or xp.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = _promote_to_inexact(x, xp)
    fp, = _promote_to_inexact(fp)
    if _dt.kind(x.dtype) == "c":
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        period = absolute(asarray(period))
        x, xp = remainder(x, period), remainder(xp, period)
        xp, fp = lax.sort_key_val(xp, fp, 0)
        xp = concatenate([subtract(xp[-1:], period), xp, add(xp[:1], period)])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    i = clip(searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    fp_hi, fp_lo = take(fp, i), take(fp, subtract(i, 1))
    xp_hi, xp_lo = take(xp, i), take(xp, subtract(i, 1))
    dx = subtract(xp_hi, xp_lo)
    dx0 = less_equal(absolute(dx), np.spacing(_dt.finfo(xp.dtype).eps))
    f = where(dx0, fp_lo, add(fp_lo, multiply(divide(subtract(x, xp_lo), where(dx0, 1, dx)),
                                              subtract(fp_hi, fp_lo))))
    return _interp_edges(f, x, xp, fp, left, right, period)


def _interp_edges(f, x, xp, fp, left, right, period):
    for value, side, edge, test in ((left, "left", 0, less), (right, "right", -1, greater)):
        if isinstance(value, str):
            if value != "extrapolate":
                raise ValueError(f"the only valid string value of `{side}` is 'extrapolate', "
                                 f"but got: {value!r}")
            continue
        if period is None:
            f = where(test(x, xp[edge]), fp[edge] if value is None else value, f)
    return f


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y along axis by the trapezoidal rule."""
    if x is None:
        y, = _promote_to_inexact(*_arrays("trapezoid", y))
        dx_arr = asarray(dx)
        if dx_arr.ndim > 0:
            dx_arr = _move_to_end(reshape(dx_arr, (1,) * (y.ndim - dx_arr.ndim) + dx_arr.shape),
                                  axis)
    else:
        y, x = _promote_to_inexact(*_arrays("trapezoid", y, x))
        dx_arr = diff(x) if x.ndim == 1 else _move_to_end(diff(x, axis=axis), axis)
    y = _move_to_end(y, axis)
    if dx_arr.ndim == 0 or dx_arr.shape[-1] == 1:
        d = dx_arr if dx_arr.ndim == 0 else dx_arr[..., 0]
        return multiply(d, subtract(sum(y, -1), multiply(0.5, add(y[..., 0], y[..., -1]))))
    return multiply(0.5, sum(multiply(dx_arr, add(y[..., 1:], y[..., :-1])), -1))


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients p (highest degree first) at x (Horner's rule)."""
    p, x = _promote_dtypes(*_arrays("polyval", p, x))
    y = zeros_like(x, shape=broadcast_shapes(p.shape[1:], x.shape))
    for i in range(p.shape[0]):
        y = add(multiply(y, x), p[i])
    return y


def iscomplexobj(x):
    """Whether x has a complex dtype."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dt = getattr(x, "dtype", None)
    return _dt.kind(dt if dt is not None else asarray(x).dtype) == "c"


def isrealobj(x):
    """Whether x does not have a complex dtype."""
    return not iscomplexobj(x)


def iscomplex(x):
    """Elementwise: a non-zero imaginary part."""
    x, = _arrays("iscomplex", x)
    return ew.ne(imag(x), _const_like(imag(x), 0))


def isreal(x):
    """Elementwise: a zero imaginary part."""
    x, = _arrays("isreal", x)
    return ew.eq(imag(x), _const_like(imag(x), 0))


def isscalar(element):
    """Whether element is a scalar: a Python or NumPy scalar, or a 0-d array."""
    if np.isscalar(element):
        return True
    if isinstance(element, np.ndarray) or _is_array(element):
        return element.ndim == 0
    return False


def can_cast(from_, to, casting="safe"):
    """NumPy's can_cast on dtypes (of arrays, too)."""
    source = from_.dtype if hasattr(from_, "dtype") and not isinstance(from_, type) else from_
    return bool(np.can_cast(np.dtype(source), np.dtype(to), casting))


def isdtype(dtype, kind):
    """Array-API dtype kind test ('bool', 'signed integer', 'integral', 'real floating',
    'complex floating', 'numeric', or dtypes)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    d = np.dtype(dtype)
    table = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
             "real floating": "f", "complex floating": "c", "numeric": "iufc"}
    return builtins.any(_dt.kind(d) in table[k] if isinstance(k, str) else d == np.dtype(k)
                        for k in kinds)


# ---------------------------------------------------------------- jnp.linalg (the parts built
# from products and reductions; factorizations are not implemented)

def _vector_norm(x, axis=None, keepdims=False, ord=2):
    """Vector p-norms (ord 2, 1, inf, -inf, 0 or any p) over axis (all axes when None)."""
    x, = _promote_to_inexact(*_arrays("vector_norm", x))
    absx = absolute(x)
    if ord is None or ord == 2:
        sq = multiply(absx, absx) if _dt.kind(x.dtype) == "c" else ew.integer_pow(x, 2)
        return ew.sqrt(sum(sq, axis, keepdims=keepdims))
    if ord == np.inf:
        return max(absx, axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(absx, axis, keepdims=keepdims)
    if ord == 0:
        return sum(astype(ew.ne(x, _const_like(x, 0)), absx.dtype), axis, keepdims=keepdims)
    if ord == 1:
        return sum(absx, axis, keepdims=keepdims)
    p = float(ord)
    return power(sum(power(absx, p), axis, keepdims=keepdims), 1.0 / p)


def _matrix_norm(x, axis=(-2, -1), keepdims=False, ord="fro"):
    """Matrix norms 'fro', 1, -1, inf, -inf over the two axes."""
    x, = _promote_to_inexact(*_arrays("matrix_norm", x))
    row, col = (_axis(a, x.ndim) for a in axis)
    absx = absolute(x)
    if ord in ("fro", "f", None):
        return _vector_norm(x, (row, col), keepdims)
    if ord in (1, -1):
        sums = sum(absx, row, keepdims=True)
        out = (max if ord == 1 else min)(sums, col, keepdims=True)
    elif ord in (np.inf, -np.inf):
        sums = sum(absx, col, keepdims=True)
        out = (max if ord == np.inf else min)(sums, row, keepdims=True)
    else:
        raise NotImplementedError(f"refjax.numpy.linalg.norm: ord={ord!r} needs an SVD, which "
                                  "refjax does not implement")
    return out if keepdims else squeeze(out, (row, col))


def _norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as numpy.linalg.norm."""
    x, = _arrays("norm", x)
    if axis is None:
        if ord is None:
            return _vector_norm(ravel(x), keepdims=False) if not keepdims else reshape(
                _vector_norm(ravel(x)), (1,) * x.ndim)
        axis = tuple(range(x.ndim))
    axes = _axes(axis, x.ndim, allow_none=False)
    if len(axes) == 1:
        return _vector_norm(x, axes, keepdims, 2 if ord is None else ord)
    if len(axes) == 2:
        return _matrix_norm(x, axes, keepdims, "fro" if ord is None else ord)
    raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")


def _make_linalg():
    import types
    mod = types.ModuleType("refjax.numpy.linalg", "jnp.linalg: norms and products "
                           "(no factorizations)")
    mod.norm, mod.vector_norm, mod.matrix_norm = _norm, _vector_norm, _matrix_norm
    mod.matmul, mod.tensordot, mod.outer, mod.vecdot, mod.trace, mod.diagonal = (
        matmul, tensordot, lambda a, b: outer(a, b), vecdot, trace,
        lambda x, offset=0: diagonal(x, offset, -2, -1))
    mod.matrix_transpose = matrix_transpose
    mod.cross = lambda a, b, axis=-1: cross(a, b, axis=axis)
    return mod


linalg = _make_linalg()
