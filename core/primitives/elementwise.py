"""Elementwise primitives (unary, binary, comparisons, select_n, clamp, convert_element_type)
with their abstract-eval, JVP, transpose and batching rules, and the lax functions binding them."""
import math
import operator

import numpy as np

from .. import dtypes, key_reuse, runtime
from .. import sharding_propagation as sp
from ..array import Array
from ..avals import ShapedArray
from ..jaxpr import pp_hiding
from ..primitive import make_primitive, named
from ..sharding_types import cotangent_sharding, insert_reduced_reshard, typed_aval
from ..trace import get_aval
from ..transforms import ad
from ..transforms.ad import Zero, defjvp, defjvp_with_output, deflinear, defnondiff
from ..transforms.batching import defvectorized

_FLOAT, _INT, _BOOL, _COMPLEX = "f", "iu", "b", "c"
_INEXACT = "fc"
_NUM = "iufc"
_INTB = "iub"
_KIND_NAMES = {"f": "floating", "i": "signedinteger", "u": "unsignedinteger", "b": "bool",
               "c": "complexfloating"}


def _kinds_text(kinds):
    return ", ".join(_KIND_NAMES[k] for k in kinds)


def _check_dtype(name, dtype, kinds):
    if dtypes.kind(dtype) not in kinds or dtype == dtypes.float0:
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}. Accepted dtypes "
                        f"are subtypes of {_kinds_text(kinds)}.")


# ---------------------------------------------------------------- constants

def weak_scalar(value, dtype):
    """A weakly-typed scalar constant of `dtype` (how Python scalars enter lax ops)."""
    return runtime.make_array(value, ShapedArray((), dtype, weak_type=True))


def lift_scalars(name, args):
    """Python scalars take the dtype of the other operands (weakly), as lax does."""
    ref = next((a for a in args if not dtypes.is_python_scalar(a)), None)
    if ref is None:
        return args
    dtype = get_aval(ref).dtype
    return [weak_scalar(_cast_scalar(name, a, dtype), dtype) if dtypes.is_python_scalar(a) else a
            for a in args]


def _cast_scalar(name, value, dtype):
    if type(value) is int:
        dtypes.check_python_int(value, name)
    if isinstance(value, float) and dtypes.kind(dtype) in "iub" and not float(value).is_integer():
        raise TypeError(f"{name}: Python scalar {value!r} cannot be converted to {np.dtype(dtype).name} "
                        "without loss")
    return value


# ---------------------------------------------------------------- unary

def _unop_abstract_eval(name, kinds, result_dtype=None):
    def abstract_eval(x, **params):
        _check_dtype(name, x.dtype, kinds)
        dtype = result_dtype(x.dtype) if result_dtype else x.dtype
        return ShapedArray(x.shape, dtype, weak_type=x.weak_type)
    return abstract_eval


def _elementwise_primitive(name, abstract_eval):
    """An elementwise primitive: its abstract eval, vectorized batching, elementwise layouts."""
    prim = make_primitive(name)
    prim.def_abstract_eval(abstract_eval)
    defvectorized(prim)
    prim.def_sharding(sp.elementwise)
    return prim


def unop(name, kinds, result_dtype=None):
    """An elementwise unary primitive accepting dtypes of `kinds`."""
    return _elementwise_primitive(name, _unop_abstract_eval(name, kinds, result_dtype))


def _lax_unary(prim):
    def fn(x, **params):
        return prim.bind(x, **params)
    return named(fn, prim.name, f"Elementwise {prim.name} (binds the `{prim.name}` primitive).")


def _zero_jvp(prim):
    """Piecewise-constant functions: the tangent is a symbolic zero."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, Zero(get_aval(out).to_tangent_aval())
    prim.def_jvp(jvp)


neg_p = unop("neg", _NUM)
neg = _lax_unary(neg_p)
sign_p = unop("sign", _NUM)
sign = _lax_unary(sign_p)
floor_p = unop("floor", _FLOAT)
floor = _lax_unary(floor_p)
ceil_p = unop("ceil", _FLOAT)
ceil = _lax_unary(ceil_p)
round_p = unop("round", _FLOAT)
is_finite_p = unop("is_finite", _FLOAT, lambda d: dtypes.bool_)
is_finite = _lax_unary(is_finite_p)
exp_p = unop("exp", _INEXACT)
exp = _lax_unary(exp_p)
exp2_p = unop("exp2", _INEXACT)
exp2 = _lax_unary(exp2_p)
log_p = unop("log", _INEXACT)
log = _lax_unary(log_p)
log1p_p = unop("log1p", _INEXACT)
log1p = _lax_unary(log1p_p)
expm1_p = unop("expm1", _INEXACT)
expm1 = _lax_unary(expm1_p)
tanh_p = unop("tanh", _INEXACT)
tanh = _lax_unary(tanh_p)
logistic_p = unop("logistic", _INEXACT)
logistic = _lax_unary(logistic_p)
sin_p = unop("sin", _INEXACT)
sin = _lax_unary(sin_p)
cos_p = unop("cos", _INEXACT)
cos = _lax_unary(cos_p)
tan_p = unop("tan", _INEXACT)
tan = _lax_unary(tan_p)
asin_p = unop("asin", _INEXACT)
asin = _lax_unary(asin_p)
acos_p = unop("acos", _INEXACT)
acos = _lax_unary(acos_p)
atan_p = unop("atan", _INEXACT)
atan = _lax_unary(atan_p)
sinh_p = unop("sinh", _INEXACT)
sinh = _lax_unary(sinh_p)
cosh_p = unop("cosh", _INEXACT)
cosh = _lax_unary(cosh_p)
asinh_p = unop("asinh", _INEXACT)
asinh = _lax_unary(asinh_p)
acosh_p = unop("acosh", _INEXACT)
acosh = _lax_unary(acosh_p)
atanh_p = unop("atanh", _INEXACT)
atanh = _lax_unary(atanh_p)
sqrt_p = unop("sqrt", _INEXACT)
sqrt = _lax_unary(sqrt_p)
rsqrt_p = unop("rsqrt", _INEXACT)
rsqrt = _lax_unary(rsqrt_p)
cbrt_p = unop("cbrt", _FLOAT)
cbrt = _lax_unary(cbrt_p)
abs_p = unop("abs", "ifc", lambda d: {dtypes.complex64: dtypes.float32,
                                     dtypes.complex128: dtypes.float64}.get(d, d))
abs = _lax_unary(abs_p)
not_p = unop("not", _INTB)
bitwise_not = _lax_unary(not_p)
integer_pow_p = unop("integer_pow", _NUM)


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x, *, y):
    _check_dtype("integer_pow", x.dtype, _NUM)
    if y < 0 and dtypes.is_int(x.dtype):
        raise TypeError(f"integer_pow of an integer array ({x.dtype.name}) to the negative power "
                        f"{y} is not defined; convert to a floating dtype first")
    return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)


square_p = unop("square", _NUM)
square = _lax_unary(square_p)
erf_p = unop("erf", _FLOAT)
erf = _lax_unary(erf_p)
erf_inv_p = unop("erf_inv", _FLOAT)
erf_inv = _lax_unary(erf_inv_p)
lgamma_p = unop("lgamma", _FLOAT)
lgamma = _lax_unary(lgamma_p)
digamma_p = unop("digamma", _FLOAT)
digamma = _lax_unary(digamma_p)
real_p = unop("real", _COMPLEX, lambda d: abs_p.abstract_eval(ShapedArray((), d)).dtype)
real = _lax_unary(real_p)
imag_p = unop("imag", _COMPLEX, lambda d: abs_p.abstract_eval(ShapedArray((), d)).dtype)
imag = _lax_unary(imag_p)
conj_p = make_primitive("conj")
conj = _lax_unary(conj_p)
defvectorized(conj_p)
conj_p.def_sharding(sp.elementwise)
# JAX carries the operand's dtype as a param (for its transpose); refjax reads it from the
# operand, and prints it as JAX does.
conj_p.def_pp(lambda eqn, context: [("input_dtype", eqn.invars[0].aval.dtype)])


@conj_p.def_abstract_eval
def _conj_abstract_eval(x):
    """As in JAX: float32/float64 and complex operands only, and the result is complex."""
    if dtypes.kind(x.dtype) != "c" and x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"conj does not accept dtype {np.dtype(x.dtype).name}. Accepted dtypes "
                        "are subtypes of float32, complexfloating, float64.")
    return ShapedArray(x.shape, _complex_dtype(x.dtype), weak_type=x.weak_type)


def _complex_dtype(dtype):
    """The complex dtype holding values of a float32/float64 (or complex) dtype."""
    return {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}.get(dtype, dtype)



class RoundingMethod:
    """lax.RoundingMethod: AWAY_FROM_ZERO (0, the default) or TO_NEAREST_EVEN (1)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise round, halves away from zero by default (binds `round`)."""
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    """x ** y for a static Python int y (binds `integer_pow`). An integral float exponent is
    accepted as JAX accepts it; any other is a TypeError (int() would truncate 2.5)."""
    if isinstance(y, (float, np.floating)) and float(y).is_integer():
        y = int(y)
    try:
        y = operator.index(y)
    except TypeError:
        raise TypeError(f"integer_pow: the exponent y must be an integer, got {y!r} of type "
                        f"{type(y).__name__}; use lax.pow for other exponents") from None
    return integer_pow_p.bind(x, y=y)


deflinear(neg_p, lambda ct, x: [neg(ct)])
for _p in (sign_p, floor_p, ceil_p, round_p):
    _zero_jvp(_p)
for _p in (is_finite_p, not_p):
    defnondiff(_p)
defjvp_with_output(exp_p, lambda t, out, x: mul(t, out))
defjvp_with_output(exp2_p, lambda t, out, x: mul(t, mul(out, _const(out, math.log(2)))))
defjvp(log_p, lambda t, x: div(t, x))
defjvp(log1p_p, lambda t, x: div(t, add(x, ad.one_like(x))))
defjvp_with_output(expm1_p, lambda t, out, x: mul(t, add(out, ad.one_like(out))))
defjvp_with_output(tanh_p, lambda t, out, x: mul(add(t, mul(t, out)), sub(ad.one_like(x), out)))
defjvp_with_output(logistic_p, lambda t, out, x: mul(t, mul(out, sub(ad.one_like(out), out))))
defjvp(sin_p, lambda t, x: mul(t, cos(x)))
defjvp(cos_p, lambda t, x: neg(mul(t, sin(x))))
defjvp_with_output(tan_p, lambda t, out, x: mul(t, add(_const(out, 1), square(out))))
defjvp(asin_p, lambda t, x: mul(t, rsqrt(sub(_const(x, 1), square(x)))))
defjvp(acos_p, lambda t, x: neg(mul(t, rsqrt(sub(_const(x, 1), square(x))))))
defjvp(atan_p, lambda t, x: div(t, add(_const(x, 1), square(x))))
defjvp(sinh_p, lambda t, x: mul(t, cosh(x)))
defjvp(cosh_p, lambda t, x: mul(t, sinh(x)))
defjvp(asinh_p, lambda t, x: mul(t, rsqrt(add(square(x), ad.one_like(x)))))
defjvp(acosh_p, lambda t, x: mul(t, rsqrt(mul(sub(x, _const(x, 1)), add(x, _const(x, 1))))))
defjvp(atanh_p, lambda t, x: div(t, sub(_const(x, 1), square(x))))
defjvp_with_output(sqrt_p, lambda t, out, x: div(t, mul(_const(out, 2), out)))
defjvp_with_output(rsqrt_p, lambda t, out, x: mul(t, mul(_const(out, -0.5), div(out, x))))
defjvp_with_output(cbrt_p, lambda t, out, x: mul(t, div(_const(out, 1 / 3), square(out))))
defjvp(square_p, lambda t, x: mul(t, mul(_const(x, 2), x)))
defjvp(erf_p, lambda t, x: mul(t, mul(_const(x, 2 / math.sqrt(math.pi)), exp(neg(square(x))))))
defjvp_with_output(erf_inv_p, lambda t, out, x: mul(t, mul(_const(x, math.sqrt(math.pi) / 2),
                                                           exp(square(out)))))
defjvp(lgamma_p, lambda t, x: mul(t, digamma(x)))
defjvp(digamma_p, lambda t, x: mul(t, polygamma(_const(x, 1), x)))
deflinear(real_p, lambda ct, x: [convert_element_type(ct, x.aval.dtype)])


def _imag_transpose(ct, x):
    """complex(0, -ct), JAX's cotangent of imag (adjoint under the pairing Re(sum(a * b))).
    refjax has no `complex` primitive: -i * ct is the same for finite ct."""
    dtype = x.aval.dtype
    return [mul(convert_element_type(ct, dtype), weak_scalar(-1j, dtype))]


deflinear(imag_p, _imag_transpose)


def _conj_transpose(ct, x):
    """conj of a real operand embeds it in the complex plane: its transpose is real(ct)."""
    return [conj(ct) if dtypes.kind(x.aval.dtype) == "c" else real(ct)]


deflinear(conj_p, _conj_transpose)


def _abs_jvp(t, out, x):
    """JAX's: +t where x >= 0 (so +1 at zero and -1 at NaN), -t elsewhere; for complex x,
    real(t * conj(x) / |x|) with |x| = 0 replaced by 1 (a zero derivative there)."""
    if dtypes.kind(get_aval(x).dtype) != "c":
        return select_n(ge(x, _const(x, 0)), neg(t), t)
    dtype = get_aval(x).dtype
    denom = convert_element_type(out, dtype)
    denom = select_n(eq(denom, _const(denom, 0)), denom, full_like(denom, 1))
    return real(mul(t, div(conj(x), denom)))


defjvp_with_output(abs_p, _abs_jvp)


def _integer_pow_jvp(t, x, *, y):
    """JAX's: t itself for y=1, and x itself (not x**1) for y=2."""
    if y == 0:
        return mul(t, _const(x, 0))
    if y == 1:
        return t
    return mul(t, mul(_const(x, y), x if y == 2 else integer_pow(x, y - 1)))


defjvp(integer_pow_p, _integer_pow_jvp)


# ---------------------------------------------------------------- binary

def _broadcast_shapes(name, shapes):
    """lax's broadcasting: rank-0 operands broadcast to any shape; the others have one rank
    and each dimension one size, or 1 (as JAX's lax)."""
    full = [tuple(s) for s in shapes if s != ()]
    if not full:
        return ()
    if len({len(s) for s in full}) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{set(len(s) for s in full)}")
    out = []
    for sizes in zip(*full):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, full))}.")
        out.append(big.pop() if big else 1)
    return tuple(out)


def _binop_abstract_eval(name, kinds, result_dtype=None):
    def abstract_eval(*avals, **params):
        shape = _broadcast_shapes(name, [a.shape for a in avals])
        dts = {a.dtype for a in avals}
        if len(dts) != 1:
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{', '.join(a.dtype.name for a in avals)}. (Tip: jnp.{name} is a "
                            "similar function that does automatic type promotion on inputs).")
        dtype = avals[0].dtype
        _check_dtype(name, dtype, kinds)
        out_dtype = result_dtype or dtype
        weak = all(a.weak_type for a in avals)
        return ShapedArray(shape, out_dtype, weak_type=weak)
    return abstract_eval


def binop(name, kinds, result_dtype=None):
    """An elementwise n-ary primitive over operands of one shape (scalars broadcast)."""
    return _elementwise_primitive(name, _binop_abstract_eval(name, kinds, result_dtype))


def _lax_binary(prim, reduced_reshard=True):
    def fn(x, y):
        x, y = lift_scalars(prim.name, (x, y))
        if reduced_reshard:
            x, y = insert_reduced_reshard(x, y)
        return prim.bind(x, y)
    return named(fn, prim.name,
                 f"Elementwise {prim.name} of two arrays of one dtype (binds `{prim.name}`).")


add_p = binop("add", _NUM)
add = _lax_binary(add_p)
sub_p = binop("sub", _NUM)
sub = _lax_binary(sub_p)
mul_p = binop("mul", _NUM)
mul = _lax_binary(mul_p)
div_p = binop("div", _NUM)
div = _lax_binary(div_p)
rem_p = binop("rem", _INT + _FLOAT)
rem = _lax_binary(rem_p)
pow_p = binop("pow", _INEXACT)

max_p = binop("max", _NUM + "b")
max = _lax_binary(max_p)
min_p = binop("min", _NUM + "b")
min = _lax_binary(min_p)
atan2_p = binop("atan2", _INEXACT)
atan2 = _lax_binary(atan2_p)
nextafter_p = binop("nextafter", _FLOAT)
nextafter = _lax_binary(nextafter_p)
and_p = binop("and", _INTB)
bitwise_and = _lax_binary(and_p)
or_p = binop("or", _INTB)
bitwise_or = _lax_binary(or_p)
xor_p = binop("xor", _INTB)
bitwise_xor = _lax_binary(xor_p)
shift_left_p = binop("shift_left", _INT)
shift_left = _lax_binary(shift_left_p)
shift_right_logical_p = binop("shift_right_logical", _INT)
shift_right_logical = _lax_binary(shift_right_logical_p)
shift_right_arithmetic_p = binop("shift_right_arithmetic", _INT)
shift_right_arithmetic = _lax_binary(shift_right_arithmetic_p)
eq_p = binop("eq", _NUM + "b", dtypes.bool_)
eq = _lax_binary(eq_p)
ne_p = binop("ne", _NUM + "b", dtypes.bool_)
ne = _lax_binary(ne_p)
eq_p.def_key_reuse(key_reuse.no_keys_rule), ne_p.def_key_reuse(key_reuse.no_keys_rule)
lt_p = binop("lt", _INT + _FLOAT + "b", dtypes.bool_)
lt = _lax_binary(lt_p)
le_p = binop("le", _INT + _FLOAT + "b", dtypes.bool_)
le = _lax_binary(le_p)
gt_p = binop("gt", _INT + _FLOAT + "b", dtypes.bool_)
gt = _lax_binary(gt_p)
ge_p = binop("ge", _INT + _FLOAT + "b", dtypes.bool_)
ge = _lax_binary(ge_p)
polygamma_p = binop("polygamma", _FLOAT)
polygamma = _lax_binary(polygamma_p, False)
add_any_p = binop("add_any", _NUM)
add_any = _lax_binary(add_any_p, False)  # autodiff's: JAX inserts no reshard



def pow(x, y):
    """x ** y elementwise (binds `pow`): an inexact base, an exponent of its dtype or of an
    integer dtype. Python scalars keep their own weak dtype, as in JAX (no lifting to the
    other operand's: pow(x, 2) has an int32 exponent)."""
    x, y = (weak_scalar(v, dtypes.python_scalar_dtype(v)) if dtypes.is_python_scalar(v) else v
            for v in (x, y))
    return pow_p.bind(x, y)


def _unbroadcast(aval, ct):
    """Sum a cotangent down to an operand's shape (rank-0 operands and size-1 dimensions
    broadcast in binops) and type (JAX's: a reshape to the operand's sharding, e.g. the
    cotangent of a replicated operand of a sum with a sharded one)."""
    ct_aval, sharding = typed_aval(ct), cotangent_sharding(aval)
    if aval.shape == ct_aval.shape and (sharding is None or sharding == ct_aval.sharding):
        return ct
    from .reductions import reduce_sum
    from .structural import reshape
    if not aval.shape:
        return reduce_sum(ct, tuple(range(ct_aval.ndim)))
    axes = tuple(i for i, (a, c) in enumerate(zip(aval.shape, ct_aval.shape)) if a == 1 != c)
    return reshape(reduce_sum(ct, axes) if axes else ct, aval.shape, out_sharding=sharding)


def _linear_ct(x, ct):
    return _unbroadcast(x.aval, ct) if ad.is_undefined_primal(x) else None


def _add_transpose(ct, x, y):
    return [_linear_ct(x, ct), _linear_ct(y, ct)]


def _sub_transpose(ct, x, y):
    return [_linear_ct(x, ct), _linear_ct(y, neg(ct)) if ad.is_undefined_primal(y) else None]


deflinear(add_p, _add_transpose)
deflinear(add_any_p, _add_transpose)
deflinear(sub_p, _sub_transpose)


def _add_sub_jvp(prim, negate_y):
    """A symbolic-zero tangent adds nothing (a linear JVP would stage zeros for it)."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        (tx, ty), aval = tangents, get_aval(out).to_tangent_aval()
        if type(tx) is Zero and type(ty) is Zero:
            return out, Zero(aval)
        if type(tx) is Zero:
            return out, _to_shape(neg(ty) if negate_y else ty, aval.shape)
        if type(ty) is Zero:
            return out, _to_shape(tx, aval.shape)
        return out, prim.bind(tx, ty, **params)
    prim.def_jvp(jvp)


def _to_shape(t, shape):
    """An operand's tangent broadcast to the output's shape (a scalar's, or one with size-1
    dimensions)."""
    t_shape = get_aval(t).shape
    if t_shape == shape:
        return t
    from .structural import broadcast_in_dim
    return broadcast_in_dim(t, shape, tuple(range(len(t_shape))))


_add_sub_jvp(add_p, False)
_add_sub_jvp(add_any_p, False)
_add_sub_jvp(sub_p, True)


def _mul_transpose(ct, x, y):
    if type(ct) is Zero:
        return [Zero(a.aval) if ad.is_undefined_primal(a) else None for a in (x, y)]
    if ad.is_undefined_primal(x):
        return [_unbroadcast(x.aval, mul(ct, y)), None]
    return [None, _unbroadcast(y.aval, mul(x, ct))]


defjvp(mul_p, lambda t, x, y: mul(t, y), lambda t, x, y: mul(x, t))
mul_p.def_transpose(_mul_transpose)


def _div_transpose(ct, x, y):
    if ad.is_undefined_primal(y):
        raise ValueError("div is not linear in its divisor; cannot transpose with respect to it")
    if type(ct) is Zero:
        return [Zero(x.aval), None]
    return [_unbroadcast(x.aval, div(ct, y)), None]


defjvp(div_p, lambda t, x, y: div(t, y),
       lambda t, x, y: neg(mul(t, div(x, square(y)))))
div_p.def_transpose(_div_transpose)


def _rem_jvp_rhs(t, x, y):
    q = div(x, y)
    return neg(mul(t, mul(sign(q), floor(abs(q)))))


defjvp(rem_p, lambda t, x, y: _to_shape(t, _broadcast_shapes("rem", [get_aval(x).shape,
                                                                     get_aval(y).shape])),
       _rem_jvp_rhs)


@pow_p.def_abstract_eval
def _pow_abstract_eval(x, y):
    """As in JAX: an inexact base; an exponent of the base's dtype or of an integer dtype
    (the result has the base's dtype)."""
    shape = _broadcast_shapes("pow", [x.shape, y.shape])
    _check_dtype("pow", x.dtype, _INEXACT)
    if y.dtype != x.dtype and dtypes.kind(y.dtype) not in _INT:
        raise TypeError("the first argument to pow must have an inexact dtype (float or complex), "
                        "and the second argument must have an inexact or integer dtype, and two "
                        f"inexact dtypes must match, but got {x.dtype.name} and {y.dtype.name} "
                        "respectively.")
    return ShapedArray(shape, x.dtype, weak_type=x.weak_type and y.weak_type)


def _pow_jvp_lhs(t, x, y):
    y = _as_dtype_of(y, x)  # an integer exponent counts as a value of the base's dtype
    d = mul(y, pow(x, sub(y, _const(y, 1))))  # of the broadcast shape, unlike x or y alone
    y_is_0 = _to_shape(eq(y, _const(y, 0)), get_aval(d).shape)
    return mul(t, select_n(y_is_0, d, full_like(d, 0)))


def _as_dtype_of(y, x):
    dtype = get_aval(x).dtype
    return y if get_aval(y).dtype == dtype else convert_element_type(y, dtype)


def _pow_jvp_rhs(t, x, y):
    x_safe = select_n(eq(x, _const(x, 0)), x, full_like(x, 1))
    return mul(t, mul(log(x_safe), pow(x, y)))


defjvp(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)


def _balanced_eq(x, z, y):
    """1 where x == z != y, 0.5 where x == z == y, else 0 (JAX's subgradient of max/min)."""
    one, half, zero = (full_like(z, v) for v in (1, 0.5, 0))  # weak when z is, as JAX's
    xz, yz = eq(x, z), eq(y, z)
    return select_n(xz, zero, select_n(yz, one, half))


defjvp(max_p, lambda t, x, y: mul(t, _balanced_eq(x, max(x, y), y)),
       lambda t, x, y: mul(t, _balanced_eq(y, max(x, y), x)))
defjvp(min_p, lambda t, x, y: mul(t, _balanced_eq(x, min(x, y), y)),
       lambda t, x, y: mul(t, _balanced_eq(y, min(x, y), x)))
defjvp(atan2_p, lambda t, x, y: mul(t, div(y, add(square(x), square(y)))),
       lambda t, x, y: mul(t, div(neg(x), add(square(x), square(y)))))
nextafter_p.nondiff_reason = "nextafter has no derivative rule (as in JAX)"
for _p in (and_p, or_p, xor_p, shift_left_p, shift_right_logical_p, shift_right_arithmetic_p,
           eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    defnondiff(_p)
def _polygamma_jvp_m(t, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


defjvp(polygamma_p, _polygamma_jvp_m, lambda t, m, x: mul(t, polygamma(add(m, _const(m, 1)), x)))


# ---------------------------------------------------------------- select_n, clamp

select_n_p = make_primitive("select_n")


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise TypeError(f"select_n: which must be bool or int32, got {which.dtype.name}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError(f"select_n: a boolean which selects between at most 2 cases, got {len(cases)}")
    shapes = {c.shape for c in cases}
    if len(shapes) != 1 or len({c.dtype for c in cases}) != 1:
        raise TypeError("select_n cases must have the same shapes and dtypes, got "
                        f"{', '.join(c.str_short() for c in cases)}")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(f"select_n: which must be scalar or have the shape of the cases, got "
                        f"which {which.shape} and cases {cases[0].shape}")
    return ShapedArray(cases[0].shape, cases[0].dtype, weak_type=all(c.weak_type for c in cases))


def select_n(which, *cases):
    """cases[which] elementwise (which: bool or int32, scalar or of the cases' shape)."""
    return select_n_p.bind(which, *cases)


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    if all(type(t) is Zero for t in tangents[1:]):
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, select_n_p.bind(which, *map(ad.instantiate, tangents[1:]))


def _select_n_transpose(ct, which, *cases):
    if ad.is_undefined_primal(which):
        raise ValueError("select_n is not linear in its predicate")
    outs = [None]
    for i, c in enumerate(cases):
        if not ad.is_undefined_primal(c):
            outs.append(None)
        elif type(ct) is Zero:
            outs.append(Zero(c.aval))
        else:
            z = full_like(ct, 0)
            outs.append(select_n_p.bind(which, *[ct if j == i else z for j in range(len(cases))]))
    return outs


select_n_p.def_jvp(_select_n_jvp)
select_n_p.def_transpose(_select_n_transpose)
defvectorized(select_n_p, full_args=lambda i: i > 0)  # the cases
select_n_p.def_sharding(sp.elementwise)

clamp_p = make_primitive("clamp")


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo, x, hi):
    for name, b in (("min", lo), ("max", hi)):
        if b.shape and b.shape != x.shape:
            raise TypeError(f"clamp requires {name} to be a scalar or have the operand's shape, "
                            f"got {name} {b.shape} and operand {x.shape}")
        if b.dtype != x.dtype:
            raise TypeError(f"clamp requires min, operand and max to have one dtype, got "
                            f"{lo.dtype.name}, {x.dtype.name}, {hi.dtype.name}")
    _check_dtype("clamp", x.dtype, _NUM + "b")
    return ShapedArray(x.shape, x.dtype, weak_type=lo.weak_type and x.weak_type and hi.weak_type)


def clamp(min, x, max):
    """min(max(x, min), max) elementwise (binds `clamp`)."""
    min, x, max = lift_scalars("clamp", (min, x, max))
    return clamp_p.bind(min, x, max)


def _clamp_tangent(which, t, x):
    """t (broadcast to x's shape) where `which`, zero elsewhere."""
    return select_n(which, full_like(x, 0, get_aval(t).dtype), _to_shape(t, get_aval(x).shape))


def _clamp_jvp_lo(t, lo, x, hi):
    return _clamp_tangent(bitwise_and(gt(lo, x), lt(lo, hi)), t, x)


def _clamp_jvp_x(t, lo, x, hi):
    return _clamp_tangent(bitwise_and(gt(x, lo), lt(x, hi)), t, x)


def _clamp_jvp_hi(t, lo, x, hi):
    return _clamp_tangent(lt(hi, x), t, x)


defjvp(clamp_p, _clamp_jvp_lo, _clamp_jvp_x, _clamp_jvp_hi)
defvectorized(clamp_p, full_args=lambda i: i == 1)  # the operand
clamp_p.def_sharding(sp.elementwise)


# ---------------------------------------------------------------- convert_element_type

convert_element_type_p = make_primitive("convert_element_type")


@convert_element_type_p.def_abstract_eval
def _convert_abstract_eval(x, *, new_dtype, weak_type=False, sharding=None):
    return ShapedArray(x.shape, new_dtype, weak_type=weak_type)


convert_element_type_p.def_pp(pp_hiding("sharding"))  # the binder's type says it


def _foldable(x):
    # JAX folds conversions of Python and NumPy scalars; its jnp.asarray keeps Python scalars
    # as they are where refjax makes concrete 0-d Arrays, which therefore fold too (but not
    # an Array committed to devices: its conversion stays there, as JAX's).
    if isinstance(x, Array):
        return np.ndim(x) == 0 and not x.committed
    return dtypes.is_python_scalar(x) or (
        isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) == 0)


def _folded_conversion(x, new_dtype, weak_type):
    """A Python or NumPy scalar converted now, as JAX folds such conversions (with NumPy's
    astype, complex values losing their imaginary part): a constant, never an equation."""
    value = np.asarray(x)
    if dtypes.kind(value.dtype) == "c" and dtypes.kind(new_dtype) != "c":
        value = value.real
    return runtime.make_array(value.astype(new_dtype), ShapedArray((), new_dtype, bool(weak_type)))


def convert_element_type(x, new_dtype, weak_type=False):
    """x converted to new_dtype (canonicalized for x64), C-style: floats truncate to ints."""
    if new_dtype is None:  # np.dtype(None) would silently mean float64
        raise ValueError("convert_element_type: dtype must be specified.")
    _refuse_key_conversion(x, new_dtype)
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if _foldable(x):
        return _folded_conversion(x, new_dtype, weak_type)
    if hasattr(x, "aval") and (x.aval.dtype, x.aval.weak_type) == (new_dtype, bool(weak_type)):
        return x  # as JAX: no equation for a conversion that changes nothing
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type),
                                       sharding=None)


def _refuse_key_conversion(x, new_dtype):
    """ValueError as JAX's: typed keys convert to and from no other dtype."""
    src = getattr(x, "dtype", None)
    if not (dtypes.is_key_dtype(src) or dtypes.is_key_dtype(new_dtype)):
        return
    def name(d):
        return str(d) if dtypes.is_key_dtype(d) else dtypes.canonicalize_dtype(d).name
    src = src if src is not None else dtypes.python_scalar_dtype(x)
    raise ValueError(f"Cannot convert_element_type from {name(src)} to {name(new_dtype)}")


def _convert_jvp(primals, tangents, *, new_dtype, weak_type, sharding):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    if type(t) is Zero or not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(get_aval(x).dtype):
        return out, Zero(get_aval(out).to_tangent_aval())
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type,
                                            sharding=sharding)


def _convert_transpose(ct, x, *, new_dtype, weak_type, sharding):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type,
                                        sharding=sharding)]


convert_element_type_p.def_sharding(sp.elementwise)
convert_element_type_p.def_jvp(_convert_jvp)
convert_element_type_p.def_transpose(_convert_transpose)
defvectorized(convert_element_type_p)


# ---------------------------------------------------------------- helpers for rules

def _const(like, value):
    """A weak scalar constant with the dtype of `like`."""
    return weak_scalar(value, get_aval(like).dtype)


def full_like(x, value, dtype=None):
    """An array of x's shape filled with `value`, of `dtype` (default: x's, weakly typed when
    x is, as JAX's lax.full_like)."""
    aval = typed_aval(x)  # its sharding type too, on Explicit axes (JAX's)
    if dtype is not None:
        aval = aval.update(dtype=dtypes.canonicalize_dtype(dtype), weak_type=False)
    return ad.full_like_aval(aval, value)


def full(shape, value, dtype, weak_type=False):
    """An array of `shape` filled with `value` (binds broadcast_in_dim of a scalar)."""
    from .structural import broadcast_in_dim
    dtype = dtypes.canonicalize_dtype(dtype)
    if _exactly_representable(value, dtype):  # a constant of dtype, as JAX stages it
        scalar = runtime.make_array(value, ShapedArray((), dtype, weak_type))
    else:
        scalar = convert_element_type(weak_scalar(value, dtype), dtype, weak_type=weak_type)
    return broadcast_in_dim(scalar, tuple(shape), ()) if shape else scalar


def _exactly_representable(value, dtype):
    """Whether the Python number `value` converts to `dtype` without a cast's rounding rules
    (a bool, or an int to an int, float or complex type, a float to an inexact type)."""
    kinds = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}.get(type(value), "")
    kind = np.dtype(dtype).kind
    return kind in kinds and (type(value) is not int or kind not in "iu"
                              or np.iinfo(dtype).min <= value <= np.iinfo(dtype).max)


def float0_zeros(shape):
    """Zeros of dtype float0: the tangent of integer values."""
    return runtime.make_array(np.zeros(shape, dtypes.float0), ShapedArray(shape, dtypes.float0))
