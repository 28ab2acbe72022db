"""Scalar types, asarray/astype, dtype promotion, broadcasting, argument helpers, basic reshapes."""
import builtins
import operator
import warnings

import numpy as np

from ...core import dtypes as _dt
from ...core.array import Array, BaseArray
from ...core.avals import ShapedArray
from ...core.config import config
from ...core.errors import ConcretizationTypeError, naming_errors
from ...core.trace import Tracer, get_aval
from ...core.primitives import elementwise as ew
from ...core.primitives import structural as st
from ...core.transforms.jit import jit


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
ndarray = BaseArray  # jnp.ndarray is jax.Array
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
    """The number of elements of x (along an axis or a sequence of distinct axes)."""
    s = shape(x)
    if axis is None or not isinstance(axis, (tuple, list)):
        return int(np.prod(s)) if axis is None else s[axis]
    axes = tuple(_axis(a, len(s), "size") for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis: {axes}")
    return int(np.prod([s[a] for a in axes]))


# ---------------------------------------------------------------- asarray and astype

_NONE_VALUE = "None is not a valid value for jnp.array"


def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    """An Array from a(n) Array, tracer, NumPy array, Python scalar or nested sequence,
    placed as `device=` or `out_sharding=` ask (see api/out_sharding.py)."""
    out = _asarray(a, dtype)
    if device is None and out_sharding is None:
        return out
    from ..out_sharding import place_as
    return place_as("jnp.array", out, device, out_sharding)


def _asarray(a, dtype, name="asarray"):
    if _is_array(a):
        return a if dtype is None else _astype(a, dtype, name)
    if _dt.is_python_scalar(a) and type(a) is not bool:
        target = _dt.explicit_dtype(dtype, name) if dtype is not None else \
            _dt.python_scalar_dtype(a)
        return ew.weak_scalar(a, target) if dtype is None else concrete(np.asarray(a, target))
    if isinstance(a, (list, tuple)) and _contains_traced(a):
        target = result_type(*_leaves(a)) if dtype is None else _dt.explicit_dtype(dtype, name)
        return _joined(a, target)  # never weakly typed
    if a is None:
        raise ValueError(_NONE_VALUE)
    value = _numpy_value(a, dtype)
    if value.dtype == object and builtins.any(v is None for v in value.flat):
        raise ValueError(_NONE_VALUE)
    if value.dtype == object and builtins.any(type(v) is int for v in value.flat):
        raise OverflowError(f"Python int too large to convert to an array element (beyond "
                            f"64 bits) in {a!r}")
    if value.dtype == object:
        raise TypeError(f"jnp.asarray: cannot convert {a!r} of type {type(a).__name__} "
                        "to a JAX array")
    if value.dtype.kind in "USO":
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {value.dtype}")
    target = _dt.canonicalize_dtype(value.dtype) if dtype is None else \
        _dt.explicit_dtype(dtype, name)
    return concrete(value.astype(target, copy=False))


def _joined(seq, dtype):
    """A sequence holding arrays as JAX's jnp.array builds it: each element converted to
    dtype (not weak), given a leading dimension by a broadcast, and concatenated (in groups
    of 16 first, as JAX's)."""
    parts = [_leading_dim(_joined(x, dtype) if isinstance(x, (list, tuple))
                          and _contains_traced(x) else _asarray(x, dtype), dtype) for x in seq]
    while len(parts) > 16:
        parts = [st.concatenate(parts[i:i + 16], 0) for i in range(0, len(parts), 16)]
    return st.concatenate(parts, 0)


def _leading_dim(x, dtype):
    x = ew.convert_element_type(x, dtype, weak_type=False)
    return st.broadcast_in_dim(x, (1, *x.shape), tuple(range(1, x.ndim + 1)))


def _leaves(seq):
    return [y for x in seq for y in (_leaves(x) if isinstance(x, (list, tuple)) else [x])]


def _contains_traced(seq):
    return builtins.any(_is_array(x) or (isinstance(x, (list, tuple)) and _contains_traced(x))
                        for x in seq)


def concrete(value):
    from ...backends.base import make_array
    return make_array(value, ShapedArray(value.shape, value.dtype))


def array(object, dtype=None, *args, copy=True, order="K", ndmin=0, device=None,
          out_sharding=None):
    """Like asarray; `ndmin` prepends dimensions."""
    if args:
        copy, order, ndmin = _positional_array_args(args, copy, order, ndmin)
    if copy and isinstance(object, BaseArray):
        # JAX's copy: a new array, on the default device when `object` is uncommitted
        object = st.copy(object)
    out = _asarray(object, dtype, "array")
    if ndmin > out.ndim:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    if device is None and out_sharding is None:
        return out
    from ..out_sharding import place_as
    return place_as("jnp.array", out, device, out_sharding)


def _positional_array_args(args, copy, order, ndmin):
    """jnp.array's copy, order and ndmin given positionally: accepted with JAX 0.10's
    deprecation warning and errors."""
    if len(args) > 3:
        raise TypeError(f"array() takes at most 5 positional arguments but {len(args) + 2} "
                        "were given")
    given, defaults = [copy, order, ndmin], [True, "K", 0]
    for i, name in enumerate(["copy", "order", "ndmin"][:len(args)]):
        if given[i] != defaults[i]:
            raise TypeError(f"array() got multiple values for argument '{name}'")
    warnings.warn("Passing the copy, order, and ndmin arguments to jnp.array positionally is "
                  "deprecated. Use keyword arguments instead.", DeprecationWarning, stacklevel=3)
    return (list(args) + given[len(args):])[:3]


def _numpy_value(a, dtype):
    """np.asarray(a, dtype), with a clear error for ragged nested sequences (JAX leaks
    NumPy's 'setting an array element with a sequence')."""
    try:
        return np.asarray(a) if dtype is None else np.asarray(a, _dt.canonicalize_dtype(dtype))
    except ValueError as e:
        if "inhomogeneous" not in str(e) and "sequence" not in str(e):
            raise
        raise ValueError(f"jnp.array: the nested sequences are ragged (every level must have "
                         f"one length): {a!r} cannot become an array") from None


def astype(x, dtype, copy=False, device=None):
    """x converted to dtype (committed to `device` when given, under jit too, as JAX's)."""
    out = _astype(x, dtype)
    if device is None:
        return out
    from ..out_sharding import place_as
    return place_as("astype", out, device, None)


def _astype(x, dtype, name="astype"):
    x = asarray(x)
    dtype = _dt.explicit_dtype(dtype, name)
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
            pairs.append((_dtype_arg(a), False))
        else:
            pairs.append(_dtype_weak(a))
    dtype, weak = _dt.result_type_of(pairs)
    return (dtype, weak) if return_weak_type_flag else dtype


def _dtype_arg(a):
    """A dtype argument of result_type: a 64-bit one with x64 off warns as JAX's ("requested
    in dtype"), but from the user's line (JAX's points into its dtypes.py); jnp's scalar types
    name their dtype silently, as JAX's."""
    return np.dtype(a) if isinstance(a, _ScalarMeta) else _dt.explicit_dtype(a, "dtype")


def promote_dtypes(*args):
    """Convert operands to their common dtype (keeping Python scalars as weak literals)."""
    dtype, weak = result_type(*args, return_weak_type_flag=True)
    return [_convert(a, dtype, weak) for a in args]


def _convert(a, dtype, weak):
    if _dt.is_python_scalar(a):
        value = _wrap_int(a, dtype)
        return ew.weak_scalar(value, dtype) if weak else concrete(np.asarray(value, dtype))
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
    dtype = _dt.to_inexact_dtype(dtype)
    return [_convert(a, dtype, weak) for a in args]


def broadcast_shapes(*shapes, name=None):
    """NumPy broadcasting of shapes; ValueError (naming jnp.`name`) when incompatible."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        listed = [tuple(s) for s in shapes]
        where = f"{name}: " if name else ""
        raise ValueError(f"{where}Incompatible shapes for broadcasting: shapes={listed}") from None


def broadcast_to(x, shape, *, out_sharding=None):
    """x broadcast to shape with NumPy's rules (laid out and typed as out_sharding)."""
    x = asarray(x)
    shape = st.static_ints("broadcast_to",
                           shape if isinstance(shape, (tuple, list)) else (shape,))
    xs = x.shape
    if xs == shape and out_sharding is None:
        return x
    nd = len(shape)
    if len(xs) > nd:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={xs} "
                         f"shape={shape}")
    if builtins.any(a != 1 and a != b for a, b in zip(xs[::-1], shape[::-1])):
        raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested shape {shape}")
    lead = nd - len(xs)  # size-1 dimensions broadcast in place, as JAX's lax.broadcast_to
    return st.broadcast_in_dim(x, shape, tuple(range(lead, nd)), out_sharding=out_sharding)


def _broadcast_args(*args, name=None):
    """The operands of the elementwise jnp.`name` broadcast together. When they do not, JAX's
    classes: ValueError for operands of different ranks (jnp's rank promotion fails),
    TypeError for one rank (the lax operation fails); both name the operation."""
    shapes = [np.shape(a) if _dt.is_python_scalar(a) else tuple(get_aval(a).shape) for a in args]
    if len({len(s) for s in shapes if s}) > 1:
        _rank_promotion(name, shapes)
    try:
        full = broadcast_shapes(*shapes, name=name)
    except ValueError:
        if len({len(s) for s in shapes if s != ()}) > 1:
            raise
        raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                        f"{', '.join(map(str, shapes))}.") from None
    if len({len(s) for s in shapes if s}) < 2:
        return list(args)  # lax broadcasts scalars and dimensions of size 1 itself, as JAX's
    return [_to_rank(a, s, len(full)) for a, s in zip(args, shapes)]


def _to_rank(x, shape, rank):
    """x with leading dimensions of size 1 up to `rank` (JAX's lax.broadcast_to_rank)."""
    lead = rank - len(shape)
    if not lead:
        return x
    return st.broadcast_in_dim(asarray(x), (1,) * lead + shape, tuple(range(lead, rank)))


def _rank_promotion(name, shapes):
    """jax_numpy_rank_promotion: operands of different ranks warn or raise, as in JAX."""
    mode = config.read("jax_numpy_rank_promotion")
    if mode == "allow":
        return
    listed = " ".join(map(str, shapes))
    link = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"
    if mode == "raise":
        raise ValueError(f"Operands could not be broadcast together for {name} on shapes "
                         f"{listed} and with the config option jax_numpy_rank_promotion='raise'. "
                         f"For more information, see {link}.")
    warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes {listed}. "
                  "Set the jax_numpy_rank_promotion config option to 'allow' to disable this "
                  f"warning; for more information, see {link}.", stacklevel=4)


def staged_as(name, **jit_options):
    """A decorator putting a jnp function in a jit of its own named `name`, as JAX stages its
    jnp function `name`: one `jit[name=...]` equation in jaxprs, traced once per signature."""
    def wrap(fun):
        fun.__name__ = fun.__qualname__ = name
        if not name.startswith("_"):  # its errors name it, as name_errors_in does for the rest
            fun = naming_errors(fun, f"jnp.{name}")
        return jit(fun, **jit_options)
    return wrap


def _broadcast_all(*arrays, name=None):
    shape = broadcast_shapes(*(a.shape for a in arrays), name=name)
    return [broadcast_to(a, shape) for a in arrays]


@staged_as("_where")  # one staged call however many broadcasts it holds, as in JAX
def _where(condition, x, y):
    """jnp.where(condition, x, y) on array-likes (JAX's _where)."""
    condition = asarray(condition)
    if condition.dtype != _dt.bool_:
        condition = ew.ne(condition, _scalar_like(condition, 0))
    x, y = promote_dtypes(x, y)
    if condition.ndim == 0:  # select takes a scalar condition as it is
        x, y = _broadcast_all(x, y, name="where")
    else:
        condition, x, y = _broadcast_all(condition, x, y, name="where")
    return ew.select_n(condition, y, x)


def _scalar_like(x, value):
    """value as a 0-d constant of x's dtype, weakly typed when x is (JAX's lax._zero and
    friends): a concrete value, written inline when staged."""
    aval = get_aval(x)
    return ew.weak_scalar(value, aval.dtype) if aval.weak_type else np.array(value, aval.dtype)


def _lax_scalar(x, value):
    """JAX's lax._const: value as a 0-d constant of x's dtype (written inline when staged),
    weakly typed only when x is a weakly typed scalar."""
    aval = get_aval(x)
    if aval.weak_type and not aval.shape:
        return ew.weak_scalar(value, aval.dtype)
    return np.array(value, aval.dtype)


def _check_args(name, *args, checked_ints=True):
    """args of jnp.`name` as arrays, tracers or Python scalars (TypeError naming `name` for
    anything else; OverflowError for a Python int outside the default int's range, unless
    `checked_ints` is False: the caller converts it to an explicit dtype)."""
    _refuse_float0_and_keys(name, args)
    out = []
    for a in args:
        if checked_ints and type(a) is int:
            _dt.check_python_int(a, name)
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


_FLOAT0_MESSAGE = (
    "Called {} with a float0 array. float0s do not support any operations by design because "
    "they are not compatible with non-trivial vector spaces. No implicit dtype conversion is "
    "done. You can use np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular "
    "zeros array. \nIf you didn't expect to get a float0 you might have accidentally taken a "
    "gradient with respect to an integer argument.")
# lax's names, which JAX's errors use when every operand is of one key dtype
_LAX_NAMES = {"negative": "neg", "multiply": "mul", "subtract": "sub", "divide": "div",
              "true_divide": "div", "power": "pow", "absolute": "abs"}


def _arg_dtype(a):
    return _dt.python_scalar_dtype(a) if _dt.is_python_scalar(a) else getattr(a, "dtype", None)


def _refuse_float0_and_keys(name, args):
    """TypeError in JAX's words for float0 operands and typed PRNG keys (whose dtypes read
    key<...>) given to jnp.`name`: JAX's jnp checks, then its lax dtype check."""
    own = [getattr(a, "dtype", None) for a in args]
    if any(isinstance(d, np.dtype) and d == _dt.float0 for d in own):
        raise TypeError(_FLOAT0_MESSAGE.format(name))
    if not any(_dt.is_key_dtype(d) for d in own):
        return
    dts = [_arg_dtype(a) for a in args]
    if len(set(map(str, dts))) > 1:
        raise TypeError(f"{name} does not accept dtypes {', '.join(map(str, dts))}.")
    where = " at position 0" if len(dts) > 1 else ""
    raise TypeError(f"{_LAX_NAMES.get(name, name)} does not accept dtype {dts[0]}{where}.")


def _promote_to_numeric(*args):
    """Common dtype, with bool promoted to int32 (JAX's promote_args_numeric, x64 or not)."""
    dtype, weak = result_type(*args, return_weak_type_flag=True)
    if dtype == _dt.bool_:
        dtype = _dt.int32
    return [_convert(a, dtype, weak) for a in args]


def _lax_const(x, value):
    """A constant of x's dtype, weakly typed only when x is a weakly typed scalar (as JAX's
    lax._const: other weak operands come out strong after meeting it)."""
    out = lax_full(x.shape, value, x.dtype)
    return ew.convert_element_type(out, x.dtype, weak_type=True) if x.weak_type and x.ndim == 0 \
        else out


def _strong_const(x, value):
    """A strongly typed 0-d constant of x's dtype (JAX's _constant_like: a NumPy scalar,
    written inline when staged)."""
    return np.array(value, get_aval(x).dtype)


def _zeros_of(x):
    return ew.full(get_aval(x).shape, 0, get_aval(x).dtype)


def _ones_of(x):
    return ew.full(get_aval(x).shape, 1, get_aval(x).dtype)


# ---------------------------------------------------------------- reshape, transpose, stack

def reshape(a, shape=None, order="C", *, newshape=None, copy=None, out_sharding=None):
    """a with a new shape; one dimension may be -1 (laid out and typed as out_sharding)."""
    a = asarray(a)
    if order not in ("C", "F", "A"):
        raise ValueError(f"reshape: Unexpected value for 'order' argument: {order}.")
    shape = newshape if shape is None else shape
    if isinstance(shape, int) or not isinstance(shape, (tuple, list)):
        shape = (shape,)
    shape = list(st.static_ints("reshape", shape))
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        if known == 0 or a.size % known:
            _reshape_error(a, shape)
        shape[shape.index(-1)] = a.size // known
    if int(np.prod(shape, dtype=np.int64)) != a.size or builtins.any(d < 0 for d in shape):
        _reshape_error(a, shape)
    if order == "F":
        return transpose(st.reshape(transpose(a), tuple(shape[::-1])))
    return st.reshape(a, tuple(shape), out_sharding=out_sharding)


def _reshape_error(a, shape):
    """jnp.reshape's TypeError (lax.reshape raises ValueError, as JAX's does)."""
    raise TypeError(f"cannot reshape array of shape {a.shape} (size {a.size}) into shape "
                    f"{tuple(shape)} (size {int(np.prod(shape, dtype=np.int64))})")


def transpose(a, axes=None):
    """a with axes permuted (reversed by default)."""
    a = asarray(a)
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    axes = tuple(_canon_axis(ax, a.ndim, "transpose") for ax in axes)
    return st.transpose(a, axes)


def _canon_axis(axis, ndim, name="axis"):
    axis = _index_axis(axis, name, False)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays of one shape along a new axis: one stack primitive for a sequence, as
    JAX stages it (an array is concatenated along its own leading axis)."""
    whole = isinstance(arrays, (np.ndarray, Array, Tracer))
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    arrays = promote_dtypes(*arrays)
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {sorted(shapes)}")
    axis = _canon_axis(axis, arrays[0].ndim + 1, "stack")
    if whole:
        out = st.concatenate([st.expand_dims(a, (axis,)) for a in arrays], axis)
        return astype(out, dtype) if dtype is not None else out
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    from ...core.primitives.arrays import stack as lax_stack
    return lax_stack(arrays, axis)


# ---------------------------------------------------------------- argument helpers

def _arrays(name, *args):
    """Arrays from array-likes (Arrays, tracers, NumPy values, Python scalars); a TypeError,
    as in jnp, for lists and other objects."""
    return [asarray(a) for a in _check_args(name, *args)]


def _axis(axis, ndim, name=None, names_ok=False):
    """A non-negative axis of jnp.`name`: ValueError when out of bounds; TypeError when not an
    integer, ConcretizationTypeError when traced; with `names_ok` (reductions), NameError for a
    string (JAX reads it as an axis name, none of which is bound to the operand)."""
    where = f"{name}: " if name else ""
    axis = _index_axis(axis, name, names_ok)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{where}axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _index_axis(axis, name, names_ok):
    where = f"{name}: " if name else ""
    if isinstance(axis, str) and names_ok:
        raise NameError(f"{where}unbound axis name: {axis}")
    if isinstance(axis, Tracer) and axis.to_concrete_value() is None:
        raise ConcretizationTypeError(axis, f"{where}The axis argument must be known statically.")
    try:
        return operator.index(axis)
    except TypeError:
        raise TypeError(f"{where}axis must be an integer or a sequence of integers, got "
                        f"{axis!r} of type {type(axis).__name__}") from None


def _axes(axis, ndim, allow_none=True, name=None, names_ok=False):
    """A tuple of distinct non-negative axes of jnp.`name` from None (all), an int or a
    sequence (`names_ok`: see _axis)."""
    if axis is None and allow_none:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    axes = tuple(_axis(a, ndim, name, names_ok) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return axes


def _static_int(x, context):
    """x as a Python int; ConcretizationTypeError (a TypeError) for traced values, TypeError
    naming `context` for floats and other non-integers."""
    if isinstance(x, Tracer):
        x = _concrete_array(x, context)
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{context}: expected an integer, got {x!r} of type "
                        f"{type(x).__name__}") from None


def _concrete_array(x, context):
    if not isinstance(x, Tracer):
        return x
    value = x.to_concrete_value()
    if value is None:
        raise ConcretizationTypeError(x, context)
    return value


def concrete_value(x, context):
    """The NumPy value of x, or ConcretizationTypeError when x is traced."""
    return np.asarray(_concrete_array(x, context))


def is_traced(x):
    return isinstance(x, Tracer) and x.to_concrete_value() is None


def _user_dtype(dtype, name):
    """A canonical dtype from a user's dtype argument (TypeError for non-numeric ones, JAX's
    UserWarning for a 64-bit one with x64 off: see dtypes.explicit_dtype)."""
    try:
        d = np.dtype(dtype)
    except TypeError as err:
        raise TypeError(f"{name}: cannot interpret {dtype!r} as a data type ({err})") from None
    if d not in _dt.SUPPORTED + _dt.NARROW:
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {d} in {name}")
    return _dt.explicit_dtype(dtype, name)


def _to_inexact_dtype(d):
    return _dt.to_inexact_dtype(d)


def _real_dtype(d):
    return {_dt.complex64: _dt.float32, _dt.complex128: _dt.float64}.get(np.dtype(d), np.dtype(d))


def lax_full(shape, value, dtype):
    return ew.full(tuple(shape), value, dtype)


def _const_like(x, value):
    """value as an array of x's shape, dtype and weak type."""
    out = lax_full(x.shape, value, x.dtype)
    return ew.convert_element_type(out, x.dtype, weak_type=True) if x.weak_type else out


def lax_select(pred, on_true, on_false):
    return ew.select_n(pred, on_false, on_true)


def _move_to_end(x, axis):
    return moveaxis(x, axis, -1)


def _index_in_dim(x, start, limit, axis):
    """x[..., start:limit] along axis as NumPy indexing stages it (as JAX's diff and resize index): a
    slice without strides (lax.slice_in_dim prints (1,)s)."""
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[axis], limits[axis] = start, limit
    return st.slice(x, starts, limits)


def _with(seq, i, value):
    out = list(seq)
    out[i] = value
    return tuple(out)


def _zero_scalar(x):
    return lax_full((), 0, x.dtype)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


# ---------------------------------------------------------------- basic shape manipulation

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


def squeeze(a, axis=None):
    """a without size-1 axes (all of them when axis is None)."""
    a, = _arrays("squeeze", a)
    if axis is None:
        return st.squeeze(a, tuple(i for i, d in enumerate(a.shape) if d == 1))
    axes = _axes(axis, a.ndim, allow_none=False, name="squeeze")
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


def broadcast_arrays(*args):
    """The arguments broadcast against each other."""
    arrays = _arrays("broadcast_arrays", *args)
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def _atleast(name, n, arys):
    arrays = _arrays(name, *arys)
    out = [_atleast_one(a, n) for a in arrays]
    return out[0] if len(out) == 1 else out


_NEW_AXES = {(3, 0): (0, 1, 2), (3, 1): (0, 2), (3, 2): (2,)}  # NumPy's, as JAX's atleast_3d


def _atleast_one(a, n):
    if a.ndim >= n:
        return a
    return st.expand_dims(a, _NEW_AXES.get((n, a.ndim), tuple(range(n - a.ndim))))


@staged_as("atleast_1d")
def atleast_1d(*arys):
    """Arrays with at least one dimension."""
    return _atleast("atleast_1d", 1, arys)


@staged_as("atleast_2d")
def atleast_2d(*arys):
    """Arrays with at least two dimensions (1-d ones as rows)."""
    return _atleast("atleast_2d", 2, arys)


@staged_as("atleast_3d")
def atleast_3d(*arys):
    """Arrays with at least three dimensions (NumPy's placement of the new axes)."""
    if len(arys) > 1:  # one by one, as JAX's (a jit per array in its jaxprs)
        return [atleast_3d(a) for a in _arrays("atleast_3d", *arys)]
    return _atleast("atleast_3d", 3, arys)
