"""Every jnp function over dtype combinations (each array dtype alone, with int32 and float32
arrays, with the Python scalars 2 and 2.0, with itself), with and without x64: the result's
dtype and weak type, or the error class, is real JAX's (both through eval_shape, so nothing
compiles). The ci profile scans a rotating slice of the dtypes per function, `thorough` all."""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import settings

import refjax
import refjax.numpy as rnp
from jnp_compare import x64

UNARY = [
    "abs", "absolute", "negative", "positive", "sign", "floor", "ceil", "round", "rint", "trunc",
    "fix", "sqrt", "cbrt", "square", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "deg2rad", "rad2deg", "degrees", "radians", "reciprocal", "sinc", "i0",
    "isfinite", "isinf", "isnan", "signbit", "logical_not", "invert", "conj", "real", "imag",
    "angle", "sum", "prod", "mean", "var", "std", "max", "min", "argmax", "cumsum", "cumprod",
    "nancumsum", "all", "any", "median", "ptp", "count_nonzero", "nanmean", "nansum", "average",
    "diff", "ediff1d", "sort", "argsort", "isreal", "iscomplex", "spacing", "frexp", "modf",
    "bitwise_count", "fabs", "acos", "bitwise_invert", "gradient", "unwrap", "cumulative_sum",
    "trim_zeros_free_ptp", "fft.fft", "fft.rfft", "fft.fftshift", "partition1", "vander", "poly",
    "hamming_like", "packbits", "histogram3", "unique_size"]
BINARY = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "remainder",
    "fmod", "power", "float_power", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot",
    "logaddexp", "logaddexp2", "copysign", "nextafter", "equal", "not_equal", "less", "greater",
    "less_equal", "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "ldexp", "heaviside", "gcd", "lcm",
    "dot", "matmul", "inner", "outer", "kron", "cross", "divmod", "isclose", "allclose",
    "array_equal", "polyval", "where", "polyadd", "polymul", "polysub", "convolve", "vdot",
    "setdiff1d_size", "isin", "append", "interp_x"]
DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
OTHERS = ["int32", "float32", 2, 2.0, "same"]

# Functions of the scan that need arguments besides the array.
SPECIAL = {
    "trim_zeros_free_ptp": lambda m, x: m.ptp(x, keepdims=True),
    "fft.fft": lambda m, x: m.fft.fft(x),
    "fft.rfft": lambda m, x: m.fft.rfft(x),
    "fft.fftshift": lambda m, x: m.fft.fftshift(x),
    "partition1": lambda m, x: m.partition(x, 1),
    "hamming_like": lambda m, x: m.kaiser(3, 2.0) * x,
    "histogram3": lambda m, x: m.histogram(x, 3)[0],
    "unique_size": lambda m, x: m.unique(x, size=2),
    "setdiff1d_size": lambda m, x, y: m.setdiff1d(x, y, size=2),
    "interp_x": lambda m, x, y: m.interp(x, m.arange(3.0), m.atleast_1d(y) * m.ones(3)),
}


# Where refjax deliberately differs (each checked to still differ, so that a fix in either
# library shows up): name -> (predicate on the arguments, reason).
KNOWN = {
    "fix": (lambda args: args[0][0] in "fc", "JAX's fix raises AttributeError under eval_shape "
            "(it asks the abstract value for a concrete one); refjax traces it"),
    "partition1": (lambda args: args[0].startswith("complex"), "JAX refuses complex "
                   "partitions (NotImplementedError); refjax sorts, a valid partition"),
}


def _share():
    """How many dtypes each function scans: all under `thorough`, 4 under `ci`."""
    n = settings.default.max_examples
    return len(DTYPES) if n >= 100 else 4


def _dtypes(i):
    k = _share()
    return [DTYPES[(i * k + j) % len(DTYPES)] for j in range(k)] if k < len(DTYPES) else DTYPES


def _spec(lib, dtype):
    d = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    return (jax if lib is jnp else refjax).ShapeDtypeStruct((3,), d)


def _outcome(lib, name, args):
    """The first result's dtype (with '*' when weak), or the error's class name."""
    fn = SPECIAL.get(name) or (lambda m, *a: getattr(m, name)(*a))
    arrays = [i for i, a in enumerate(args) if isinstance(a, str)]
    specs = [_spec(lib, args[i]) for i in arrays]

    def call(*xs):
        full = list(args)
        for i, x in zip(arrays, xs):
            full[i] = x
        return fn(lib, *full)
    try:
        out = (jax if lib is jnp else refjax).eval_shape(call, *specs)
    except Exception as e:  # noqa: BLE001  (the class is the outcome)
        return type(e).__name__
    out = out[0] if isinstance(out, (tuple, list)) else out
    return f"{np.dtype(out.dtype).name}{'*' if getattr(out, 'weak_type', False) else ''}"


def _scan(name, combos):
    wrong, known = [], KNOWN.get(name, (lambda args: False, ""))[0]
    for enabled in (False, True):
        with x64() if enabled else _nothing():
            for args in combos:
                ours, theirs = _outcome(rnp, name, args), _outcome(jnp, name, args)
                if (ours != theirs) != known(args):
                    wrong.append((enabled, args, ours, theirs))
    assert not wrong, f"jnp.{name} (x64, args, refjax, JAX): {wrong}"


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    _scan(name, [(d,) for d in _dtypes(UNARY.index(name))])


@pytest.mark.parametrize("name", BINARY)
def test_binary(name):
    _scan(name, [(d, d if o == "same" else o) for d in _dtypes(BINARY.index(name))
                 for o in OTHERS])


def test_full_scan_of_the_known_gaps():
    """The gaps a scan against JAX found (complex logaddexp, kron of booleans, the weak types
    of polyval/isclose/cross, dot of uint8 with a Python int), over every dtype."""
    for name in ("logaddexp", "logaddexp2", "kron", "polyval", "isclose", "cross", "dot"):
        _scan(name, [(d, d if o == "same" else o) for d in DTYPES for o in OTHERS])
