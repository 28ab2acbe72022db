"""JAX's dtype lattice: weak types, type promotion, x64 canonicalisation, short names."""
import functools
import warnings

import ml_dtypes
import numpy as np

from . import source_info
from .config import config
from .errors import TypePromotionError

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
# The tangent dtype of integer and boolean values, as in JAX.
float0 = np.dtype([("float0", np.void, 0)])

# The narrow types of ml_dtypes jnp exposes (float8_e4m3fn, int4, ...): they promote only with
# weakly typed Python scalars and themselves, as in JAX.
NARROW_FLOATS = tuple(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu"))
NARROW_SIGNED = tuple(np.dtype(getattr(ml_dtypes, n)) for n in ("int1", "int2", "int4"))
NARROW_UNSIGNED = tuple(np.dtype(getattr(ml_dtypes, n)) for n in ("uint1", "uint2", "uint4"))
_NARROW_KIND = {**{d: "f" for d in NARROW_FLOATS + (np.dtype(ml_dtypes.bfloat16),)},
                **{d: "i" for d in NARROW_SIGNED}, **{d: "u" for d in NARROW_UNSIGNED}}
_NARROW_SHORT = {d: ("f" + d.name[5:] if d in NARROW_FLOATS else d.name[0] + d.name.lstrip(
    "uint")) for d in NARROW_FLOATS + NARROW_SIGNED + NARROW_UNSIGNED}

_SHORT = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
          uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64", bfloat16: "bf16",
          float16: "f16", float32: "f32", float64: "f64", complex64: "c64",
          complex128: "c128", float0: "float0", **_NARROW_SHORT}
SUPPORTED = tuple(d for d in _SHORT if d != float0 and d not in _NARROW_SHORT)
NARROW = tuple(_NARROW_SHORT)
_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def short_name(dtype):
    """'f32' for float32, as JAX prints avals (a typed key's dtype prints whole: key<fry>)."""
    return str(dtype) if is_key_dtype(dtype) else _SHORT[np.dtype(dtype)]


def long_name(dtype):
    """'float32' for float32 ('float0' for float0), as JAX prints avals in full."""
    if is_key_dtype(dtype):
        return str(dtype)
    dtype = np.dtype(dtype)
    return "float0" if dtype == float0 else dtype.name


# Nodes of the promotion lattice: dtypes plus the three weak kinds of Python scalars.
class _Weak(str):
    pass


I_WEAK, F_WEAK, C_WEAK = _Weak("int"), _Weak("float"), _Weak("complex")
_LATTICE = {
    bool_: [I_WEAK],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [F_WEAK],
    I_WEAK: [uint8, int8, *NARROW_SIGNED, *NARROW_UNSIGNED], int8: [int16], int16: [int32],
    int32: [int64], int64: [F_WEAK],
    F_WEAK: [bfloat16, float16, C_WEAK, *NARROW_FLOATS], bfloat16: [float32], float16: [float32],
    float32: [float64, complex64], float64: [complex128],
    C_WEAK: [complex64], complex64: [complex128], complex128: [], **{d: [] for d in _NARROW_SHORT},
}


def _upper_bounds():
    ub = {}

    def visit(node):
        if node not in ub:
            ub[node] = {node}.union(*(visit(n) for n in _LATTICE[node]))
        return ub[node]

    for node in _LATTICE:
        visit(node)
    return ub


_UB = _upper_bounds()


@functools.lru_cache(maxsize=None)
def _join(nodes):
    common = set.intersection(*(_UB[n] for n in nodes))
    if not common:  # a narrow type (float8_*, int4, ...) with another strong type
        names = tuple(str(n) for n in nodes)
        raise TypePromotionError(
            f"Input dtypes {names} have no available implicit dtype promotion path. To avoid "
            "unintended promotion, narrow types (float8, int4, ...) do not support implicit "
            "promotion. If you'd like your inputs to be promoted to another type, you can do so "
            "explicitly using e.g. x.astype('float32')")
    return next(n for n in common if _UB[n] == common)


def canonicalize_dtype(dtype):
    """Map 64-bit types to their 32-bit counterparts unless jax_enable_x64 is set."""
    dtype = np.dtype(dtype)
    if dtype not in _SHORT:
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dtype}")
    if config.read("jax_enable_x64"):
        return dtype
    return _TO_32.get(dtype, dtype)


def explicit_dtype(dtype, fun_name):
    """A dtype a user asked for, canonicalized as JAX's: with jax_enable_x64 off a 64-bit one
    becomes its 32-bit counterpart with JAX's UserWarning naming `fun_name` (jax.random's
    name none: fun_name None) and the user's line (Python's scalar types, which only ask for
    the default, silently)."""
    canonical = canonicalize_dtype(dtype)
    if any(dtype is t for t in (bool, int, float, complex)) or canonical == np.dtype(dtype):
        return canonical
    where = "" if fun_name is None else f" requested in {fun_name}"
    warnings.warn(
        f"Explicitly requested dtype {np.dtype(dtype)}{where} is not "
        f"available, and will be truncated to dtype {canonical.name}. To enable more dtypes, "
        "set the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
        "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
        stacklevel=source_info.user_stacklevel())
    return canonical


def default_int():
    return canonicalize_dtype(int64)


def default_float():
    return canonicalize_dtype(float64)


def default_complex():
    return canonicalize_dtype(complex128)


_WEAK_DEFAULT = {I_WEAK: default_int, F_WEAK: default_float, C_WEAK: default_complex}


def kind(dtype):
    """One of 'b', 'i', 'u', 'f', 'c' (bfloat16 counts as 'f')."""
    dtype = np.dtype(dtype)
    return _NARROW_KIND.get(dtype, dtype.kind)


def to_inexact_dtype(dtype):
    """The floating dtype a non-inexact dtype computes in (as JAX 0.10: float32 for bools and
    integers of up to 32 bits even under x64, the default float for 64-bit ones)."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype
    if dtype.itemsize >= 8 and kind(dtype) in "iu":
        return default_float()
    return np.dtype(np.float32)


def weak_node(dtype):
    return {"b": bool_, "i": I_WEAK, "u": I_WEAK, "f": F_WEAK, "c": C_WEAK}[kind(dtype)]


def python_scalar_dtype(x):
    """The (weak) dtype JAX gives a Python scalar: bool, default int/float/complex. A Python
    int outside the default int's range raises OverflowError (as JAX), never wraps."""
    if isinstance(x, (bool, np.bool_)):
        return bool_
    if isinstance(x, int):
        return check_python_int(x)
    if isinstance(x, float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    raise TypeError(f"{type(x).__name__} is not a Python scalar")


def check_python_int(x, where=""):
    """The default int dtype, after checking that the Python int x fits in it (OverflowError
    naming `where`, the operation, otherwise)."""
    dtype = default_int()
    info = np.iinfo(dtype)
    if not info.min <= x <= info.max:
        prefix = f"{where}: " if where else ""
        raise OverflowError(f"{prefix}Python int {x} too large to convert to {dtype.name}")
    return dtype


def is_key_dtype(dtype):
    """Whether `dtype` is a typed PRNG key's (api/random's KeyDType, which reads key<impl>)."""
    return dtype is not None and not isinstance(dtype, np.dtype) and str(dtype).startswith("key<")


def is_python_scalar(x):
    return type(x) in (bool, int, float, complex)


def promote_types(a, b):
    """jnp.promote_types: the strong join of two dtypes."""
    return canonicalize_dtype(_to_dtype(_join((np.dtype(a), np.dtype(b)))))


def _to_dtype(node):
    return _WEAK_DEFAULT[node]() if isinstance(node, _Weak) else node


def result_type_of(pairs):
    """Join of (dtype, weak_type) pairs -> (dtype, weak_type), as jnp.result_type does."""
    nodes = tuple({weak_node(d) if w else np.dtype(d) for d, w in pairs})
    if len(nodes) == 1:
        node = nodes[0]
        if not isinstance(node, _Weak):
            return canonicalize_dtype(node), False
        dtypes = {np.dtype(d) for d, _ in pairs}
        return canonicalize_dtype(dtypes.pop() if len(dtypes) == 1 else _to_dtype(node)), True
    if config.read("jax_numpy_dtype_promotion") == "strict":
        _check_strict(pairs)
    node = _join(nodes)
    return canonicalize_dtype(_to_dtype(node)), isinstance(node, _Weak)


def _check_strict(pairs):
    """JAX's strict lattice: one strong dtype at most, and weak Python-scalar kinds only
    beside types of their category or above (int -> any number, float -> floating or
    complex, complex -> complex; bool has no promotion at all)."""
    strong = {np.dtype(d) for d, w in pairs if not w}
    weak = {weak_node(d) for d, w in pairs if w}
    if len(strong) <= 1 and all(kind(s) in _STRICT_ABOVE[w] for w in weak for s in strong):
        return
    nodes = list(dict.fromkeys([str(_PY_TYPE[weak_node(d)]) for d, w in pairs if w] +
                               [str(np.dtype(d)) for d, w in pairs if not w]))
    raise TypePromotionError(
        f"Input dtypes {tuple(nodes)} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired output "
        "type, or set jax_numpy_dtype_promotion=standard.")


_STRICT_ABOVE = {I_WEAK: "iufc", F_WEAK: "fc", C_WEAK: "c", bool_: ""}
_PY_TYPE = {I_WEAK: int, F_WEAK: float, C_WEAK: complex, bool_: bool}  # JAX names weak types so


def issubdtype(a, b):
    """np.issubdtype that knows bfloat16 is a floating type."""
    if a is None:
        return False
    a = np.dtype(a)
    if a == bfloat16:
        return b in (np.floating, np.inexact, np.number, np.generic, bfloat16) or (
            not isinstance(b, type) and np.dtype(b) == bfloat16)
    if b == bfloat16 or (not isinstance(b, type) and np.dtype(b) == bfloat16):
        return False
    return np.issubdtype(a, b)


def is_float(dtype):
    return kind(dtype) == "f"


def is_inexact(dtype):
    return kind(dtype) in "fc"


def is_int(dtype):
    return kind(dtype) in "iu"


def finfo(dtype):
    return ml_dtypes.finfo(np.dtype(dtype))


def iinfo(dtype):
    return ml_dtypes.iinfo(np.dtype(dtype))


def tangent_dtype(dtype):
    """The dtype of a tangent/cotangent of a value of `dtype`: float0 for ints and bools."""
    return dtype if is_inexact(dtype) else float0
